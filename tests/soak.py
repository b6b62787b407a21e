"""Soak runs: many solves through a faulty link, each checked against the rig's truth.

Test tooling, not part of the installed package: used by the fault-injection
tests and by benchmarks/link.py and benchmarks/firmware.py, which run them
at full size. Each solve starts
from a scrambled virtual cube and executes the scramble's inverse; whatever
goes wrong on the way (lost bytes, a pulled cable, a firmware reset) is
handled the way a user would: ``resume`` after a lost connection, a rescan
(here: asking the virtual rig for its cube) when the driver says the state is
unknown. At the end the virtual cube must be solved and the journal must list
exactly the moves the rig completed, each once.

**Sizes.** Each soak has a full count (the issue's bar, e.g. 100 solves),
which its benchmark runs, and the suite runs a seeded part of it, the
first solves of the same seeded sequence, chosen so that every kind of
fault still comes up (:func:`sized`). ``CUBEROBOT_SOAK_SCALE=1`` runs the
full counts in the suite instead (0.5: half of each, and so on).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
import urllib.parse
from dataclasses import dataclass, field

from robot.rig import job
from robot.rig.errors import RigError
from robot.rig.journal import Journal
from robot.rig.link import Link, LinkLost
from robot.rig.motion import plan
from robot.sim.protocol_sim import forget, rig_for_url
from solver import (
    SOLVED,
    SOLVED_CUBE,
    format_moves,
    group_steps,
    invert,
    parse_facelets,
    parse_moves,
    random_scramble,
    simplify,
)

SCALE_VAR = "CUBEROBOT_SOAK_SCALE"


def scale() -> float | None:
    """``CUBEROBOT_SOAK_SCALE``: the part of each soak's full count to run
    (1: all of it); None when it is not set: the suite's own sizes."""
    raw = os.environ.get(SCALE_VAR, "").strip()
    if not raw:
        return None
    value = float(raw)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{SCALE_VAR} must be a number above 0, not {raw!r}")
    return value


def sized(full: int, suite: int, least: int = 1) -> int:
    """How many runs a soak makes here: ``suite`` (the suite's seeded part,
    chosen to hold every kind of fault the soak injects) when
    CUBEROBOT_SOAK_SCALE is not set, else ``full`` (its count at full size,
    what its benchmark runs) times the scale, rounded, and at least
    ``least`` (the fewest with every kind of fault)."""
    s = scale()
    return suite if s is None else max(least, round(full * s))


@dataclass
class SoakResult:
    solves: int = 0
    turns: int = 0
    resumes: int = 0
    rescans: int = 0
    retransmissions: int = 0
    estimated_s: float = 0.0
    simulated_s: float = 0.0
    host_s: float = 0.0
    wall_s: float = 0.0
    failures: list[str] = field(default_factory=list)


def soak_one(k: int, config, state_dir, *, faults: str, scramble_len: int = 20, speed: str = "max",
             max_rounds: int = 20) -> SoakResult:
    res = SoakResult()
    scramble = random_scramble(scramble_len, seed=k)
    start = SOLVED_CUBE.apply(scramble)
    q = urllib.parse.urlencode({"speed": speed, "seed": k, "faults": faults, "state": start.to_facelets()})
    url = f"sim://soak{k}?{q}"
    forget(url)
    rig = rig_for_url(url)
    history = list(scramble)  # what has been done to the rig's cube, as far as the rig knows
    t0 = time.monotonic()
    with Journal(state_dir) as journal:
        link = Link(config, url)
        try:
            mode = "run"
            moves = invert(scramble)
            cube = start
            for _ in range(max_rounds):
                try:
                    if mode == "run":
                        if link.hello is None:
                            link.connect()
                        report = job.run(link, journal, cube, plan(group_steps(moves), link.config))
                    else:
                        report = job.resume(link, journal)
                    res.host_s += report.host_s
                    res.estimated_s += report.estimated_s
                    break
                except job.StateUnknown:
                    # The rescan: the virtual rig's cube is the truth.
                    res.rescans += 1
                    history = list(scramble) + [m for r in rig.record for m in r.moves]
                    cube = rig.cube
                    moves = simplify(invert(history))
                    assert cube.apply(moves).is_solved()
                    mode = "run"
                    if link.estop_latched or (link.last_status and link.last_status.estop):
                        link.clear_estop()
                except (LinkLost, RigError):
                    res.resumes += 1
                    res.retransmissions += link.retransmissions
                    link.close()
                    link = Link(config, url)
                    link.connect()
                    if link.estop_latched and journal.unfinished() is None:
                        link.clear_estop()
                    mode = "resume" if journal.unfinished() is not None else "run"
                    if mode == "run":
                        history = list(scramble) + [m for r in rig.record for m in r.moves]
                        cube = rig.cube
                        moves = simplify(invert(history))
            else:
                res.failures.append(f"solve {k}: gave up after {max_rounds} rounds")
            res.retransmissions += link.retransmissions
        finally:
            link.close()
        res.wall_s = time.monotonic() - t0
        res.simulated_s = rig.tick / 25000
        check_against_rig(journal, rig, res, k)
    forget(url)
    res.solves = 1
    return res


