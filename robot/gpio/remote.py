"""`cuberobot estop` (and ``--clear``) from another terminal, for a rig on
the Pi's own pins.

A serial rig's firmware is a device any process can write the stop onto.
The rig on the pins (:mod:`.rig`) lives inside the process that drives
them, so that process listens for it: a Unix socket beside the pins'
owner lock files (robot/rig/owner.py's runtime folder, the user's own,
mode 0700), made when the process makes its rig and gone when it lets the
pins go. One order a connection, one line each way:

- ``estop``: the stop run of RT_ESTOP bytes goes into the rig's own
  receiver, exactly as the host's would (pulses off at once, the queue
  emptied, latched); the answer is sent only once the rig says latched.
- ``clear``: the rig's CLEAR_ESTOP, refused while the stop switch is held.

A process that owns no pins has no socket, so the asker learns in one line
that nothing drives them (nothing gets a pulse, nothing can be latched).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..rig import protocol as P
from ..rig.errors import RigError, UserError
from ..rig.gpio_pins import GPIO_SCHEME
from ..rig.owner import command_line, describe_holder, runtime_dir
from .rig import GpioRig

log = logging.getLogger(__name__)
ORDERS = ("estop", "clear")
MAX_LINE = 256
ANSWER_S = 5.0
"""How long an asker waits for the owner's answer (the stop itself is taken at once)."""
ORDER_S = 1.0
"""How long the owner waits for an order once an asker has connected."""
MAX_SOCKET_PATH = 100
"""A Unix socket's path must fit in 108 bytes (sun_path), its ending 0 too."""


def socket_path() -> Path:
    """Where the process that drives this user's pins listens."""
    return runtime_dir() / "ports" / "gpio.sock"


class Listener:
    """The owning process's end: answers each order with what the rig then says."""

    def __init__(self, rig_of: Callable[[], GpioRig | None]):
        self._rig_of = rig_of
        self.path = socket_path()
        self._sock = self._bind()
        self._ino = os.stat(self.path).st_ino  # removed at the end only if it is still this one
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="cuberobot-gpio-estop", daemon=True)
        self._thread.start()

    def _bind(self) -> socket.socket:
        path = str(self.path)
        if len(os.fsencode(path)) > MAX_SOCKET_PATH:
            raise OSError(errno.ENAMETOOLONG, f"{path} is too long for a Unix socket (set XDG_RUNTIME_DIR to "
                                              "a shorter folder)")
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                sock.bind(path)
            except OSError as e:
                if e.errno != errno.EADDRINUSE or _alive(path):
                    raise
                os.unlink(path)  # left by a process that was killed: nobody answers on it
                sock.bind(path)
            sock.listen(4)
        except OSError:
            sock.close()
            raise
        return sock

    def close(self) -> None:
        """No more orders: the socket shut (which wakes the waiting accept) and removed."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(timeout=2.0)
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self._ino:
                os.unlink(self.path)

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # shut by close()
            with conn:
                if not _same_user(conn):
                    continue
                try:
                    conn.settimeout(ORDER_S)  # an asker that says nothing holds up the next one no longer
                    order = conn.recv(MAX_LINE).decode("ascii", "replace").strip()
                    conn.sendall(json.dumps(self._carry_out(order)).encode() + b"\n")
                except OSError as e:
                    log.warning("an order on %s was lost: %s", self.path, e)

    def _carry_out(self, order: str) -> dict[str, Any]:
        """:meth:`answer`, or what went wrong in one line: the listener
        outlives any one order (a rig being let go as the order came)."""
        try:
            return self.answer(order)
        except Exception as e:  # noqa: BLE001 - the next order must still be heard
            log.warning("the %s order on %s failed: %s", order[:40], self.path, e)
            return {"pid": os.getpid(), "command": command_line(), "error": f"{type(e).__name__}: {e}"}

    def answer(self, order: str) -> dict[str, Any]:
        """What the rig says after ``order`` was carried out on it."""
        rig = self._rig_of()
        me = {"pid": os.getpid(), "command": command_line()}
        if rig is None:
            return {**me, "error": "it has let its pins go"}
        if order == "estop":
            rig.receive(P.ESTOP_SEQUENCE * P.ESTOP_REPEATS)  # the host's stop run, through the rig's receiver
        elif order == "clear":
            reply = rig.clear_latch()
            if isinstance(reply, P.Err):
                return {**me, "error": "its emergency-stop switch is pressed: release it, then clear again"}
        else:
            return {**me, "error": f"unknown order {order[:40]!r} (known: {', '.join(ORDERS)})"}
        with rig.lock:
            return {**me, "latched": rig.estop, "pulsing": rig.board.attached()}


def _same_user(sock: socket.socket) -> bool:
    """Whether the process at the other end of ``sock`` is this user's (its
    credentials from the kernel, where it gives them): only the user who
    drives the pins may stop or clear them, and only the user's own process
    is believed when it says "latched"."""
    cred = getattr(socket, "SO_PEERCRED", None)
    if cred is None or not hasattr(os, "getuid"):
        return True  # no credentials here: the folder's mode 0700 is the guard
    try:
        _, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, cred, struct.calcsize("3i")))
    except OSError:
        return False
    return uid == os.getuid()


def _alive(path: str) -> bool:
    """Whether a process answers on ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(path)
        except OSError:
            return False
        return True


def tell_owner(order: str) -> str:
    """``order`` to the process that drives this user's pins; the line to
    print, said only as that process's rig says it. UserError when no
    process drives them, RigError when the owner did not carry it out."""
    assert order in ORDERS
    path = socket_path()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(ANSWER_S)
        try:
            s.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            if order == "clear":
                return (f"no command drives the Pi's pins ({GPIO_SCHEME}) now, so nothing is latched: a rig "
                        "on the pins is latched only inside the command that drives them")
            raise UserError(f"no command drives the Pi's pins ({GPIO_SCHEME}) now, so no servo gets a pulse "
                            "and nothing is latched: a rig on the pins lives inside the command that drives "
                            "them") from None
        except OSError as e:
            raise RigError(f"cannot reach the command that drives the Pi's pins through {path}: "
                           f"{e.strerror or e}") from None
        if not _same_user(s):
            raise RigError(f"{path} is another user's: it is not the command that drives your pins; "
                           "remove it, or set XDG_RUNTIME_DIR")
        try:
            s.sendall(order.encode() + b"\n")
            data = s.makefile("rb").readline(4 * MAX_LINE)
        except OSError as e:
            raise RigError(f"the command that drives the Pi's pins did not answer ({e.strerror or e}): "
                           "stop it (Ctrl-C) or cut the servos' power") from None
    try:
        said = json.loads(data)
    except ValueError:
        said = None
    if not isinstance(said, dict):
        raise RigError("the command that drives the Pi's pins gave no answer: stop it (Ctrl-C) or cut the "
                       "servos' power")
    who = describe_holder(said)
    if "error" in said:
        raise RigError(f"{who}, which drives the Pi's pins, did not carry out the {order}: {said['error']}")
    if order == "estop":
        if not said.get("latched") or said.get("pulsing"):
            raise RigError(f"{who} drives the Pi's pins and its rig did not latch the emergency stop: "
                           "stop it (Ctrl-C) or cut the servos' power")
        return (f"emergency stop latched on the rig on the Pi's pins, which {who} drives: its servos get no "
                "pulses; clear with `cuberobot estop --clear`")
    if said.get("latched"):
        raise RigError(f"{who} drives the Pi's pins and its rig is still latched")
    return f"emergency stop cleared on the rig on the Pi's pins, which {who} drives"
