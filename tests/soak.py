"""Soak runs: many solves through a faulty link, each checked against the rig's truth.

Test tooling, not part of the installed package: used by the fault-injection
test and the link benchmark. Each solve starts
from a scrambled virtual cube and executes the scramble's inverse; whatever
goes wrong on the way (lost bytes, a pulled cable, a firmware reset) is
handled the way a user would: ``resume`` after a lost connection, a rescan
(here: asking the virtual rig for its cube) when the driver says the state is
unknown. At the end the virtual cube must be solved and the journal must list
exactly the moves the rig completed, each once.
"""

from __future__ import annotations

import dataclasses
import time
import urllib.parse
from dataclasses import dataclass, field

from robot.rig import job
from robot.rig.errors import RigError
from robot.rig.journal import Journal
from robot.rig.link import Link, LinkLost
from robot.rig.motion import plan
from robot.sim.protocol_sim import forget, rig_for_url
from solver import SOLVED_CUBE, format_moves, group_steps, invert, parse_moves, random_scramble, simplify


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
