"""`cuberobot doctor`: what this computer offers a rig, and whether the
set-up file asks for what is there.

It reads Linux's own description of its devices: the video capture nodes in
/sys/class/video4linux (their USB ids, and, from the device itself, whether
the node shows pictures or only metadata, and the sizes it offers), the
/dev/v4l/by-id and /dev/serial/by-id names, the USB serial ports in
/sys/class/tty, a libcamera camera through ``rpicam-hello --list-cameras``
(``libcamera-hello`` on older systems), who may open each device, and, for a
serial port, whether cuberobot's firmware answers the handshake.

Every source is injectable (:class:`Machine`): the roots of /dev and /sys,
the commands, the user's groups and the access test, so the tests run it on
a fake tree. Each finding is one line (:class:`Finding`).
"""

from __future__ import annotations

import fcntl
import getpass
import grp
import os
import pwd
import re
import shutil
import struct
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from vision.setup import CameraSpec, camera_kind, libcamera_index

from ..rig.config import Config, RigConfig
from ..rig.errors import RigError, UserError
from ..rig.gpio_pins import HEADER_PIN
from ..rig.link import Link
from ..rig.owner import describe_holder, port_holder
from .limits import rig_claims

# USB ids (vendor:product) of the boards the firmware runs on, and of the
# USB-serial chips clones use instead.
ARDUINO_IDS = {
    "2341:0001": "Arduino Uno", "2341:0043": "Arduino Uno", "2341:0243": "Arduino Uno",
    "2a03:0043": "Arduino Uno", "2341:0010": "Arduino Mega 2560", "2341:0042": "Arduino Mega 2560",
    "2341:0242": "Arduino Mega 2560", "2a03:0042": "Arduino Mega 2560", "2a03:0010": "Arduino Mega 2560",
}
CLONE_CHIPS = {
    "1a86:7523": "a CH340 USB-serial chip (most Uno and Mega clones)",
    "0403:6001": "an FTDI USB-serial chip (older Arduinos, some clones)",
    "10c4:ea60": "a CP210x USB-serial chip (some clones)",
}
BOARDS = {1: "an Arduino Uno", 2: "an Arduino Mega 2560", 3: "the Pi's own pins (gpio://)",
          100: "the virtual rig"}
LIBCAMERA_LISTERS = ("rpicam-hello", "libcamera-hello")
COMMAND_TIMEOUT_S = 10.0
HANDSHAKE_BOOT_WAIT_S = 2.0
"""An Uno or Mega resets when its port opens and sits in its bootloader this long."""
MAX_SIZES_SHOWN = 12

# V4L2 ioctls (linux/videodev2.h)
_V4L2_CAP_VIDEO_CAPTURE = 0x00000001
_V4L2_CAP_VIDEO_CAPTURE_MPLANE = 0x00001000
_V4L2_CAP_META_CAPTURE = 0x00800000
_V4L2_CAP_DEVICE_CAPS = 0x80000000
_VIDIOC_QUERYCAP = 0x80685600  # _IOR('V', 0, struct v4l2_capability), 104 bytes
_VIDIOC_ENUM_FMT = 0xC0405602  # _IOWR('V', 2, struct v4l2_fmtdesc), 64 bytes
_VIDIOC_ENUM_FRAMESIZES = 0xC02C564A  # _IOWR('V', 74, struct v4l2_frmsizeenum), 44 bytes
_V4L2_BUF_TYPE_VIDEO_CAPTURE = 1
_V4L2_FRMSIZE_TYPE_DISCRETE = 1


@dataclass
class Finding:
    """One line of the report. ``kind``: camera, port, rig, access, config
    or note; ``level``: ok, info or problem."""

    kind: str
    level: str
    subject: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        mark = {"problem": "PROBLEM ", "ok": "", "info": ""}[self.level]
        return f"{self.kind:<7} {mark}{self.subject}: {self.text}"


@dataclass
class V4L2Info:
    card: str
    capture: bool
    metadata: bool
    sizes: list[tuple[int, int]]


