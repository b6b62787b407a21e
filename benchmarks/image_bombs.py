"""Image bombs against the panel's photo upload (issue 21): the server's peak
memory and the time to refusal.

    python benchmarks/image_bombs.py [--rounds 3]

A real `cuberobot serve` process on loopback (virtual rig, temporary state
and profile folders) is warmed up with six real phone photos (the cube is
read: 200) and a solve (the solver's tables loaded, as after a run), then
sent, each round:

* a bomb of each format OpenCV reads in this build, alone (as the U photo
  of a form whose other five photos are real): PNG (a real 30000x30000 of
  zeros, 2.6 MB), JPEG (a real progressive JPEG whose header says
  30000x30000), WebP (16384x16384, the format's largest, in the header),
  BMP (an RLE8 30000x30000 that ends at once: the decoder paints every
  pixel itself; 1 KB), TIFF (30000x30000, every strip pointing at one
  deflated strip of zeros, as the issue's: 11 KB), GIF (one 30000x30000
  frame, 34 bytes), AVIF, JPEG 2000, HDR, PNM, PFM and Sun raster;
* six bombs in one form (TIFF, BMP, GIF, JPEG, PNG, WebP as U R F D L B);
* six such forms at once, from six client threads;
* the largest photo of each accepted kind that is taken, alone (it is
  decoded: its grid is looked for, none is found, 422): the worst a
  client can make the server do within the rules.

For each: the answers, the time from sending to the answer, and the server
process's peak resident memory over that request (VmHWM, reset before each
through /proc/PID/clear_refs). The bar: every bomb refused, the peak under
500 MB. Before the fix the TIFF alone took the server to 6.2 GB (22.6 s)
and six at once to 8.8 GB; decoded by OpenCV directly the TIFF takes
5.2 GB and 19 s, the BMP 5.2 GB, the GIF 6.9 GB.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from webserver import Client, bmp_bomb, image_bombs, multipart, png_bomb  # noqa: E402

from solver import random_cube  # noqa: E402

BAR_MB = 500
SIX = ["TIFF", "BMP", "GIF", "JPEG", "PNG", "WebP"]


class Server:
    """`cuberobot serve` as a process of its own, and its memory."""

    def __init__(self, folder: Path):
        env = {**os.environ, "XDG_DATA_HOME": str(folder / "data"), "XDG_STATE_HOME": str(folder / "state"),
               "XDG_CONFIG_HOME": str(folder / "config")}
        self.log = folder / "server.log"
        with open(self.log, "wb") as err:
            command = [sys.executable, "-m", "robot", "serve", "--port", "0",
                       "--state-dir", str(folder / "runs"),
                       "--rig", "sim://bombs?speed=max"]
            self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, cwd=ROOT, env=env)
        self.url = self.proc.stdout.readline().decode().strip()  # type: ignore[union-attr]
        self.client = Client(self.url)

    def status_mb(self, field: str) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        raise KeyError(field)

    def reset_peak(self) -> None:
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=30)


def post_form(server: Server, files: dict[str, bytes]) -> tuple[int, str, float]:
    headers, body = multipart(files)
    t0 = time.monotonic()
    status, answer, _ = server.client.post("/api/photos", raw=body, headers=headers)
    took = time.monotonic() - t0
    error = answer.get("error") if isinstance(answer, dict) else None
    message = error["message"] if error else f"read: {answer.get('facelets', '')[:12]}…"
    return status, message, took


def measured(server: Server, work) -> tuple[object, float]:  # type: ignore[no-untyped-def]
    """work()'s result and the server's peak resident MB while it ran."""
    server.reset_peak()
    out = work()
    return out, server.status_mb("VmHWM")


def phone_photos() -> dict[str, bytes]:
    """Six real 12-megapixel photos of a cube (4000x3000 JPEGs)."""
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the synthetic photos
    from photo_render import render_cube_photos, write_photo

    from solver import random_cube

    shots = render_cube_photos(random_cube(1).to_facelets(), np.random.default_rng(501), size=(4000, 3000))
    rng = np.random.default_rng(0)
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for face, shot in shots.items():
            p = Path(d) / f"{face}.jpg"
            write_photo(shot.image, str(p), rng)
            out[face] = p.read_bytes()
    return out


def largest_accepted() -> dict[str, bytes]:
    """The largest photo of each accepted kind the reader takes (at its limit)."""
    import cv2
    import numpy as np

    grey = np.full((8000, 8000, 3), 128, np.uint8)

    def encoded(ext: str, img: np.ndarray, *params: int) -> bytes:
        return bytes(cv2.imencode(ext, img, list(params))[1].tobytes())

    return {
        "PNG 4300x4300": png_bomb(4300, 4300),
        "JPEG 8000x8000 (baseline)": encoded(".jpg", grey),
        "JPEG 6680x6680 (progressive)": encoded(".jpg", grey[:6680, :6680], cv2.IMWRITE_JPEG_PROGRESSIVE, 1),
        "WebP 4090x4090 (lossless)": encoded(".webp", grey[:4090, :4090], cv2.IMWRITE_WEBP_QUALITY, 101),
        "BMP 4300x4300 (RLE8)": bmp_bomb(4300, 4300),  # the same RLE trick as the bomb, at the limit
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    bombs = image_bombs(png=(30000, 30000))
    photos = phone_photos()
    big = largest_accepted()
    six = dict(zip("URFDLB", (bombs[k] for k in SIX)))
    rows: dict[str, list[tuple[str, float, float]]] = {}

    def note(name: str, answers: str, took: float, peak: float) -> None:
        rows.setdefault(name, []).append((answers, took, peak))

    with tempfile.TemporaryDirectory() as d:
        server = Server(Path(d))
        try:
            (status, _, took), peak = measured(server, lambda: post_form(server, photos))
            print(f"warm-up: six 12-MP phone photos -> {status} in {took:.2f} s, peak {peak:.0f} MB; "
                  f"resident now {server.status_mb('VmRSS'):.0f} MB")
            cube = random_cube(7).to_facelets()
            status, _, _ = server.client.post("/api/solve", {"facelets": cube, "budget_ms": 0})
            print(f"warm-up: a solve (the solver's tables loaded, as after a run) -> {status}; "
                  f"resident now {server.status_mb('VmRSS'):.0f} MB")
            for _ in range(args.rounds):
                for kind, bomb in bombs.items():
                    (status, message, took), peak = measured(
                        server, lambda b=bomb: post_form(server, {"U": b, **{f: photos[f] for f in "RFDLB"}}))
                    note(f"{kind} ({len(bomb)} bytes)", f"{status}: {message[:70]}", took, peak)
                (status, message, took), peak = measured(server, lambda: post_form(server, six))
                note("six bombs in one form", f"{status}: {message[:70]}", took, peak)
                (answers, took), peak = measured(server, lambda: _at_once(server, six, 6))
                note("six such forms at once", answers, took, peak)
                (status, message, took), peak = measured(server, lambda: post_form(server, photos))
                note("six real 12-MP photos (4000x3000 JPEG)", f"{status}: {message[:70]}", took, peak)
                for name, data in big.items():
                    (status, message, took), peak = measured(
                        server, lambda b=data: post_form(server, {"U": b, **{f: photos[f] for f in "RFDLB"}}))
                    note(f"largest accepted: {name}, {len(data)} bytes", f"{status}: {message[:60]}", took,
                         peak)
        finally:
            code = server.stop()
            log = server.log.read_text(errors="replace")
    print(f"server exit {code}; tracebacks in its log: {log.count('Traceback')}")
    print()
    print("| upload | answer | time to answer, s (median of rounds) | peak server memory, MB (max) "
          "| under 500 MB |")
    print("|---|---|---|---|---|")
    for name, got in rows.items():
        peak = max(p for _, _, p in got)
        print(f"| {name} | {got[0][0]} | {statistics.median(t for _, t, _ in got):.3f} | {peak:.0f} | "
              f"{'yes' if peak < BAR_MB else 'NO'} |")


def _at_once(server: Server, files: dict[str, bytes], n: int) -> tuple[str, float]:
    """n uploads of ``files`` at once: their statuses (counted) and the time to the last answer."""
    statuses: list[int] = []
    t0 = time.monotonic()

    def one() -> None:
        statuses.append(post_form(server, files)[0])

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counted = ", ".join(f"{statuses.count(s)} x {s}" for s in sorted(set(statuses)))
    return counted, time.monotonic() - t0


if __name__ == "__main__":
    main()
