"""The engine of a run, whichever kind of rig it runs on (issue 45).

One :class:`Engine` is the shell every run goes through: the stop and the
emergency stop from any thread, every end told once as ``finished``, Ctrl-C,
the failure named and the run's record kept. What differs between kinds
(connecting, scanning, solving, making the moves with their journal) is a
:class:`KindStages` the configured kind picks from :data:`STAGES`, as
Klipper's toolhead asks its kinematics: six motors (app/start.py), or a rig
that moves the whole cube, a flipper or two grippers (app/mechanism_start.py).
The shell asks the stages, never which kind they are.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..rig.errors import RigError, UserError
from ..rig.mechanisms.base import ImpossibleMove
from .events import Face, Stopped
from .record import RunRecord
from .run import Run, keep_record
from .stages import KindStages
from .terminal import TerminalFace

if TYPE_CHECKING:
    from vision.render import Lighting

    from ..rig.config import Config
    from .rigs import RigHandle

log = logging.getLogger(__name__)


def _six_motors(engine: Engine) -> KindStages:
    from .start import SixMotorStages

    return SixMotorStages(engine)


def _moves_the_cube(engine: Engine) -> KindStages:
    from .mechanism_start import RobotMoveStages  # lazy: loads OpenCV and numba

    return RobotMoveStages(engine)


STAGES: dict[str, Callable[[Engine], KindStages]] = {
    "six-motor": _six_motors, "flipper": _moves_the_cube, "two-gripper": _moves_the_cube}
"""Each kind's stages, by the name ``[rig] kind`` gives: the one place the engine's kind is chosen."""


class Engine:
    """A press of start as one object that faces watch, on any kind of rig:
    :meth:`run` goes through the kind's stages, telling ``face`` what happens
    and asking it when a scan is in doubt; :meth:`stop` and :meth:`estop`
    may be called from any thread at any moment. Every way a run ends is
    told once as a ``finished`` event, and kept as a run record."""

    def __init__(self, cfg: Config, face: Face, *, port: str | None = None, firmware: str | None = None,
                 state_dir: str | Path | None = None, seed: int | None = None, no_wait: bool = False,
                 scan_only: bool = False, sim_lighting: Callable[[int], Lighting] | None = None,
                 progress: Callable[[str], None] | None = None, rig: RigHandle | None = None,
                 started_by: str | None = None, out: Callable[[str], None] = log.info,
                 sim_view: str | None = None, paced: bool = True):
        """``rig``: an already-open rig to run on and leave open (the panel
        keeps a six-motor rig's line for its life; None: the run opens its
        own and closes it). ``started_by``: how start was pressed when that
        happened before the run (the panel's Start, the rig's button heard by
        the panel): the run does not wait for start then. ``no_wait``: the
        run begins without waiting for the rig's own start button.
        ``progress``: the solver's one-time table build. ``out``: the lines
        a rig that moves the cube prints as it goes. ``sim_view``: a sim-rig
        in another process shows its cube through this file. ``paced``: a
        ``sim://`` rig's robot moves wait as its ``?speed=`` says (the panel,
        where a person watches); False: no waiting (the terminal).
        ``scan_only``: scan and stop there."""
        self.cfg, self.port, self.firmware, self.state_dir = cfg, port, firmware, state_dir
        self.seed = random.SystemRandom().randrange(2**31) if seed is None else seed
        self.no_wait, self.scan_only = no_wait, scan_only
        self.sim_lighting, self.progress, self.out = sim_lighting, progress, out
        self.sim_view, self.paced = sim_view, paced
        self.rig = rig
        self.started_by = started_by
        self.stages = STAGES[cfg.rig.kind](self)
        self.current = Run(face, started_by=started_by or "auto", between=self.stages.between, seed=self.seed,
                           sim_lighting=sim_lighting, state_dir=state_dir)
        """The run: its face, its stop, the line its emergency stop goes onto, what it found."""
        self.current.cfg = cfg
        self.stop_flag, self.estop_flag = self.current.stop_flag, self.current.estop_flag

    @property
    def record(self) -> RunRecord:
        """The run's record, filled as the run goes (``run_dir`` set once it was kept)."""
        return self.current.record

    @property
    def face(self) -> Face:
        return self.current.face

    @face.setter
    def face(self, face: Face) -> None:
        self.current.face = face

    def stop(self) -> None:
        """End the run at its next step."""
        self.current.stop()

    def estop(self) -> bool:
        """The emergency stop: straight onto the rig's line, from the calling
        thread (as Ctrl-C's handler does), then the run ends. True when an
        open line took it."""
        return self.current.estop()

    def run(self) -> RunRecord:
        """The whole run. Returns its record (also kept in the state dir);
        raises what ended it when it did not end as the stages planned
        (the record and the ``finished`` event say so too)."""
        run = self.current
        run.restart_clock()
        try:
            self.stages.go(run)
            return run.record
        except Stopped as e:
            self.stages.after_stop(run, e.estop)
            self._end(run, "stopped", str(e), estop=e.estop)
            raise
        except KeyboardInterrupt:  # Ctrl-C at the terminal: the record says how far the run got
            self._end(run, "interrupted", "interrupted", estop=None)
            raise
        except (RigError, UserError, ImpossibleMove) as e:
            if run.estop_flag.is_set():  # the rig stopped on the emergency stop it was sent, and says so
                self._end(run, "stopped", f"emergency stop: {e}", estop=True)
                raise Stopped(f"emergency stop: {e}", estop=True) from None
            self._end(run, getattr(e, "status", "failed"), str(e), estop=None)
            raise
        finally:
            self.stages.let_go(run)
            keep_record(run, self.state_dir)

    @staticmethod
    def _end(run: Run, status: str, message: str, *, estop: bool | None) -> None:
        """The end the stages did not tell: in the record, and to the face once."""
        record = run.record
        record.status, record.message = status, message
        if estop is not None:
            record.estop = estop
        if run.finished:
            return
        state = "failed" if status in ("failed", "scan-doubtful") else "stopped"
        if status == "stopped":
            run.emit("finished", state, message, status=status, estop=bool(estop))
        else:
            run.emit("finished", state, message, status=status)


