"""One run, whichever kind of rig makes it: the face it tells, the person's
stop and emergency stop, and what the stages found.

Every kind's stages (:mod:`robot.app.start` for six motors,
:mod:`robot.app.mechanism_start` for a rig that moves the cube, and
:mod:`robot.app.doubt` turning a face to look again) share one
:class:`Run`: it is the one place a run's events go out (:meth:`Run.emit`),
its stop is asked for (:meth:`Run.stop`, :meth:`Run.estop`, from any thread)
and honoured (:meth:`Run.check_stop`), and its end is told once
(:attr:`Run.finished`). It lives here so that none of those modules needs
another's to know what a run is.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..rig.errors import UserError
from .events import Event, Face, Stopped
from .record import PICTURES, RunRecord, run_dir, save_images

if TYPE_CHECKING:
    from vision.render import Lighting
    from vision.scan_result import ScanResult

    from ..rig.config import Config
    from ..rig.link import Link
    from ..rig.mechanisms.base import State
    from .rigs import RigHandle

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Run:
    """One press of start: the face, the person's stop flags, the line the
    emergency stop goes onto, and what the stages found (the record, the
    pictures). ``cfg`` and ``rig`` are set by the engine once it has them
    (a dry run of robot moves has neither)."""

    face: Face = field(default_factory=Face)
    started_by: str = "auto"
    """How start was pressed, as the ``started`` event says."""
    between: str = ""
    """Where a stop is honoured, as its words say (a rig that moves the
    cube: " between two robot moves"; six motors: at the next step)."""
    seed: int | None = None
    sim_lighting: Callable[[int], Lighting] | None = None
    """For simulated cameras: capture number -> lighting (None: random)."""
    stop_flag: threading.Event = field(default_factory=threading.Event)
    estop_flag: threading.Event = field(default_factory=threading.Event)
    link: Link | None = None
    """The run's line from the moment it is opened until the run lets go of
    it: where :meth:`estop` sends the stop."""
    state: str = "idle"
    captures: int = 0
    finished: bool = False
    """The run's end was told (a ``finished`` event): every end is told once."""
    record: RunRecord = field(default_factory=RunRecord)
    images: dict[str, np.ndarray] = field(default_factory=dict)
    results: dict[str, ScanResult] = field(default_factory=dict)
    """The last scan of each purpose (scan, confirmation scan), for the run record's pictures."""
    state_dir: str | Path | None = None
    """The journal's folder (None: the default): every turn is journalled there."""
    step_labels: list[str] | None = None
    """A label a solution step (the CFOP stage it belongs to), or None."""
    t0: float = field(default_factory=time.monotonic)
    wall0: float = field(default_factory=time.time)
    rig_state: State | None = None
    """A rig that moves the cube: its whole state (the cube's hold, in this
    run's frame, and its parts) after the last robot move it reported made;
    None before homing and while a move is under way, so a run that ends in
    one (a stop, a fault) leaves it not known. A jog after the run starts here."""
    rig_latched: bool | None = None
    """Whether the rig's emergency stop was latched as the run's own line
    closed (None: it never answered, or the line is kept between runs)."""
    rig_latched_at: float = 0.0
    """When that word began to be listened for (time.monotonic): a stop
    sent since is newer knowledge than it."""
    cfg: Config = field(init=False)
    rig: RigHandle = field(init=False)

    # -- from the face's side (any thread) ---------------------------------------
    def stop(self) -> None:
        """End the run at its next step."""
        self.stop_flag.set()

    def estop(self) -> bool:
        """The emergency stop: onto the run's line at once when it has one
        (the rig latches it, a move under way stops), and the run ends at its
        next step. False: no line took it (none open yet, or a dry run's
        virtual rig in this process, which stops before its next move)."""
        self.estop_flag.set()
        self.stop_flag.set()
        link = self.link
        return link.estop() if link is not None else False

    # -- from the run's side -------------------------------------------------------
    def emit(self, kind: str, state: str | None = None, text: str = "", result: ScanResult | None = None,
             **data: Any) -> None:
        if state is not None:
            self.state = state
        if kind == "finished":
            self.finished = True
        self.face.emit(Event(kind, self.state, data, text, result=result))

    def publish(self, event: Event) -> None:
        """An event made elsewhere (a job's turns): the run takes its state."""
        self.state = event.state
        if event.kind == "finished":
            self.finished = True
        self.face.emit(event)

    def check_stop(self) -> None:
        """Between steps: end the run here if a person asked for it."""
        if self.estop_flag.is_set():
            raise Stopped(f"emergency stop: the rig was stopped{self.between}", estop=True)
        if self.stop_flag.is_set():
            raise Stopped(f"stopped by request{self.between}")

    def restart_clock(self) -> None:
        """The run's time starts now (when start is pressed)."""
        self.t0, self.wall0 = time.monotonic(), time.time()


def keep_record(run: Run, state_dir: str | Path | None) -> None:
    """The run's record, filled where every kind fills it alike, kept as
    ``runs/<time>/run.json`` (the time the run began) with the pictures of
    its scans; ``record.run_dir`` says where. A folder that cannot be made
    or written is told in the log, not raised: the run has ended as it
    ended, and that is what its caller hears."""
    record = run.record
    record.seed = run.seed
    cfg = getattr(run, "cfg", None)
    record.config = str(cfg.path) if cfg is not None and cfg.path else None
    if record.started is None:
        record.started = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(run.wall0))
    if record.captures is None:
        record.captures = run.captures
    if record.estop is None and run.estop_flag.is_set():
        record.estop = True
    if record.facelets is None and "scan" in run.results:  # stopped or failed after the scan
        record.facelets = run.results["scan"].facelets
    if record.total_s is None:
        record.total_s = round(time.monotonic() - run.t0, 3)
    try:
        folder = run_dir(state_dir, run.wall0)
        for purpose, prefix in PICTURES:
            save_images(folder, prefix, run.results.get(purpose))
        record.run_dir = str(folder)
        record.write(folder)
    except (OSError, UserError) as e:
        log.warning("could not keep the run's record: %s", e)
