"""Fault injection against the real firmware: solves through a line that drops
and corrupts bytes (1% each), with the board reset mid-solve in some of them.

The host recovers by itself (retransmission, duplicate replies, resume after
a reset, a rescan when a turn may have been cut); the emulated cube, turned
only by the step pulses the firmware really produced, must end solved, and
the journal must tell the truth about every turn it recorded.
"""

from __future__ import annotations

import threading
import time

from fwtools import UNO_ELF, make, write_config
from ptyproxy import ManglingProxy
from simavr_rig import SimavrRig

from robot.rig import job
from robot.rig.errors import RigError
from robot.rig.journal import Journal
from robot.rig.link import Link, LinkLost
from robot.rig.loading import load_config
from robot.rig.motion import plan
from robot.sim.virtual_rig import Mechanics
from solver import (
    SOLVED,
    SOLVED_CUBE,
    Cube,
    group_steps,
    invert,
    parse_facelets,
    parse_moves,
    random_scramble,
    simplify,
)

SOLVES = 100


def _solve(k: int, rig: SimavrRig, proxy: ManglingProxy, cfg, state_dir, stats: dict) -> None:
    scramble = random_scramble(10, seed=2000 + k)
    start = SOLVED_CUBE.apply(scramble)
    rig.set_state(start.to_facelets())
    timer = None
    if k % 10 == 7:  # the reset button, some time into the solve
        timer = threading.Timer(0.05 + 0.01 * (k % 5), rig.reset)
        timer.start()
    with Journal(state_dir) as journal:
        link = _link(cfg, proxy.path, stats)
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
                    cube, moves = _rescan(rig, scramble)
                    if link.estop_latched or (link.last_status and link.last_status.estop):
                        link.clear_estop()
                    mode = "run"
                except (LinkLost, RigError):
                    stats["resumes"] += 1
                    stats["retransmissions"] += link.retransmissions
                    link.close()
                    link = _link(cfg, proxy.path, stats)
                    link.connect()
                    if link.estop_latched and journal.unfinished() is None:
                        link.clear_estop()
                    mode = "resume" if journal.unfinished() is not None else "run"
                    if mode == "run":
                        cube, moves = _rescan(rig, scramble)
            else:
                raise AssertionError(f"solve {k}: no end after 30 rounds")
            stats["retransmissions"] += link.retransmissions
        finally:
            link.close()
            if timer is not None:
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


def _link(cfg, path: str, stats: dict) -> Link:
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


def _rescan(rig: SimavrRig, scramble) -> tuple[Cube, list]:
    """What a camera rescan gives: the true state; solved by undoing everything."""
    cube = parse_facelets(rig.state())
    history = list(scramble) + parse_moves(rig.history())
    moves = simplify(invert(history))
    assert cube.apply(moves).is_solved()
    return cube, moves


def test_100_solves_through_a_mangling_line_with_resets(tmp_path):
    make("all", "sim")
    cfg = load_config(write_config(tmp_path / "fast.toml", reply_timeout_s=0.01))
    stats = {"rescans": 0, "resumes": 0, "retransmissions": 0, "host_estops": 0}
    t0 = time.monotonic()
    with SimavrRig(UNO_ELF, Mechanics.from_config(cfg)) as rig:
        proxy = ManglingProxy(rig.port, drop=0.01, corrupt=0.01, seed=5)
        try:
            for k in range(SOLVES):
                _solve(k, rig, proxy, cfg, tmp_path / f"s{k}", stats)
        finally:
            proxy.close()
        counts = rig.counts()
    boots, estops = counts["boots"], counts["estops"]
    print(f"\n{SOLVES} faulty solves in {time.monotonic() - t0:.1f} s: {proxy.mangled} bytes mangled, "
          f"{stats}, {boots} boots, {estops} emergency stops latched")
    assert proxy.mangled > 500 and stats["retransmissions"] > 100
    assert boots >= 1 + SOLVES // 10 - 1
    # Every stop the firmware latched was one the host sent: the damaged
    # bytes (a one-byte stop made about one in a hundred solves stop) made none.
    assert estops <= stats["host_estops"]
