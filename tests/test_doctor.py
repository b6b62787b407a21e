"""`cuberobot doctor` on a fake /dev and /sys tree, with stand-in commands
and a pty rig."""

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from incli import cuberobot

import robot.app.doctor as doctor
from robot.app.doctor import Machine, diagnose, probe_v4l2
from robot.rig.config import parse_config
from robot.sim.pty_rig import SimRigProcess

ROOT = Path(__file__).resolve().parents[1]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _link(link: Path, target: str) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def _usb(root: Path, bus: str, vendor: str, product: str, maker: str, name: str) -> Path:
    d = root / "sys/devices/pci0000:00/usb1" / bus
    for key, value in (("idVendor", vendor), ("idProduct", product), ("manufacturer", maker),
                       ("product", name)):
        _write(d / key, value)
    return d / f"{bus}:1.0"


def _video(root: Path, interface: Path, node: str, index: int, name: str) -> None:
    d = interface / "video4linux" / node
    _write(d / "name", name)
    _write(d / "index", str(index))
    _link(d / "device", "../..")
    _link(root / "sys/class/video4linux" / node, os.path.relpath(d, root / "sys/class/video4linux"))
    _write(root / "dev" / node, "")


def fake_tree(root: Path) -> Path:
    """Two UVC webcams (each a picture node and a metadata node), an Arduino
    Uno on ttyACM0, a serial console that is not USB, and their by-id links
    as udev makes them."""
    c920 = _usb(root, "1-1", "046d", "082d", "", "HD Pro Webcam C920")
    _video(root, c920, "video0", 0, "HD Pro Webcam C920")
    _video(root, c920, "video1", 1, "HD Pro Webcam C920")
    live = _usb(root, "1-2", "0c45", "6366", "Sonix", "USB Live camera")
    _video(root, live, "video2", 0, "USB Live camera: USB Live cam")
    _video(root, live, "video3", 1, "USB Live camera: USB Live cam")
    uno = _usb(root, "1-3", "2341", "0043", "Arduino (www.arduino.cc)", "")
    tty = uno / "tty" / "ttyACM0"
    _link(tty / "device", "../..")
    _link(root / "sys/class/tty/ttyACM0", os.path.relpath(tty, root / "sys/class/tty"))
    (root / "sys/class/tty/ttyS0").mkdir(parents=True)
    _write(root / "dev/ttyACM0", "")
    _write(root / "dev/ttyS0", "")
    by_id = root / "dev/v4l/by-id"
    _link(by_id / "usb-046d_HD_Pro_Webcam_C920_A1B2C3D4-video-index0", "../../video0")
    _link(by_id / "usb-046d_HD_Pro_Webcam_C920_A1B2C3D4-video-index1", "../../video1")
    _link(by_id / "usb-Sonix_USB_Live_camera_SN0001-video-index0", "../../video2")
    _link(by_id / "usb-Sonix_USB_Live_camera_SN0001-video-index1", "../../video3")
    _link(root / "dev/serial/by-id/usb-Arduino__www.arduino.cc__0043_7583-if00", "../../ttyACM0")
    return root


def machine(root: Path, **kw) -> Machine:
    """Alice is in video but not in dialout, which owns the serial port."""
    defaults = dict(root=root, user="alice", may_open=lambda p: "tty" not in p.name,
                    group_of=lambda p: "dialout" if "tty" in p.name else "video",
                    process_groups=lambda: {"alice", "video"}, member_of=lambda u: {"alice", "video"})
    defaults.update(kw)
    return Machine(**defaults)


RIG = """
[rig]
port = "/dev/ttyACM0"
[[camera]]
name = "upper"
source = "/dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920_A1B2C3D4-video-index0"
[[camera]]
name = "lower"
source = 1
"""