def _ioctl(fd: int, request: int, buf: bytearray) -> None:
    fcntl.ioctl(fd, request, buf)


def probe_v4l2(path: Path) -> V4L2Info | None:
    """Ask a video device what it is and which frame sizes it gives (None
    when it cannot be opened or is not a V4L2 device)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        cap = bytearray(104)
        try:
            _ioctl(fd, _VIDIOC_QUERYCAP, cap)
        except OSError:
            return None
        card = bytes(cap[16:48]).split(b"\0")[0].decode("utf-8", "replace")
        caps, device_caps = struct.unpack_from("<II", cap, 84)
        if caps & _V4L2_CAP_DEVICE_CAPS:
            caps = device_caps
        capture = bool(caps & (_V4L2_CAP_VIDEO_CAPTURE | _V4L2_CAP_VIDEO_CAPTURE_MPLANE))
        sizes: set[tuple[int, int]] = set()
        if capture:
            for i in range(64):
                fmt = bytearray(64)
                struct.pack_into("<II", fmt, 0, i, _V4L2_BUF_TYPE_VIDEO_CAPTURE)
                try:
                    _ioctl(fd, _VIDIOC_ENUM_FMT, fmt)
                except OSError:
                    break
                pixfmt = struct.unpack_from("<I", fmt, 44)[0]
                for j in range(64):
                    fs = bytearray(44)
                    struct.pack_into("<II", fs, 0, j, pixfmt)
                    try:
                        _ioctl(fd, _VIDIOC_ENUM_FRAMESIZES, fs)
                    except OSError:
                        break
                    kind, w, h = struct.unpack_from("<III", fs, 8)
                    if kind != _V4L2_FRMSIZE_TYPE_DISCRETE:
                        # stepwise or continuous: the largest size stands for the range
                        w, h = struct.unpack_from("<II", fs, 20)
                        sizes.add((w, h))
                        break
                    sizes.add((w, h))
        return V4L2Info(card, capture, bool(caps & _V4L2_CAP_META_CAPTURE), sorted(sizes))
    finally:
        os.close(fd)


def _run_command(argv: list[str], timeout: float) -> tuple[int, str] | None:
    """(status, standard output and error) of a command; None when it is not installed."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return 1, str(e)
    return p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")


def _group_of(path: Path) -> str | None:
    try:
        gid = os.stat(path).st_gid
    except OSError:
        return None
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _process_groups() -> set[str]:
    names = set()
    for gid in {*os.getgroups(), os.getegid()}:
        try:
            names.add(grp.getgrgid(gid).gr_name)
        except KeyError:
            pass
    return names


def _member_of(user: str) -> set[str]:
    """The groups /etc/group (and the user's primary group) give ``user``,
    which a new login would have."""
    names = {g.gr_name for g in grp.getgrall() if user in g.gr_mem}
    try:
        names.add(grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name)
    except KeyError:
        pass
    return names


@dataclass
class Machine:
    """Where doctor looks; every part can be replaced (tests: a fake tree)."""

    root: Path = Path("/")
    user: str = field(default_factory=getpass.getuser)
    run: Callable[[list[str], float], tuple[int, str] | None] = _run_command
    may_open: Callable[[Path], bool] = lambda p: os.access(p, os.R_OK | os.W_OK)
    group_of: Callable[[Path], str | None] = _group_of
    process_groups: Callable[[], set[str]] = _process_groups
    member_of: Callable[[str], set[str]] = _member_of
    probe: Callable[[Path], V4L2Info | None] = probe_v4l2

    @property
    def dev(self) -> Path:
        return self.root / "dev"

    @property
    def sys(self) -> Path:
        return self.root / "sys"

    def shown(self, path: Path) -> str:
        """A path as the user would type it (the fake root taken off)."""
        try:
            return "/" + str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def real(self, shown: str) -> Path:
        """The path under the root for a path the user typed."""
        return self.root / shown.lstrip("/") if shown.startswith("/") else Path(shown)


