"""Rig link benchmark: the driver's own cost per turn, estimated vs simulated
time, a 100-solve fault-injection soak in-process and another through a
faulty pty line (noise, garbage bursts, stalls, a pulled cable), and power
cuts (the driver killed, the journal's tail lost, resume) against the
virtual rig and the firmware. The two soaks are the suite's
tests/test_link_faults.py and tests/test_link_pty.py
(``test_solves_ride_out_...``) at full size (tests/soak.py).

    python benchmarks/link.py [--solves N] [--line-solves N] [--power-cuts N] [--firmware-cuts N] [--quick]

The virtual rig runs in this process, so its own work is timed separately
(every call into it is wrapped) and subtracted: what remains is the driver
(framing, CRC, retransmission logic, journal writes and fsyncs).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))  # soak: test tooling

import soak  # noqa: E402

from robot.rig import job  # noqa: E402
from robot.rig.journal import Journal  # noqa: E402
from robot.rig.link import Link  # noqa: E402
from robot.rig.loading import load_config  # noqa: E402
from robot.rig.motion import plan  # noqa: E402
from robot.sim.protocol_sim import forget, rig_for_url  # noqa: E402
from robot.sim.virtual_rig import VirtualRig  # noqa: E402
from solver import SOLVED_CUBE, group_steps, invert, random_scramble  # noqa: E402

RIG_TIME = [0.0]


def _timed(fn):
    def wrapper(*a, **kw):
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            RIG_TIME[0] += time.perf_counter() - t
    return wrapper


def overhead(cfg, solves: int, scramble_len: int, state_dir: str) -> dict:
    """Fault-free solves at speed=max: wall time per turn minus the rig's share."""
    originals = {n: getattr(VirtualRig, n) for n in ("receive", "advance", "next_event_time")}
    for n, f in originals.items():
        setattr(VirtualRig, n, _timed(f))
    per_turn, fsync_per_turn, est_err = [], [], []
    try:
        for k in range(solves):
            scramble = random_scramble(scramble_len, seed=1000 + k)
            start = SOLVED_CUBE.apply(scramble)
            url = f"sim://bench{k}?speed=max&state={start.to_facelets()}"
            forget(url)
            with Link(cfg, url) as link, Journal(f"{state_dir}/o{k}") as journal:
                link.connect()
                sync_time = [0.0]
                real_fsync = os.fsync

                def fsync(fd, _real=real_fsync, _acc=sync_time):
                    t = time.perf_counter()
                    _real(fd)
                    _acc[0] += time.perf_counter() - t

                os.fsync = fsync
                RIG_TIME[0] = 0.0
                t0 = time.perf_counter()
                try:
                    report = job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
                finally:
                    os.fsync = real_fsync
                wall = time.perf_counter() - t0
            rig = rig_for_url(url)
            assert rig.cube.is_solved()
            n = len(report.steps)
            per_turn.append((wall - RIG_TIME[0]) / n)
            fsync_per_turn.append(sync_time[0] / n)
            simulated = (rig.record[-1].tick - rig.record[0].start) / 25000
            est_err.append(abs(report.estimated_s - simulated) / simulated)
            forget(url)
    finally:
        for n, f in originals.items():
            setattr(VirtualRig, n, f)
    return {
        "driver_ms_per_turn_median": 1000 * statistics.median(per_turn),
        "driver_ms_per_turn_max": 1000 * max(per_turn),
        "fsync_ms_per_turn_median": 1000 * statistics.median(fsync_per_turn),
        "driver_ms_per_turn_without_fsync_median":
            1000 * statistics.median(p - f for p, f in zip(per_turn, fsync_per_turn)),
        "estimate_error_max_pct": 100 * max(est_err),
    }


def realtime(cfg, speed: float, solves: int, scramble_len: int, state_dir: str) -> dict:
    """Against a wall-clock rig `speed` times faster than real time: does the
    driver keep the rig's queue full, so estimates hold on the rig's clock?"""
    errs = []
    for k in range(solves):
        scramble = random_scramble(scramble_len, seed=2000 + k)
        start = SOLVED_CUBE.apply(scramble)
        url = f"sim://rt{k}?speed={speed}&state={start.to_facelets()}"
        forget(url)
        with Link(cfg, url) as link, Journal(f"{state_dir}/r{k}") as journal:
            link.connect()
            report = job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
        rig = rig_for_url(url)
        assert rig.cube.is_solved()
        simulated = (rig.record[-1].tick - rig.record[0].start) / 25000
        errs.append((simulated - report.estimated_s) / report.estimated_s)
        forget(url)
    return {"speed": speed, "simulated_vs_estimated_pct_mean": 100 * statistics.mean(errs),
            "simulated_vs_estimated_pct_max": 100 * max(errs)}