@pytest.fixture
def stand_ins(tmp_path, monkeypatch):
    """A PATH holding only the stand-in commands written into it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")

    def add(name: str, script: str) -> None:
        exe = bin_dir / name
        exe.write_text("#!/bin/sh\n" + script)
        exe.chmod(0o755)
    return add


def test_the_fake_tree_gives_two_cameras_one_arduino_a_missing_group_and_a_mismatch(tmp_path, stand_ins):
    root = fake_tree(tmp_path / "root")
    report = diagnose(machine(root), parse_config(RIG, Path("rig.toml")), handshakes=False)
    lines = [f.line() for f in report.findings]
    print("\n".join(lines))
    assert all("\n" not in line for line in lines)
    cameras = [f for f in report.findings if f.kind == "camera"]
    assert [f.subject for f in cameras] == ["/dev/video0", "/dev/video2"]
    assert 'source = "/dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920_A1B2C3D4-video-index0"' in cameras[0].text
    assert "HD Pro Webcam C920 (usb 046d:082d)" in cameras[0].text
    assert not any("video1" in f.subject or "video3" in f.subject for f in report.findings)
    ports = [f for f in report.findings if f.kind == "port"]
    assert len(ports) == 1 and ports[0].subject == "/dev/ttyACM0"
    assert ports[0].text.startswith("looks like an Arduino Uno (usb 2341:0043 Arduino (www.arduino.cc), "
                                    'port = "/dev/serial/by-id/usb-Arduino__www.arduino.cc__0043_7583-if00")')
    access = [f for f in report.findings if f.kind == "access"]
    assert len(access) == 1 and access[0].level == "problem"
    assert access[0].line() == ("access  PROBLEM /dev/ttyACM0: alice may not open this serial port (group "
                                "dialout): sudo usermod -aG dialout alice, then log out and in again")
    config = {f.subject: f for f in report.findings if f.kind == "config"}
    assert config["camera 'upper'"].level == "ok"
    lower = config["camera 'lower'"]
    assert lower.level == "problem" and lower.text == (
        "source = 1 is /dev/video1, the metadata node of HD Pro Webcam C920 (no picture): use source = "
        '"/dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920_A1B2C3D4-video-index0"')
    assert "/dev/serial/by-id/usb-Arduino" in config["rig port"].text  # the name that stays
    assert report.problems == 2
    json.dumps(report.as_json())


def test_a_new_group_not_yet_in_the_login_says_log_out(tmp_path, stand_ins):
    root = fake_tree(tmp_path / "root")
    m = machine(root, member_of=lambda u: {"alice", "video", "dialout"})
    (f,) = [f for f in diagnose(m, handshakes=False).findings if f.kind == "access"]
    assert "alice was added to dialout since logging in: log out and in again" in f.text


def test_a_libcamera_camera_from_rpicam_hello(tmp_path, stand_ins):
    stand_ins("rpicam-hello", """cat <<'END'
Available cameras
-----------------
0 : imx708_wide [4608x2592 10-bit RGGB] (/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a)
    Modes: 'SRGGB10_CSI2P' : 1536x864 [120.13 fps - (768, 432)/3072x1728 crop]
END
""")
    cfg = parse_config('[[camera]]\nname = "pi"\nsource = "libcamera"\n[[camera]]\nname = "second"\n'
                       'source = "libcamera:1"\n', Path("pi.toml"))
    report = diagnose(machine(tmp_path / "empty"), cfg, handshakes=False)
    lines = [f.line() for f in report.findings]
    assert 'camera  libcamera:0: imx708_wide 4608x2592 (from rpicam-hello), source = "libcamera:0"' in lines
    config = {f.subject: f for f in report.findings if f.kind == "config"}
    assert config["camera 'pi'"].level == "ok"
    assert config["camera 'second'"].level == "problem" and "rpicam-hello lists no camera 1" in \
        config["camera 'second'"].text


def test_the_older_lister_and_no_camera_at_all(tmp_path, stand_ins):
    stand_ins("libcamera-hello", "echo 'No cameras available!'\n")
    report = diagnose(machine(tmp_path / "empty"), handshakes=False)
    (f,) = [f for f in report.findings if f.kind == "camera"]
    assert f.level == "problem" and "none found" in f.text


def _fake_device(tmp_path, monkeypatch, metadata: bool) -> Path:
    """A regular file answering V4L2's ioctls as a webcam would."""
    dev = tmp_path / ("video1" if metadata else "video0")
    dev.write_bytes(b"")
    formats = [0x47504A4D, 0x56595559]  # MJPG, YUYV
    sizes = {0x47504A4D: [(640, 480), (1280, 720), (1920, 1080)], 0x56595559: [(640, 480), (320, 240)]}

    def ioctl(fd, request, buf):
        if request == doctor._VIDIOC_QUERYCAP:
            buf[16:16 + 18] = b"HD Pro Webcam C920"
            caps = 0x00800000 if metadata else 0x04200001
            struct.pack_into("<II", buf, 84, 0x80000000 | 0x04A00001, caps)
        elif request == doctor._VIDIOC_ENUM_FMT:
            i = struct.unpack_from("<I", buf, 0)[0]
            if i >= len(formats):
                raise OSError(22, "EINVAL")
            struct.pack_into("<I", buf, 44, formats[i])
        elif request == doctor._VIDIOC_ENUM_FRAMESIZES:
            j, fmt = struct.unpack_from("<II", buf, 0)
            if j >= len(sizes[fmt]):
                raise OSError(22, "EINVAL")
            struct.pack_into("<III", buf, 8, 1, *sizes[fmt][j])
    monkeypatch.setattr(doctor, "_ioctl", ioctl)
    return dev


