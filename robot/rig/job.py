"""Running a sequence of turns on the rig without ever losing or repeating one.

The rig's queue is kept full (so the rig never waits for the host: up to
its ``queue_capacity`` moves are sent ahead), every MOVE is journaled as sent
before it goes out, every DONE is journaled and forced to disk as it
arrives, and every doubt is settled by asking the firmware (STATUS) rather than by
guessing: a firmware reset with a turn possibly under way ends the job with
"state unknown, rescan", never with a made-up state.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from solver import Cube, CubeError, parse_facelets, parse_steps

from . import protocol as P
from .errors import RigError
from .journal import ID_SPACE, JobState, Journal, JournalDamaged
from .link import EstopLatched, Link, LinkLost, LinkStalled, RigReset
from .motion import MotorStep, estimate_s, plan
from .timing import move_ticks, ticks_to_s

if TYPE_CHECKING:
    from .config import Config


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


class _Execution:
    """One pass over a job's remaining steps, as named steps: keep the rig's
    queue full (:meth:`send_next`), take in completions (:meth:`complete`,
    from DONE frames or a STATUS), and settle a turn that is late
    (:meth:`check_head`)."""

    def __init__(self, link: Link, journal: Journal, js: JobState, steps: list[MotorStep],
                 on_turn: Callable[[TurnDone], None] | None):
        self.link, self.journal, self.js, self.steps, self.on_turn = link, journal, js, steps, on_turn
        self.profiles = link.config.profiles()
        self.cube = parse_facelets(js.state)
        self.report = JobReport(js.job, steps, js.state, estimate_s(steps[js.done:], link.config), None, 0.0)
        self.capacity = link.hello.queue_capacity if link.hello else 1
        self.inflight: deque[int] = deque()
        self.next_i = js.done
        self.measured = 0
        self.all_measured = True
        self.head: int | None = None
        self.head_deadline = 0.0
        self.extra_waits = 0

    # -- completions -------------------------------------------------------
    def complete(self, i: int, ticks: int | None) -> None:
        """Turn ``i`` is done: journal it (forced to disk), then tell the caller."""
        self.cube = self.cube.apply(self.steps[i].moves)
        state = self.cube.to_facelets()
        self.journal.turn(self.js, i, state, ticks)
        if ticks is None:
            self.all_measured = False
        else:
            self.measured += ticks
        td = TurnDone(i, self.steps[i], state, ticks)
        self.report.turns.append(td)
        if self.on_turn is not None:
            self.on_turn(td)

    def on_done(self, d: P.Done) -> None:
        """A DONE frame: it completes its move and every move queued before it."""
        ids = [self.js.move_id(i) for i in self.inflight]
        if d.move_id not in ids:
            return  # a repeat or a move of an earlier session
        for _ in range(ids.index(d.move_id) + 1):
            i = self.inflight.popleft()
            self.complete(i, d.ticks if self.js.move_id(i) == d.move_id else None)

    def sync(self, st: P.Status) -> None:
        """Believe the rig's STATUS: what it last finished, how full its queue is."""
        ids = [self.js.move_id(i) for i in self.inflight]
        if st.last_done_id in ids:
            for _ in range(ids.index(st.last_done_id) + 1):
                self.complete(self.inflight.popleft(), None)
        self.link.queue_free = self.capacity - st.queue_len

    # -- the loop's steps --------------------------------------------------
    def check_alarms(self) -> bool:
        """Raise on a reset or an emergency stop; resync after lost events.
        True when the loop should look again before doing anything else."""
        link = self.link
        if link.reset_seen:
            raise RigReset(f"the rig on {link.port} was reset ({link.reset_seen})")
        if link.estop_latched:
            if self.inflight:
                link.estop()
                raise _unknown(self.journal, self.js, "The rig went into emergency stop during the job")
            raise RigError(f"the rig is in emergency stop; clear it with {link.clear_command}, "
                           "then `cuberobot resume`")
        if link.events_lost:
            self.sync(link.status())
            return True
        return False

    def can_send(self) -> bool:
        return (self.next_i < len(self.steps) and self.link.queue_free > 0
                and len(self.inflight) < self.capacity)

    def send_next(self) -> None:
        """Journal the next step as sent, then queue it on the rig."""
        link, js = self.link, self.js
        link.poll(0)  # take in what has arrived (a DONE, a BOOT) before sending more
        if link.reset_seen or link.events_lost or link.estop_latched:
            return
        i = self.next_i
        s = self.steps[i]
        self.journal.sent(js, i)
        self.inflight.append(i)
        parts = list(s.parts)
        ma, sa = parts[0]
        mb, sb = parts[1] if len(parts) > 1 else (P.NO_MOTOR, 0)
        try:
            reply = link.move(P.MoveCommand(js.move_id(i), ma, sa, mb, sb, s.overlap))
        except RigReset as e:
            if e.refused:  # provably not executed: the restarted firmware refused it
                self.inflight.remove(i)
                self.journal.refused(js, i)
            raise
        if isinstance(reply, P.Err):  # QUEUE_FULL: not queued; learn the truth
            self.inflight.remove(i)
            self.journal.refused(js, i)
            self.sync(link.status())
        else:
            self.next_i += 1

    def head_budget(self, i: int) -> float:
        """How long turn ``i`` may take once it heads the queue."""
        motion, settle = move_ticks(self.steps[i].parts, self.profiles)
        return ticks_to_s(motion + settle) * 1.5 / self.link.time_scale + self.link.completion_margin_s

    def check_head(self) -> None:
        """Wait for the turn at the head of the queue; when it is late, ask the
        rig, give it two more budgets while it is still moving, then stop it."""
        link = self.link
        now = time.monotonic()
        if self.inflight[0] != self.head:
            self.head, self.head_deadline, self.extra_waits = (self.inflight[0],
                                                               now + self.head_budget(self.inflight[0]), 0)
        if now < self.head_deadline:
            link.poll(self.head_deadline - now)
            return
        st = link.status()
        self.sync(st)
        head = self.head
        if self.inflight and self.inflight[0] == head and head is not None:
            if st.moving and self.extra_waits < 2:
                self.extra_waits += 1
                self.head_deadline = time.monotonic() + self.head_budget(head)
                return
            link.estop()
            why = (f"Turn {head + 1} ({self.steps[head].text}) did not finish (a stalled motor or a "
                   "lost move); the rig was stopped")
            raise _unknown(self.journal, self.js, why)

    def loop(self) -> None:
        while self.js.done < len(self.steps):
            if self.check_alarms():
                continue
            if self.can_send():
                self.send_next()
            elif not self.inflight:
                # Only a stale queue_free (a repeated command's stored ACK) gets here.
                self.sync(self.link.status())
                if self.link.queue_free <= 0:
                    raise RigError("the rig reports a full queue with nothing queued")
            else:
                self.check_head()


