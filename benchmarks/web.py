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
  no run, CPU time over ``--seconds``; bar: under 5 % of one core;
* e-stop: mid-solve, the time from pressing stop to the rig latching it, by
  the page (POST /api/estop over a new loopback connection, as a browser's
  button sends it) and by the terminal (Ctrl-C: SIGINT to this process, whose
  main thread sits in a blocking call, as `cuberobot start`'s does in
  link.poll; the handler's KeyboardInterrupt ends in link.estop(), what
  `estop_on_interrupt` does), alternating, ``--estops`` of each; on the
  simulated rig the latch is the rig's own (its e-stop handler runs), on the
  firmware in simavr (``--firmware``) it is the host hearing the firmware's
  ESTOP_LATCHED event. The issue asks the page to be as fast as Ctrl-C.

    python benchmarks/web.py --only estop [--estops 10] [--firmware]
"""

from __future__ import annotations

import argparse
import http.client
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


class _Latch:
    """When the rig latched the emergency stop (perf_counter), for one run."""

    def __init__(self, panel, rig_url: str | None):
        self.at: float | None = None
        if rig_url is not None:  # the simulated rig: its own e-stop handler
            from robot.sim.protocol_sim import rig_for_url

            rig = rig_for_url(rig_url)
            own = rig._do_estop

            def latched(arg: int) -> None:
                own(arg)
                self.at = self.at or time.perf_counter()

            rig._do_estop = latched  # type: ignore[method-assign]
        else:  # the firmware in simavr: the host hears its ESTOP_LATCHED event
            from robot.rig import protocol as P

            link = panel.rig.standing.handle.link
            heard = link._handle

            def handle(seq: int, msg) -> None:  # type: ignore[no-untyped-def]
                if isinstance(msg, P.Event) and msg.event == P.EventCode.ESTOP_LATCHED:
                    self.at = self.at or time.perf_counter()
                heard(seq, msg)

            link._handle = handle  # type: ignore[method-assign]

    def wait(self, timeout: float = 10.0) -> float:
        deadline = time.monotonic() + timeout
        while self.at is None:
            if time.monotonic() > deadline:
                raise RuntimeError("the rig did not latch the emergency stop")
            time.sleep(0.001)
        return self.at


def _by_page(client: Client, panel) -> float:
    """A new connection for the request (the slowest a browser does it)."""
    t0 = time.perf_counter()
    status, body, _ = client.post("/api/estop")
    if status != 200 or not body.get("sent"):
        raise RuntimeError(f"POST /api/estop: {status} {body}")
    return t0


def _by_page_kept(client: Client, panel) -> float:
    """On a connection already open (a browser keeps its page's connections
    open for a while: it is opened here with a GET just before)."""
    conn = http.client.HTTPConnection(client.host, client.port, timeout=10)
    conn.request("GET", "/api/status", headers={"Host": client.netloc})
    conn.getresponse().read()
    t0 = time.perf_counter()
    conn.request("POST", "/api/estop", body=b"{}", headers={"Host": client.netloc,
                                                          "Content-Type": "application/json"})
    r = conn.getresponse()
    body = json.loads(r.read())
    conn.close()
    if r.status != 200 or not body.get("sent"):
        raise RuntimeError(f"POST /api/estop: {r.status} {body}")
    return t0


def _by_ctrl_c(client: Client, panel) -> float:
    """SIGINT to this process while its main thread blocks (in a sleep here,
    in link.poll's select for `cuberobot start`): the handler's
    KeyboardInterrupt is caught and link.estop() sent, as estop_on_interrupt does."""
    import signal

    link = panel.rig.standing.handle.link
    sent: list[float] = []

    def ctrl_c() -> None:
        time.sleep(0.05)  # the main thread is asleep by now
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=ctrl_c).start()
    try:
        time.sleep(5)
        raise RuntimeError("Ctrl-C did not arrive")
    except KeyboardInterrupt:
        link.estop()
    return sent[0]


def estop_latency(state_dir: Path, trials: int, firmware: str | None = None) -> dict[str, list[float]]:
    """ms from pressing stop to the latch, page and terminal alternating, each mid-solve."""
    ways = {"page": _by_page, "page-kept": _by_page_kept, "ctrl-c": _by_ctrl_c}
    got: dict[str, list[float]] = {k: [] for k in ways}
    kw = {"firmware": firmware, "firmware_speed": "1"} if firmware else {"speed": "2"}
    with panel_server(state_dir, **kw) as (base, panel, rig_url):
        client = Client(base)
        names = list(ways)
        for i in range(trials * len(names)):
            name = names[(i + i // len(names)) % len(names)]  # each way first in turn
            client.post("/api/start", {"seed": 40 + i})
            client.events(lambda e: e["kind"] == "turn-done" and e["index"] >= 1, timeout=120)
            latch = _Latch(panel, None if firmware else rig_url)
            t0 = ways[name](client, panel)
            got[name].append((latch.wait() - t0) * 1000)
            client.wait_state("stopped", "failed", timeout=60)
            status, body, _ = client.post("/api/estop/clear")
            if status != 200:
                raise RuntimeError(f"clearing the e-stop: {status} {body}")
    return got


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
            "max": round(max(values), 3), "n": len(values)}


def report_estop(state_dir: Path, trials: int, firmware: str | None) -> dict:
    got = estop_latency(state_dir, trials, firmware)
    page, kept, term = _spread(got["page"]), _spread(got["page-kept"]), _spread(got["ctrl-c"])
    ratio, ratio_kept = round(page["median"] / term["median"], 2), round(kept["median"] / term["median"], 2)
    rig = "firmware in simavr" if firmware else "simulated rig"
    print(f"e-stop to latch ({rig}): page (new connection) {page} ms, page (open connection) {kept} ms, "
          f"Ctrl-C {term} ms; page / Ctrl-C = {ratio} (new), {ratio_kept} (open)", flush=True)
    return {"rig": rig, "page_ms": page, "page_open_connection_ms": kept, "ctrl_c_ms": term,
            "ratio": ratio, "ratio_open_connection": ratio_kept}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--only", choices=("all", "estop"), default="all")
    ap.add_argument("--estops", type=int, default=10, help="e-stops by each way (default 10)")
    ap.add_argument("--firmware", action="store_true",
                    help="the e-stop on the firmware in simavr too (builds it with make)")
    args = ap.parse_args()
    import tempfile

    if args.only == "estop":
        with tempfile.TemporaryDirectory() as tmp:
            out = [report_estop(Path(tmp), args.estops, None)]
            if args.firmware:
                out.append(report_estop(Path(tmp), args.estops, _firmware()))
        print(json.dumps(out, indent=1))
        return

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
        report["estop"] = [report_estop(Path(tmp), args.estops, None)]
        if args.firmware:
            report["estop"].append(report_estop(Path(tmp), args.estops, _firmware()))
    print(json.dumps(report, indent=1))


def _firmware() -> str:
    from fwtools import UNO_ELF

    subprocess.run(["make", "-s", "-C", str(ROOT / "firmware"), "all", "sim"], check=True,
                   capture_output=True)
    return str(UNO_ELF)


if __name__ == "__main__":
    main()
