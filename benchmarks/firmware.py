"""Firmware benchmark: the real Uno binary in simavr.

    python benchmarks/firmware.py [--quick] [--solves N] [--fault-solves N] [--soaks-only]

Prints: flash and RAM use; the tick interrupt's length (a build that raises
the LED pin for the interrupt's duration) with two motors at 12,000 steps/s,
against the 640 cycles of a tick; emergency-stop latency (the host's stop,
Link.estop()) over several stops at random points of a turn; a turn's
duration from the edge log against the host's model; and how fast the
emulator runs compared with real time.

Then the suite's two firmware soaks at full size (tests/soak.py): ``--solves``
fault-free solves with every step counted (tests/test_firmware_sim.py's
``test_100_random_solves_...``) and ``--fault-solves`` solves through a line
that drops and corrupts 1 % of the bytes, the board reset in two of every
ten, early by the clock and mid-job where the firmware's count of its moves
says (tests/test_firmware_faults.py); 100 each, 10 with ``--quick``, 0 to
skip.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))  # test tooling (simavr_rig)

import soak  # noqa: E402  (test tooling, from tests/)
from simavr_rig import SimavrRig  # noqa: E402  (test tooling, from tests/)

from robot.rig import job, timing  # noqa: E402
from robot.rig import protocol as P  # noqa: E402
from robot.rig.journal import Journal  # noqa: E402
from robot.rig.link import Link  # noqa: E402
from robot.rig.loading import load_config  # noqa: E402
from robot.rig.motion import plan  # noqa: E402
from robot.sim.simavr import FIRMWARE_DIR  # noqa: E402
from robot.sim.virtual_rig import Mechanics  # noqa: E402
from solver import SOLVED_CUBE, group_steps, invert, random_scramble  # noqa: E402

F_CPU = 16_000_000
TICK = F_CPU // P.TICK_HZ


def config(tmp: Path, **motor) -> object:
    lines = ["[rig]", 'port = "/dev/null"', ""]
    for i, face in enumerate("URFDLB"):
        lines += [f"[motors.{face}]", f"motor = {i}"] + [f"{k} = {v}" for k, v in motor.items()] + [""]
    path = tmp / f"cfg{len(list(tmp.iterdir()))}.toml"
    path.write_text("\n".join(lines))
    return load_config(path)


def edges(path: Path) -> list[tuple[int, str, int]]:
    out = []
    for line in path.read_text().splitlines():
        c, name, v = line.split()
        out.append((int(c), name, int(v)))
    return out


def make(*args: str) -> str:
    cmd = ["make", "-C", str(FIRMWARE_DIR), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return proc.stdout


def isr_length(tmp: Path, elf: Path) -> list[int]:
    cfg = config(tmp, microsteps=8, max_speed=7.5, acceleration=300.0, start_speed=0.5, settle_ms=0)
    log = tmp / "isr.log"
    with SimavrRig(elf, Mechanics.from_config(cfg), edge_log=log) as rig, Link(cfg, rig.port) as link:
        link.connect()
        with Journal(tmp / "j-isr") as journal:
            job.run(link, journal, SOLVED_CUBE, plan(group_steps("U2 D2 R2 L2 F2 B2"), link.config))
        rig.counts()
    led = [(c, v) for c, n, v in edges(log) if n == "led"]
    return [b[0] - a[0] for a, b in zip(led, led[1:]) if a[1] == 1 and b[1] == 0]


def estop_latencies(tmp: Path, elf: Path, trials: int) -> list[tuple[float, float]]:
    """(from the stop's first byte, from the byte that completes the run) to
    the last step pulse, per stop; the stop is what the host sends."""
    cfg = config(tmp, microsteps=8, max_speed=3.0, acceleration=40.0)
    out = []
    rng = random.Random(1)
    for k in range(trials):
        log = tmp / f"estop{k}.log"
        with SimavrRig(elf, Mechanics.from_config(cfg), edge_log=log) as rig, Link(cfg, rig.port) as link:
            link.connect()
            link.move(P.MoveCommand(1, k % 6, 20000))
            time.sleep(rng.uniform(0.02, 0.2))
            link.estop()
            time.sleep(0.1)
            rig.counts()
        e = edges(log)
        stop = [c for c, n, v in e if n == "rx" and v == P.RT_ESTOP]  # frames never carry 0x18
        first, latching = stop[0], stop[P.ESTOP_RUN - 1]
        last = max(c for c, n, v in e if n == f"step{k % 6}" and v == 1)
        out.append((max(0, last - first) / F_CPU, max(0, last - latching) / F_CPU))  # 0: no pulse after
    return out


def turn_agreement(tmp: Path, elf: Path) -> list[tuple[int, float, int]]:
    cfg = load_config()
    log = tmp / "turns.log"
    moves = "R U2 F' L D B2"
    with SimavrRig(elf, Mechanics.from_config(cfg), edge_log=log) as rig, Link(cfg, rig.port) as link:
        link.connect()
        with Journal(tmp / "j-turns") as journal:
            report = job.run(link, journal, SOLVED_CUBE, plan(group_steps(moves), link.config))
        rig.counts()
    e = edges(log)
    out = []
    seen = {m: 0 for m in range(6)}
    prof = cfg.profiles()
    for step in report.steps:
        (m, n), = step.parts
        rises = [c for c, name, v in e if name == f"step{m}" and v == 1][seen[m]:seen[m] + abs(n)]
        seen[m] += abs(n)
        model = timing.step_ticks(abs(n), prof[m].vmax_q, prof[m].accel_q, prof[m].vmin_q)
        out.append((abs(n), (rises[-1] - rises[0]) / TICK, model[-1] - model[0]))
    return out


def emulator_speed(tmp: Path, elf: Path, solves: int) -> tuple[float, float]:
    cfg = load_config()
    with SimavrRig(elf, Mechanics.from_config(cfg)) as rig, Link(cfg, rig.port) as link:
        link.connect()
        c0, t0 = rig.counts()["cycle"], time.monotonic()
        for k in range(solves):
            scramble = random_scramble(15, seed=k)
            s = SOLVED_CUBE.apply(scramble)
            rig.set_state(s.to_facelets())
            with Journal(tmp / f"j-speed{k}") as journal:
                job.run(link, journal, s, plan(group_steps(invert(scramble)), link.config))
        c1, t1 = rig.counts()["cycle"], time.monotonic()
    return (c1 - c0) / F_CPU, t1 - t0


def soaks(elf: Path, solves: int, fault_solves: int) -> int:
    """The suite's firmware soaks at full size; the number of failures."""
    from fwtools import write_config

    bad = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if solves:
            cfg = load_config(write_config(tmp / "fast.toml"))
            try:
                r = soak.firmware_solves(solves, elf, cfg, tmp / "solves")
                print(f"firmware soak: {r['solves']} solves, {r['moves']} moves, every step and tick as "
                      f"planned; failures: 0; {r['wall_s']:.1f} s wall ({r['simulated_s']:.1f} s simulated)")
            except AssertionError as e:
                bad += 1
                print(f"firmware soak: FAILED: {e}")
        if fault_solves:
            cfg = load_config(write_config(tmp / "faulty.toml", reply_timeout_s=0.01))
            t0 = time.monotonic()
            try:
                r = soak.firmware_fault_soak(fault_solves, elf, cfg, tmp / "faults")
            except AssertionError as e:
                bad += 1
                print(f"firmware fault soak: FAILED after {time.monotonic() - t0:.0f} s: {e}")
            else:
                unmet = soak.firmware_fault_bar(r)  # tests/test_firmware_faults.py's bar
                held = not unmet
                bad += not held
                print(f"firmware fault soak: {r['solves']} solves, 1% bytes dropped + 1% corrupted: "
                      f"{r['mangled']} bytes mangled, {r['retransmissions']} retransmissions, {r['resets']} "
                      f"resets ({r['mid_job_resets']} mid-job; {r['boots']} boots), {r['resumes']} resumes, "
                      f"{r['rescans']} rescans, "
                      f"{r['estops']} stops latched of {r['host_estops']} sent by the host; every cube "
                      f"solved, every journalled state true; bar {'met' if held else f'NOT MET: {unmet}'}; "
                      f"{r['wall_s']:.1f} s wall")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--solves", type=int, default=soak.FIRMWARE_SOLVES, metavar="N",
                    help="fault-free solves with every step counted (0: none)")
    ap.add_argument("--fault-solves", type=int, default=soak.FIRMWARE_SOLVES, metavar="N",
                    help="solves through a mangling line with resets (0: none)")
    ap.add_argument("--soaks-only", action="store_true", help="only the two soaks")
    args = ap.parse_args()
    solves = min(args.solves, 10) if args.quick else args.solves
    fault_solves = min(args.fault_solves, 10) if args.quick else args.fault_solves
    if args.soaks_only:
        make("all", "sim")
        print(f"python {platform.python_version()}, load {os.getloadavg()[0]:.2f}")
        bad = soaks(FIRMWARE_DIR / "build" / "uno" / "cuberobot.elf", solves, fault_solves)
        print(f"load after: {os.getloadavg()[0]:.2f}")
        sys.exit(1 if bad else 0)
    size_re = r"== (\w+) \((\w+)\) ==\s*Program:\s*(\d+) bytes.*?\n\s*Data:\s*(\d+) bytes"
    with tempfile.TemporaryDirectory() as d:  # a build from scratch prints the sizes
        out = make(f"BUILD={d}/build", "all")
    for board, mcu, flash, ram in re.findall(size_re, out, re.S):
        print(f"{board} ({mcu}): flash {flash} B, static RAM {ram} B")
    make("all", "sim")
    prof_build = FIRMWARE_DIR / "build" / "prof"
    make(f"BUILD={prof_build}", "EXTRA=-DCR_PROFILE_ISR", "uno")
    elf = FIRMWARE_DIR / "build" / "uno" / "cuberobot.elf"
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        durs = isr_length(tmp, prof_build / "uno" / "cuberobot.elf")
        busy = sorted(x for x in durs if x > 60)
        print(f"tick interrupt, 2 motors at 12,000 steps/s: median {busy[len(busy) // 2]} cycles, "
              f"p99 {busy[int(0.99 * len(busy))]}, max {busy[-1]} (a tick is {TICK}); idle ticks "
              f"{statistics.median(x for x in durs if x <= 60):.0f} cycles; "
              f"{sum(x > TICK for x in busy)} of {len(busy)} busy ticks longer than a tick")
        lat = estop_latencies(tmp, elf, 3 if args.quick else 10)
        first = [a for a, _ in lat]
        run = [b for _, b in lat]
        print(f"estop (Link.estop(), {P.ESTOP_REPEATS} x {P.ESTOP_RUN} RT_ESTOP bytes), arrival of its first "
              f"byte to the last step pulse: max {max(first) * 1e6:.0f} us, median "
              f"{statistics.median(first) * 1e6:.0f} us over {len(lat)} stops (bar 2000 us); from the "
              f"arrival of byte {P.ESTOP_RUN}: max {max(run) * 1e6:.0f} us, median "
              f"{statistics.median(run) * 1e6:.0f} us")
        for n, measured, model in turn_agreement(tmp, elf):
            print(f"turn of {n} steps: first to last pulse {measured:.2f} ticks, model {model} "
                  f"({100 * (measured - model) / model:+.4f} %)")
        sim_s, wall_s = emulator_speed(tmp, elf, 3 if args.quick else 10)
        print(f"emulator: {sim_s:.1f} s simulated in {wall_s:.1f} s wall ({sim_s / wall_s:.1f}x real time, "
              f"default config, driver included)")
    if soaks(elf, solves, fault_solves):
        sys.exit(1)


if __name__ == "__main__":
    main()
