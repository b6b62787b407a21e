"""Moving the rig by hand, for a maker wiring, aligning or checking it: a
face turned by quarter turns or motor steps on a six-motor rig, robot moves
(``flip, spin +1``) on a flipper or two-gripper rig.

`cuberobot jog` and the panel's Jog card are two faces of these functions:
both check what was asked the same way before anything moves, refuse while
a job waits in the journal for `resume` (a jog under it would make its
recorded state wrong), and move over a link they were handed, opened and
claimed by the face (the command's own line, the panel's kept one).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from solver import FACES, Move

from ..rig import protocol as P
from ..rig.config import Config
from ..rig.errors import RigError, UserError
from ..rig.journal import JOG_ID, Journal, default_state_dir
from ..rig.mechanisms import mechanism_for, park
from ..rig.mechanisms.drive import LinkMechanism
from ..rig.mechanisms.journal import MechanismJournal
from ..rig.mechanisms.left import parts_left, remember
from ..rig.motion import motor_steps
from ..rig.timing import move_ticks, ticks_to_s
from .kinds import kind_of
from .limits import MAX_JOG_TURNS

if TYPE_CHECKING:
    from ..rig.link import Link
    from ..rig.mechanisms import Mechanism, State
    from ..rig.mechanisms.jog import Jog, ServoJog

MAX_JOG_STEPS = 30000
"""The most steps one MOVE may ask of a motor (docs/protocol.md)."""


@dataclass(frozen=True)
class FaceJog:
    """A six-motor jog as asked: ``turns`` quarter turns or ``steps`` motor
    steps of ``face`` (one of the two), negative anticlockwise."""

    face: str
    turns: int | None = None
    steps: int | None = None


@dataclass(frozen=True)
class FaceJogged:
    """What a face jog did: its motor and the steps it turned, beside a
    clockwise quarter turn's steps on this rig."""

    jog: FaceJog
    motor: int
    steps: int
    quarter: int

    def describe(self) -> str:
        face = self.jog.face
        if self.jog.steps is None:
            return (f"turned {face} by {self.jog.turns} quarter turn(s) ({self.steps:+d} steps on motor "
                    f"{self.motor})")
        direction = "clockwise" if self.jog.steps > 0 else "anticlockwise"
        return (f"turned {face} {abs(self.jog.steps)} step(s) {direction} ({self.steps:+d} steps on motor "
                f"{self.motor}; a quarter turn is {abs(self.quarter)})")


def check_face_jog(face: str, turns: int | None = None, steps: int | None = None, *,
                   names: tuple[str, str, str] = ("FACE", "TURNS", "--steps")) -> FaceJog:
    """The jog asked, or a :class:`UserError` saying what is wrong with it:
    a face that is not one of U R F D L B, both numbers (neither: one
    quarter turn clockwise), zero, or a number out of bounds. ``names``: how
    the face asking calls the face, the turns and the steps (the command's
    arguments, the API's fields)."""
    face_name, turns_name, steps_name = names
    name = face.upper()
    if len(name) != 1 or name not in FACES:
        raise UserError(f"{face_name} must be one of U R F D L B, got {face[:20]!r}")
    if turns is not None and steps is not None:
        raise UserError(f"give {turns_name} or {steps_name}, not both")
    if steps is not None:
        if steps == 0 or abs(steps) > MAX_JOG_STEPS:
            raise UserError(f"{steps_name} must be a non-zero number of motor steps between -{MAX_JOG_STEPS} "
                            f"and {MAX_JOG_STEPS}")
        return FaceJog(name, steps=steps)
    turns = 1 if turns is None else turns
    if turns == 0 or abs(turns) > MAX_JOG_TURNS:
        raise UserError(f"{turns_name} must be a non-zero number of quarter turns between -{MAX_JOG_TURNS} "
                        f"and {MAX_JOG_TURNS}")
    return FaceJog(name, turns=turns)


class UnfinishedJob(UserError):
    """A job waits in the journal: a jog would make its recorded state wrong."""


def _waiting_job(cfg: Config, state_dir: str | Path | None, *, end: bool) -> bool:
    """Whether the journal of ``state_dir`` (or the default folder) holds a
    job not yet finished; with ``end``, that job is ended as given up."""
    folder = Path(state_dir) if state_dir else default_state_dir()
    if not kind_of(cfg).makes_robot_moves:
        with Journal(folder) as journal:
            js = journal.unfinished()
            if js is not None and end:
                journal.end(js, "given-up", "given up for a jog by hand; the next job scans the cube afresh")
            return js is not None
    mjournal = MechanismJournal(folder)
    last = mjournal.last()
    if last is None or last.end is not None:
        return False
    if end:
        mjournal.end(last.job, "given-up")
    return True


def refuse_unfinished(cfg: Config, state_dir: str | Path | None,
                      then: str = "run `cuberobot resume` first", *, moving: str = "a jog") -> None:
    """:class:`UnfinishedJob` when the journal of ``state_dir`` (or the
    default folder) holds a job not yet finished: resuming it relies on the
    rig being where the job left it. ``then`` says what the person can do;
    ``moving`` names what was asked (a jog, a dry run)."""
    if _waiting_job(cfg, state_dir, end=False):
        raise UnfinishedJob(f"a job is unfinished in the journal, and {moving} now would make its recorded "
                            f"state wrong: {then}")