@dataclass
class Camera:
    node: str  # /dev/videoN
    name: str
    usb: str | None
    by_id: list[str]
    capture: bool
    sizes: list[tuple[int, int]]
    decided_by: str  # "device" (asked it) or "sysfs index" (could not open it)


@dataclass
class Port:
    node: str
    usb: str | None
    product: str | None
    board: str | None
    by_id: list[str]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return None


def _usb_device(machine: Machine, class_dir: Path) -> Path | None:
    """The USB device (the folder with idVendor) a class device hangs from."""
    try:
        d = Path(os.path.realpath(class_dir / "device"))
    except OSError:
        return None
    for _ in range(5):
        if (d / "idVendor").is_file():
            return d
        if d == machine.sys or d.parent == d:
            break
        d = d.parent
    return None


def _links(machine: Machine, folder: Path) -> dict[str, list[str]]:
    """/dev/... node -> the links in ``folder`` that point at it."""
    out: dict[str, list[str]] = {}
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return out
    for link in entries:
        target = Path(os.path.realpath(link))
        out.setdefault(machine.shown(target), []).append(machine.shown(link))
    return out


def _number(name: str) -> int:
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) if m else 0


def find_cameras(machine: Machine) -> list[Camera]:
    cls = machine.sys / "class" / "video4linux"
    by_id = _links(machine, machine.dev / "v4l" / "by-id")
    out: list[Camera] = []
    try:
        nodes = sorted((p for p in cls.iterdir() if p.name.startswith("video")),
                       key=lambda p: _number(p.name))
    except OSError:
        return out
    for d in nodes:
        node = machine.dev / d.name
        usb_dir = _usb_device(machine, d)
        usb = None if usb_dir is None else f"{_read(usb_dir / 'idVendor')}:{_read(usb_dir / 'idProduct')}"
        info = machine.probe(node)
        if info is not None:
            capture, sizes, decided = info.capture, info.sizes, "device"
            name = _read(d / "name") or info.card
        else:
            # Not openable (no permission, or gone): a UVC camera's picture node has index 0
            capture, sizes, decided = _read(d / "index") in (None, "0"), [], "sysfs index"
            name = _read(d / "name") or d.name
        out.append(Camera(machine.shown(node), name, usb, by_id.get(machine.shown(node), []), capture, sizes,
                          decided))
    return out


def find_ports(machine: Machine) -> list[Port]:
    by_id = _links(machine, machine.dev / "serial" / "by-id")
    cls = machine.sys / "class" / "tty"
    out = []
    try:
        nodes = sorted(p for p in cls.iterdir() if re.match(r"tty(ACM|USB)\d+$", p.name))
    except OSError:
        nodes = []
    for d in nodes:
        usb_dir = _usb_device(machine, d)
        usb = product = board = None
        if usb_dir is not None:
            usb = f"{_read(usb_dir / 'idVendor')}:{_read(usb_dir / 'idProduct')}".lower()
            product = " ".join(x for x in (_read(usb_dir / "manufacturer"), _read(usb_dir / "product")) if x)
            board = ARDUINO_IDS.get(usb)
        node = machine.shown(machine.dev / d.name)
        out.append(Port(node, usb, product or None, board, by_id.get(node, [])))
    return out


def find_libcameras(machine: Machine) -> tuple[list[tuple[int, str]], str | None]:
    """([(number, description)], the lister that answered)."""
    for lister in LIBCAMERA_LISTERS:
        got = machine.run([lister, "--list-cameras"], COMMAND_TIMEOUT_S)
        if got is None:
            continue
        _, text = got
        cams = []
        for m in re.finditer(r"^\s*(\d+)\s*:\s*(\S+)\s*\[([^\]]*)\]", text, re.M):
            size = m.group(3).split()[0] if m.group(3).split() else ""
            cams.append((int(m.group(1)), f"{m.group(2)} {size}".strip()))
        return cams, lister
    return [], None


