"""A dry run on a rig that moves the cube (flipper, two-gripper): face
turns planned into robot moves (robot/rig/mechanisms/planner.py) and made
on the kind's virtual rig or on the rig behind a port, with the same events
as a run's robot moves (:mod:`robot.app.mechanism_events`), and the
timeline of the moves on the rig's parts: one lane for each servo and
stepper.

Shared by `cuberobot dry-run` and the web panel's dry-run card, as
:mod:`robot.app.dryrun` is for a six-motor rig. A virtual rig is made for
the run and its journal kept in a temporary folder: a dry run on it leaves
nothing behind. On a rig behind a port (a real one, or a sim-rig on a pty)
the robot moves go over the link as a run's do, homed first and journalled
in the rig's journal, so that a dry run cut short is resumed or said to be
unknown like a run."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solver import Cube, CubeError, parse_moves

from ..rig.config import Config
from ..rig.errors import RigError, UserError
from ..rig.mechanisms import mechanism_for
from ..rig.mechanisms.base import Action, ImpossibleMove, Mechanism
from ..rig.mechanisms.journal import run_job
from ..rig.mechanisms.orientation import name
from ..rig.mechanisms.planner import MechanismPlan, apply_to_cube, plan
from .mechanism_events import MechanismEvents, step_texts

LANES = {"flipper": ("turntable", "cover", "flipper"), "two-gripper": ("D", "L", "grip_D", "grip_L")}
"""The parts that move, one timeline lane each: the servos, and the two-gripper's steppers."""


@dataclass
class MechanismDryRun:
    """What a dry run planned and what the virtual rig made of it."""

    plan: MechanismPlan
    steps: list[str]
    final_state: str
    """The cube after the robot moves, in its own frame (54 letters)."""
    orientation: str
    solved_on_rig: bool | None
    """Whether the virtual rig's own cube came out solved; None on a rig
    behind a port, which does not know its cube."""


def mechanism_plan(cfg: Config, moves: str) -> tuple[Mechanism, MechanismPlan]:
    """The robot moves that make ``moves`` from the rig's start (the cube as
    put in), the cheapest by the price a run plans with (seconds plus a
    weight per robot move); UserError in one line for moves that do not read."""
    m = mechanism_for(cfg)
    if m is None:
        raise UserError("a six-motor rig turns faces directly: no robot moves to plan")
    try:
        turns = parse_moves(moves)
    except (CubeError, ValueError) as e:
        raise UserError(f"moves: {e}") from None
    try:
        return m, plan(turns, m, objective="weighed")  # as a run plans: robot/app/mechanism_start.py
    except ImpossibleMove as e:
        raise UserError(f"the {m.kind} rig cannot make these moves: {e}") from None


def lanes(m: Mechanism) -> tuple[str, ...]:
    """The timeline's lanes on ``m``: a cover that flips has no flipper lane."""
    no_flipper = getattr(m, "cover_flips", False)
    return tuple(part for part in LANES[m.kind] if not (part == "flipper" and no_flipper))


def lane(m: Mechanism, action: Action) -> str:
    """The part of the rig a robot move moves."""
    if m.kind == "flipper":
        flipper = "cover" if getattr(m, "cover_flips", False) else "flipper"
        return {"flip": flipper, "open": "cover", "close": "cover"}.get(action.kind, "turntable")
    return action.part if action.kind == "rotate" else f"grip_{action.part}"


def dry_run_mechanism(cfg: Config, start: Cube, m: Mechanism, p: MechanismPlan,
                      events: MechanismEvents, *, port: str | None = None,
                      state_dir: str | Path | None = None) -> MechanismDryRun:
    """Make ``p``'s robot moves from ``start``, telling ``events`` each
    (paced by its ``pace``; its stop ends the run between two moves): on a
    virtual rig of its own, or on the rig behind ``port`` when that is no
    ``sim://`` URL (journalled in ``state_dir``, by default the rig's
    journal folder; Ctrl-C sends the emergency stop onto its line)."""
    events.mech = m
    events.actions, events.plan_s, events.move_state = p.actions, p.seconds, m.start()
    events.steps = step_texts(m, m.start(), p.actions)
    if port is None or port.startswith("sim://"):
        return _on_virtual_rig(cfg, start, m, p, events)
    return _over_link(cfg, start, m, p, events, port, state_dir)


def _on_virtual_rig(cfg: Config, start: Cube, m: Mechanism, p: MechanismPlan,
                    events: MechanismEvents) -> MechanismDryRun:
    from ..sim.mechanisms import Fault, virtual_mechanism

    rig = virtual_mechanism(cfg, start.to_facelets())
    setup = f"check [servos.*] in {cfg.path}" if cfg.path else "check the set-up's [servos.*]"
    with tempfile.TemporaryDirectory(prefix="cuberobot-dry-run-") as tmp:
        try:
            state, cube = run_job(events.journal(tmp), m, start.to_facelets(), p.actions,
                                  events.mover(rig.do), state=m.start())
        except Fault as e:  # the angles sent did not make the move the plan meant
            raise RigError(f"the virtual {m.kind} rig stopped: {e}; {setup}") from None
    # The rig's own cube is the truth: the final state is said only when it agrees with the plan.
    if rig.cube.stickers != apply_to_cube(start.to_facelets(), p.actions, m).stickers:
        raise RigError(f"the virtual {m.kind} rig's cube is not what the robot moves should make of it "
                       f"({len(rig.turns)} layer turns made for {len(p.solution)} face turns): the servos' "
                       f"angles did not make the moves the plan meant; {setup}")
    return MechanismDryRun(p, events.steps, cube, name(m.orientation(state)), rig.is_solved())