def give_up_unfinished(cfg: Config, state_dir: str | Path | None) -> bool:
    """End the job left unfinished in the journal as "given up", so that
    `resume` has nothing to finish and the next job scans afresh; returns
    whether there was one."""
    return _waiting_job(cfg, state_dir, end=True)


def clear_to_jog(link: Link, cfg: Config, state_dir: str | Path | None, *, give_up: bool,
                 then: str = "run `cuberobot resume` first") -> bool:
    """On the connected rig of ``link``, just before a jog: refused when its
    emergency stop is latched; then a job waiting in the journal is refused
    (``then`` says what to do), or with ``give_up`` ended. In that order, so
    that a jog that cannot be made gives nothing up. Returns whether a job
    was given up."""
    check_unlatched(link)
    if give_up:
        return give_up_unfinished(cfg, state_dir)
    refuse_unfinished(cfg, state_dir, then)
    return False


def check_unlatched(link: Link) -> None:
    """A :class:`RigError` when the rig of ``link`` has its emergency stop
    latched (as it last said): it would refuse the moves anyway."""
    if link.estop_latched:
        raise RigError(f"the emergency stop is latched on the rig on {link.port}: clear it before jogging")


def jog_face(link: Link, cfg: Config, jog: FaceJog) -> FaceJogged:
    """Make ``jog`` on the connected six-motor rig of ``link`` and wait until
    the rig says it is done. A step count goes clockwise when positive, as a
    quarter turn of that face goes on this rig; the cube model and the
    journal are left alone (a face between quarter turns is no cube state:
    the simulated rigs round it to the nearest quarter)."""
    check_unlatched(link)
    motor, quarter = motor_steps(Move(FACES.index(jog.face), 1), cfg)
    if jog.steps is not None:
        steps = jog.steps if quarter > 0 else -jog.steps
    else:
        steps = quarter * (jog.turns or 1)
    _move_and_wait(link, cfg, jog.face, motor, steps)
    return FaceJogged(jog, motor, steps, quarter)


def _move_and_wait(link: Link, cfg: Config, face: str, motor: int, steps: int) -> None:
    """One MOVE with the jog's id, waited for: an emergency stop heard while
    waiting ends the jog; one the rig does not finish in half again its
    planned time (and a second) is stopped."""
    done: list[P.Done] = []
    before = link.on_done
    link.on_done = done.append
    try:
        link.move(P.MoveCommand(JOG_ID, motor, steps))
        motion, settle = move_ticks([(motor, steps)], cfg.profiles())
        deadline = time.monotonic() + ticks_to_s(motion + settle) * 1.5 / link.time_scale + 1.0
        while not any(d.move_id == JOG_ID for d in done):
            if link.estop_latched:
                raise RigError(f"the emergency stop ended the jog of {face}; clear it before the next move")
            if time.monotonic() > deadline:
                if link.status().last_done_id == JOG_ID:
                    break
                link.estop()
                raise RigError(f"the jog of {face} did not finish; the rig was stopped")
            link.poll(min(0.05, max(0.0, deadline - time.monotonic())))
    finally:
        link.on_done = before


def jog_mechanism(link: Link, cfg: Config, jog: Jog | ServoJog, out: Callable[[str], None] = print) -> str:
    """Home the flipper or two-gripper rig of ``link``, then make ``jog``'s
    robot moves (checked from home by :func:`~robot.rig.mechanisms.jog.check_jog`),
    telling ``out`` the rig's state after each, or set its servo angles;
    returns the summing-up line."""
    from ..rig.mechanisms.jog import ServoJog  # lazy: out of --help's start-up

    mech = mechanism_for(cfg)
    assert mech is not None
    drive = LinkMechanism(link, cfg, mech.start())
    left: State | None = None  # where the jog leaves the parts, once it has (a servo set by hand: not known)
    try:
        _park_as_left(drive, mech, link)
        drive.home()
        out(f"homed: {mech.describe(mech.start())}")
        if isinstance(jog, ServoJog):
            for angle in jog.angles:
                drive.set_servo(angle.servo, angle.deg)
                out(f"  {angle}: held at {angle.deg:g} degrees ({angle.pulse_us} us)")
            if not jog.left:
                return (f"set {len(jog.angles)} servo angle(s); write the ones that look right into the "
                        "config's [servos.NAME] (docs/configuration.md); the next job homes the rig and "
                        "scans the cube first")
            between = "; ".join(jog.left)
            return (f"set {len(jog.angles)} servo angle(s); between named angles now: {between}; write the "
                    "ones that look right into the config's [servos.NAME] (docs/configuration.md); the "
                    "next jog or job homes the rig first (each servo to a named angle), and the next job "
                    "scans the cube")
        for action, state in zip(jog.actions, jog.states, strict=True):
            drive.do(action)
            out(f"  {action}: {mech.describe(state)}")
        left = jog.states[-1] if jog.states else mech.start()
        return (f"made {len(jog.actions)} robot move(s), {jog.layer_turns} of them layer turns; the next job "
                "homes the rig and scans the cube first")
    finally:
        remember(link, mech.kind, left)


def _park_as_left(drive: LinkMechanism, mech: Mechanism, link: Link) -> None:
    """A two-gripper's jaws that the last command on this rig left across
    (stopped between two moves) squared before homing (robot/rig/mechanisms/left.py)."""
    left = parts_left(mech, link)
    if left is not None:
        park(mech, left, drive.do)
