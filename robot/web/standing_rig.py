"""The rig the panel keeps connected for as long as it serves.

`cuberobot start` connects, then waits for the rig's start button. The panel
does the same for its whole life: it connects once and, while no run is going
on, listens to the line, so the rig's own button starts a run as the page's
Start does, and an emergency stop pressed between runs goes out at once on the
open line to a rig that is really there. With ``--firmware`` the emulated rig
(the real firmware in simavr) is started once and kept, like a board that
stays plugged in; before each run a simulated rig gets a fresh scrambled cube,
as a person would put one in.

One thread at a time uses the link's commands: whoever holds
:attr:`StandingRig.lock` (the listener between runs, a run while it runs).
The emergency stop takes no lock: it is written outside the command stream.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from solver import random_cube

from ..app.rigs import RigHandle, attach_rig, connect_rig
from ..rig.config import Config
from ..rig.errors import RigError, UserError
from ..rig.link import Link, LinkLost, RigReset, estop_beside

log = logging.getLogger(__name__)

LISTEN_S = 0.05
"""One slice of listening to the line (a run waits at most this for the link)."""
RETRY_S = 3.0
"""After a failed connection, the next attempt."""
STATUS_EVERY_S = 1.0
"""Between runs, the rig is asked its STATUS this often: the latch the page
shows is the rig's own, even if an EVENT about it was lost on the line."""