def test_the_device_is_asked_what_it_is_and_its_sizes(tmp_path, monkeypatch):
    info = probe_v4l2(_fake_device(tmp_path, monkeypatch, metadata=False))
    assert info.capture and not info.metadata and info.card == "HD Pro Webcam C920"
    assert info.sizes == [(320, 240), (640, 480), (1280, 720), (1920, 1080)]
    meta = probe_v4l2(_fake_device(tmp_path, monkeypatch, metadata=True))
    assert meta.metadata and not meta.capture and meta.sizes == []
    assert probe_v4l2(tmp_path / "missing") is None
    monkeypatch.undo()
    assert probe_v4l2(Path("/dev/null")) is None  # a real device that is no camera


def test_a_size_the_camera_does_not_give_is_a_mismatch(tmp_path, monkeypatch, stand_ins):
    root = fake_tree(tmp_path / "root")
    info = doctor.V4L2Info("HD Pro Webcam C920", True, False, [(640, 480), (1920, 1080)])
    m = machine(root, probe=lambda p: info if p.name == "video0" else None)
    cfg = parse_config('[[camera]]\nname = "upper"\nsource = "/dev/video0"\nwidth = 1280\nheight = 720\n',
                       Path("rig.toml"))
    (f,) = [f for f in diagnose(m, cfg, handshakes=False).findings if f.subject == "camera 'upper'"]
    assert f.level == "problem"
    assert f.text == ("asks 1280x720; /dev/video0 (HD Pro Webcam C920) gives 640x480 1920x1080: set width "
                      "and height to one of them")
    cfg = parse_config('[[camera]]\nname = "gone"\nsource = "/dev/video7"\n[rig]\nport = "/dev/ttyUSB0"\n',
                       Path("rig.toml"))
    got = {f.subject: f for f in diagnose(m, cfg, handshakes=False).findings}
    assert got["camera 'gone'"].level == "problem" and "/dev/video7 is not here" in got["camera 'gone'"].text
    assert got["rig port"].level == "problem" and "is not here" in got["rig port"].text


def test_the_firmware_handshake_on_a_pty_rig(tmp_path, stand_ins):
    with SimRigProcess("--speed", "max") as rig:
        cfg = parse_config(f'[rig]\nport = "{rig.port}"\n', Path("rig.toml"))
        report = diagnose(machine(tmp_path / "empty"), cfg)
        (f,) = [f for f in report.findings if f.kind == "rig"]
        assert f.level == "ok" and f.subject == rig.port
        assert "cuberobot firmware" in f.text and "(protocol 2) on the virtual rig" in f.text
        assert f.text.endswith("the handshake passes")
        # and through the command, as JSON
        p = cuberobot("doctor", "--root", str(tmp_path / "empty"), "--port", rig.port, "--json", cwd=ROOT)
        got = json.loads(p.stdout)
        (rigline,) = [f for f in got["findings"] if f["kind"] == "rig"]
        assert rigline["level"] == "ok" and rigline["data"]["protocol"] == 2
        # no camera here, and none needed: with no --config the default set-up's cameras are simulated
        assert p.returncode == 0, p.stdout


def test_doctor_with_no_config_checks_the_default_set_up_and_passes_on_a_bare_machine(tmp_path):
    """The first thing a person runs after the quick start (issue 48): no
    webcam and no board here, and the default set-up needs neither."""
    p = cuberobot("doctor", "--root", str(tmp_path / "empty"), "--no-handshake", cwd=ROOT)
    assert p.returncode == 0 and p.stderr == "", (p.stdout, p.stderr)
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("doctor: no problems with the default set-up (") and "--config FILE" in last, last
    assert "the set-up's cameras need none" in p.stdout