def check_against_rig(journal: Journal, rig, res: SoakResult, k: int) -> None:
    """The journal's turns are the rig's completed moves, in order, each once."""
    if not rig.cube.is_solved():
        res.failures.append(f"solve {k}: the virtual cube is not solved: {rig.cube.to_facelets()}")
    turns = []
    declared = set()  # moves a job ended "unknown" about: the rig may or may not have done them
    for js in journal.read():
        turns += [(t["id"], tuple(parse_moves(t["moves"]))) for t in js.turns]
        if js.end and js.end["status"] == "unknown":
            declared |= {(js.move_id(i), tuple(parse_moves(js.steps[i]))) for i in js.end["maybe"]}
    done = [(r.move_id, r.moves) for r in rig.record if r.complete]
    unexplained = [d for d in done if d not in declared]
    if turns != unexplained:
        res.failures.append(f"solve {k}: journal {turns} != rig record {done}")
    ids = [i for i, _ in done]
    if len(set(ids)) != len(ids):
        res.failures.append(f"solve {k}: a move id was executed twice: {ids}")
    res.turns += len(done)


LINK_SOLVES = 100
"""The full count of the in-process fault soak (issue 5's bar): benchmarks/link.py."""


def link_faults_for(k: int) -> str:
    """Solve ``k``'s faults in the in-process soak (12-move scrambles): 1 %
    of the bytes dropped and 1 % corrupted in every solve, the cable pulled
    in solves 3, 13, 23, ..., the firmware reset in 7, 17, 27, ..., both in
    11, 36, 61 and 86; the first 12 solves have each kind."""
    spec = "drop:0.01,corrupt:0.01"
    if k % 10 == 3:
        spec += f",disconnect:{300 + 29 * k}"
    if k % 10 == 7:
        spec += f",reset:{0.5 + 0.02 * k:.2f}"  # within a 12-move job (about 1.5 s of turning)
    if k % 25 == 11:
        spec += f",disconnect:{500 + k},reset:{1.5 + 0.01 * k:.2f}"
    return spec


def soak(n: int, config, state_root, *, faults_for=None, **kw) -> SoakResult:
    """``n`` solves; ``faults_for(k)`` gives each solve's fault spec."""
    total = SoakResult()
    for k in range(n):
        faults = faults_for(k) if faults_for else "drop:0.01,corrupt:0.01"
        r = soak_one(k, config, f"{state_root}/{k}", faults=faults, **kw)
        for f in dataclasses.fields(SoakResult):
            a, b = getattr(total, f.name), getattr(r, f.name)
            setattr(total, f.name, a + b)
    return total


# ---------------------------------------------------------------- power cuts

TAIL_LOSSES = ("unsynced", "torn", "three")
"""What a power cut (or an OS crash) may take from the journal's end, and
more: every line after the last turn record (what an unforced tail could
lose), the last line cut in the middle, or the last three lines whole."""