def power_cuts(n: int, firmware: str | None, root: str) -> dict:
    """``n`` power-cut runs (tests/soak.py) against one rig process: the Python
    virtual rig, or the firmware in simavr; the kill comes at a random moment
    of the job, the tail loss cycles through the three kinds."""
    import random

    from robot.sim.pty_rig import SimRigProcess

    rng = random.Random(2026)
    outcomes: dict[str, int] = {"finished": 0, "unknown": 0, "nothing": 0}
    failures: list[str] = []
    t0 = time.perf_counter()
    with SimRigProcess("--speed", "4", firmware=firmware) as sim:
        for k in range(n):
            mode = soak.TAIL_LOSSES[k % len(soak.TAIL_LOSSES)]
            r = soak.power_cut_run(k, sim, f"{root}/cut{k}", mode, kill_after_s=rng.uniform(0.4, 2.4))
            outcomes[r.outcome] += 1
            failures += r.failures
    return {"runs": n, **outcomes, "failures": failures, "wall_s": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solves", type=int, default=soak.LINK_SOLVES,
                    help="fault-free solves timed, and solves of the in-process fault soak")
    ap.add_argument("--line-solves", type=int, default=soak.LINE_SOLVES, metavar="N",
                    help="solves through the faulty pty line (0: none)")
    ap.add_argument("--power-cuts", type=int, default=50, metavar="N", help="power-cut runs, virtual rig")
    ap.add_argument("--firmware-cuts", type=int, default=10, metavar="N",
                    help="power-cut runs against the firmware in simavr (0: none)")
    ap.add_argument("--quick", action="store_true", help="fewer solves everywhere")
    args = ap.parse_args()
    n = 10 if args.quick else args.solves
    cfg = load_config()
    fast = dataclasses.replace(cfg, rig=dataclasses.replace(cfg.rig, reply_timeout_s=0.004))
    print(f"python {platform.python_version()}, {platform.machine()}, load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as d:
        o = overhead(cfg, n, 25, d)
        print(f"driver overhead per turn (speed=max, {n} solves of 25-move scrambles):")
        print(f"  median {o['driver_ms_per_turn_median']:.3f} ms, worst solve "
              f"{o['driver_ms_per_turn_max']:.3f} ms (bar: < 1 ms)")
        print(f"  of which fsync {o['fsync_ms_per_turn_median']:.3f} ms; without fsync "
              f"{o['driver_ms_per_turn_without_fsync_median']:.3f} ms")
        print(f"  estimated vs simulated time: worst error {o['estimate_error_max_pct']:.4f} %")
        for speed, count in ((1.0, 2), (10.0, max(3, n // 20)), (30.0, max(3, n // 20))):
            r = realtime(cfg, speed, count, 20, d)
            print(f"wall-clock rig at {speed:g}x: simulated/estimated - 1 = mean "
                  f"{r['simulated_vs_estimated_pct_mean']:.3f} %, worst "
                  f"{r['simulated_vs_estimated_pct_max']:.3f} % (bar: within 1 %)")
        t = time.perf_counter()
        # tests/test_link_faults.py's soak at full size: its faults, its 12-move scrambles
        s = soak.soak(n, fast, d + "/soak", faults_for=soak.link_faults_for, scramble_len=12)
        wall = time.perf_counter() - t
        cables = sum(",disconnect:" in soak.link_faults_for(k) for k in range(n))
        resets = sum(",reset:" in soak.link_faults_for(k) for k in range(n))
        print(f"fault soak: {s.solves} solves, {s.turns} turns, 1% bytes dropped + 1% corrupted, "
              f"{cables} cables pulled and {resets} resets planned: {s.resumes} resumes after lost links, "
              f"{s.rescans} rescans after mid-turn resets, {s.retransmissions} retransmissions; "
              f"failures: {len(s.failures)}; {wall:.1f} s wall")
        for f in s.failures[:5]:
            print("  FAIL", f)
        line_n = 10 if args.quick else args.line_solves
        if line_n:
            from robot.sim.pty_rig import SimRigProcess

            with SimRigProcess("--speed", "10") as sim:
                ls = soak.line_soak(line_n, sim, cfg, d + "/line")
            print(f"faulty line: {ls.solves} solves, {ls.turns} turns through a pty proxy: 1% bytes "
                  f"dropped + 1% damaged, {ls.bursts} garbage bursts, {ls.stalls} stalls of 2-5 s, "
                  f"{ls.pulls} pulled cables ({ls.resumes} resumes); stopped by noise "
                  f"{ls.stopped_by_noise}, failures {len(ls.failures)}; {ls.wall_s:.0f} s wall")
            for f in ls.failures[:5]:
                print("  FAIL", f)
        cuts = [("virtual rig", None, 6 if args.quick else args.power_cuts)]
        if args.firmware_cuts:
            from fwtools import UNO_ELF, make

            make("all", "sim")
            cuts.append(("firmware in simavr", str(UNO_ELF), 3 if args.quick else args.firmware_cuts))
        for name, elf, count in cuts:
            c = power_cuts(count, elf, d)
            print(f"power cuts, {name}: {c['runs']} runs (kill -9 at a random moment, then the journal's "
                  f"tail lost), resume finished {c['finished']}, said state unknown {c['unknown']}, found "
                  f"nothing to resume {c['nothing']}; failures: {len(c['failures'])}; "
                  f"{c['wall_s']:.0f} s wall")
            for f in c["failures"][:5]:
                print("  FAIL", f)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
