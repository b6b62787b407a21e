"""The rig as the panel holds it between runs, and how a run gets its line.

A six-motor rig keeps one line open for as long as the panel serves (its
listener hears the rig's button, and an emergency stop goes out at once on
it: :mod:`.kept_line`); a flipper or two-gripper keeps none, and each run,
jog, stop or clear opens its own, so what the panel knows of the rig's latch
is what the rig said then (:mod:`.own_lines`). Which of the two applies is
asked once, when the panel is made (robot/web/runs.py ``rig_between_runs``);
from then on the panel (the run controller) asks the holder it was given,
never the kind.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from ..app.kindwork import follow_jog
from ..rig.config import Config
from ..rig.errors import RigError
from ..rig.link import Link
from .options import Options

if TYPE_CHECKING:
    from ..app.engines import RunEngine

Hold = Callable[[str], AbstractContextManager[None]]
"""The panel's :meth:`~.runs.Panel.holding`: the rig held against runs and jogs while a block runs."""
Jogged = Callable[[list[str] | None, str | None, str], None]
"""The panel's :meth:`~.runs.Panel.jogged`: the page's cube follows a jog (its moves, the hold, the words)."""
GIVE_UP_OR_RESUME = ("give it up to jog (the next Start scans the cube afresh), or stop the panel and run "
                     "`cuberobot resume` to finish it")
GAVE_UP = "; the unfinished job was given up"


class StopMark(Protocol):
    """The run's status as the holder marks it (robot/web/runs.py ``Status``):
    an emergency stop sent during the run."""

    estop_sent: bool


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
        self.jog_estop = threading.Event()
        """The emergency stop pressed during a jog, perhaps before its line
        was open (cleared as a jog begins: robot/web/jogging.py); a jog on a
        line of its own then makes no move at all."""

    @abstractmethod
    def open(self) -> None:
        """Server start: whatever the rig needs before the first request."""

    @abstractmethod
    def line_for_a_run(self) -> tuple[str | None, str | None]:
        """The port and the emulated firmware a run's engine is made with
        (None, None: the holder lends it its line when the run starts)."""

    @abstractmethod
    def run(self, engine: RunEngine, status: StopMark, go: Callable[[], None],
            failed: Callable[[str], None]) -> None:
        """The run's thread: ``go()`` (the engine's run) on the run's line;
        an end the engine could not tell is given to ``failed``."""

    @abstractmethod
    def estop(self, engine: RunEngine | None, status: StopMark, held_by: str | None) -> dict[str, Any]:
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
    def jog(self, jog: Any, give_up_job: bool, jogged: Jogged, *, after_dry_run: bool) -> dict[str, Any]:
        """A checked jog (robot/web/jogging.py), the panel holding the rig for
        it; ``jogged`` tells the page's cube; ``after_dry_run``: the cube the
        page shows is a dry run's, a virtual rig's of its own, not this one's."""

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

    def follow(self, jog: Any, jogged: Jogged, after_dry_run: bool) -> None:
        """The page's cube after a jog on the rig the runs use (robot/app/kindwork.py
        follows it), from where the last run or jog left the rig (:attr:`rig_state`)."""
        before, self.rig_state = self.rig_state, None
        followed = follow_jog(self.cfg, jog, None if after_dry_run else before)
        self.rig_state = followed.state
        if followed.tell:
            jogged(followed.moves, followed.orientation, followed.text)
