"""Cameras a maker has: V4L2 devices by path (/dev/video0, /dev/v4l/by-id/...)
and programs writing MJPEG (the Raspberry Pi camera's rpicam-vid, or any
command), read through the same camera code as a webcam index."""

import json
import os
import stat
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

import vision.capture as capture
from robot.rig.config import parse_config
from robot.rig.errors import UserError
from solver import random_cube
from vision.capture import Camera, device_node, open_camera
from vision.errors import VisionError
from vision.scanning import scan
from vision.setup import CameraSpec, camera_kind, default_sim_setup
from vision.stream import JpegSplitter, libcamera_command

HERE = Path(__file__).resolve().parent
STANDIN = HERE / "standins" / "mjpeg_camera.py"
_, VIEWS = default_sim_setup()

CAMERA_CONFIG = """
[[camera]]
name = "top"
source = "/dev/video0"
width = 640
height = 480
"""


class FakeCapture:
    """cv2.VideoCapture as the V4L2 back-end behaves for a camera that takes every setting."""

    opened: list[tuple] = []

    def __init__(self, *args):
        FakeCapture.opened.append(args)
        self.props: dict[int, float] = {}

    def isOpened(self):
        return True

    def set(self, prop, value):
        self.props[prop] = value
        return True

    def get(self, prop):
        return self.props.get(prop, 0.0)

    def read(self):
        w, h = int(self.props[cv2.CAP_PROP_FRAME_WIDTH]), int(self.props[cv2.CAP_PROP_FRAME_HEIGHT])
        return True, np.full((h, w, 3), 120, np.uint8)

    def release(self):
        pass


def test_a_device_path_in_the_config_opens_through_v4l2_with_every_setting(monkeypatch):
    cfg = parse_config(CAMERA_CONFIG, Path("rig.toml"))
    spec = cfg.cameras[0]
    assert camera_kind(spec) == "device"
    FakeCapture.opened = []
    monkeypatch.setattr(capture.cv2, "VideoCapture", FakeCapture)
    monkeypatch.setattr(capture, "device_node", lambda path, label: path)
    cam = open_camera(spec, exposure=150.0, gain=2.0)
    try:
        img = cam.grab()
    finally:
        cam.close()
    assert FakeCapture.opened == [("/dev/video0", cv2.CAP_V4L2)]
    assert img.shape == (480, 640, 3)
    s = cam.settings
    assert (s["reported_width"], s["reported_height"]) == (640, 480)
    assert s["reported_auto_exposure"] == 0.25 and s["reported_exposure"] == 150.0
    assert s["reported_gain"] == 2.0 and s["reported_auto_wb"] == 0


def test_an_index_still_opens_as_before(monkeypatch):
    FakeCapture.opened = []
    monkeypatch.setattr(capture.cv2, "VideoCapture", FakeCapture)
    cam = Camera(CameraSpec("i", 2, 320, 240, warmup_frames=0, average_frames=1))
    cam.close()
    assert FakeCapture.opened == [(2,)] and cam.settings["reported_width"] == 320


def test_a_by_id_link_is_followed_to_its_device(tmp_path):
    link = tmp_path / "usb-Logitech_C920_AB12-video-index0"
    link.symlink_to("/dev/null")
    assert device_node(str(link), "camera 'x'") == "/dev/null"


def test_device_problems_are_one_line_each(tmp_path):
    with pytest.raises(VisionError, match=r"camera 'top' \(/dev/video97\): no such device"):
        Camera(CameraSpec("top", "/dev/video97"))
    with pytest.raises(VisionError, match="is not a device"):
        device_node(str(tmp_path), "camera 'x'")
    # the real V4L2 back-end refuses a character device that is no camera
    with pytest.raises(VisionError, match=r"camera 'null' \(/dev/null\): cannot be opened"):
        Camera(CameraSpec("null", "/dev/null", timeout_s=5.0))


def test_no_permission_names_the_group_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(capture.os, "stat", lambda p: os.stat_result((stat.S_IFCHR | 0o660,) + (0,) * 9))
    monkeypatch.setattr(capture.os, "access", lambda p, mode: False)
    with pytest.raises(VisionError, match=r"no permission to open /dev/video0: sudo usermod -aG video"):
        device_node("/dev/video0", "camera 'x'")


# ---------------------------------------------------------------- the MJPEG stream


def _jpeg(value: int, size=(32, 24)) -> bytes:
    ok, buf = cv2.imencode(".jpg", np.full((size[1], size[0], 3), value, np.uint8))
    assert ok
    return buf.tobytes()


def _with_thumbnail(jpeg: bytes) -> bytes:
    """The JPEG with an APP1 (EXIF-like) segment holding a whole JPEG, end marker and all."""
    thumb = _jpeg(7, (8, 8))
    payload = b"Exif\0\0" + thumb
    return jpeg[:2] + b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload + jpeg[2:]


def test_the_splitter_cuts_a_stream_into_its_jpegs_whatever_the_chunks():
    frames = [_jpeg(40), _with_thumbnail(_jpeg(90)), _jpeg(200, (64, 48))]
    stream = b"noise before\xff" + b"".join(frames)
    rng = np.random.default_rng(3)
    for _ in range(20):
        sp, got, i = JpegSplitter(), [], 0
        while i < len(stream):
            n = int(rng.integers(1, 700))
            got += sp.feed(stream[i:i + n])
            i += n
        assert got == frames
    sp = JpegSplitter()
    assert sp.feed(frames[0][:300] + frames[1]) == [frames[1]]  # a frame cut short, then a whole one