def _access(machine: Machine, shown: str, what: str, usual: str) -> Finding | None:
    """A problem line when this user may not open ``shown``, with the fix."""
    path = machine.real(shown)
    if machine.may_open(path):
        return None
    group = machine.group_of(path) or usual
    user = machine.user
    if group in machine.member_of(user) and group not in machine.process_groups():
        fix = f"{user} was added to {group} since logging in: log out and in again (or reboot)"
    else:
        fix = f"sudo usermod -aG {group} {user}, then log out and in again"
    return Finding("access", "problem", shown, f"{user} may not open this {what} (group {group}): {fix}",
                   {"group": group, "user": user, "fix": fix})


@dataclass
class Report:
    findings: list[Finding]
    cameras: list[Camera]
    ports: list[Port]
    libcameras: list[tuple[int, str]]

    @property
    def problems(self) -> int:
        return sum(f.level == "problem" for f in self.findings)

    def as_json(self) -> dict[str, Any]:
        return {"findings": [asdict(f) for f in self.findings], "problems": self.problems,
                "cameras": [asdict(c) for c in self.cameras], "ports": [asdict(p) for p in self.ports],
                "libcameras": [{"number": n, "sensor": s} for n, s in self.libcameras]}


def handshake(port: str, rig: RigConfig, boot_wait_s: float, *, claim: bool = True) -> Finding:
    """Whether cuberobot's firmware answers on ``port``: its version, board
    and queue. ``claim``: hold the rig meanwhile (off when the caller holds it)."""
    from dataclasses import replace

    cfg = Config(path=None, rig=replace(rig, port=port, boot_wait_s=boot_wait_s))
    if port.startswith("gpio://"):
        from .. import gpio  # noqa: F401  (gpio:// ports; lazy: the Pi's pins plug in when asked for)
    try:
        # HELLO is the same on every kind of rig: the link is opened for the set-up's own kind. It
        # only asks, so Ctrl-C meanwhile sends no emergency stop (that would latch an idle rig).
        with rig_claims(port if claim else None, None, folder=False), \
                Link(cfg, port, kind=rig.kind, stop_on_interrupt=False) as link:
            link.open()
            if boot_wait_s:
                import time

                time.sleep(boot_wait_s)
            hello = link.hello_only()
            latched = link.status().estop  # a latch blocks every move: said here, not at the next start
            clear = link.clear_command
    except (RigError, UserError) as e:
        return Finding("rig", "problem", port, str(e))
    board = BOARDS.get(hello.board, f"board number {hello.board}")
    version = f"{hello.fw_major}.{hello.fw_minor}.{hello.fw_patch}"
    if latched:
        return Finding("rig", "problem", port, f"cuberobot firmware {version} on {board} answers, but its "
                                               "emergency stop is latched: it moves nothing until cleared; "
                                               f"check it is safe, then run {clear}",
                       {"firmware": version, "protocol": hello.version, "board": board,
                        "queue_capacity": hello.queue_capacity, "estop_latched": True})
    return Finding("rig", "ok", port, f"cuberobot firmware {version} (protocol {hello.version}) on "
                                      f"{board}, queue of "
                                      f"{hello.queue_capacity}: the handshake passes",
                   {"firmware": version, "protocol": hello.version, "board": board,
                    "queue_capacity": hello.queue_capacity})


def _camera_line(c: Camera) -> Finding:
    usb = f" (usb {c.usb})" if c.usb else ""
    sizes = " ".join(f"{w}x{h}" for w, h in c.sizes[-MAX_SIZES_SHOWN:])
    parts = [f"{c.name}{usb}"]
    parts.append(f"source = \"{c.by_id[0]}\"" if c.by_id else "no by-id name")
    parts.append(f"sizes {sizes}" if sizes else "sizes unknown (cannot open it)")
    return Finding("camera", "ok", c.node, ", ".join(parts), asdict(c))


def _port_line(p: Port) -> Finding:
    if p.board:
        what = f"looks like an {p.board}"
    elif p.usb in CLONE_CHIPS:
        what = f"{CLONE_CHIPS[p.usb]}: perhaps an Arduino clone"
    else:
        what = "a USB serial port"
    extra = [f"usb {p.usb}" + (f" {p.product}" if p.product else "")] if p.usb else []
    extra.append(f"port = \"{p.by_id[0]}\"" if p.by_id else "no by-id name")
    return Finding("port", "ok", p.node, f"{what} ({', '.join(extra)})", asdict(p))


