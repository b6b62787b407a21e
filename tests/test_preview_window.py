"""The live preview in a real OpenCV window on a virtual X display (Xvfb),
driven by real mouse and key events (xdotool): clicking a sticker cycles its
colour and Enter accepts the corrected cube.

CI installs xvfb and xdotool; without them this test fails rather than skips.
"""

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time

import pytest

SCRIPT_PROBE = """
import cv2, numpy as np, sys, time
img = np.zeros((720, int(sys.argv[1]), 3), np.uint8)
cv2.namedWindow("probe", cv2.WINDOW_NORMAL)
cv2.setMouseCallback("probe", lambda e, x, y, f, p: print("EV", x, y, flush=True)
                     if e == cv2.EVENT_LBUTTONDOWN else None)
t = time.time()
while time.time() - t < 120:  # the test kills it long before
    cv2.imshow("probe", img)
    cv2.waitKey(20)
"""

SCRIPT_PREVIEW = """
import json
from robot.rig.loading import load_config
from solver import random_cube
from vision.preview import interactive
from vision.scanning import scan
cfg = load_config()
truth = random_cube(5).to_facelets()
result = scan(cfg.cameras, cfg.views, sim_state=truth, sim_seed=2)
print("READY", flush=True)
action, facelets = interactive(result)
print(json.dumps({"action": action, "facelets": facelets, "scanned": result.facelets}), flush=True)
"""


@pytest.fixture
def display():
    for tool in ("Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed (apt install xvfb xdotool)")
    # -displayfd: the server picks a free display and tells us which, once it is ready;
    # -noreset: when the probe window's process ends, the server would otherwise reset and
    # refuse the next client that connects meanwhile ("could not connect to display")
    proc = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "2700x1000x24", "-nolisten", "tcp",
                             "-noreset"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    number = proc.stdout.readline().strip()
    if not number:
        pytest.fail("Xvfb did not start")
    env = {**os.environ, "DISPLAY": f":{number}"}
    yield env
    proc.terminate()
    proc.wait(5)


def _xdo(env, *args) -> str:
    return subprocess.run(["xdotool", *args], env=env, capture_output=True, text=True, timeout=10).stdout


def _window(env, name: str, width: int = 2560) -> str:
    """Find the window, put it at (0, 0) at ``width`` x 720, and return its id
    once it has stayed so: OpenCV resizes a window to its picture at the
    first imshow, which on a loaded machine can come after our resize."""
    deadline = time.monotonic() + 30
    shape = "no window"
    while time.monotonic() < deadline:
        wid = _xdo(env, "search", "--onlyvisible", "--name", name).split()
        if not wid:
            time.sleep(0.2)
            continue
        _xdo(env, "windowsize", wid[0], str(width), "720")
        _xdo(env, "windowmove", wid[0], "0", "0")
        time.sleep(0.8)  # time for OpenCV to lay its picture out, or to undo our size
        shape = _xdo(env, "getwindowgeometry", wid[0])
        if "Position: 0,0 " in shape and f"Geometry: {width}x720" in shape:
            return wid[0]
    pytest.fail(f"window {name!r} did not appear at {width}x720: {' '.join(shape.split())}")


