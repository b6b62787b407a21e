"""What a face asks of the rig, one function a request, whichever kind of
rig it is (issue 45, "the faces only present").

The terminal and the panel ask these functions: summarise the set-up, start
a run from the terminal, make a dry run, resume a job, check and make a jog,
scan with the rig. Each asks :func:`work_for` for the configured kind's
:class:`KindWork` and hands the request on; what differs between kinds
lives in the two implementations below (six motors; a rig that moves the
whole cube, a flipper or two grippers), and this module's table is the one
place a kind's name picks them. The faces neither test the kind nor hold a
twin of a path for each kind.

The implementations import the modules of their kind when asked: a dry run
brings in the simulation it runs on, and a rig's run OpenCV, which a server
on real hardware, or a command that only summarises, never needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from solver import Cube

from ..rig.config import DRIVEN_FACES, Config, rig_turn_costs
from ..rig.errors import RigError, UserError
from ..rig.mechanisms import mechanism_for
from ..rig.mechanisms.orientation import name
from . import dryrun_six_motors
from .dryrun import DryRunAsk, WatchedDryRun
from .events import Event
from .jog import check_face_jog, jog_face, jog_mechanism
from .kinds import kind_of
from .limits import check_port, rig_claims
from .resume import OpenLink, Resumed, resume_mechanism_job, resume_six_motor_job

if TYPE_CHECKING:
    from vision.scan_result import ScanResult

    from ..rig.link import Link

Say = Callable[[str], None]
"""Where a face wants a line of text to go."""


@dataclass(frozen=True)
class StartAsk:
    """A press-start as the terminal asks for it (`cuberobot start`)."""

    port: str | None = None
    firmware: str | None = None
    state_dir: str | None = None
    seed: int | None = None
    headless: bool = False
    no_wait: bool = False
    sim_view: str | None = None
    """A sim-rig in another process shows its cube through this file."""


@dataclass(frozen=True)
class Jogged:
    """What a jog did: the line that sums it up, and the fields the panel's
    answer adds (a face jog's motor and steps; a rig's robot moves, each
    with the state it left)."""

    summary: str
    details: dict[str, Any]


HOLD_UNKNOWN = "how the rig holds the cube is not known; the next Start homes the rig and scans it"


@dataclass(frozen=True)
class Followed:
    """The page's cube after a jog: the face turns it made (None: not known),
    how the rig now holds the cube (None: not known or not told), a line for
    a person, and the rig's whole state after it (None: not known), from
    which the next jog is followed. ``tell``: whether the page has anything
    to be told (a face left between quarter turns is no cube to draw)."""

    moves: list[str] | None
    orientation: str | None
    text: str
    state: Any = None
    tell: bool = True


@dataclass(frozen=True)
class RigScan:
    """A scan the rig made by showing its camera the six faces."""

    result: ScanResult
    robot_moves: int


class KindWork(Protocol):
    """What differs between kinds of rig, for each request a face makes."""

    def summary(self, cfg: Config) -> list[str]:
        """The rig's lines of `config check`'s summary: its parts as read and what its moves take."""

    def start(self, cfg: Config, ask: StartAsk, out: Say, err: Say, progress: Say) -> None:
        """A whole run from the terminal, told to ``out`` (notes to ``err``,
        the solver's table build to ``progress``); raises what ended a run
        that did not end with the cube solved."""

    def dry_run(self, cfg: Config, ask: DryRunAsk, read_cube: Callable[[str], str], out: Say) -> None:
        """A dry run as the terminal shows it, a line for each move and the totals."""

    def resume(self, cfg: Config, state_dir: str | None, port: str | None, open_link: OpenLink,
               say: Say) -> Resumed:
        """The job left unfinished in the journal finished, or ended "state unknown" with nothing moved."""

    def check_jog(self, cfg: Config, words: str, turns: int | None, steps: int | None) -> Any:
        """A jog as the terminal gives it (`jog WORDS [TURNS] [--steps N]`), checked before anything opens."""

    def check_panel_jog(self, cfg: Config, face: str | None, turns: int | None, steps: int | None,
                        moves: str | None) -> Any:
        """A jog as the panel's API gives it (its fields), checked before anything opens."""

    def jog(self, link: Link, cfg: Config, jog: Any, out: Say) -> Jogged:
        """Make a checked jog on the connected ``link``, telling ``out`` each step."""

    def watched_dry_run(self, cfg: Config, moves: str, speed: str, start: Cube) -> WatchedDryRun:
        """A dry run for a page to watch, planned and drawn."""

    def follow(self, cfg: Config, jog: Any, before: Any) -> Followed:
        """The cube after ``jog``, from the rig's state ``before`` it (None: not known)."""


class SixMotors:
    """Six motors, one on each face: the cube stands still and faces turn."""

    def summary(self, cfg: Config) -> list[str]:
        q, h = rig_turn_costs(cfg)
        motors = ", ".join(f"{f}:{m.motor}{'(inv)' if m.invert else ''}" for f, m in cfg.motors.items())
        return [f"  rig: {cfg.rig.port} at {cfg.rig.baud} baud; motors {motors}",
                f"  turn times: quarter {q:.3f} s, half {h:.3f} s (settle included)"]

    def start(self, cfg: Config, ask: StartAsk, out: Say, err: Say, progress: Say) -> None:
        from .engines import run_start  # lazy: out of --help's start-up
        from .record import summary  # lazy: out of --help's start-up

        if ask.sim_view:
            raise UserError("--sim-view is for a flipper's or two-gripper's sim-rig in another process; "
                            "a six-motor run sees a simulated rig through sim:// or --firmware")
        with rig_claims(None if ask.firmware else (ask.port or cfg.rig.port), ask.state_dir):
            record = run_start(cfg, port=ask.port, headless=ask.headless, firmware=ask.firmware,
                               state_dir=ask.state_dir, seed=ask.seed, no_wait=ask.no_wait, out=out,
                               progress=progress)
        out(summary(record))
        if record.scan_correct is False:
            err("note: the simulated rig's cube differed from the scan")

    def dry_run(self, cfg: Config, ask: DryRunAsk, read_cube: Callable[[str], str], out: Say) -> None:
        dryrun_six_motors.at_terminal(cfg, ask, read_cube, out)

    def resume(self, cfg: Config, state_dir: str | None, port: str | None, open_link: OpenLink,
               say: Say) -> Resumed:
        return resume_six_motor_job(cfg, state_dir, port, open_link, say)

    def check_jog(self, cfg: Config, words: str, turns: int | None, steps: int | None) -> Any:
        return check_face_jog(words, turns, steps)

    def check_panel_jog(self, cfg: Config, face: str | None, turns: int | None, steps: int | None,
                        moves: str | None) -> Any:
        if face is None or moves is not None:
            raise UserError("a six-motor rig jogs one face: send 'face' (U R F D L B) and 'turns' or "
                            "'steps'")
        return check_face_jog(face, turns, steps, names=("'face'", "'turns'", "'steps'"))

    def jog(self, link: Link, cfg: Config, jog: Any, out: Say) -> Jogged:
        done = jog_face(link, cfg, jog)
        return Jogged(done.describe(), {"face": jog.face, "motor": done.motor, "steps": done.steps,
                                        "quarter": done.quarter})

    def watched_dry_run(self, cfg: Config, moves: str, speed: str, start: Cube) -> WatchedDryRun:
        return WatchedDryRun(dryrun_six_motors.SixMotorDryRun(cfg, moves, speed, start))

    def follow(self, cfg: Config, jog: Any, before: Any) -> Followed:
        if jog.turns is None or not jog.turns % 4:  # a face between quarter turns is no cube to draw
            return Followed(None, None, "", tell=False)
        turned = jog.face + {1: "", 2: "2", 3: "'"}[jog.turns % 4]
        return Followed([turned], None, f"jogged {turned}: the cube as the last run left it, {turned} turned")


class MovesTheCube:
    """A flipper (CUBOTino's build among them) or two grippers: the rig
    moves the whole cube between layer turns, in robot moves of its own."""

    def summary(self, cfg: Config) -> list[str]:
        lines = [f"  rig: {cfg.rig.kind} on {cfg.rig.port} at {cfg.rig.baud} baud"]
        for sc in cfg.servos.values():
            angles = ", ".join(f"{k.removesuffix('_deg')} {v:g}" for k, v in sc.angles)
            lines.append(f"  servo {sc.name}: pin {sc.pin}, {sc.min_us}-{sc.max_us} us over "
                         f"{sc.range_deg:g} degrees; {angles}")
        m = mechanism_for(cfg)
        assert m is not None
        steppers = ", ".join(f"{f}:{s.motor}{'(inv)' if s.invert else ''}" for f, s in cfg.motors.items()
                             if f in DRIVEN_FACES[cfg.rig.kind])
        if steppers:
            lines.append(f"  gripper steppers: {steppers}")
        times: dict[str, list[float]] = {}
        for row in m.graph.edges:
            for action, _, seconds, _ in row:
                key = f"{action.kind}{' ' + action.part if action.part else ''}" \
                      f"{(' quarter', ' half')[abs(action.quarters) - 1] if action.quarters else ''}"
                times.setdefault(key, []).append(seconds)
        spans = (f"{k} {min(v):.2f}" + (f"-{max(v):.2f}" if max(v) - min(v) >= 0.005 else "") + " s"
                 for k, v in sorted(times.items()))
        lines.append(f"  robot moves: {', '.join(spans)}")
        return lines

    def start(self, cfg: Config, ask: StartAsk, out: Say, err: Say, progress: Say) -> None:
        from .engines import Engine
        from .mechanism_events import robot_moves_summary  # lazy: out of --help's start-up
        from .terminal import TerminalFace  # lazy: out of --help's start-up

        class MoveProgress(TerminalFace):
            """On a terminal, the live progress line of the robot moves (the loop prints its own lines)."""

            def emit(self, event: Event) -> None:
                if event.kind == "turn-done":
                    self._turn_done(event)

        face = MoveProgress(out, headless=True)
        port = None if ask.firmware else (ask.port or cfg.rig.port)
        with rig_claims(None if port is None or port.startswith("sim://") else port, ask.state_dir):
            # the engine keeps the run record (runs/<time>/run.json) as it does for the panel's runs
            engine = Engine(cfg, face, port=ask.port, seed=ask.seed, state_dir=ask.state_dir,
                            firmware=ask.firmware, sim_view=ask.sim_view, started_by="no-wait", out=out,
                            paced=False)
            try:
                record = engine.run()
            finally:
                face.close()
        out(robot_moves_summary(cfg.rig.kind, record))
        if record.run_dir is not None:
            out(f"run record and scan images: {record.run_dir}")
        if record.status not in ("solved", "already-solved"):
            raise RigError(f"the {cfg.rig.kind} rig's run ended {record.status}")

    def dry_run(self, cfg: Config, ask: DryRunAsk, read_cube: Callable[[str], str], out: Say) -> None:
        from .dryrun_robot_moves import at_terminal  # lazy: out of --help's start-up

        at_terminal(cfg, ask, read_cube, out)

    def resume(self, cfg: Config, state_dir: str | None, port: str | None, open_link: OpenLink,
               say: Say) -> Resumed:
        return resume_mechanism_job(cfg, state_dir, port, open_link, say)

    def check_jog(self, cfg: Config, words: str, turns: int | None, steps: int | None) -> Any:
        if steps is not None:
            raise UserError(f"--steps is for a six-motor rig; on a {cfg.rig.kind} rig give robot moves, "
                            "separated by commas in one argument")
        if turns is not None:  # `jog spin -1`: the quarters as a word of their own
            if "," in words or len(words.split()) != 1:
                raise UserError("give the quarter turns inside the robot moves (\"close cover, turn -1, open "
                                "cover\"), not after them")
            words = f"{words} {turns}"
        return self._check(cfg, words)

    def check_panel_jog(self, cfg: Config, face: str | None, turns: int | None, steps: int | None,
                        moves: str | None) -> Any:
        from ..rig.mechanisms.jog import EXAMPLES  # lazy: out of --help's start-up

        if moves is None or face is not None:
            raise UserError(f"a {cfg.rig.kind} rig jogs by robot moves: send 'moves', e.g. "
                            f"{EXAMPLES.get(cfg.rig.kind, '')!r}")
        return self._check(cfg, moves)

    @staticmethod
    def _check(cfg: Config, text: str) -> Any:
        """Robot moves (or servo angles) checked against the rig's rules from home."""
        from ..rig.mechanisms.jog import check_any_jog  # lazy: out of --help's start-up

        mech = mechanism_for(cfg)
        assert mech is not None
        return check_any_jog(cfg, mech, text)

    def jog(self, link: Link, cfg: Config, jog: Any, out: Say) -> Jogged:
        lines: list[str] = []

        def told(line: str) -> None:
            lines.append(line)
            out(line)

        summary = jog_mechanism(link, cfg, jog, out=told)
        return Jogged(summary, {"moves": [line.strip() for line in lines]})

    def watched_dry_run(self, cfg: Config, moves: str, speed: str, start: Cube) -> WatchedDryRun:
        from .dryrun_robot_moves import RobotMoveDryRun  # lazy: out of --help's start-up

        return WatchedDryRun(RobotMoveDryRun(cfg, moves, speed, start))

    def follow(self, cfg: Config, jog: Any, before: Any) -> Followed:
        """Turned and held as the homing and the robot moves leave it."""
        from ..rig.mechanisms.jog import ServoJog  # lazy: out of --help's start-up

        if isinstance(jog, ServoJog):  # a part set to an angle may have tipped or turned the cube
            return Followed(None, None, f"servo angles set by hand: {HOLD_UNKNOWN}")
        mech = mechanism_for(cfg)
        assert mech is not None
        followed = jog.follow(mech, before) if before is not None else None
        if followed is None:
            return Followed(None, None, f"jogged: {HOLD_UNKNOWN}")
        moves, state = followed
        return Followed([str(m) for m in moves], name(mech.orientation(state)),
                        f"jogged: {len(jog.actions)} robot move(s), {len(moves)} of them layer turns", state)


_MOVES_THE_CUBE = MovesTheCube()
WORK: dict[str, KindWork] = {"six-motor": SixMotors(), "flipper": _MOVES_THE_CUBE,
                             "two-gripper": _MOVES_THE_CUBE}
"""Each kind's work, by the name ``[rig] kind`` gives: the one place a kind's name chooses code."""


def work_for(cfg: Config) -> KindWork:
    """The work of ``cfg``'s kind of rig (the config has checked the name)."""
    return WORK[cfg.rig.kind]


def rig_facts(cfg: Config) -> dict[str, Any]:
    """What applies to ``cfg``'s rig as a page reads it (app/kinds.py), with
    an example of its jogs by robot moves and by servo angle (empty where
    the rig jogs a face by steps): the page asks these, never the kind."""
    from ..rig.mechanisms.jog import EXAMPLES, SERVO_EXAMPLE  # lazy: out of --help's start-up

    kind = cfg.rig.kind
    return {**kind_of(cfg).for_page(), "jog_example": EXAMPLES.get(kind, ""),
            "servo_example": SERVO_EXAMPLE.get(kind, "")}


def rig_summary(cfg: Config) -> list[str]:
    """`config check`'s lines about the rig."""
    return work_for(cfg).summary(cfg)


def start_at_terminal(cfg: Config, ask: StartAsk, out: Say, err: Say, progress: Say) -> None:
    """`cuberobot start` on any kind of rig (its options checked by the caller)."""
    work_for(cfg).start(cfg, ask, out, err, progress)


def dry_run_at_terminal(cfg: Config, ask: DryRunAsk, read_cube: Callable[[str], str], out: Say) -> None:
    """`cuberobot dry-run` on any kind of rig."""
    work_for(cfg).dry_run(cfg, ask, read_cube, out)


def resume(cfg: Config, state_dir: str | None, port: str | None, open_link: OpenLink, say: Say) -> Resumed:
    """`cuberobot resume` on any kind of rig: the kind's journal and the
    rig's word decide (app/resume.py)."""
    return work_for(cfg).resume(cfg, state_dir, port, open_link, say)


def check_jog(cfg: Config, words: str, turns: int | None = None, steps: int | None = None) -> Any:
    """`cuberobot jog`'s arguments, checked for this kind of rig before anything opens."""
    return work_for(cfg).check_jog(cfg, words, turns, steps)


def check_panel_jog(cfg: Config, *, face: str | None = None, turns: int | None = None,
                    steps: int | None = None, moves: str | None = None) -> Any:
    """``POST /api/jog``'s fields, checked for this kind of rig before anything opens."""
    return work_for(cfg).check_panel_jog(cfg, face, turns, steps, moves)


def jog(link: Link, cfg: Config, checked: Any, out: Say) -> Jogged:
    """A checked jog made on the connected ``link``, telling ``out`` each robot
    move as it is made."""
    return work_for(cfg).jog(link, cfg, checked, out)


def watched_dry_run(cfg: Config, moves: str, speed: str, start: Cube) -> WatchedDryRun:
    """The panel's dry run of ``moves`` from ``start`` at ``speed`` on a
    virtual rig of its own, planned, bounded and drawn (seconds of work:
    called outside the panel's lock)."""
    return work_for(cfg).watched_dry_run(cfg, moves, speed, start)


def follow_jog(cfg: Config, jog: Any, before: Any) -> Followed:
    """The page's cube after a checked ``jog``, from the rig's whole state
    ``before`` it as the last run or jog left it (None: not known)."""
    return work_for(cfg).follow(cfg, jog, before)


def scan_by_rig(cfg: Config, port: str | None, seed: int | None, sim_view: str | None) -> RigScan:
    """A rig that moves the cube shows its one camera the six faces by its
    scan plan (whole-cube moves, no layer turns), as a run does, and the six
    pictures are read apart (`cuberobot scan` where the kind's
    ``scans_by_moving`` says so: a six-motor rig's cameras see the cube
    where it stands)."""
    from .mechanism_events import MechanismEvents  # lazy: out of --help's start-up
    from .mechanism_start import run_mechanism_start  # lazy: loads OpenCV and numba

    check_port(port)
    rig_port = port or cfg.rig.port
    events = MechanismEvents()
    with rig_claims(None if rig_port.startswith("sim://") else rig_port, None, folder=False):
        record = run_mechanism_start(cfg, port=port, seed=seed, sim_view=sim_view, scan_only=True,
                                     out=lambda _line: None, events=events)
    return RigScan(events.run.results["scan"], record.scan_moves or 0)  # a scan-only run that returns scanned