def lose_tail(path, mode: str, rng) -> None:
    """Mutilate the journal at ``path`` the way ``mode`` says."""
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if mode == "unsynced":
        turns = [n for n, line in enumerate(lines) if b'"type":"turn"' in line]
        keep = lines[:turns[-1] + 1] if turns else lines[:1]
        path.write_bytes(b"".join(line + b"\n" for line in keep))
    elif mode == "torn":
        last = lines[-1] if lines else b""
        cut = rng.randrange(2, max(3, len(last)))
        path.write_bytes(b"".join(line + b"\n" for line in lines[:-1]) + last[:cut])
    elif mode == "three":
        path.write_bytes(b"".join(line + b"\n" for line in lines[:-3]))
    else:
        raise ValueError(mode)


@dataclass
class PowerCutResult:
    outcome: str  # "finished", "unknown", "nothing"
    failures: list[str] = field(default_factory=list)


def power_cut_run(k: int, sim, state_dir, mode: str, *, kill_after_s: float,
                  settle_s: float = 1.0) -> PowerCutResult:
    """One run: ``cuberobot dry-run`` through ``sim`` (a SimRigProcess: the
    virtual rig or the firmware behind a pty) killed with SIGKILL after
    ``kill_after_s``, the journal's tail lost as ``mode`` says, then
    ``cuberobot resume``. Checked against the rig's own count and cube: no
    turn twice, no state reported that the rig is not in, nothing moved
    when resume says it cannot know."""
    import random
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from robot.rig.loading import load_config

    rng = random.Random(k)
    scramble = random_scramble(18, seed=10_000 + k)
    start = SOLVED_CUBE.apply(scramble)
    moves = simplify(invert(scramble))
    planned = len(plan(group_steps(moves), load_config()))
    sim.set_state(start.to_facelets())
    before = sim.counts()["moves"]
    res = PowerCutResult("finished")
    p = subprocess.Popen([sys.executable, "-m", "robot", "dry-run", format_moves(moves), "--from",
                          start.to_facelets(), "--port", sim.port, "--state-dir", str(state_dir)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(kill_after_s)
    p.send_signal(signal.SIGKILL)
    p.wait(10)
    journal = Path(state_dir) / "journal.jsonl"
    if journal.exists() and journal.stat().st_size:
        lose_tail(journal, mode, rng)
    time.sleep(settle_s)
    at_resume = sim.counts()["moves"]
    r = subprocess.run([sys.executable, "-m", "robot", "resume", "--port", sim.port, "--state-dir",
                        str(state_dir)], capture_output=True, text=True, timeout=120)
    done = sim.counts()["moves"] - before
    truth = sim.state()
    tag = f"run {k} ({mode}, kill after {kill_after_s:.2f} s)"
    if "Traceback" in r.stderr:
        res.failures.append(f"{tag}: traceback: {r.stderr.strip().splitlines()[-1]}")
    if done > planned:
        res.failures.append(f"{tag}: the rig made {done} moves for a job of {planned}: a turn twice")
    if r.returncode == 0 and "nothing to resume" in r.stdout:
        res.outcome = "nothing"
    elif r.returncode == 0:
        reported = r.stdout.strip().rsplit("final state ", 1)[-1].split()[0]
        if reported != truth:
            res.failures.append(f"{tag}: resume reported {reported}, the rig holds {truth}")
        if truth != SOLVED_CUBE.to_facelets():
            res.failures.append(f"{tag}: resume finished but the cube is not solved")
    else:
        res.outcome = "unknown"
        if sim.counts()["moves"] != at_resume:
            res.failures.append(f"{tag}: resume failed ({r.stderr.strip()}) after moving the rig")
        if "scan" not in r.stderr.lower() and "rescan" not in r.stderr.lower():
            res.failures.append(f"{tag}: resume failed without asking for a scan: {r.stderr.strip()}")
    return res


# ---------------------------------------------------------------- a faulty line

LINE_SOLVES = 100
"""The full count of the faulty-line soak (benchmarks/link.py --line-solves)."""


@dataclass
class LineSoakResult:
    solves: int = 0
    turns: int = 0
    stalls: int = 0
    pulls: int = 0
    resumes: int = 0
    bursts: int = 0
    stopped_by_noise: int = 0
    wall_s: float = 0.0
    failures: list[str] = field(default_factory=list)


def line_soak(n: int, sim, config, root, *, seed: int = 0, stall_every: int = 4, pull_every: int = 10,
              stall_s: tuple[float, float] = (2.0, 5.0)) -> LineSoakResult:
    """``n`` solves on ``sim`` (a rig behind a pty) through a proxy that drops
    and corrupts 1 % of the bytes and puts garbage bursts (with lone and
    paired RT_ESTOP bytes) in about one chunk in ten; every ``stall_every``-th
    solve the line goes dead for 2 to 5 s mid-job, every ``pull_every``-th the
    cable is pulled mid-job and the job is finished with ``resume``. Each
    solve is checked against the rig: solved, every move once, no emergency
    stop that the host did not send."""
    import random

    from fwtools import noise_burst
    from ptyproxy import ManglingProxy

    rng = random.Random(seed)
    res = LineSoakResult()
    t0 = time.monotonic()
    proxy = ManglingProxy(sim.port, drop=0.01, corrupt=0.01, seed=seed, burst=0.1, make_burst=noise_burst)
    try:
        for k in range(n):
            scramble = random_scramble(20, seed=50_000 + k)
            start = SOLVED_CUBE.apply(scramble)
            moves = simplify(invert(scramble))
            sim.set_state(start.to_facelets())
            before = sim.counts()["moves"]
            stall_at = rng.randrange(2, 8) if k % stall_every == stall_every - 1 else None
            pull_at = rng.randrange(2, 8) if k % pull_every == pull_every // 2 else None

            def on_turn(td, stall_at=stall_at, pull_at=pull_at):
                if td.index == stall_at:
                    res.stalls += 1
                    proxy.stall(rng.uniform(*stall_s))
                if td.index == pull_at:
                    res.pulls += 1
                    proxy.pull()

            with Journal(f"{root}/{k}") as journal:
                try:
                    with Link(config, proxy.path) as link:
                        link.on_stall = lambda message: None
                        link.connect()
                        job.run(link, journal, start, plan(group_steps(moves), link.config), on_turn=on_turn)
                except LinkLost:
                    res.resumes += 1
                    with Link(config, proxy.path) as link:
                        link.on_stall = lambda message: None
                        job.resume(link, journal)
                except job.StateUnknown as e:
                    res.stopped_by_noise += 1
                    res.failures.append(f"solve {k}: stopped: {e}")
                    continue
                except RigError as e:
                    res.failures.append(f"solve {k}: {type(e).__name__}: {e}")
                    continue
            done = sim.counts()["moves"] - before
            planned = len(plan(group_steps(moves), config))
            if sim.state() != SOLVED_CUBE.to_facelets():
                res.failures.append(f"solve {k}: the rig's cube is not solved")
            if done != planned:
                res.failures.append(f"solve {k}: the rig made {done} moves for {planned}")
            res.solves += 1
            res.turns += done
    finally:
        res.bursts = proxy.bursts
        proxy.close()
    res.wall_s = time.monotonic() - t0
    return res


# ---------------------------------------------------------------- the firmware in simavr

FIRMWARE_SOLVES = 100
"""The full count of both firmware soaks below (benchmarks/firmware.py)."""


def firmware_solves(n: int, elf, cfg, root) -> dict:
    """``n`` fault-free solves (8-move scrambles, seeds 1000..) on the real
    firmware in simavr, each checked by its effect on the emulated machine:
    the cube solved, every motor's steps in each direction exactly the
    plan's, every DONE's ticks exactly the host's model. An AssertionError
    names the first solve that is wrong."""
    from fwtools import expected_counts
    from simavr_rig import SimavrRig

    from robot.rig import timing
    from robot.sim.virtual_rig import Mechanics

    t0 = time.monotonic()
    with SimavrRig(elf, Mechanics.from_config(cfg)) as rig, Link(cfg, rig.port) as link:
        link.connect()
        plus, minus = [0] * 6, [0] * 6
        moves_total = 0
        for k in range(n):
            scramble = random_scramble(8, seed=1000 + k)
            start = SOLVED_CUBE.apply(scramble)
            rig.set_state(start.to_facelets())
            with Journal(f"{root}/j{k}") as journal:
                report = job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
            assert report.state == SOLVED, f"solve {k}: the host's report is not solved"
            assert rig.state() == SOLVED, f"solve {k}: the emulated cube is not solved"
            p, m = expected_counts(plan(group_steps(invert(scramble)), cfg))
            plus = [a + b for a, b in zip(plus, p)]
            minus = [a + b for a, b in zip(minus, m)]
            moves_total += len(report.steps)
            counts = rig.counts()
            assert (counts["plus"], counts["minus"]) == (plus, minus), f"solve {k}: step counts {counts}"
            # Every DONE's ticks are the host's model, exactly.
            for turn in report.turns:
                motion, settle = timing.move_ticks(turn.step.parts, cfg.profiles())
                assert turn.ticks == motion + settle, f"solve {k}: {turn.ticks} ticks, not {motion + settle}"
        counts = rig.counts()
    assert counts["moves"] == moves_total, f"the firmware made {counts['moves']} moves for {moves_total}"
    assert counts["boots"] == 1 and counts["ignored"] == 0, counts
    return {"solves": n, "moves": moves_total, "simulated_s": counts["cycle"] / 16_000_000,
            "wall_s": time.monotonic() - t0}


def firmware_fault_soak(n: int, elf, cfg, root) -> dict:
    """``n`` solves (10-move scrambles, seeds 2000..) on the real firmware in
    simavr through a line that drops and corrupts 1 % of the bytes each way
    (seed 5), with the board's reset button pressed twice in every ten
    solves: early in solve k when k % 10 == 2, 50 to 90 ms after it began
    (in the handshake or the first moves, wherever the clock puts it), and
    mid-job in solve k when k % 10 == 7, once the firmware has reported
    1 + k % 5 of the solve's moves done (the harness's count of its DONEs,
    polled): a turn cut by the reset whatever the machine's speed. The
    host recovers by itself (retransmission,
    resume after a reset, a rescan when a turn may have been cut); each
    emulated cube, turned only by the firmware's step pulses, must end
    solved and every journalled state must be one the cube passed through,
    in order (an AssertionError names the solve). Returns the counts the
    caller holds to the bar."""
    from ptyproxy import ManglingProxy
    from simavr_rig import SimavrRig

    from robot.sim.virtual_rig import Mechanics

    stats = {"resets": 0, "mid_job_resets": 0, "rescans": 0, "resumes": 0, "retransmissions": 0,
             "host_estops": 0}
    t0 = time.monotonic()
    with SimavrRig(elf, Mechanics.from_config(cfg)) as rig:
        proxy = ManglingProxy(rig.port, drop=0.01, corrupt=0.01, seed=5)
        try:
            for k in range(n):
                _firmware_fault_solve(k, rig, proxy, cfg, f"{root}/s{k}", stats)
        finally:
            proxy.close()
        counts = rig.counts()
    return {"solves": n, "planned_resets": sum(k % 10 in (2, 7) for k in range(n)), "mangled": proxy.mangled,
            **stats, "boots": counts["boots"], "estops": counts["estops"], "wall_s": time.monotonic() - t0}


def firmware_fault_bar(r: dict) -> list[str]:
    """What of the fault soak's bar a result of :func:`firmware_fault_soak`
    misses (nothing: []). The faults really happened and were really
    handled, as many a solve as in the 100 (over 500 bytes mangled, over
    100 retransmissions); every planned reset was pressed and made a boot
    (the 100 allow one in ten to be missed), and the host met each one
    pressed mid-job, resuming or rescanning; and every stop the firmware
    latched was one the host sent: the damaged bytes (a one-byte stop made
    about one in a hundred solves stop) made none."""
    n, resets, mid_job = r["solves"], r["resets"], r["mid_job_resets"]
    unmet = []
    if resets != r["planned_resets"]:
        unmet.append(f"{resets} resets pressed of {r['planned_resets']} planned")
    if not r["resumes"] + r["rescans"] >= mid_job:
        unmet.append(f"{mid_job} resets mid-job met by {r['resumes']} resumes and {r['rescans']} rescans")
    if not r["mangled"] > 5 * n:
        unmet.append(f"{r['mangled']} bytes mangled, not over {5 * n}")
    if not r["retransmissions"] > n:
        unmet.append(f"{r['retransmissions']} retransmissions, not over {n}")
    if not (resets >= 1 and r["boots"] >= 1 + resets - resets // 10):
        unmet.append(f"{r['boots']} boots for {resets} resets")
    if not r["estops"] <= r["host_estops"]:
        unmet.append(f"{r['estops']} stops latched, {r['host_estops']} sent by the host")
    return unmet


def _firmware_fault_solve(k: int, rig, proxy, cfg, state_dir, stats: dict) -> None:
    import threading

    scramble = random_scramble(10, seed=2000 + k)
    start = SOLVED_CUBE.apply(scramble)
    rig.set_state(start.to_facelets())
    timer: threading.Thread | None = None
    stop = threading.Event()
    if k % 10 == 2:  # the reset button early on, by the clock: in the handshake or the first moves
        def press_early() -> None:
            if not stop.wait(0.05 + 0.01 * (k % 5)):
                rig.reset()
                stats["resets"] += 1

        timer = threading.Thread(target=press_early, daemon=True)
    if k % 10 == 7:  # the reset button mid-job: once the firmware says it has made some of the moves
        after = rig.counts()["moves"] + 1 + k % 5

        def press_mid_job() -> None:
            while not stop.is_set():
                if rig.counts()["moves"] >= after:
                    rig.reset()
                    stats["resets"] += 1
                    stats["mid_job_resets"] += 1
                    return
                time.sleep(0.002)

        timer = threading.Thread(target=press_mid_job, daemon=True)
    if timer is not None:
        timer.start()
    with Journal(state_dir) as journal:
        link = _counted_link(cfg, proxy.path, stats)
        try:
            mode, cube, moves = "run", start, invert(scramble)
            for _ in range(30):
                try:
                    if mode == "run":
                        if link.hello is None:
                            link.connect()
                        if link.estop_latched:
                            link.clear_estop()
                        job.run(link, journal, cube, plan(group_steps(moves), link.config))
                    else:
                        job.resume(link, journal)
                    break
                except job.StateUnknown:
                    stats["rescans"] += 1
                    cube, moves = _firmware_rescan(rig, scramble)
                    if link.estop_latched or (link.last_status and link.last_status.estop):
                        link.clear_estop()
                    mode = "run"
                except (LinkLost, RigError):
                    stats["resumes"] += 1
                    stats["retransmissions"] += link.retransmissions
                    link.close()
                    link = _counted_link(cfg, proxy.path, stats)
                    link.connect()
                    if link.estop_latched and journal.unfinished() is None:
                        link.clear_estop()
                    mode = "resume" if journal.unfinished() is not None else "run"
                    if mode == "run":
                        cube, moves = _firmware_rescan(rig, scramble)
            else:
                raise AssertionError(f"solve {k}: no end after 30 rounds")
            stats["retransmissions"] += link.retransmissions
        finally:
            link.close()
            if timer is not None:
                if k % 10 == 7:
                    stop.set()  # (a job too short to reach the press: counted as a reset not pressed)
                timer.join()
        # Every state the journal recorded is one the cube really passed
        # through, in order.
        history = parse_moves(rig.history())
        true_states = [start.apply(history[:i]).to_facelets() for i in range(len(history) + 1)]
        pos = 0
        for js in journal.read():
            for turn in js.turns:
                assert turn["state"] in true_states[pos:], f"solve {k}: journal says {turn}"
                pos = true_states.index(turn["state"], pos)
    assert rig.state() == SOLVED, f"solve {k}: the emulated cube is not solved"


def _counted_link(cfg, path: str, stats: dict) -> Link:
    """The driver, with its completion margin sized for an emulator that runs
    faster than real time (the margin covers the host's own latency), and
    its emergency stops counted."""
    link = Link(cfg, path)
    link.completion_margin_s = 0.03
    estop = link.estop

    def counted_estop() -> None:
        stats["host_estops"] += 1
        estop()

    link.estop = counted_estop  # type: ignore[method-assign]
    return link


def _firmware_rescan(rig, scramble):
    """What a camera rescan gives: the true state; solved by undoing everything."""
    cube = parse_facelets(rig.state())
    history = list(scramble) + parse_moves(rig.history())
    moves = simplify(invert(history))
    assert cube.apply(moves).is_solved()
    return cube, moves
