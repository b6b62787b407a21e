"""The rig as the panel holds it between runs, and how a run gets its line.

A six-motor rig keeps one line open for as long as the panel serves (its
listener hears the rig's button, and an emergency stop goes out at once on
it: :mod:`.kept_line`); a flipper or two-gripper keeps none, and each run,
jog, stop or clear opens its own, so what the panel knows of the rig's latch
is what the rig said then (:mod:`.own_lines`). Which of the two applies is
asked once, here, when the panel is made (robot/app/kinds.py says); from
then on the panel (the run controller, robot/web/runs.py) asks the holder it
was given, never the kind.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..app.kinds import kind_of
from ..rig.config import Config
from ..rig.errors import RigError
from ..rig.link import Link

if TYPE_CHECKING:
    from ..app.engines import RunEngine
    from .runs import Options, Panel, Status

Hold = Callable[[str], AbstractContextManager[None]]
"""The panel's :meth:`~.runs.Panel.holding`: the rig held against runs and jogs while a block runs."""


class RigBetweenRuns(ABC):
    """What the panel holds of the rig between runs: its line (kept, or
    opened for each need), its latch as last known, the cube's hold as the
    last run or jog left it; and the ways to reach it (a run's line, the
    emergency stop, a clear, a jog, another port)."""

    def __init__(self, cfg: Config, options: Options, on_change: Callable[[dict[str, Any]], None]):
        self.cfg, self.options, self.on_change = cfg, options, on_change
        self.rig_state: Any = None
        """The rig's whole state as the last run or jog left it (a flipper's or
        two-gripper's: the cube's hold in the status's frame, and its parts);
        None while not known (none yet, or one ended part-way). A jog is
        followed from it."""

    @abstractmethod
    def open(self) -> None:
        """Server start: whatever the rig needs before the first request."""

    @abstractmethod
    def line_for_a_run(self) -> tuple[str | None, str | None]:
        """The port and the emulated firmware a run's engine is made with
        (None, None: the holder lends it its line when the run starts)."""

    @abstractmethod
    def run(self, engine: RunEngine, status: Status, go: Callable[[], None],
            failed: Callable[[str], None]) -> None:
        """The run's thread: ``go()`` (the engine's run) on the run's line;
        an end the engine could not tell is given to ``failed``."""

    @abstractmethod
    def estop(self, engine: RunEngine | None, status: Status, held_by: str | None) -> dict[str, Any]:
        """The emergency stop: onto the running ``engine``'s line (None: no
        run is going on), else onto the jog's or an idle line; ``held_by``:
        what holds the rig between runs as the stop was pressed."""

    @abstractmethod
    def estop_is_quick(self) -> bool:
        """With no run going on, the emergency stop is a write onto a line
        already open, or needs no line (no connecting to do)."""

    @abstractmethod
    def clear(self, holding: Hold) -> dict[str, Any]:
        """Clear a latched emergency stop (the panel has checked no run is going on)."""

    @abstractmethod
    def jog(self, panel: Panel, checked: Any, give_up_job: bool) -> dict[str, Any]:
        """A checked jog (robot/web/jogging.py), the panel holding the rig for it."""

    @abstractmethod
    def switch(self, port: str) -> dict[str, Any]:
        """The rig is now on ``port`` (robot/web/porting.py): what is known of it there."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """The rig as the page shows it."""

    @abstractmethod
    def close(self, timeout: float) -> None:
        """Server shutdown: let go of the rig within ``timeout``."""

    def estop_port(self, port: str) -> dict[str, Any]:
        """No run holds the line: the stop goes through a link opened for it
        (the stop is the same bytes on every kind of rig)."""
        link = Link(self.cfg, port=port, kind=self.cfg.rig.kind)
        try:
            link.open()
            link.estop()
        except RigError as e:
            return {"sent": False, "message": f"no run is going on and the rig could not be reached: {e}"}
        finally:
            link.close()
        return {"sent": True, "message": "emergency stop sent to the idle rig; clear it before the next run"}


def rig_between_runs(cfg: Config, options: Options, *, on_change: Callable[[dict[str, Any]], None],
                     on_button: Callable[[], None], busy: Callable[[], bool]) -> RigBetweenRuns:
    """The holder for ``cfg``'s rig: the standing line's for a rig that keeps
    one, else the own-line-per-run one. ``on_change``: the rig's state
    changed (every page is told); ``on_button``: the rig's start button,
    heard between runs; ``busy``: a run is going on."""
    if kind_of(cfg).keeps_its_line:
        from .kept_line import KeptLine

        return KeptLine(cfg, options, on_change=on_change, on_button=on_button, busy=busy)
    from .own_lines import OwnLines

    return OwnLines(cfg, options, on_change=on_change)