def execute(link: Link, journal: Journal, js: JobState, steps: list[MotorStep], *,
            on_turn: Callable[[TurnDone], None] | None = None) -> JobReport:
    """Run ``steps[js.done:]``. The link must be connected (handshake done)."""
    t0 = time.monotonic()
    cpu0 = time.process_time()
    ex = _Execution(link, journal, js, steps, on_turn)
    link.on_done = ex.on_done
    try:
        ex.loop()
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
    except (LinkLost, LinkStalled) as e:
        raise type(e)(f"{e}. The journal has every finished turn: when the rig is back, "
                      "`cuberobot resume` finishes the job") from None
    except KeyboardInterrupt:
        _stop_on_interrupt(link, journal, js)
        raise
    finally:
        link.on_done = None
    report = ex.report
    journal.end(js, "done", state=ex.cube.to_facelets())
    report.state = ex.cube.to_facelets()
    report.executed_s = ticks_to_s(ex.measured) if ex.all_measured else None
    report.wall_s = time.monotonic() - t0
    report.retransmissions = link.retransmissions
    report.host_s = time.process_time() - cpu0
    return report


def run(link: Link, journal: Journal, start: Cube, steps: Sequence[MotorStep], *,
        on_turn: Callable[[TurnDone], None] | None = None) -> JobReport:
    """Record the job and run it: ``steps`` is a plan (:func:`motion.plan`),
    turned as it is and never planned again here, so the time estimated
    from it before the run is the time of what runs. The journal keeps each
    step's moves and quarter turns, from which resume rebuilds this plan."""
    steps = list(steps)
    if not all(isinstance(s, MotorStep) for s in steps):
        raise TypeError("job.run takes a plan (motion.plan's MotorSteps), not moves")
    hello = link.connect() if link.hello is None else link.hello
    try:
        last_done = link.status().last_done_id
    except RigReset:  # restarted between jobs: nothing was under way, a new session will do
        hello = link.handshake()
        last_done = link.status().last_done_id
    if link.estop_latched:  # refused before it is journalled: a later resume must not turn it unasked
        raise EstopLatched(f"the rig is in emergency stop; check it is safe, then run {link.clear_command} "
                           "(nothing was moved; the job was not started)")
    # each step's quarter turns, for resume to rebuild this very plan (a plan
    # made by hand without them is planned again on resume)
    quarters = ([list(s.quarters) for s in steps] if all(len(s.quarters) == len(s.moves) for s in steps)
                else None)
    js = journal.start_job(start.to_facelets(), [s.text for s in steps], port=link.port,
                           config=str(link.config.path) if link.config.path else None,
                           avoid_id=last_done, quarters=quarters)
    journal.session(js, hello.boot_id)
    try:
        return execute(link, journal, js, steps, on_turn=on_turn)
    except KeyboardInterrupt:
        _stop_on_interrupt(link, journal, js)
        raise


