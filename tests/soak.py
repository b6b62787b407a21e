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
from robot.sim.protocol_sim import forget, rig_for_url
from solver import SOLVED_CUBE, invert, parse_moves, random_scramble, simplify


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
                        report = job.run(link, journal, cube, moves)
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
