"""A rig that keeps no line between runs (a flipper, two grippers): each
run, jog, stop or clear opens its own, and what the panel knows of the
rig's latch and of the cube's hold is what the rig said then."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vision.errors import VisionError

from ..app.events import Stopped
from ..app.jog import clear_to_jog, refuse_unfinished
from ..app.kindwork import HOLD_UNKNOWN
from ..app.kindwork import jog as make_jog
from ..app.rigs import openable
from ..rig.config import Config
from ..rig.errors import RigError, UserError
from ..rig.link import STOP_HEARD_S, Link
from ..rig.mechanisms.base import ImpossibleMove
from .between_runs import GAVE_UP, GIVE_UP_OR_RESUME, Hold, Jogged, RigBetweenRuns, StopMark
from .options import Options

if TYPE_CHECKING:
    from ..app.engines import RunEngine

log = logging.getLogger(__name__)


class OwnLines(RigBetweenRuns):
    """The rig reached when a run, a jog or a stop needs it."""

    def __init__(self, cfg: Config, options: Options, *, on_change: Callable[[dict[str, Any]], None]):
        super().__init__(cfg, options, on_change)
        self.latched: bool | None = None
        """A rig that outlives a run (:attr:`lasting_port`): whether its
        emergency stop was latched when this panel last reached it (a run's or
        a jog's line as it closed, a stop sent, a clear); None before it has
        been reached."""
        self._latch_known_at = 0.0
        """When :attr:`latched` was learnt (time.monotonic)."""
        self.jog_link: Link | None = None
        """A jog's line (its emergency stop goes there)."""

    @property
    def lasting_port(self) -> str | None:
        """A rig that outlives a run (a serial port, a sim-rig's pty, a named
        ``sim://NAME``), which keeps an emergency stop latched until it is
        cleared; None when each run and jog gets a virtual rig or an emulated
        firmware of its own (a bare ``sim://``, ``--firmware``)."""
        import urllib.parse

        from ..app.rigs import run_port

        port = self.options.rig_port or self.cfg.rig.port
        if self.options.firmware:
            return None
        if port.startswith("sim://"):
            parts = urllib.parse.urlsplit(port)
            return run_port(self.cfg, port) if parts.netloc + parts.path else None  # the URL runs use
        return port

    def open(self) -> None:
        """With a ``sim://NAME`` rig, the panel's own links (an idle stop, a
        clear) open it before any run has loaded the simulation, which
        registers ``sim://`` with pyserial."""
        openable(self.lasting_port)

    def line_for_a_run(self) -> tuple[str | None, str | None]:
        return self.options.rig_port, self.options.firmware  # the run opens its own line

    def run(self, engine: RunEngine, status: StopMark, go: Callable[[], None],
            failed: Callable[[str], None]) -> None:
        """A run that opens its own line (a rig that moves the cube): every
        end it knows it tells as ``finished``; then what the rig said of its
        state and its latch as the line closed is kept for the next run or jog."""
        try:
            go()
        except (Stopped, RigError, UserError, ImpossibleMove, VisionError) as e:
            log.info("the %s run ended: %s", self.cfg.rig.kind, e)
            failed(str(e))
        except Exception as e:  # noqa: BLE001 - a run's failure is told to the page, not lost in a thread
            log.exception("the run failed")
            failed(f"the run failed: {type(e).__name__}: {e}")
        finally:
            said = engine.current  # the run kept what the rig said of its state and its latch
            self.rig_state = said.rig_state
            latched = said.rig_latched
            if not (latched is False and status.estop_sent):  # a stop sent, no latch heard: not known
                self.note_latch(latched, heard_at=said.rig_latched_at)

    def estop(self, engine: RunEngine | None, status: StopMark, held_by: str | None) -> dict[str, Any]:
        """Onto the run's line or the jog's, else onto one opened for it."""
        kind = self.cfg.rig.kind
        if engine is not None:
            status.estop_sent = True
            if engine.estop():  # the run's line
                self.note_latch(True)
                return {"sent": True, "message": f"emergency stop sent to the {kind} rig"}
            # no line took it (not open yet): nothing latched, nothing moves on
            return {"sent": False, "message": f"emergency stop: the {kind} run stops before its next robot "
                                              "move (no line to a rig was open to send it on)"}
        jogging, link = held_by == "jog", self.jog_link  # as things stood at the press
        if jogging:
            self.jog_estop.set()  # a jog whose line is not open yet makes no move
        if link is not None and link.estop():
            self.note_latch(True)
            return {"sent": True, "message": f"emergency stop sent to the {kind} rig the jog moves"}
        if link is not None:
            log.warning("the jog's line did not take the emergency stop; sending it on a line of its own")
        if jogging and link is None:
            return {"sent": False, "message": "emergency stop: the jog makes no move (its line to the "
                                              f"{kind} rig was not open yet)"}
        if self.lasting_port is None:
            return {"sent": False, "message": f"no run is going on: the virtual {kind} rig is idle"}
        sent = self.estop_port(self.lasting_port)
        if sent["sent"]:
            self.note_latch(True)
        return sent

    def estop_is_quick(self) -> bool:
        return True  # as the panel has always answered it here: no connecting is waited for on the loop

    def clear(self, holding: Hold) -> dict[str, Any]:
        """The latch is cleared over a line opened for it (only a rig that
        outlives a run keeps one), the rig held meanwhile."""
        port = self.lasting_port
        if port is None:
            return {"cleared": True, "message": f"the virtual {self.cfg.rig.kind} rig keeps no latch: "
                                                "nothing to clear"}
        with holding("clear"), Link(self.cfg, port=port, kind=self.cfg.rig.kind) as link:
            link.connect()
            try:
                link.clear_latch()
            finally:
                self.note_latch(link.estop_latched)
        return {"cleared": True, "message": "emergency stop cleared"}

    def jog(self, jog: Any, give_up_job: bool, jogged: Jogged, *, after_dry_run: bool) -> dict[str, Any]:
        """Robot moves on a link opened for them (a ``sim://`` port with no name
        or ``--firmware``: a virtual or emulated rig of the jog's own, as for a
        run), which the emergency stop reaches."""
        from ..app.rigs import attach_rig, connect_rig, run_port

        cfg, options = self.cfg, self.options
        if not give_up_job:  # refused before the port is opened; given up only once the rig answers
            refuse_unfinished(cfg, options.state_dir, then=GIVE_UP_OR_RESUME)
        firmware = options.firmware
        port = None if firmware else run_port(cfg, options.rig_port)
        handle = attach_rig(cfg, port=port, firmware=firmware, seed=None, kind=cfg.rig.kind)
        self.jog_link = handle.link
        runs_rig = self.lasting_port is not None  # whose cube the page draws; not a rig of the jog's own
        lines: list[str] = []  # the robot moves made, should the jog stop part-way
        try:
            connect_rig(handle)
            gave_up = clear_to_jog(handle.link, cfg, options.state_dir, give_up=give_up_job,
                                   then=GIVE_UP_OR_RESUME)
            if self.jog_estop.is_set():  # pressed while the line opened: from here it would reach the line
                raise RigError("the emergency stop was pressed before the jog's first move: nothing moved")
            try:
                done = make_jog(handle.link, cfg, jog, lines.append)
            except RigError:
                if lines and runs_rig:  # the rig was homed and may have moved: its hold is not known any more
                    self.rig_state = None
                    jogged(None, None, f"the jog stopped part-way: {HOLD_UNKNOWN}")
                raise
            if runs_rig:
                self.follow(jog, jogged, after_dry_run)
        finally:
            self.jog_link = None
            if handle.link.hello is not None:
                heard_at = time.monotonic()  # a stop sent from here on is newer than this word
                wait_s = STOP_HEARD_S if self.jog_estop.is_set() else 0.0
                self.note_latch(handle.link.latch_heard(wait_s), heard_at=heard_at)
            handle.close()
        kind, where = cfg.rig.kind, ""
        if firmware:
            where = f" on an emulated {kind} rig of its own (the firmware in simavr)"
        elif handle.simulated is not None:
            where = (f" on a virtual {kind} rig of its own (the port is sim://)" if self.lasting_port is None
                     else f" on the virtual {kind} rig")
        return {"moved": True, "message": done.summary + where + (GAVE_UP if gave_up else ""),
                **done.details, "gave_up_job": gave_up}

    def switch(self, port: str) -> dict[str, Any]:
        """Reached at its next run, jog or stop: its latch and the cube's hold are not known until then."""
        self.latched, self.rig_state = None, None
        return self.describe()

    def close(self, timeout: float) -> None:
        """No line is kept open: nothing to let go of."""

    def note_latch(self, latched: bool | None, *, heard_at: float | None = None) -> None:
        """What this panel last knew of the rig's latch (only a rig that
        outlives a run keeps one); every open page is told. ``heard_at``:
        when a closing line began to listen for it; older than what the
        panel already knows (a stop sent meanwhile), it is dropped."""
        if self.lasting_port is None or latched is None:
            return
        now = time.monotonic() if heard_at is None else heard_at
        if now < self._latch_known_at:
            return
        self._latch_known_at = now
        self.latched = latched
        self.on_change(self.describe())

    def describe(self) -> dict[str, Any]:
        """The rig is reached when a run, a jog or a stop needs it, so its
        latch is what it said then, and ``connected`` says whether that is known."""
        kind, firmware = self.cfg.rig.kind, bool(self.options.firmware)
        port = self.lasting_port
        own = "the emulated firmware" if firmware else f"the virtual {kind} rig"
        # a sim:// rig is made by this process, unlatched: its latch is known from the start
        known = port is None or port.startswith("sim://") or self.latched is not None
        return {"connected": known, "port": port or f"{own} (each run's own)",
                "message": "" if known else "reached at each run, jog or stop; not reached yet",
                "buttons": 0, "estop_latched": bool(self.latched),
                "simulated": firmware or _simulated(self.options.rig_port or self.cfg.rig.port),
                "firmware": firmware, "kind": kind}


def _simulated(port: str) -> bool:
    """Whether the rig on ``port`` is a simulation: ``sim://``, or the Pi's
    pins when they are gpiozero's mock ones (the virtual rig they move)."""
    if port.startswith("gpio://"):
        from ..gpio.board import on_mock_pins

        return on_mock_pins()
    return port.startswith("sim://")
