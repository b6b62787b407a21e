"""The web panel's speed: event latency, API solves per second, idle CPU.

    python benchmarks/web.py [--runs 3] [--seconds 10]

* latency: from the moment the engine hears a turn is done (the rig's DONE
  frame read, the event made) to the moment a client of the live stream
  (Server-Sent Events over loopback HTTP) has it; simulated rig at real
  speed; bar: median under 50 ms;
* solves: POST /api/solve with random cubes (budget_ms 0: the first
  solution, as a client that wants speed asks) from 4 client threads for
  ``--seconds``, with the API's pool of searches at 4 threads (as served)
  and, interleaved, at 1 (one search at a time, as before the pool);
  bar: 100 per second, no errors;
* idle CPU: `cuberobot serve` as a process with one page's stream open and
  no run, CPU time over ``--seconds``; bar: under 5 % of one core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from webserver import Client, panel_server  # noqa: E402

from solver import random_cube  # noqa: E402


def latency(state_dir: Path) -> list[float]:
    """ms from each turn-done event's creation to its arrival at a stream client."""
    with panel_server(state_dir, speed="1") as (base, panel, rig_url):
        client = Client(base)
        got: list[dict] = []
        reader = threading.Thread(target=lambda: got.extend(client.events(lambda e: e["kind"] == "finished",
                                                                          timeout=120)))
        reader.start()
        time.sleep(0.3)
        client.post("/api/start", {})
        reader.join()
    return [(e["received"] - e["t"]) * 1000 for e in got if e["kind"] == "turn-done"]


def solves(state_dir: Path, seconds: float, threads: int = 4) -> tuple[int, int, float]:
    cubes = [random_cube(i).to_facelets() for i in range(500)]
    with panel_server(state_dir) as (base, panel, rig_url):
        client = Client(base)
        client.post("/api/solve", {"facelets": cubes[0]})  # tables loaded once
        ok, bad = [0], [0]
        stop = time.monotonic() + seconds

        def work(k: int) -> None:
            i = k
            while time.monotonic() < stop:
                body_in = {"facelets": cubes[i % len(cubes)], "budget_ms": 0}
                status, body, _ = client.post("/api/solve", body_in)
                if status == 200 and body["length"] > 0:
                    ok[0] += 1
                else:
                    bad[0] += 1
                i += threads

        t0 = time.monotonic()
        pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        return ok[0], bad[0], time.monotonic() - t0


def idle_cpu(state_dir: Path, seconds: float) -> float:
    """Percent of one core used by an idle `cuberobot serve` with a stream open."""
    cmd = [sys.executable, "-m", "robot", "serve", "--port", "0", "--state-dir", str(state_dir)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()  # type: ignore[union-attr]
        client = Client(url)
        client.get("/api/status")
        stream = threading.Thread(target=lambda: _hold_stream(client, seconds + 3), daemon=True)
        stream.start()
        time.sleep(2)
        c0, t0 = _cpu(proc.pid), time.monotonic()
        time.sleep(seconds)
        return 100 * (_cpu(proc.pid) - c0) / (time.monotonic() - t0)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _hold_stream(client: Client, seconds: float) -> None:
    try:
        client.events(lambda e: False, timeout=seconds)
    except Exception:  # noqa: BLE001 - the stream ends when the benchmark does
        pass


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    import tempfile

    report: dict = {"latency_ms": [], "solves_per_s": [], "solve_errors": 0, "idle_cpu_percent": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.runs):
            lat = latency(Path(tmp))
            report["latency_ms"].append({"median": round(statistics.median(lat), 2),
                                         "p90": round(sorted(lat)[int(0.9 * len(lat))], 2),
                                         "max": round(max(lat), 2), "turns": len(lat)})
            import robot.web.api as api

            served = api.SOLVE_THREADS
            for threads in (1, served):
                api.SOLVE_THREADS = threads
                ok, bad, wall = solves(Path(tmp), args.seconds)
                key = "solves_per_s" if threads == served else "solves_per_s_one_at_a_time"
                report.setdefault(key, []).append(round(ok / wall, 1))
                report["solve_errors"] += bad
            api.SOLVE_THREADS = served
            report["idle_cpu_percent"].append(round(idle_cpu(Path(tmp), args.seconds), 2))
            print(f"run {r + 1}: latency {report['latency_ms'][-1]}, solves/s {report['solves_per_s'][-1]} "
              f"(one at a time {report['solves_per_s_one_at_a_time'][-1]}) "
                  f"({bad} errors), idle CPU {report['idle_cpu_percent'][-1]} %", flush=True)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