def _over_link(cfg: Config, start: Cube, m: Mechanism, p: MechanismPlan, events: MechanismEvents,
               port: str, state_dir: str | Path | None) -> MechanismDryRun:
    """The rig is homed first (a rig a killed run left part-way is then
    where the plan starts), as a run's is before its scan."""
    from ..rig.journal import default_state_dir
    from ..rig.mechanisms.drive import LinkMechanism
    from ..rig.mechanisms.left import remember
    from .rigs import attach_rig, connect_rig

    handle = connect_rig(attach_rig(cfg, port=port, firmware=None, seed=None, kind=m.kind))
    link = events.link = handle.link  # the events' emergency stop goes onto it, as a run's
    try:
        with link.estop_on_interrupt():  # Ctrl-C at the terminal stops the rig
            drive = LinkMechanism(link, cfg, m.start())
            events.park_as_left(drive.do, link)
            drive.home()
            events.homed()
            journal = events.journal(state_dir or default_state_dir())
            state, cube = run_job(journal, m, start.to_facelets(), p.actions, events.mover(drive.do),
                                  state=m.start(), boot_id=link.hello.boot_id if link.hello else None,
                                  ids=drive.ids, last_id=drive.last_id)
            events.park(drive.do, state)  # a two-gripper's jaws left square, for the next job
    finally:
        events.link = None
        remember(link, m.kind, events.rig_state)
        handle.close()
    return MechanismDryRun(p, events.steps, cube, name(m.orientation(state)), None)


_LAYER_BGR = {"U": (235, 235, 235), "R": (40, 40, 214), "F": (58, 157, 42), "D": (46, 210, 242),
              "L": (26, 140, 255), "B": (198, 91, 30)}
_WHOLE_BGR = (190, 150, 120)
_GRIP_BGR = (170, 170, 170)


def timeline(cfg: Config, m: Mechanism, p: MechanismPlan, width: int = 1000) -> np.ndarray:
    """One lane for each servo and stepper; a bar for each robot move on the
    part that makes it, over the planned time: a layer turn in the colour of
    the cube face it turns, a whole-cube turn in grey-blue, a grip in grey."""
    import cv2

    parts = lanes(m)
    row_h, left, top = 40, 90, 30
    img = np.full((top + len(parts) * row_h + 40, width, 3), 255, np.uint8)
    span = width - left - 20
    total = max(p.seconds, 1e-3)

    def x(t: float) -> int:
        return int(left + span * t / total)

    for k, part in enumerate(parts):
        y = top + k * row_h
        cv2.putText(img, part, (8, y + 26), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1, cv2.LINE_AA)
        cv2.line(img, (left, y + row_h - 2), (left + span, y + row_h - 2), (220, 220, 220), 1)
    state, t = m.start(), 0.0
    for action in p.actions:
        out = m.apply(state, action)
        y = top + parts.index(lane(m, action)) * row_h
        if out.turn is not None:
            colour = _LAYER_BGR[name(m.orientation(state))[out.turn[0]]]
        elif m.orientation(out.after) != m.orientation(state):
            colour = _WHOLE_BGR
        else:
            colour = _GRIP_BGR
        bar = ((x(t), y + 6), (max(x(t) + 1, x(t + out.seconds)), y + row_h - 8))
        cv2.rectangle(img, *bar, colour, -1)
        cv2.rectangle(img, *bar, (0, 0, 0), 1)
        label = f"{action.quarters:+d}" if action.quarters else action.kind[0]
        cv2.putText(img, label, (x(t) + 2, y + 22), cv2.FONT_HERSHEY_SIMPLEX, 0.33, (0, 0, 0), 1, cv2.LINE_AA)
        state, t = out.after, t + out.seconds
    every = max(0.1, round(total / 10, 1))
    s = 0.0
    bottom = top + len(parts) * row_h
    while s <= total + 1e-9:
        cv2.line(img, (x(s), bottom), (x(s), bottom + 5), (0, 0, 0), 1)
        cv2.putText(img, f"{s:.1f}s", (x(s) - 12, bottom + 20), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1,
                    cv2.LINE_AA)
        s += every
    cv2.putText(img, f"{len(p.actions)} robot moves, {p.seconds:.3f} s planned (bars: a layer turn in its "
                     "face's colour; grey-blue: the whole cube turns; grey: a grip)", (left, 18),
                cv2.FONT_HERSHEY_SIMPLEX, 0.42, (0, 0, 0), 1, cv2.LINE_AA)
    return img
