"""Running a sequence of turns on the rig without ever losing or repeating one.

The rig's queue is kept full (so the rig never waits for the host), every
DONE is journaled and forced to disk before the next MOVE goes out, and
every doubt is settled by asking the firmware (STATUS) rather than by
guessing: a firmware reset with a turn possibly under way ends the job with
"state unknown, rescan", never with a made-up state.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from solver import Cube

from . import protocol as P
from .errors import RigError
from .journal import JobState, Journal
from .link import EstopLatched, Link, RigReset
from .motion import MotorStep, plan
from .timing import move_ticks, sequence_ticks, ticks_to_s


class StateUnknown(RigError):
    """The cube may be anywhere between two states: it must be scanned again."""


@dataclass
class TurnDone:
    index: int
    step: MotorStep
    state: str
    ticks: int | None  # as measured by the rig (None when its DONE was lost)


@dataclass
class JobReport:
    job: int
    steps: list[MotorStep]
    state: str
    estimated_s: float
    executed_s: float | None  # sum of the rig's own DONE ticks
    wall_s: float
    turns: list[TurnDone] = field(default_factory=list)
    retransmissions: int = 0
    host_s: float = 0.0  # the driver's own CPU time


def steps_from_texts(texts: list[str], config) -> list[MotorStep]:
    return plan([t for t in texts], config)


def _possibly_under_way(js: JobState) -> list[int]:
    return sorted(i for i in js.sent if i >= js.done)


def _unknown(journal: Journal, js: JobState, why: str) -> StateUnknown:
    maybe = _possibly_under_way(js)
    turns = ", ".join(f"{i + 1} ({js.steps[i]})" for i in maybe) or "none"
    msg = (f"{why}. The cube's state is unknown: turn(s) {turns} may have been partly executed. "
           f"The last known state (after {js.done} of {len(js.steps)} turns) was {js.state}. "
           "Rescan the cube and solve again.")
    journal.end(js, "unknown", msg, maybe=maybe)
    return StateUnknown(msg)


def execute(link: Link, journal: Journal, js: JobState, steps: list[MotorStep], *,
            on_turn: Callable[[TurnDone], None] | None = None) -> JobReport:
    """Run ``steps[js.done:]``. The link must be connected (handshake done)."""
    t0 = time.monotonic()
    cpu0 = time.process_time()
    profiles = link.config.profiles()
    cube = Cube.from_facelets(js.state)
    report = JobReport(js.job, steps, js.state,
                       ticks_to_s(sequence_ticks([s.planned() for s in steps[js.done:]], profiles)),
                       None, 0.0)
    capacity = link.hello.queue_capacity if link.hello else 1
    inflight: deque[int] = deque()
    next_i = js.done
    measured = 0
    all_measured = True

    def complete(i: int, ticks: int | None) -> None:
        nonlocal cube, measured, all_measured
        cube = cube.apply(steps[i].moves)
        state = cube.to_facelets()
        journal.turn(js, i, state, ticks)
        if ticks is None:
            all_measured = False
        else:
            measured += ticks
        td = TurnDone(i, steps[i], state, ticks)
        report.turns.append(td)
        if on_turn is not None:
            on_turn(td)

    def on_done(d: P.Done) -> None:
        ids = [js.move_id(i) for i in inflight]
        if d.move_id not in ids:
            return  # a repeat or a move of an earlier session
        for _ in range(ids.index(d.move_id) + 1):
            i = inflight.popleft()
            complete(i, d.ticks if js.move_id(i) == d.move_id else None)

    def sync(st: P.Status) -> None:
        ids = [js.move_id(i) for i in inflight]
        if st.last_done_id in ids:
            for _ in range(ids.index(st.last_done_id) + 1):
                complete(inflight.popleft(), None)
        link.queue_free = capacity - st.queue_len

    def head_budget(i: int) -> float:
        motion, settle = move_ticks(steps[i].parts, profiles)
        return ticks_to_s(motion + settle) * 1.5 / link.time_scale + link.completion_margin_s

    link.on_done = on_done
    head, head_deadline, extra_waits = None, 0.0, 0
    try:
        while js.done < len(steps):
            if link.reset_seen:
                raise RigReset(f"the rig on {link.port} was reset ({link.reset_seen})")
            if link.estop_latched:
                if inflight:
                    link.estop()
                    raise _unknown(journal, js, "The rig went into emergency stop during the job")
                raise RigError("the rig is in emergency stop; clear it with `cuberobot estop --clear`, "
                               "then `cuberobot resume`")
            if link.events_lost:
                sync(link.status())
                continue
            if next_i < len(steps) and link.queue_free > 0 and len(inflight) < capacity:
                link.poll(0)  # take in what has arrived (a DONE, a BOOT) before sending more
                if link.reset_seen or link.events_lost or link.estop_latched:
                    continue
                s = steps[next_i]
                journal.sent(js, next_i)
                inflight.append(next_i)
                parts = list(s.parts)
                ma, sa = parts[0]
                mb, sb = parts[1] if len(parts) > 1 else (P.NO_MOTOR, 0)
                try:
                    reply = link.move(P.MoveCommand(js.move_id(next_i), ma, sa, mb, sb, s.overlap))
                except RigReset as e:
                    if e.refused:  # provably not executed: the restarted firmware refused it
                        inflight.remove(next_i)
                        journal.refused(js, next_i)
                    raise
                if isinstance(reply, P.Err):  # QUEUE_FULL: not queued; learn the truth
                    inflight.remove(next_i)
                    journal.refused(js, next_i)
                    sync(link.status())
                else:
                    next_i += 1
                continue
            if not inflight:
                # Only a stale queue_free (a repeated command's stored ACK) gets here.
                sync(link.status())
                if link.queue_free <= 0:
                    raise RigError("the rig reports a full queue with nothing queued")
                continue
            now = time.monotonic()
            if inflight[0] != head:
                head, head_deadline, extra_waits = inflight[0], now + head_budget(inflight[0]), 0
            if now < head_deadline:
                link.poll(head_deadline - now)
                continue
            st = link.status()
            sync(st)
            if inflight and inflight[0] == head:
                if st.moving and extra_waits < 2:
                    extra_waits += 1
                    head_deadline = time.monotonic() + head_budget(head)
                    continue
                link.estop()
                raise _unknown(journal, js, f"Turn {head + 1} ({steps[head].text}) did not finish "
                                            "(a stalled motor or a lost move); the rig was stopped")
    except EstopLatched as e:
        if _possibly_under_way(js):
            raise _unknown(journal, js, "The rig went into emergency stop during the job") from None
        raise e
    except RigReset as e:
        if _possibly_under_way(js):
            raise _unknown(journal, js, str(e)) from None
        # Nothing was under way: the state is known; start a new session and carry on.
        hello = link.handshake()
        journal.session(js, hello.boot_id)
        return execute(link, journal, js, steps, on_turn=on_turn)
    except KeyboardInterrupt:
        link.estop()
        raise
    finally:
        link.on_done = None
    journal.end(js, "done", state=cube.to_facelets())
    report.state = cube.to_facelets()
    report.executed_s = ticks_to_s(measured) if all_measured else None
    report.wall_s = time.monotonic() - t0
    report.retransmissions = link.retransmissions
    report.host_s = time.process_time() - cpu0
    return report


def run(link: Link, journal: Journal, start: Cube, moves, *,
        on_turn: Callable[[TurnDone], None] | None = None) -> JobReport:
    """Plan ``moves`` (a sequence or grouped steps), record the job, run it."""
    steps = plan(moves, link.config)
    js = journal.start_job(start.to_facelets(), [s.text for s in steps], port=link.port,
                           config=str(link.config.path) if link.config.path else None)
    if link.hello is None:
        link.connect()
    journal.session(js, link.hello.boot_id)
    try:
        return execute(link, journal, js, steps, on_turn=on_turn)
    except KeyboardInterrupt:
        link.estop()
        raise


def resume(link: Link, journal: Journal, *, on_turn: Callable[[TurnDone], None] | None = None,
           wait_s: float | None = None) -> JobReport | None:
    """Finish the journal's unfinished job from the true state, or say why not.

    Returns None when there is nothing to resume.
    """
    js = journal.unfinished()
    if js is None:
        return None
    with link.estop_on_interrupt():
        return _resume(link, journal, js, on_turn=on_turn, wait_s=wait_s)


def _resume(link: Link, journal: Journal, js: JobState, *, on_turn, wait_s) -> JobReport:
    steps = plan(js.steps, link.config)
    hello = link.connect() if link.hello is None else link.hello
    maybe = _possibly_under_way(js)
    if js.boot_id is not None and hello.boot_id == js.boot_id:
        # Same boot: the firmware's own record is complete. Let queued moves finish.
        ids = {js.move_id(i): i for i in maybe}
        budget = wait_s if wait_s is not None else sum(
            sum(move_ticks(steps[i].parts, link.config.profiles())) for i in maybe) * 1.5 / \
            P.TICK_HZ / link.time_scale + 2.0
        deadline = time.monotonic() + budget
        while True:
            st = link.status()
            if st.queue_len == 0:
                break
            if time.monotonic() > deadline:
                link.estop()
                raise _unknown(journal, js, "The rig's queued turns did not finish in time")
            link.poll(0.05)
        cube = Cube.from_facelets(js.state)
        if st.last_done_id in ids:
            for i in maybe:
                cube = cube.apply(steps[i].moves)
                journal.turn(js, i, cube.to_facelets(), None)
                if js.move_id(i) == st.last_done_id:
                    break
        if st.estop:
            if _possibly_under_way(js):
                # The emergency stop emptied the queue: the turn that was running is half done.
                raise _unknown(journal, js, "The rig was stopped (emergency stop) in the middle of the job")
            link.clear_estop()
        # Same boot, queue empty: every move the rig accepted is done; the rest never arrived.
        js.sent = set(range(js.done))
    elif maybe:
        raise _unknown(journal, js, "The rig was restarted since the job was interrupted")
    journal.session(js, hello.boot_id)
    return execute(link, journal, js, steps, on_turn=on_turn)