def engine_for(cfg: Config, face: Face, *, port: str | None = None, firmware: str | None = None,
               state_dir: str | Path | None = None, seed: int | None = None, scan_only: bool = False,
               sim_lighting: Callable[[int], Lighting] | None = None, started_by: str = "auto",
               no_wait: bool = False, paced: bool = True) -> Engine:
    """The engine of one run on ``cfg``'s rig (see :class:`Engine`)."""
    return Engine(cfg, face, port=port, firmware=firmware, state_dir=state_dir, seed=seed, no_wait=no_wait,
                  scan_only=scan_only, sim_lighting=sim_lighting, started_by=started_by, paced=paced)


def run_start(cfg: Config, *, port: str | None = None, headless: bool = False, firmware: str | None = None,
              state_dir: str | Path | None = None, seed: int | None = None, no_wait: bool = False,
              sim_lighting: Callable[[int], Lighting] | None = None,
              out: Callable[[str], None] = print, progress: Callable[[str], None] | None = None) -> RunRecord:
    """The whole loop with the terminal (and, unless ``headless``, the
    preview window) as its face, on any kind of rig. Returns the run record
    (also written to the state dir). ``progress`` hears about the solver's
    one-time table build."""
    face = TerminalFace(out, headless=headless)
    engine = Engine(cfg, face, port=port, firmware=firmware, state_dir=state_dir, seed=seed, no_wait=no_wait,
                    sim_lighting=sim_lighting, progress=progress)
    try:
        return engine.run()
    finally:
        face.close()


RunEngine = Engine
"""What a face holds of a run (it was a protocol over two engines; there is one now)."""