@pytest.mark.parametrize("kind", ["flipper", "two-gripper"])
def test_the_handshake_on_a_flipper_or_two_gripper_rig(tmp_path, stand_ins, kind):
    """The check a maker runs first on a new rig: it used to refuse these kinds' set-ups."""
    example = ROOT / "config" / "examples" / f"{kind}.toml"
    with SimRigProcess("--config", str(example), "--speed", "max") as rig:
        p = cuberobot("doctor", "--root", str(tmp_path / "empty"), "--config", str(example),
                      "--port", rig.port, "--json", cwd=ROOT)
        (rigline,) = [f for f in json.loads(p.stdout)["findings"] if f["kind"] == "rig"]
        assert rigline["level"] == "ok" and rigline["subject"] == rig.port, rigline
        assert rigline["text"].endswith("the handshake passes")
        findings = json.loads(p.stdout)["findings"]
        # The set-up's simulated camera needs no webcam, and its sim:// port is said to give way to --port.
        (cams,) = [f for f in findings if f["subject"] == "cameras"]
        assert cams["level"] == "info" and cams["text"].endswith("the set-up's cameras need none"), cams
        (port,) = [f for f in findings if f["subject"] == "rig port"]
        assert f"--port {rig.port} uses that instead" in port["text"], port
        assert p.returncode == 0, p.stdout
        # A latched rig answers the handshake but moves nothing: doctor says so, with the clear that works.
        assert cuberobot("estop", "--port", rig.port, cwd=ROOT).returncode == 0
        p = cuberobot("doctor", "--root", str(tmp_path / "empty"), "--config", str(example),
                      "--port", rig.port, cwd=ROOT)
        assert p.returncode == 1 and "its emergency stop is latched" in p.stdout, p.stdout
        assert f"`cuberobot estop --clear --port {rig.port}`" in p.stdout


def test_no_rig_on_a_port_is_one_line(tmp_path, stand_ins):
    a, b = os.openpty()
    try:
        cfg = parse_config('[rig]\nport = "x"\nconnect_timeout_s = 0.3\n', Path("rig.toml"))
        f = doctor.handshake(os.ttyname(b), cfg.rig, 0.0)
    finally:
        os.close(a)
        os.close(b)
    assert f.level == "problem" and "no answer from a rig" in f.text and "\n" not in f.text


def test_a_simulated_port_is_said_and_a_name_no_file_can_have_is_not_there(tmp_path, stand_ins):
    """A --port of sim:// has no board to ask (it was a handshake with the
    default set-up's empty motors, a KeyError, or "protocol 'sim' not
    known"); a config port longer than any file's name is not there, not a
    "File name too long" internal error (issue 46)."""
    root = fake_tree(tmp_path / "root")
    report = diagnose(machine(root), None, ports=["sim://"], handshakes=True)
    (said,) = [f for f in report.findings if f.subject == "sim://"]
    assert said.level == "info" and "no board to ask" in said.text
    cfg = parse_config(f'[rig]\nport = "/dev/{"a" * 300}"\n', Path("rig.toml"))
    report = diagnose(machine(root), cfg, handshakes=True)
    (port,) = [f for f in report.findings if f.subject == "rig port"]
    assert port.level == "problem" and "is not here" in port.text


def test_the_set_ups_colour_profile_is_said_not_made_yet_here_or_broken(tmp_path, stand_ins):
    """Colours are calibrated last, often on the panel: a profile not made
    yet is said with how to make it, not a problem; a broken one is."""
    from vision.profile import Profile, save_profile

    def profile_line(value: str):
        setup = tmp_path / "rig.toml"
        setup.write_text(f'[vision]\nprofile = "{value}"\n')
        cfg = parse_config(setup.read_text(), setup)
        (f,) = [f for f in diagnose(machine(tmp_path / "empty"), cfg, handshakes=False).findings
                if f.subject == "colour profile"]
        return f

    f = profile_line("profiles/bench.json")
    bench = tmp_path / "profiles" / "bench.json"
    assert f.level == "info" and f"'{bench}' is not made yet" in f.text, f.text
    assert "`cuberobot calibrate --profile " in f.text and "Calibrate card" in f.text, f.text
    colours = dict(zip("URFDLB", [(240.0, 240.0, 240.0), (200.0, 30.0, 30.0), (30.0, 160.0, 60.0),
                                  (240.0, 220.0, 40.0), (250.0, 120.0, 20.0), (20.0, 60.0, 200.0)],
                       strict=True))
    made = save_profile(Profile("bench", colours), tmp_path / "profiles")
    f = profile_line("profiles/bench.json")
    assert f.level == "ok" and f.text == f"'bench' is here ({made})", f.text
    made.write_text("[]")
    f = profile_line("profiles/bench.json")
    assert f.level == "problem" and f.text == (f"{made}: colour profile is malformed: it is not a JSON "
                                               "object; make it again with `cuberobot calibrate`"), f.text
    made.write_text('{"name": "bench"}')
    f = profile_line("profiles/bench.json")
    assert f.level == "problem" and "it has no 'face_colors' entry" in f.text, f.text
    made.write_text('{"name": "bench", "face_colors": 7}')
    f = profile_line("profiles/bench.json")
    assert f.level == "problem" and "a value is not of the kind a profile holds" in f.text, f.text