def diagnose(machine: Machine | None = None, config: Config | None = None, *, ports: list[str] | None = None,
             handshakes: bool = True, boot_wait_s: float | None = None) -> Report:
    """Everything doctor says, in order: cameras, ports, access, handshakes,
    then each configured camera and the rig's port against what was found."""
    m = machine or Machine()
    cams = find_cameras(m)
    found_ports = find_ports(m)
    libcams, lister = find_libcameras(m)
    findings: list[Finding] = []
    capture = [c for c in cams if c.capture]
    for c in capture:
        findings.append(_camera_line(c))
    skipped = [c.node for c in cams if not c.capture]
    if skipped:
        findings.append(Finding("note", "info", "metadata nodes",
                                f"{' '.join(skipped)} show no picture (a webcam's second node); left out",
                                {"nodes": skipped}))
    for n, desc in libcams:
        findings.append(Finding("camera", "ok", f"libcamera:{n}",
                                f"{desc} (from {lister}), source = \"libcamera:{n}\"", {"sensor": desc}))
    if not capture and not libcams:
        # A set-up whose cameras are all simulated, files or commands needs none: then it is only said.
        needed = config is None or any(camera_kind(c) in ("index", "device", "libcamera")
                                       for c in config.cameras)
        findings.append(Finding("camera", "problem" if needed else "info", "cameras", "none found (no V4L2 "
                                f"picture node in {m.shown(m.dev)}, no answer from "
                                f"{' or '.join(LIBCAMERA_LISTERS)}): "
                                + ("plug a webcam in, or enable the camera module" if needed else
                                   "the set-up's cameras need none")))
    for p in found_ports:
        findings.append(_port_line(p))
    if not found_ports:
        findings.append(Finding("port", "info", "serial ports", "no USB serial port (ttyACM, ttyUSB) found: "
                                                                "plug the Arduino in"))
    for c in capture:
        if (f := _access(m, c.node, "camera", "video")) is not None:
            findings.append(f)
    for p in found_ports:
        if (f := _access(m, p.node, "serial port", "dialout")) is not None:
            findings.append(f)
    to_check = list(ports or [])
    if config is not None and not config.rig.port.startswith(("sim://", "loop://")):
        to_check.append(config.rig.port)
    elif not to_check:
        to_check = [p.node for p in found_ports if p.board or p.usb in CLONE_CHIPS]
    if config is not None:
        findings += _check_config(m, config, cams, found_ports, libcams, lister, given=ports or [])
    if config is not None and config.rig.port.startswith("gpio://"):
        findings += gpio_findings(m, config)  # a rig on the Pi's pins: its factory, pins and access
    if handshakes:
        rig = config.rig if config is not None else RigConfig()
        for port in dict.fromkeys(to_check):
            if port.startswith("sim://"):  # made inside each command: no board to ask
                findings.append(Finding("rig", "info", port,
                                        "the simulated rig, made inside each command that uses it: there "
                                        "is no board to ask"))
                continue
            real = Path(port) if not port.startswith("/dev/") or _exists(Path(port)) else m.real(port)
            if "://" not in port and not _exists(real):
                if port in (ports or []) and (config is None or port != config.rig.port):  # else: config said
                    findings.append(Finding("rig", "problem", port, "nothing is at this port: plug the board "
                                            "in, or give one of the serial ports listed above"))
                continue
            wait = boot_wait_s if boot_wait_s is not None else (
                max(rig.boot_wait_s, HANDSHAKE_BOOT_WAIT_S) if _looks_like_a_board(port, found_ports) else
                rig.boot_wait_s)
            findings.append(handshake(str(real) if "://" not in port else port, rig, wait))
    return Report(findings, cams, found_ports, libcams)


def _exists(path: Path) -> bool:
    """Whether ``path`` is there; a name no file can have (too long, say) is not."""
    try:
        return path.exists()
    except OSError:
        return False