def _spawn(script: str, env, *args: str):
    return subprocess.Popen([sys.executable, "-c", script, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)


def _lines(proc) -> queue.Queue:
    """What ``proc`` prints, a line at a time, read in the background so the
    test can wait for a line with a deadline."""
    lines: queue.Queue = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _click_seen(env, lines: queue.Queue, x: int, y: int, not_this=None) -> tuple[int, int]:
    """Click screen point (x, y) in the probe until it reports the click: on a
    loaded machine the window may still be laying out when the first click
    lands. A late report of an earlier click (``not_this``) is passed over."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        _xdo(env, "mousemove", str(x), str(y), "click", "1")
        try:
            while True:
                fields = lines.get(timeout=2).split()
                if len(fields) == 3 and fields[0] == "EV" and (int(fields[1]), int(fields[2])) != not_this:
                    return int(fields[1]), int(fields[2])
        except queue.Empty:
            time.sleep(0.8)  # past the double-click time before clicking again
    pytest.fail(f"the probe window never reported a click at {(x, y)}")


def _screen_to_image(env, width: int = 2560):
    """Where a window as wide as ``width`` draws an image that wide (it scales
    it and adds a toolbar): click two known screen points in a probe window
    and read them back."""
    probe = _spawn(SCRIPT_PROBE, env, str(width))
    try:
        _window(env, "probe", width)
        lines = _lines(probe)
        points = [(width // 4, 200), (width * 3 // 4, 600)]
        first = _click_seen(env, lines, *points[0])
        time.sleep(0.8)  # not a double click
        seen = [first, _click_seen(env, lines, *points[1], not_this=first)]
    finally:
        probe.kill()
        probe.wait()
    (sx0, sy0), (sx1, sy1) = points
    (ix0, iy0), (ix1, iy1) = seen
    ax, ay = (sx1 - sx0) / (ix1 - ix0), (sy1 - sy0) / (iy1 - iy0)
    return lambda x, y: (round(sx0 + (x - ix0) * ax), round(sy0 + (y - iy0) * ay))


def test_click_cycles_a_sticker_and_enter_accepts(display):
    import numpy as np

    from robot.rig.loading import load_config
    from vision.render import _map, net_to_image

    to_screen = _screen_to_image(display)
    view = load_config().views[0]  # the first view is drawn leftmost
    face = next(f for f in view.faces if f.face == "U")
    x, y = _map(net_to_image(face), np.array([[0.5, 0.5]]))[0]  # sticker U1's centre in the image
    preview = _spawn(SCRIPT_PREVIEW, display)
    try:
        assert preview.stdout.readline().strip() == "READY"
        _window(display, "cuberobot scan")
        sx, sy = to_screen(x, y)
        _xdo(display, "mousemove", str(sx), str(sy), "click", "1")
        time.sleep(0.5)
        _xdo(display, "key", "Return")
        out = json.loads(preview.stdout.readline())
    finally:
        preview.kill()
        preview.wait()
    assert out["action"] == "accept"
    before, after = out["scanned"], out["facelets"]
    assert after[1:] == before[1:]
    assert after[0] == "URFDLB"["URFDLB".index(before[0]) + 1 - 6]  # U1 took the next colour, only U1


def test_geometry_by_clicking_face_corners(display, tmp_path):
    """`cuberobot calibrate --geometry`: click each face's corners, net
    top-left first, in the simulated camera's picture; the written geometry
    is where the faces really are."""
    import tomllib

    from robot.rig.loading import load_config

    to_screen = _screen_to_image(display, 1280)  # one camera's picture per window
    views = load_config().views
    out = tmp_path / "geometry.toml"
    env = {**display, "XDG_CONFIG_HOME": str(tmp_path / "config")}  # put in use: not for the session's tests
    proc = subprocess.Popen([sys.executable, "-m", "robot", "calibrate", "--geometry", "--output", str(out)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    last = None
    try:
        for view in views:
            _window(display, f"cuberobot geometry: {view.name}", 1280)
            for face in view.faces:
                corners = face.corners[face.top_left:] + face.corners[:face.top_left]
                for x, y in corners:
                    sx, sy = to_screen(x, y)
                    if (sx, sy) == last:  # faces share corners: wait out the double-click time
                        time.sleep(0.8)
                    _xdo(display, "mousemove", str(sx), str(sy), "click", "1")
                    last = (sx, sy)
                    time.sleep(0.15)
        stdout, stderr = proc.communicate(timeout=60)
    except BaseException:
        proc.kill()
        print(proc.communicate()[0])  # what the command said, for the failure report
        raise
    assert proc.returncode == 0, stderr
    # put in use as the panel's dragged corners are: the set-up's settings file, named
    settings = next((tmp_path / "config").rglob("*.toml"))
    assert f"saved to {settings} and put in use for " in stderr, stderr
    assert tomllib.loads(settings.read_text())["view"] == tomllib.loads(out.read_text())["view"]
    written = tomllib.loads(out.read_text())["view"]
    assert [v["name"] for v in written] == [v.name for v in views]
    for got, view in zip(written, views):
        for gface, face in zip(got["face"], view.faces):
            assert gface["face"] == face.face and gface.get("top_left", 0) == 0
            expected = face.corners[face.top_left:] + face.corners[:face.top_left]
            for (gx, gy), (x, y) in zip(gface["corners"], expected):
                assert abs(gx - x) <= 4 and abs(gy - y) <= 4, (face.face, gface["corners"], expected)