def test_the_splitter_refuses_a_stream_that_is_no_mjpeg():
    sp = JpegSplitter(limit=10_000)
    with pytest.raises(VisionError, match="does not write MJPEG"):
        sp.feed(b"\xff\xd8\xff\xda\x00\x02" + b"\x11" * 20_000)
    assert JpegSplitter().feed(b"\x00" * 100_000) == []  # no start of image: nothing kept


def test_the_libcamera_command_carries_size_camera_exposure_and_gain():
    spec = CameraSpec("pi", "libcamera:1", 1536, 864)
    argv = libcamera_command(spec, exposure=120.0, gain=1.5,
                             which=lambda p: "/usr/bin/libcamera-vid" if p == "libcamera-vid" else None)
    assert argv[0] == "libcamera-vid"
    flags = dict(zip(argv[1::1], argv[2::1]))
    assert flags["--codec"] == "mjpeg" and flags["--output"] == "-" and flags["--timeout"] == "0"
    assert (flags["--width"], flags["--height"], flags["--camera"]) == ("1536", "864", "1")
    assert flags["--shutter"] == "12000" and flags["--gain"] == "1.5"
    assert "--shutter" not in libcamera_command(spec, which=lambda p: p)
    with pytest.raises(VisionError, match=r"neither rpicam-vid nor libcamera-vid .*apt install rpicam-apps"):
        libcamera_command(spec, which=lambda p: None)


@pytest.fixture
def standin_path(tmp_path, monkeypatch):
    """The stand-in installed as rpicam-vid on PATH; its calls logged."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "rpicam-vid"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN}" "$@"\n')
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("CUBEROBOT_STANDIN_LOG", str(log))
    return log


def test_two_pi_cameras_through_rpicam_vid_scan_a_rendered_cube_right_and_sure(standin_path, monkeypatch):
    truth = random_cube(23).to_facelets()
    monkeypatch.setenv("CUBEROBOT_STANDIN_CUBE", truth)
    text = "".join(f'[[camera]]\nname = "{n}"\nsource = "libcamera:{i}"\nwarmup_frames = 2\n'
                   "average_frames = 2\ntimeout_s = 30\n" for i, n in enumerate("AB"))
    cfg = parse_config(text, Path("pi.toml"))
    r = scan(cfg.cameras, VIEWS)
    assert r.ok and r.facelets == truth
    assert not r.classification.suspects and r.classification.constraints == "not needed"
    calls = [json.loads(line) for line in standin_path.read_text().splitlines()]
    assert sorted(c[c.index("--camera") + 1] for c in calls) == ["0", "1"]
    cam = open_camera(cfg.cameras[0], exposure=80.0, gain=2.0)
    cam.close()
    last = json.loads(standin_path.read_text().splitlines()[-1])
    assert last[last.index("--shutter") + 1] == "8000" and last[last.index("--gain") + 1] == "2"


def test_a_command_camera_reads_any_program_writing_mjpeg(monkeypatch):
    truth = random_cube(24).to_facelets()
    monkeypatch.setenv("CUBEROBOT_STANDIN_CUBE", truth)
    text = "".join(f'[[camera]]\nname = "{n}"\ncommand = ["{sys.executable}", "{STANDIN}", "--view", "{n}"]\n'
                   "warmup_frames = 1\naverage_frames = 2\ntimeout_s = 30\n" for n in "AB")
    cfg = parse_config(text, Path("cmd.toml"))
    assert [camera_kind(c) for c in cfg.cameras] == ["command", "command"]
    r = scan(cfg.cameras, VIEWS)
    assert r.ok and r.facelets == truth and not r.classification.suspects


def test_a_command_that_fails_is_named_with_its_message(monkeypatch):
    monkeypatch.setenv("CUBEROBOT_STANDIN_FAIL", "ERROR: *** no cameras available ***")
    spec = CameraSpec("pi", "command", 640, 480, command=(sys.executable, str(STANDIN)), timeout_s=20)
    with pytest.raises(VisionError) as e:
        Camera(spec)
    msg = str(e.value)
    assert "camera 'pi'" in msg and "returned no frame" in msg and "status 1" in msg
    assert "no cameras available" in msg and "\n" not in msg
    with pytest.raises(VisionError, match="program 'no-such-camera-program' not found"):
        Camera(CameraSpec("x", "command", command=("no-such-camera-program",)))


# ---------------------------------------------------------------- the set-up file


def _err(text: str) -> str:
    with pytest.raises(UserError) as e:
        parse_config(text, Path("my.toml"))
    assert "\n" not in str(e.value)
    return str(e.value)


def test_camera_sources_in_the_set_up_file():
    ok = parse_config('[[camera]]\nname = "a"\nsource = "/dev/v4l/by-id/usb-X-video-index0"\n'
                      '[[camera]]\nname = "b"\nsource = "libcamera"\n'
                      '[[camera]]\nname = "c"\ncommand = ["rpicam-vid", "-o", "-"]\n', Path("x.toml"))
    assert [camera_kind(c) for c in ok.cameras] == ["device", "libcamera", "command"]
    assert ok.cameras[2].command == ("rpicam-vid", "-o", "-")
    head = '[[camera]]\nname = "a"\n'
    assert "source or command, not both" in _err(head + 'source = 0\ncommand = ["x"]\n')
    assert "source: missing" in _err(head)
    assert "1 to 64 strings" in _err(head + "command = []\n")
    assert "command[1]: expected a string" in _err(head + 'command = ["x", 3]\n')
    assert "command[0]: expected the program" in _err(head + 'command = [" "]\n')
    assert "is a serial port, not a camera" in _err(head + 'source = "/dev/ttyACM0"\n')
    assert "libcamera:N" in _err(head + 'source = "libcamera:99"\n')
    assert "libcamera:N" in _err(head + 'source = "libcamera:x"\n')
    assert "camera index from 0 to 255" in _err(head + 'source = "300"\n')