def _stop_on_interrupt(link: Link, journal: Journal, js: JobState) -> None:
    """Ctrl-C during a job: the emergency stop first, then a word in the
    journal, so that a resume after the stop is cleared still knows that a
    turn under way may be half done (docs/protocol.md 3.2)."""
    link.estop()
    if js.stopped is None and js.end is None:
        try:
            journal.stop(js, "interrupted (Ctrl-C)")
        except Exception:  # noqa: BLE001 - the stop went out; a full disk must not hide the interrupt
            pass


def resume(link: Link, journal: Journal, *, on_turn: Callable[[TurnDone], None] | None = None,
           on_resume: Callable[[JobState], None] | None = None,
           wait_s: float | None = None) -> JobReport | None:
    """Finish the journal's unfinished job from the true state, or say why not.

    ``on_resume`` is told the job once the rig has said how far it got and
    before anything moves (not before: a latched or restarted rig ends the
    job "state unknown" instead). Returns None when there is nothing to resume.
    """
    js = journal.unfinished()
    if js is None:
        return None
    with link.estop_on_interrupt():
        return _resume(link, journal, js, on_turn=on_turn, on_resume=on_resume, wait_s=wait_s)


def _resume(link: Link, journal: Journal, js: JobState, *, on_turn: Callable[[TurnDone], None] | None,
            on_resume: Callable[[JobState], None] | None, wait_s: float | None) -> JobReport:
    """Reconcile the journal with the rig, then run the rest of the job.

    The rig, not the journal's tail, says how far the job got: moves complete
    in the order they were queued and each carries its job's move id, so the
    id of the last move the rig finished since it booted tells how many steps
    of this job it did, whatever the journal managed to write before a crash.
    Where neither side can know (the rig restarted with a move possibly under
    way, an emergency stop in mid-move, the two disagree), the job ends
    "state unknown" and nothing moves."""
    try:
        steps = journaled_plan(js, link.config)
    except (CubeError, ValueError) as e:
        raise JournalDamaged(f"{journal.path}: job {js.job}'s steps cannot be turned ({e}); the journal is "
                             "damaged and cannot say where the cube is: scan the cube again, and move the "
                             "file away to start a fresh journal") from None
    hello = link.connect() if link.hello is None else link.hello
    st = _settled_status(link, journal, js, steps, wait_s)
    rig_done = _rig_progress(js, st.last_done_id)
    same_boot = rig_done is not None or hello.boot_id == js.boot_id
    if not same_boot:
        if _possibly_under_way(js):
            raise _unknown(journal, js, "The rig was restarted since the job was interrupted")
    else:
        _check_nothing_else_ran(journal, js, st, rig_done)
        done = rig_done or 0
        if done < js.done:
            why = f"The journal says {js.done} turn(s) finished, the rig says {done}: they disagree"
            raise _unknown(journal, js, why)
        _record_rig_turns(journal, js, steps, done)
        _check_not_cut(journal, js, st, done)
        if st.estop:
            link.clear_estop()
    # The rig is idle and every move it accepted is accounted for: the rest never arrived.
    js.sent = set(range(js.done))
    journal.session(js, hello.boot_id)
    if on_resume is not None:
        on_resume(js)
    return execute(link, journal, js, steps, on_turn=on_turn)


