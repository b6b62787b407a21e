"""A six-motor rig's dry run: the plan's motor steps (:func:`robot.rig.motion.plan`)
turned on the virtual rig (or a given port) and timed, for the one dry run
(app/dryrun.py) that `cuberobot dry-run` and the web panel's dry-run card
share. Each makes its plan once, estimates and draws it, and hands that same
plan here to be turned.

A virtual rig made for the run starts from ``start`` and keeps its journal
in a temporary folder, so a dry run leaves nothing behind; a real port's
journal is the usual one (``state_dir``)."""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from solver import SOLVED_CUBE, Cube, group_steps, parse_facelets

from ..rig.config import Config
from ..rig.errors import UserError
from ..rig.journal import Journal
from ..rig.link import Link
from ..rig.motion import estimate_s, plan
from ..rig.timing import move_ticks, ticks_to_s
from .dryrun import DryRunAsk, check_ask
from .events import Event, Face, Stopped, TurnEvents
from .limits import check_dry_run_hours, check_port, rig_claims

if TYPE_CHECKING:
    from ..rig import job
    from ..rig.motion import MotorStep


def _checked_plan(cfg: Config, ask: DryRunAsk) -> list[MotorStep]:
    """Bounds of a six-motor dry run, before anything is opened: those of
    every dry run (:func:`check_ask`), and at most an hour at the virtual rig's pace.
    Returns the run's one plan (checked, shown and turned)."""
    from ..sim.virtual_rig import EventClock, make_clock  # lazy: the simulation plugs in when asked for

    check_ask(ask)
    speed, where = ask.speed, "--speed"
    if ask.port is not None and ask.port.startswith("sim://"):
        from ..sim.protocol_sim import parse_sim_url  # lazy: the simulation plugs in when asked for

        try:
            speed, where = parse_sim_url(ask.port)[1].get("speed", "1"), "--port's speed"
        except ValueError as e:
            raise UserError(f"--port {ask.port}: {e}") from None
    try:
        clock = make_clock(speed)
    except ValueError as e:
        raise UserError(f"{where}: {e}") from None
    steps = plan(group_steps(ask.moves), cfg)
    if ask.simulated and not isinstance(clock, EventClock):
        check_dry_run_hours(estimate_s(steps, cfg), float(speed), speed, where)
    return steps


def at_terminal(cfg: Config, ask: DryRunAsk, read_cube: Callable[[str], str],
                out: Callable[[str], None]) -> None:
    """A six-motor dry run as `cuberobot dry-run` shows it: a line for each
    turn (its motors, the estimate and the rig's own time), the totals, and
    with ``render`` the animation and the timeline. ``read_cube`` reads the
    starting cube as given."""
    steps = _checked_plan(cfg, ask)  # the moves parsed and planned before anything opens
    start = parse_facelets(read_cube(ask.start)) if ask.start else SOLVED_CUBE
    if ask.render:
        from .dryrun_pictures import check_path  # lazy: loads OpenCV
        check_path(ask.render)
    profiles = cfg.profiles()
    check_port(ask.port)
    header = [f"{'step':>4}  {'turn':<7} {'motors':<22} {'estimate':>9} {'rig':>9}"]

    def on_turn(td: job.TurnDone) -> None:
        if header:
            out(header.pop())
        est = ticks_to_s(sum(move_ticks(td.step.parts, profiles)))
        motors = " ".join(f"{cfg.motor_for_index(m).face}:{s:+d}" for m, s in td.step.parts)
        rig = f"{ticks_to_s(td.ticks):.3f} s" if td.ticks is not None else "?"
        out(f"{td.index + 1:>4}  {td.step.text:<7} {motors:<22} {est:>7.3f} s {rig:>9}")

    # A virtual rig of its own; with no --state-dir, a journal of its own too.
    with rig_claims(None if ask.simulated else ask.port, ask.state_dir,
                    folder=not ask.simulated or ask.state_dir is not None):
        report = dry_run(cfg, start, steps, port=ask.port, speed=ask.speed, state_dir=ask.state_dir,
                         on_turn=on_turn)
    executed = f"{report.executed_s:.3f} s" if report.executed_s is not None else "unknown (a DONE was lost)"
    out(f"total: estimated {report.estimated_s:.3f} s, executed {executed} (rig's clock), "
        f"{len(steps)} steps, wall {report.wall_s:.3f} s")
    out(f"final state: {report.state}")
    if ask.render:
        from .dryrun_pictures import render  # lazy: loads OpenCV
        for path in render(ask.render, start, steps, cfg):
            out(f"wrote {path}")