def _read_until_quiet(fd: int, quiet_s: float, limit_s: float, *, first: bool = False) -> bytes:
    """What the master side of a pty gets until the line is quiet for
    ``quiet_s`` (``first``: until the first bytes)."""
    import select
    import time

    got, deadline = b"", time.monotonic() + limit_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], quiet_s)
        if not ready:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        got += chunk
        if first:
            break
    return got


def test_ctrl_c_during_the_handshake_sends_no_emergency_stop(tmp_path, stand_ins):
    """doctor only asks: Ctrl-C while it waits for an answer must not latch
    the rig (the next `start` would refuse until someone cleared it)."""
    import signal
    import termios
    import tty

    from robot.rig import protocol as P

    master, slave = os.openpty()
    tty.setraw(slave)
    attrs = termios.tcgetattr(master)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(master, termios.TCSANOW, attrs)
    setup = tmp_path / "rig.toml"
    setup.write_text('[rig]\nport = "sim://"\nconnect_timeout_s = 30\n')
    try:
        p = subprocess.Popen([sys.executable, "-m", "robot", "doctor", "--root", str(tmp_path / "empty"),
                              "--config", str(setup), "--port", os.ttyname(slave)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        heard = _read_until_quiet(master, 10.0, 10.0, first=True)  # the first HELLO
        assert heard, "doctor sent nothing to the port"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        heard += _read_until_quiet(master, 0.3, 5.0)
    finally:
        os.close(master)
        os.close(slave)
    assert P.ESTOP_SEQUENCE not in heard, heard
    assert p.returncode == 130 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and "emergency stop" not in err, err


def test_more_ports_than_max_ports_is_one_line_before_any_handshake(tmp_path):
    """Each --port is a handshake of seconds: more than MAX_PORTS is refused
    at once, in one line, before anything is looked at; MAX_PORTS itself is
    taken (the report follows)."""
    from robot.cli.commands.doctor import MAX_PORTS

    ports = [a for i in range(MAX_PORTS + 1) for a in ("--port", str(tmp_path / f"tty{i}"))]
    p = cuberobot("doctor", "--root", str(tmp_path / "empty"), *ports, cwd=ROOT)
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout)
    said = p.stderr.strip()
    assert said == (f"cuberobot doctor: --port is given {MAX_PORTS + 1} times; at most {MAX_PORTS} (each is "
                    "a handshake of up to a few seconds): give the ports to try, or none to try every one "
                    "that looks like an Arduino"), said
    p = cuberobot("doctor", "--root", str(tmp_path / "empty"), *ports[:2 * MAX_PORTS], cwd=ROOT)
    # taken: each port is looked at (none is there) and the report follows
    assert p.returncode == 1 and f"doctor: {MAX_PORTS} problems with the default set-up" in p.stdout, p.stdout
    assert p.stdout.count(": nothing is at this port") == MAX_PORTS, p.stdout
    assert p.stderr == "", p.stderr


def test_a_port_given_that_is_not_there_is_a_problem_named_by_its_path(tmp_path):
    """`doctor --port /dev/ttyACM9` with no board there: said, not skipped
    (the config line promises the port's handshake below it)."""
    missing = "/dev/ttyACM-not-plugged-in"
    p = cuberobot("doctor", "--root", str(tmp_path / "empty"), "--port", missing, cwd=ROOT)
    assert p.returncode == 1, (p.stdout, p.stderr)
    (line,) = [ln for ln in p.stdout.splitlines() if ln.startswith("rig")]
    assert f"PROBLEM {missing}: nothing is at this port" in line, line
    assert "doctor: 1 problem with the default set-up" in p.stdout