def _looks_like_a_board(port: str, found: list[Port]) -> bool:
    real = os.path.realpath(port)
    return any(p.node in (port, real) or port in p.by_id for p in found)


def _check_config(m: Machine, config: Config, cams: list[Camera], ports: list[Port],
                  libcams: list[tuple[int, str]], lister: str | None, *, given: list[str]) -> list[Finding]:
    """Each camera and the rig's port of ``config``; ``given``: the ports
    given on the command line, which a run given them would use instead."""
    out = []
    for spec in config.cameras:
        out.append(_check_camera(m, spec, cams, libcams, lister))
    if config.profile:
        out.append(_check_profile(config.profile))
    port = config.rig.port
    subject = "rig port"
    if port.startswith("sim://"):
        instead = f"; a command given --port {given[0]} uses that instead (its handshake is below)" \
            if given else ""
        out.append(Finding("config", "info", subject, f"{port} is the simulated rig{instead}"))
        return out
    if not port.startswith("/dev/"):
        out.append(Finding("config", "info", subject, f"{port} (not a /dev path; checked by its handshake)"))
        return out
    real = m.shown(Path(os.path.realpath(m.real(port))))
    match = next((p for p in ports if p.node == real), None)
    if not _exists(m.real(port)):
        here = ", ".join(p.by_id[0] if p.by_id else p.node for p in ports) or "none"
        out.append(Finding("config", "problem", subject, f"port = \"{port}\" is not here (serial ports here: "
                                                         f"{here}): plug the board in or fix [rig] port"))
    elif match is not None and match.by_id and port not in match.by_id:
        what = "an " + match.board if match.board else "a USB port"
        out.append(Finding("config", "info", subject,
                           f"port = \"{port}\" is {what}; port = \"{match.by_id[0]}\" keeps naming it "
                           "whatever else is plugged in"))
    else:
        out.append(Finding("config", "ok", subject, f"port = \"{port}\" is here"))
    return out


def _check_profile(profile: str) -> Finding:
    """The set-up's colour profile: one not made yet is only said (colours
    are calibrated once the rig stands, often last, on the panel); one that
    is there but cannot be read is a problem, as `scan` and `start` refuse it."""
    from vision.profile import ProfileError, ProfileMissing, open_profile  # lazy: loads numpy

    subject = "colour profile"
    try:
        loaded, path = open_profile(profile)
    except ProfileMissing:
        return Finding("config", "info", subject,
                       f"{profile!r} is not made yet: put a solved cube in and run `cuberobot calibrate "
                       f"--profile {profile}` (or the panel's Calibrate card); `scan` and `start` need it")
    except ProfileError as e:
        return Finding("config", "problem", subject, str(e))
    return Finding("config", "ok", subject, f"{loaded.name!r} is here ({path})")


