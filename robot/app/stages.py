"""The seam between the one engine and the kinds of rig (issue 45): what a
kind's stages do in a run (:class:`KindStages`) and what they may read of
the engine that runs them (:class:`EngineView`). A module of its own, below
both sides, so that the engine (app/engines.py) picks the stages by kind and
the stages (app/start.py, app/mechanism_start.py) never import the engine:
the imports run one way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from vision.render import Lighting

    from ..rig.config import Config
    from .rigs import RigHandle
    from .run import Run


class KindStages(Protocol):
    """What a kind of rig does in a run; the engine does the rest."""

    between: str
    """Where a stop ends this kind's run, as its words say (:attr:`Run.between`)."""

    def go(self, run: Run) -> None:
        """Connect, run the stages, and tell the ends the stages know
        (solved, scanned, already solved, a scan in doubt that ends the run
        without raising); raise what ended it otherwise."""

    def after_stop(self, run: Run, estop: bool) -> None:
        """A stop ended the run: what the rig is let finish before its line is let go."""

    def let_go(self, run: Run) -> None:
        """The run has ended, however: the rig's line it opened is closed."""


class EngineView(Protocol):
    """What a kind's stages read of the engine that runs them: the run's
    settings as the face asked for them, and the rig it runs on (``rig``:
    an open six-motor rig the panel lends, or the one the stages opened)."""

    rig: RigHandle | None

    @property
    def cfg(self) -> Config: ...
    @property
    def port(self) -> str | None: ...
    @property
    def firmware(self) -> str | None: ...
    @property
    def state_dir(self) -> str | Path | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def no_wait(self) -> bool: ...
    @property
    def scan_only(self) -> bool: ...
    @property
    def paced(self) -> bool: ...
    @property
    def sim_view(self) -> str | None: ...
    @property
    def sim_lighting(self) -> Callable[[int], Lighting] | None: ...
    @property
    def progress(self) -> Callable[[str], None] | None: ...
    @property
    def started_by(self) -> str | None: ...
    @property
    def out(self) -> Callable[[str], None]: ...
