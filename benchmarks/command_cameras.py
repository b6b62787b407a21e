"""Command cameras that misbehave (issue 46, P3 and P4): `cuberobot scan`
run as a process against camera programs that send nothing, hide behind a
shell whose child holds the pipes (with and without frames coming), flood
their standard error, claim a 30000x30000 frame, die mid-frame or ignore
SIGTERM; then the command killed with SIGKILL while its camera runs.

    python benchmarks/command_cameras.py [--timeout-s 2] [--rounds 1] [--only CASE]

The camera programs are tests/standins/hostile_camera.py's plans, put in
the default set-up in place of the upper simulated camera (``timeout_s``
as given). For each: the command's exit status and the time to it (from
the command's start, and from its camera's: the first pid file written),
its last line of errors, its peak resident memory (wait4's ru_maxrss: the
command and the children it waited for), and how many of the camera's
processes were still running once it had returned (each process writes
its pid and group; a process counts as running while /proc shows it, or
anything else in its group, not a zombie; looked at until 5 s after the
command returned). A command still running after --hang-s counts as hung;
it and its cameras are then killed.

The bars: every command ends within its camera's timeout and a few
seconds more, says why in one line (the camera with frames ends with the
scan's own report), keeps under 400 MB, and leaves no camera process;
after SIGKILL, the camera's processes are gone within 2 s. Before the fix
(2026-12-06, timeout_s 2): the silent camera and the shell were left
running, the shell with frames hung the command, standard error took it
to 690 MB and the 30000x30000 frame to 1547 MB (2330 and 4760 MB at
timeout_s 10), and after SIGKILL the shell's processes ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hostile_cameras import camera_argv, grey_frame, running, set_up_text, wait_gone  # noqa: E402

BAR_MB = 400
CASES = ("silent", "child-shell", "child-shell-frames", "stderr", "huge", "cut", "stubborn", "frames")


def run_case(case: str, timeout_s: float, hang_s: float) -> dict[str, object]:
    folder = Path(tempfile.mkdtemp(prefix=f"cuberobot-camera-{case}-"))
    pids = folder / "pids"
    pids.mkdir()
    try:
        cfg = folder / "rig.toml"
        cfg.write_text(set_up_text(camera_argv(case), timeout_s))
        env = {**os.environ, "CUBEROBOT_CAMERA_PIDS": str(pids), "PYTHONPATH": str(ROOT)}
        if case == "child-shell-frames":
            env["CUBEROBOT_CAMERA_FRAME"] = str(grey_frame(folder / "grey.jpg"))
        err = (folder / "stderr").open("w+b")
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "robot", "scan", "--config", str(cfg), "--headless"],
                                cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)
        hung = False
        while True:
            done, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() - t0 > hang_s:
                hung = True
                os.killpg(proc.pid, signal.SIGKILL)
                done, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        wall = time.monotonic() - t0
        ended = time.time()
        started = [f.stat().st_mtime for f in pids.iterdir()]
        since = ended - min(started) if started else float("nan")
        proc.returncode = os.waitstatus_to_exitcode(status)
        left, _ = wait_gone(pids, 5.0)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").splitlines()
        return {"case": case, "code": "hung" if hung else proc.returncode, "wall": wall, "since": since,
                "peak_mb": usage.ru_maxrss / 1024, "left": len(left), "lines": len(lines),
                "last": lines[-1][:160] if lines else ""}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def kill_9(timeout_s: float) -> dict[str, object]:
    """The command killed with SIGKILL while its camera (a shell and its
    child, holding the pipe) runs: how long its processes live on."""
    folder = Path(tempfile.mkdtemp(prefix="cuberobot-camera-kill-"))
    pids = folder / "pids"
    pids.mkdir()
    try:
        cfg = folder / "rig.toml"
        cfg.write_text(set_up_text(camera_argv("child-shell"), timeout_s))
        env = {**os.environ, "CUBEROBOT_CAMERA_PIDS": str(pids), "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([sys.executable, "-m", "robot", "scan", "--config", str(cfg), "--headless"],
                                cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while not running(pids) and time.monotonic() < deadline:
            time.sleep(0.01)
        seen = len(running(pids))
        proc.kill()
        proc.wait()
        left, took = wait_gone(pids, 10.0)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        return {"case": "kill -9", "seen": seen, "left": len(left), "took": took}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout-s", type=float, default=2.0, help="the camera's timeout_s")
    ap.add_argument("--hang-s", type=float, default=30.0, help="a command running longer is hung")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--only", choices=CASES + ("kill",), action="append")
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
          f"timeout_s {args.timeout_s:g}")
    bad = 0
    for _ in range(args.rounds):
        for case in CASES:
            if args.only and case not in args.only:
                continue
            r = run_case(case, args.timeout_s, args.hang_s)
            ok = (r["code"] in (1, 2) and (r["lines"] == 1 or case == "child-shell-frames") and r["left"] == 0
                  and float(r["peak_mb"]) < BAR_MB and float(r["wall"]) < args.timeout_s + 8)
            bad += not ok
            print(f"{case:18} exit {r['code']!s:4} {r['wall']:6.2f} s ({r['since']:5.2f} s after the camera "
                  f"started)  peak {r['peak_mb']:7.0f} MB  "
                  f"left running {r['left']}  lines {r['lines']}  {'ok' if ok else 'FAILS'}: "
                  f"{re.sub(r'/tmp/[^ )]*', '...', str(r['last']))}")
        if not args.only or "kill" in args.only:
            r = kill_9(60.0)
            ok = r["seen"] and r["left"] == 0 and float(r["took"]) < 2
            bad += not ok
            print(f"{'kill -9':18} camera processes seen {r['seen']}, left running {r['left']}, gone in "
                  f"{r['took']:.2f} s  {'ok' if ok else 'FAILS'}")
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