def virtual_port(start: Cube, speed: str) -> str:
    """A fresh virtual rig's address, holding ``start``, at ``speed``."""
    from ..sim.protocol_sim import sim_url  # lazy: the simulation plugs in when asked for
    from ..sim.virtual_rig import make_clock  # lazy: the simulation plugs in when asked for

    try:
        make_clock(speed)
    except ValueError as e:
        raise UserError(f"speed {speed!r}: {e}") from None
    return sim_url(f"dry-run-{time.monotonic_ns()}", speed=speed, state=start.to_facelets())


@contextlib.contextmanager
def _journal_dir(port: str, state_dir: str | Path | None) -> Iterator[str | Path | None]:
    if state_dir is None and port.startswith("sim://"):
        with tempfile.TemporaryDirectory(prefix="cuberobot-dry-run-") as tmp:
            yield tmp
    else:
        yield state_dir


def dry_run(cfg: Config, start: Cube, steps: Sequence[MotorStep], *, port: str | None = None,
            speed: str = "1", state_dir: str | Path | None = None,
            on_turn: Callable[[job.TurnDone], None] | None = None,
            on_link: Callable[[Link | None], None] | None = None) -> job.JobReport:
    """Turn the plan ``steps`` as it is from ``start`` on ``port`` (default:
    a new virtual rig at ``speed``), telling ``on_turn`` as the rig reports
    each one done. ``on_link`` hears the connected link (and None once it is closed), so
    that another thread can send it the emergency stop."""
    from .. import sim  # noqa: F401  (sim:// ports; lazy: the simulation plugs in when asked for)
    from ..rig import job  # lazy: out of --help's start-up

    port = port or virtual_port(start, speed)
    with _journal_dir(port, state_dir) as journal_dir, Journal(journal_dir) as journal, \
            Link(cfg, port) as link:
        link.connect()
        if on_link is not None:
            on_link(link)
        try:
            return job.run(link, journal, start, steps, on_turn=on_turn)
        finally:
            if on_link is not None:
                on_link(None)


class SixMotorDryRun:
    """A six-motor dry run a page watches, the part the one dry run's shell
    runs (app/dryrun.py): planned, bounded and drawn when made, then turned
    on a virtual rig of its own with the same events as a run's turns."""

    rig = "the dry run's virtual rig"

    def __init__(self, cfg: Config, moves: str, speed: str, start: Cube):
        """The run's one plan, the moves checked before anything starts: drawn, estimated, turned."""
        import cv2

        from .dryrun_pictures import timeline  # lazy: loads OpenCV

        self.cfg, self.speed, self.cube = cfg, speed, start
        self.steps = plan(group_steps(moves), cfg)
        self.estimate = estimate_s(self.steps, cfg)
        check_dry_run_hours(self.estimate, float(speed), speed, "speed")
        self.picture: bytes = cv2.imencode(".png", timeline(self.steps, cfg))[1].tobytes()
        """The motor timeline (PNG), as `dry-run --render` draws it."""
        self.link: Link | None = None

    def opening(self) -> Event:
        texts = [s.text for s in self.steps]
        return Event("solution", "turning", {
            "facelets": self.cube.to_facelets(), "moves": " ".join(texts), "length": len(texts),
            "steps": texts, "estimated_s": round(self.estimate, 3), "dry_run": True},
            f"dry run: {len(self.steps)} turns, ~{self.estimate:.1f} s")

    def make(self, face: Face, stop_flag: threading.Event) -> Event:
        n = len(self.steps)
        events = TurnEvents([s.text for s in self.steps], self.estimate)

        def on_link(link: Link | None) -> None:
            self.link = link
            if link is not None and n:
                face.emit(events.started(0))

        def on_turn(td: job.TurnDone) -> None:
            face.emit(events.done(td.index, td.state, td.ticks))
            if stop_flag.is_set():
                raise Stopped("dry run stopped by request")
            if td.index + 1 < n:
                face.emit(events.started(td.index + 1))

        report = dry_run(self.cfg, self.cube, self.steps, speed=self.speed, on_turn=on_turn, on_link=on_link)
        executed = f"{report.executed_s:.3f} s" if report.executed_s is not None else "unknown"
        return Event("finished", "done", {"status": "dry-run", "final_state": report.state,
                                          "estimated_s": round(report.estimated_s, 3),
                                          "executed_s": report.executed_s},
                     f"dry run done: estimated {report.estimated_s:.3f} s, executed {executed} "
                     "(the virtual rig's clock)")

    def estop(self) -> bool:
        link = self.link
        if link is None:
            return False
        link.estop()
        return True