def journaled_plan(js: JobState, config: Config) -> list[MotorStep]:
    """The plan a journaled job was started with: its steps with the quarter
    turns it journaled. A journal written before they were kept has none:
    its steps are planned again, as that version's resume did (with the same
    config, the same plan). CubeError or ValueError when the steps or their
    quarter turns are not a plan (a hand-edited journal)."""
    return plan(parse_steps(js.steps), config, directions=js.quarters)


def _settled_status(link: Link, journal: Journal, js: JobState, steps: list[MotorStep],
                    wait_s: float | None) -> P.Status:
    """The rig's STATUS once its queue is empty (moves queued before the
    crash run to their end first); an emergency stop if they do not."""
    if wait_s is None:
        # At most a queue's worth of moves can be waiting, each at most the longest step left.
        capacity = link.hello.queue_capacity if link.hello else 1
        longest = max((sum(move_ticks(s.parts, link.config.profiles())) for s in steps[js.done:]), default=0)
        wait_s = capacity * longest * 1.5 / P.TICK_HZ / link.time_scale + 2.0
    budget = wait_s
    deadline = time.monotonic() + budget
    while True:
        st = link.status()
        if st.queue_len == 0:
            return st
        if time.monotonic() > deadline:
            link.estop()
            raise _unknown(journal, js, "The rig's queued turns did not finish in time")
        link.poll(0.05)


def _check_nothing_else_ran(journal: Journal, js: JobState, st: P.Status, rig_done: int | None) -> None:
    """The rig's last finished move is none of the job's, yet not the one it
    had finished when the job began: something else turned the cube since (a
    jog, a job of another journal), after or instead of the job's moves."""
    if (rig_done is None and js.rig_last is not None and st.last_done_id != js.rig_last
            and _possibly_under_way(js)):
        raise _unknown(journal, js, "The rig has turned other moves since the job was interrupted (a jog, "
                                    "or a job of another state folder)")


def _check_not_cut(journal: Journal, js: JobState, st: P.Status, done: int) -> None:
    """An emergency stop empties the rig's queue: a turn that was running is
    half done. The rig says so while its stop is latched and, once it is
    cleared, by its CUT flag; the journal says so when the host stopped it."""
    if not any(i >= done for i in js.sent):
        return  # every move sent had finished: the stop cut nothing of this job
    if st.estop:
        raise _unknown(journal, js, "The rig was stopped (emergency stop) in the middle of the job")
    if st.cut:
        raise _unknown(journal, js, "The rig was emergency-stopped in the middle of the job (and the stop "
                                    "has been cleared since)")
    if js.stopped:
        raise _unknown(journal, js, f"The job was stopped in the middle ({js.stopped})")


def _rig_progress(js: JobState, last_done_id: int) -> int | None:
    """How many of the job's steps the rig has finished, from the id of the
    last move it finished; None when that move is not one of this job's."""
    if last_done_id == P.NO_ID:
        return None
    index = (last_done_id - js.first_id) % ID_SPACE
    return index + 1 if index < len(js.steps) else None


def _record_rig_turns(journal: Journal, js: JobState, steps: list[MotorStep], done: int) -> None:
    """Journal the turns the rig finished that the journal had not recorded."""
    cube = parse_facelets(js.state)
    for i in range(js.done, done):
        cube = cube.apply(steps[i].moves)
        journal.turn(js, i, cube.to_facelets(), None)
