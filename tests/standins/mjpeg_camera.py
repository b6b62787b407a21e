"""A stand-in for rpicam-vid (and for any MJPEG-writing camera command): it
renders a cube with vision/render.py and writes JPEG after JPEG to its
standard output until the reader goes away (or 120 s pass).

The cube comes from CUBEROBOT_STANDIN_CUBE (54 facelets), the view from
``--camera N`` (0: the default simulated rig's camera A, 1: camera B) or
``--view NAME``. Every call's arguments are appended, as a JSON line, to
CUBEROBOT_STANDIN_LOG when it is set. Given rpicam-vid's flags, it refuses
(status 2, a message on stderr, as rpicam-vid does) a call that would not
write MJPEG to standard output. CUBEROBOT_STANDIN_FAIL makes it print that
text on stderr and end with status 1 at once (a camera that is not there).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from vision.render import Lighting, add_sensor_effects, render_view  # noqa: E402
from vision.setup import default_sim_setup  # noqa: E402


def main() -> int:
    log = os.environ.get("CUBEROBOT_STANDIN_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(sys.argv[1:]) + "\n")
    fail = os.environ.get("CUBEROBOT_STANDIN_FAIL")
    if fail:
        print(fail, file=sys.stderr)
        return 1
    p = argparse.ArgumentParser()
    p.add_argument("--camera", type=int, default=0)
    p.add_argument("--view")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=720)
    p.add_argument("--codec", default="mjpeg")
    p.add_argument("--output", "-o", default="-")
    p.add_argument("--framerate", type=float, default=20)
    p.add_argument("--shutter", type=int)
    p.add_argument("--gain", type=float)
    p.add_argument("--quality", type=int, default=90)
    p.add_argument("--timeout", "-t", default="0")
    p.add_argument("--nopreview", "-n", action="store_true")
    p.add_argument("--flush", action="store_true")
    args = p.parse_args()
    if args.codec != "mjpeg" or args.output != "-":
        print(f"stand-in: expected --codec mjpeg --output -, got {args.codec} {args.output}", file=sys.stderr)
        return 2
    _, views = default_sim_setup()
    view = next(v for v in views if v.name == args.view) if args.view else views[args.camera]
    cube = os.environ.get("CUBEROBOT_STANDIN_CUBE", "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB")
    rng = np.random.default_rng(args.camera)
    light = Lighting(noise=0.0)
    scene = render_view(cube, view, (args.width, args.height), lighting=light, rng=rng)
    light.noise = 2.0
    out = sys.stdout.buffer
    end = time.monotonic() + 120
    try:
        while time.monotonic() < end:
            ok, jpeg = cv2.imencode(".jpg", add_sensor_effects(scene, light, rng),
                                    [cv2.IMWRITE_JPEG_QUALITY, args.quality])
            out.write(jpeg.tobytes())
            out.flush()
            time.sleep(1 / args.framerate)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
