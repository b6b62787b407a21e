"""A dry run on a rig that moves the cube (flipper, two-gripper), for the
one dry run (app/dryrun.py) that `cuberobot dry-run` and the web panel's
dry-run card share: face turns planned into robot moves
(robot/rig/mechanisms/planner.py) and made on the kind's virtual rig or on
the rig behind a port, with the same events as a run's robot moves
(:mod:`robot.app.mechanism_events`), and the timeline of the moves on the
rig's parts: one lane for each servo and stepper.

A virtual rig is made for the run and its journal kept in a temporary
folder: a dry run on it leaves nothing behind. On a rig behind a port (a
real one, or a sim-rig on a pty) the robot moves go over the link as a
run's do, homed first and journalled in the rig's journal, so that a dry
run cut short is resumed or said to be unknown like a run."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from solver import SOLVED_CUBE, Cube, CubeError, parse_facelets, parse_moves

from ..rig.config import Config
from ..rig.errors import RigError, UserError
from ..rig.journal import default_state_dir
from ..rig.mechanisms import mechanism_for
from ..rig.mechanisms.base import Action, ImpossibleMove, Mechanism
from ..rig.mechanisms.drive import LinkMechanism
from ..rig.mechanisms.journal import run_job
from ..rig.mechanisms.left import remember
from ..rig.mechanisms.orientation import name
from ..rig.mechanisms.planner import MechanismPlan, apply_to_cube, plan
from .dryrun import DryRunAsk, check_ask
from .events import Event, Face
from .jog import refuse_unfinished
from .limits import check_dry_run_hours, rig_claims
from .mechanism_events import MechanismEvents, step_texts
from .rigs import attach_rig, connect_rig, pace_of

RESUME_OR_START = "run `cuberobot resume` first, or `cuberobot start`, which scans the cube afresh"
"""What the terminal says to do about a job waiting in the journal a dry run would move under."""

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
    from ..sim.mechanisms import Fault, virtual_mechanism  # lazy: the simulation plugs in when asked for

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
    handle = connect_rig(attach_rig(cfg, port=port, firmware=None, seed=None, kind=m.kind))
    link = events.run.link = handle.link  # the events' emergency stop goes onto it, as a run's
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
        events.run.link = None
        remember(link, m.kind, events.run.rig_state)
        handle.close()
    return MechanismDryRun(p, events.steps, cube, name(m.orientation(state)), None)


def _check_virtual_port(port: str | None, kind: str) -> None:
    """A dry run on ``sim://`` runs on a virtual rig in this process, which
    takes only ``?speed=``: any other option would be silently ignored, so
    it is refused (a sim-rig on a pty takes them)."""
    if port is None or not port.startswith("sim://"):
        return
    from ..sim.protocol_sim import parse_sim_url  # lazy: the simulation plugs in when asked for

    try:
        options = parse_sim_url(port)[1]
    except ValueError as e:
        raise UserError(f"--port {port}: {e}") from None
    if other := sorted(set(options) - {"speed"}):
        raise UserError(f"--port {port}: a {kind} dry run on sim:// runs on a virtual rig of its own, "
                        f"which takes only ?speed=, not {', '.join(other)}: for those, run `cuberobot "
                        "sim-rig` with them and pass the pty it prints with --port")


def at_terminal(cfg: Config, ask: DryRunAsk, read_cube: Callable[[str], str],
                out: Callable[[str], None]) -> None:
    """A flipper's or two-gripper's dry run as `cuberobot dry-run` shows it:
    the moves planned into robot moves, made on the kind's virtual rig or on
    the rig at ``ask.port`` (homed first, journalled as a run), a line for
    each; ``render`` writes the timeline (one lane per servo and stepper)
    beside the name given. ``read_cube`` reads the starting cube as given."""
    kind = cfg.rig.kind
    check_ask(ask)
    _check_virtual_port(ask.port, kind)
    fast = ask.speed.strip().lower() in ("max", "inf", "event")
    pace = pace_of(ask.port) if ask.port else (None if fast else float(ask.speed))
    start = parse_facelets(read_cube(ask.start)) if ask.start else SOLVED_CUBE
    m, p = mechanism_plan(cfg, ask.moves)
    check_dry_run_hours(p.seconds, pace, ask.speed, "--speed")
    tl_path = None
    if ask.render:
        from .dryrun_pictures import check_path  # lazy: loads OpenCV

        given = check_path(ask.render)
        tl_path = Path(given).with_name(Path(given).stem + "-timeline.png")
    header = [f"{'step':>4}  {'robot move':<18} {'part':<10} {'estimate':>9}  holds"]
    seconds = _seconds(m, p)

    class Lines(Face):
        def emit(self, event: Event) -> None:
            d = event.data
            if event.kind == "turn-done":
                if header:  # once the rig has made a move: an error before is a line of its own
                    out(header.pop())
                action = p.actions[d["index"]]
                out(f"{d['index'] + 1:>4}  {d['step']:<18} {lane(m, action):<10} "
                    f"{seconds[d['index']]:>7.3f} s  {d['orientation']}")

    events = MechanismEvents(Lines(), pace=pace)
    with rig_claims(None if ask.simulated else ask.port, ask.state_dir, folder=not ask.simulated):
        if not ask.simulated:  # the rig's journal: a job waiting there must not be moved under
            refuse_unfinished(cfg, ask.state_dir, RESUME_OR_START, moving="a dry run")
        report = dry_run_mechanism(cfg, start, m, p, events, port=ask.port, state_dir=ask.state_dir)
    where = f"the virtual {kind} rig" if ask.simulated else f"the {kind} rig on {ask.port}"
    out(f"total: {len(p.actions)} robot moves for {len(p.solution)} face turns, estimated "
        f"{p.seconds:.3f} s on {where}; it ends holding the cube {report.orientation}")
    out(f"final state: {report.final_state}")
    if tl_path is not None:
        import cv2

        if not cv2.imwrite(str(tl_path), timeline(cfg, m, p)):
            raise UserError(f"cannot write {tl_path}")
        out(f"wrote {tl_path} (the animation of a {kind} rig is drawn by the web panel's dry run, "
            "`cuberobot serve`)")


def _seconds(m: Mechanism, p: MechanismPlan) -> list[float]:
    """Each robot move's planned time, from the rig's start."""
    state, seconds = m.start(), []
    for a in p.actions:
        moved = m.apply(state, a)
        seconds.append(moved.seconds)
        state = moved.after
    return seconds


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


class RobotMoveDryRun:
    """A flipper's or two-gripper's dry run a page watches, the part the one
    dry run's shell runs (app/dryrun.py): the moves planned into robot moves,
    bounded and drawn when made, then made on a virtual rig of its own at
    ``speed``, with the same events as a run's robot moves."""

    def __init__(self, cfg: Config, moves: str, speed: str, start: Cube):
        import cv2

        self.cfg, self.cube, self.pace = cfg, start, float(speed)
        self.rig = f"the dry run's virtual {cfg.rig.kind} rig"
        self.m, self.plan = mechanism_plan(cfg, moves)
        check_dry_run_hours(self.plan.seconds, self.pace, f"{self.pace:g}", "speed")
        self.picture: bytes = cv2.imencode(".png", timeline(cfg, self.m, self.plan))[1].tobytes()
        """The timeline of the rig's parts (PNG), as `dry-run --render` draws it."""
        self.events: MechanismEvents | None = None

    def opening(self) -> Event:
        m, p = self.m, self.plan
        return Event("solution", "turning", {
            "facelets": self.cube.to_facelets(), "moves": " ".join(str(x) for x in p.solution),
            "length": len(p.solution), "steps": step_texts(m, m.start(), p.actions),
            "estimated_s": round(p.seconds, 3), "dry_run": True, "orientation": "URFDLB"},
            f"dry run on the virtual {self.cfg.rig.kind} rig: {len(p.actions)} robot moves, "
            f"~{p.seconds:.1f} s")

    def make(self, face: Face, stop_flag: threading.Event) -> Event:
        p = self.plan
        self.events = MechanismEvents(face, pace=self.pace)
        self.events.run.stop_flag = stop_flag
        report = dry_run_mechanism(self.cfg, self.cube, self.m, p, self.events)
        return Event("finished", "done", {"status": "dry-run", "final_state": report.final_state,
                                          "estimated_s": round(p.seconds, 3), "executed_s": None},
                     f"dry run done: {len(p.actions)} robot moves, estimated {p.seconds:.3f} s; "
                     f"the rig ends holding the cube {report.orientation}")

    def estop(self) -> bool:
        """Onto the rig's line if one is open (none on a virtual rig of the dry run's own)."""
        return self.events is not None and self.events.run.estop()