class StandingRig:
    """The kept rig, its listener thread, and what the page is told about it."""

    def __init__(self, cfg: Config, *, port: str | None, firmware: str | None, speed: str = "1",
                 on_button: Callable[[], None], busy: Callable[[], bool],
                 on_change: Callable[[dict[str, Any]], None] | None = None):
        self.cfg, self.port, self.firmware, self.speed = cfg, port, firmware, speed
        self.on_button, self.busy, self.on_change = on_button, busy, on_change
        self._told: dict[str, Any] | None = None
        """What :attr:`on_change` was last given."""
        self._asked = 0.0
        """When the rig was last asked its STATUS (monotonic)."""
        self.lock = threading.Lock()
        self.handle: RigHandle | None = None
        self._connecting: Link | None = None
        """The link being connected: the emergency stop goes onto it too."""
        self.error = ""
        self.buttons = 0
        """Presses heard between runs."""
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    # -- life ------------------------------------------------------------------
    def start(self) -> None:
        """Connect and listen, in a thread of its own."""
        self._thread = threading.Thread(target=self._listen, name="rig-listener", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 1.0) -> None:
        """Stop listening and let the line go within ``timeout`` whatever the
        rig does (a hung handshake is given up, not waited for)."""
        deadline = time.monotonic() + timeout
        self._closed.set()
        for link in (self._connecting, self.handle.link if self.handle else None):
            if link is not None:
                link.abort.set()
        if self._thread is not None:
            self._thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if self.lock.acquire(timeout=max(0.01, deadline - time.monotonic())):
            try:
                self.drop()
            finally:
                self.lock.release()

    def ready(self) -> RigHandle:
        """The connected rig, connecting first if need be (hold :attr:`lock`)."""
        if self.handle is None:
            self.handle = self._open()
            self.error = ""
        return self.handle

    def drop(self) -> None:
        """Forget the connection (a lost line): the next use connects again."""
        handle, self.handle = self.handle, None
        if handle is not None:
            handle.close()

    def _open(self) -> RigHandle:
        """The rig's line, connected: the configured port, or the emulated
        board of ``--firmware`` started once (app/rigs.py composes either)."""
        handle = attach_rig(self.cfg, port=None if self.firmware else self.port, firmware=self.firmware,
                            seed=None, firmware_speed=self.speed if self.firmware else None)
        self._connecting = handle.link
        try:
            return connect_rig(handle)
        finally:
            self._connecting = None

    # -- between runs ----------------------------------------------------------
    def _listen(self) -> None:
        """Until the server ends: between runs, read the line; a press of the
        rig's button starts a run."""
        while not self._closed.is_set():
            self.report()
            if self.busy():
                self._closed.wait(LISTEN_S)
                continue
            with self.lock:
                if self.busy() or self._closed.is_set():
                    continue
                heard = self._listen_once()
            if heard == "button":
                self.on_button()
            elif heard == "failed":
                self._closed.wait(RETRY_S)

    def _listen_once(self) -> str:
        try:
            link = self.ready().link
            before = link.buttons
            if time.monotonic() - self._asked >= STATUS_EVERY_S:
                self._asked = time.monotonic()
                link.status()  # the latch as the rig has it (Link keeps it)
            link.poll(LISTEN_S)
        except (RigError, UserError) as e:
            if self.error != str(e):
                log.warning("the rig: %s", e)
            self.error = str(e)
            self.drop()
            return "failed"
        if link.buttons > before:
            self.buttons += 1
            return "button"
        return ""

    # -- for a run -------------------------------------------------------------
    def put_in(self, seed: int) -> None:
        """A simulated rig gets a scrambled cube, as if a person put one in (a
        real rig holds whatever cube is in it). Hold :attr:`lock`."""
        if self.handle is not None and self.handle.simulated is not None:
            self.handle.simulated.put_in(random_cube(seed).to_facelets())

    def after_run(self, error: BaseException | None) -> None:
        """A run that lost the line leaves it to be connected afresh."""
        if isinstance(error, LinkLost):
            self.drop()

    def switch(self, port: str) -> dict[str, Any]:
        """The rig is on ``port`` from now on (a port chosen on the page,
        between runs: the panel checks): the line open on the old port is
        let go and the new one connected at once, so the answer says whether
        the rig is there; if it does not answer, the listener keeps trying
        it every :data:`RETRY_S`, as at the server's start."""
        with self.lock:
            self.drop()
            self.port, self.error = port, ""
            try:
                self.ready()
            except (RigError, UserError) as e:
                self.error = str(e)
                self.drop()
        self.report()
        return self.describe()

    # -- at any moment ---------------------------------------------------------
    def estop(self) -> bool:
        """The emergency stop onto the open line (or the one being connected,
        a handshake that hangs included), from the calling thread, taking no
        lock; False when no line is open."""
        handle, connecting = self.handle, self._connecting
        link = handle.link if handle is not None else connecting
        if link is not None and link.estop():
            return True
        return self._estop_beside()

    def _estop_beside(self) -> bool:
        """No line of ours is open (between two tries to connect, or it closed
        under the stop): the stop goes onto the port through a descriptor of
        its own. The emulated rig of ``--firmware`` has no port but ours."""
        if self.firmware:
            return False
        try:
            estop_beside(self.port or self.cfg.rig.port)
        except RigError as e:
            log.warning("the emergency stop: %s", e)
            return False
        return True

    def clear_estop(self) -> None:
        """Clear a latched emergency stop (between runs), by the rules of
        `cuberobot estop --clear`: a connected session sends CLEAR_ESTOP;
        then the rig's STATUS must say it is clear (RigError if not: a stop
        pressed again, or still held), so that the page never shows a latch
        cleared that the rig still has."""
        try:
            with self.lock:
                link = self.ready().link
                try:
                    link.clear_latch()
                except RigReset:  # restarted since: a new session first
                    link.handshake()
                    link.clear_latch()
        finally:
            self.report()

    def report(self) -> None:
        """Tell :attr:`on_change` what :meth:`describe` says, when it has changed."""
        now = self.describe()
        if now != self._told:
            self._told = now
            if self.on_change is not None:
                self.on_change(now)

    def describe(self) -> dict[str, Any]:
        """For ``GET /api/status``: connected or why not, and the latch as the rig told it."""
        handle = self.handle
        kind = self.cfg.rig.kind  # the page words each kind its own way (a six-motor rig's too)
        if handle is None:
            port = self.port or ("simavr" if self.firmware else self.cfg.rig.port)
            return {"connected": False, "port": port, "kind": kind,
                    "message": self.error or "connecting", "estop_latched": False, "buttons": self.buttons}
        return {"connected": True, "port": handle.port, "message": "", "buttons": self.buttons,
                "estop_latched": handle.link.estop_latched, "simulated": handle.simulated is not None,
                "firmware": bool(self.firmware), "kind": kind}