def _check_camera(m: Machine, spec: CameraSpec, cams: list[Camera], libcams: list[tuple[int, str]],
                  lister: str | None) -> Finding:
    subject = f"camera {spec.name!r}"
    kind = camera_kind(spec)
    good = [c for c in cams if c.capture]
    suggestion = ", ".join(f"\"{c.by_id[0] if c.by_id else c.node}\"" for c in good) or "none"
    if kind == "sim":
        return Finding("config", "info", subject, "simulated (source = \"sim\")")
    if kind == "libcamera":
        n = libcamera_index(spec)
        if any(k == n for k, _ in libcams):
            return Finding("config", "ok", subject, f"{spec.source} is here")
        why = (f"{lister} lists no camera {n}" if lister
               else "neither rpicam-hello nor libcamera-hello answers")
        return Finding("config", "problem", subject, f"source = \"{spec.source}\": {why} (is the camera "
                                                     "connected and enabled? sudo apt install rpicam-apps)")
    if kind == "command":
        prog = spec.command[0]
        if shutil.which(prog) is None:
            return Finding("config", "problem", subject, f"command {prog!r} is not installed or not on PATH")
        return Finding("config", "ok", subject, f"command {prog!r} is installed")
    if kind == "file":
        path = str(spec.source)
        if "%" in path or Path(path).exists():
            return Finding("config", "info", subject, f"reads the file {path}")
        return Finding("config", "problem", subject, f"source = \"{path}\" is no file here")
    node = f"/dev/video{int(spec.source)}" if kind == "index" else m.shown(
        Path(os.path.realpath(m.real(str(spec.source)))))
    given = f"source = {spec.source}" if kind == "index" else f"source = \"{spec.source}\""
    cam = next((c for c in cams if c.node == node), None)
    if cam is None:
        return Finding("config", "problem", subject,
                       f"{given}: {node} is not here (cameras here: {suggestion})")
    if not cam.capture:
        owner = next((c for c in good if c.usb == cam.usb and c.usb), None)
        better = f"\"{owner.by_id[0] if owner.by_id else owner.node}\"" if owner else suggestion
        return Finding("config", "problem", subject,
                       f"{given} is {node}, the metadata node of {cam.name} (no picture): "
                       f"use source = {better}")
    if cam.sizes and (spec.width, spec.height) not in cam.sizes:
        sizes = " ".join(f"{w}x{h}" for w, h in cam.sizes[-MAX_SIZES_SHOWN:])
        return Finding("config", "problem", subject, f"asks {spec.width}x{spec.height}; {node} ({cam.name}) "
                                                     f"gives {sizes}: set width and height to one of them")
    if cam.by_id and kind == "index" or cam.by_id and str(spec.source) not in cam.by_id:
        return Finding("config", "ok", subject, f"{given} is {cam.name}; source = \"{cam.by_id[0]}\" keeps "
                                                "naming it whatever order the cameras are found in")
    return Finding("config", "ok", subject, f"{given} is {cam.name}")


# -- a rig on the Pi's own pins -------------------------------------------------
GPIO_DEVICES = ("/dev/gpiochip0", "/dev/gpiochip4", "/dev/gpiomem")
"""What gpiozero's factories open: the GPIO character device (lgpio; the
Pi 5's header is gpiochip4 on older kernels) and the register window
(RPi.GPIO, native). Raspberry Pi OS gives them to the ``gpio`` group."""


def gpio_findings(m: Machine, config: Config) -> list[Finding]:
    """What `cuberobot doctor` says about a rig on the Pi's pins: the pin
    factory gpiozero uses here, each pin the set-up gives the rig (and
    whether another process holds it), and whether this user may open the
    GPIO chip, with the exact fix when not."""
    from ..gpio.board import PinsUnavailable, factory_name, pin_factory, pins_of  # gpiozero: when asked

    out: list[Finding] = []
    try:
        factory = pin_factory()
    except PinsUnavailable as e:
        out.append(Finding("gpio", "problem", "pin factory", str(e)))
        factory = None
    if factory is not None:
        name = factory_name(factory)
        said = {"mock": "gpiozero's mock pins: nothing real moves (GPIOZERO_PIN_FACTORY=mock)",
                "pigpio": "pigpio: hardware-timed pulses through the pigpiod daemon",
                "lgpio": "lgpio (software-timed pulses; GPIOZERO_PIN_FACTORY=pigpio with pigpiod running "
                         "for hardware timing against jitter)"}.get(name, name)
        out.append(Finding("gpio", "ok", "pin factory", said, {"factory": name}))
    for what, pin in pins_of(config).items():
        holder = port_holder(f"gpio://GPIO{pin}")
        where = f"GPIO{pin} (header pin {HEADER_PIN.get(pin, '?')})"
        if holder is not None:
            out.append(Finding("gpio", "info", what, f"{where}, in use by {describe_holder(holder)}",
                               {"pin": pin, "holder": holder}))
        else:
            out.append(Finding("gpio", "ok", what, where, {"pin": pin}))
    for dev in GPIO_DEVICES:
        if m.real(dev).exists() and (f := _access(m, dev, "GPIO device", "gpio")) is not None:
            out.append(f)
    return out
