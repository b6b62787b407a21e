"""The state one press of start shares between its stages.

:mod:`robot.app.start` runs the stages; :mod:`robot.app.doubt` turns a face
to look again in the middle of them. Both take a :class:`Run`, which lives
here so that neither module needs the other's to know what a run is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..rig.config import Config
from .events import Event, Face, Stopped
from .record import RunRecord
from .rigs import RigHandle

if TYPE_CHECKING:
    from vision.render import Lighting
    from vision.scan_result import ScanResult


@dataclass
class Run:
    """One press of start: the set-up, the rig and the face, the person's stop
    flags, and what the stages found (the record, the pictures)."""

    cfg: Config
    rig: RigHandle
    face: Face
    seed: int | None = None
    sim_lighting: Callable[[int], Lighting] | None = None
    """For simulated cameras: capture number -> lighting (None: random)."""
    stop_flag: threading.Event = field(default_factory=threading.Event)
    estop_flag: threading.Event = field(default_factory=threading.Event)
    state: str = "idle"
    captures: int = 0
    record: RunRecord = field(default_factory=RunRecord)
    images: dict[str, np.ndarray] = field(default_factory=dict)
    state_dir: str | Path | None = None
    """The journal's folder (None: the default): every turn is journalled there."""
    step_labels: list[str] | None = None
    """A label a solution step (the CFOP stage it belongs to), or None."""

    def emit(self, kind: str, state: str | None = None, text: str = "", result: ScanResult | None = None,
             **data: Any) -> None:
        if state is not None:
            self.state = state
        self.face.emit(Event(kind, self.state, data, text, result=result))

    def publish(self, event: Event) -> None:
        """An event made elsewhere (a job's turns): the run takes its state."""
        self.state = event.state
        self.face.emit(event)

    def check_stop(self) -> None:
        """Between steps: end the run here if a person asked for it."""
        if self.estop_flag.is_set():
            raise Stopped("emergency stop: the rig was stopped", estop=True)
        if self.stop_flag.is_set():
            raise Stopped("stopped by request")
