"""The panel's door: accepting connections, and bounding how many there are,
how many one client holds, and how long a request's headers may take.

Why the server does its own accepting (instead of asyncio's
``create_server``): a panel on ``--host 0.0.0.0`` must answer the emergency
stop whatever else is connected. Left to asyncio, 1,100 clients that send a
header line every few seconds and never finish filled the process's 1,024
open files; every new connection, the e-stop's included, then waited in the
kernel's queue, while each failed ``accept`` logged a traceback (720,721 of
them, 298 MB in 25 s: asyncio logs each try and schedules another). Here:

* **At most** :attr:`Limits.connections` at once, set from the open-files
  limit (``RLIMIT_NOFILE``) with :data:`FILES_KEPT` left for the rest of the
  process (the rig's line, the journal, cameras, uploads' temporary files)
  and for the connections being closed, so ``accept`` does not run out of
  files in the first place.
* **One client** (an address) holds at most :attr:`Limits.per_client`: one
  more is answered 429 and closed at once, before anything of it is read
  (a browser opens six at most; turning the extra one away costs next to
  nothing, so a client opening hundreds spends the server little).
* **Any other new connection gets in.** When the panel is full, one held
  connection is closed to make room: of the client holding the most
  connections, a waiting one (its request's headers not yet complete, or
  idle between requests) before one with a request being answered, the
  oldest first. The newest connection, the one a person just pressed the
  e-stop on, is the last to go: its headers arrive within milliseconds and
  it is answered.
* **A request's headers** must be complete within
  :attr:`Limits.header_deadline_s` of the connection's start (or of the end
  of its last answer): a client dribbling header lines is closed, with a 408
  when it had sent part of a request. (A body has its own floor rate: see
  robot/web/guard.py.)
* **An accept that fails** (no files left after all, say another part of the
  process used them) closes one waiting connection to make room and tries
  again (with none to close, after :data:`ACCEPT_PAUSE_S`); it is logged at
  most once a second (:class:`Tally`), never as a traceback.

Each of these is logged at most once a second, with a count of the rest.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast

from .guard import FRAME_HEADERS

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 256
"""Connections at once at most, however many files the process may open: a
panel has a few pages open, each holding at most six (a browser's limit)."""
MIN_CONNECTIONS = 16
FILES_KEPT = 256
"""Open files left for everything but connections (see the module's docstring)."""
MAX_PER_CLIENT = 16
"""Connections one client address may hold: two browsers' six each, and a script."""
HEADER_DEADLINE_S = 10.0
"""A request's headers (a few hundred bytes, sent at once by every real
client) must be complete this long after the connection opens or its last
answer ends; a phone waking its radio takes a second or two."""
ACCEPT_BATCH = 64
"""Connections accepted at one wake-up, before the loop turns to the others."""
ACCEPT_PAUSE_S = 0.05
"""How long accepting pauses after an accept fails with no connection to close."""
LOG_EVERY_S = 1.0
_OUT_OF_FILES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
_REASONS = {408: "Request Timeout", 429: "Too Many Requests", 503: "Service Unavailable"}


@dataclass(frozen=True)
class Limits:
    """The door's bounds (the tests give small ones to meet them quickly)."""

    connections: int = MAX_CONNECTIONS
    per_client: int = MAX_PER_CLIENT
    header_deadline_s: float = HEADER_DEADLINE_S


def connection_limit(open_files: int | None = None) -> int:
    """How many connections to hold at most, for a process that may open
    ``open_files`` files (by default its own ``RLIMIT_NOFILE``)."""
    if open_files is None:
        try:
            import resource
        except ImportError:  # no rlimits on this system: the fixed bound only
            return MAX_CONNECTIONS
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        open_files = MAX_CONNECTIONS + FILES_KEPT if soft == resource.RLIM_INFINITY else soft
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, open_files - FILES_KEPT))


class Seat(Protocol):
    """A held connection, as the door sees it (the HTTP protocol object)."""

    address: str
    """The client's address (its IP)."""

    @property
    def busy(self) -> bool:
        """A request of it is being answered."""

    def drop(self, why: str) -> None:
        """Close it to make room (with a 503 when it had sent part of a request)."""


class Tally:
    """One kind of event, logged at most once a second: the first at once,
    the others counted and said in one line when the second is over."""

    def __init__(self, loop: asyncio.AbstractEventLoop, level: int, what: str):
        self.loop, self.level, self.what = loop, level, what
        self.quiet_until = 0.0
        self.held = 0
        self.last = ""
        self.flush: asyncio.TimerHandle | None = None

    def note(self, detail: str) -> None:
        now = time.monotonic()
        if now >= self.quiet_until:
            log.log(self.level, "%s (%s)", self.what, detail)
            self.quiet_until = now + LOG_EVERY_S
            return
        self.held += 1
        self.last = detail
        if self.flush is None:
            self.flush = self.loop.call_later(self.quiet_until - now, self._flush)

    def _flush(self) -> None:
        self.flush = None
        if self.held:
            log.log(self.level, "%s: %d more in the last second (the last: %s)", self.what, self.held,
                    self.last)
            self.held = 0
            self.quiet_until = time.monotonic() + LOG_EVERY_S

    def cancel(self) -> None:
        if self.flush is not None:
            self.flush.cancel()
            self.flush = None


class Door:
    """The listening socket's accepting, and the connections it holds (see
    the module's docstring). ``seat(client)`` makes the protocol object of a
    new connection from ``client``; it calls :meth:`leave` when its
    connection is gone. Stands in for uvicorn's ``asyncio.Server``
    (``close``, ``wait_closed``)."""

    def __init__(self, sock: socket.socket, seat: Callable[[str], Seat], limits: Limits,
                 loop: asyncio.AbstractEventLoop):
        self.sock, self.make_seat, self.limits, self.loop = sock, seat, limits, loop
        self.seats: dict[str, list[Seat]] = {}
        """Held connections by client address, oldest first."""
        self.count = 0
        self.closed = False
        self.resume: asyncio.TimerHandle | None = None
        most = limits.connections
        self.full = Tally(loop, logging.WARNING, f"the panel holds its most connections ({most}): the oldest "
                                                 "waiting one was closed for a new one")
        self.crowded = Tally(loop, logging.WARNING, f"a client holding {limits.per_client} connections "
                                                    "opened another: turned away (429)")
        self.slow = Tally(loop, logging.WARNING, "a connection's request headers were not complete within "
                                              f"{limits.header_deadline_s:g} s: closed")
        self.failed = Tally(loop, logging.WARNING, "cannot accept a connection")
        self.unreadable = Tally(loop, logging.WARNING, "a request that is not HTTP/1.1 as this server "
                                                       "reads it was answered 400")

    def open(self) -> None:
        self.sock.setblocking(False)
        self.loop.add_reader(self.sock.fileno(), self._ready)

    def close(self) -> None:
        """Accept no more (the socket itself is its owner's to close)."""
        if self.closed:
            return
        self.closed = True
        if self.resume is not None:
            self.resume.cancel()
        else:
            self.loop.remove_reader(self.sock.fileno())
        for tally in (self.full, self.crowded, self.slow, self.failed, self.unreadable):
            tally.cancel()

    async def wait_closed(self) -> None:
        return None

    def _ready(self) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                conn, address = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:  # gone before it was accepted
                continue
            except OSError as e:
                self._cannot_accept(e)
                return
            self._admit(conn, str(address[0]))

    def _cannot_accept(self, e: OSError) -> None:
        """Log it (at most once a second) and try again: at once when a
        waiting connection could be closed to free a file (it is closed as
        the loop turns, before the next try), else after
        :data:`ACCEPT_PAUSE_S` (the listening socket stays readable: trying
        again at once would spin)."""
        held = self.count
        freed = e.errno in _OUT_OF_FILES and held > 0
        if freed:
            self._drop(self._victim_anywhere(), "out of open files: closed for a new connection")
        pause = 0.0 if freed else ACCEPT_PAUSE_S
        self.failed.note(f"{e.strerror or e}; {held} connections held"
                         + ("; the longest waiting closed to make room" if freed else
                            f"; accepting again in {pause * 1000:.0f} ms"))
        self.loop.remove_reader(self.sock.fileno())
        self.resume = self.loop.call_later(pause, self._resume)

    def _resume(self) -> None:
        self.resume = None
        if not self.closed:
            self.loop.add_reader(self.sock.fileno(), self._ready)

    def _admit(self, conn: socket.socket, client: str) -> None:
        held = len(self.seats.get(client, ()))
        if held >= self.limits.per_client:
            self._turn_away(conn, held)
            self.crowded.note(client)
            return
        if self.count >= self.limits.connections:
            self._drop(self._victim_anywhere(), "the panel is full")
            self.full.note(f"a new one from {client}")
        seat = self.make_seat(client)
        self.seats.setdefault(client, []).append(seat)
        self.count += 1
        conn.setblocking(False)

        def connected(task: asyncio.Task[tuple[asyncio.Transport, asyncio.Protocol]]) -> None:
            if task.cancelled() or task.exception() is not None:  # the socket failed before it was ours
                conn.close()
                self.leave(seat)

        made = cast(Callable[[], asyncio.Protocol], lambda: seat)  # a Seat is an asyncio protocol too
        self.loop.create_task(self.loop.connect_accepted_socket(made, conn)).add_done_callback(connected)

    def _turn_away(self, conn: socket.socket, held: int) -> None:
        """A client holding its share opened one more: a 429 and closed at
        once, before any of it is read or kept (what it sent so far is read
        off first, so that the close does not reset the answer away)."""
        conn.setblocking(False)
        try:
            while conn.recv(65536):
                pass
        except OSError:  # nothing more now (or gone)
            pass
        message = (f"this address holds {held} connections to the panel, the most one may; close one and "
                   "send the request again")
        try:
            conn.send(raw_answer(429, "too-many-connections", message))
        except OSError:
            pass
        conn.close()

    def _victim_anywhere(self) -> Seat:
        """The connection to close for a new one when the panel is full: the
        oldest waiting one of the client holding the most that has one (of
        two holding as many, the one that came first), or with none waiting
        anywhere the oldest of the client holding the most. Clients, not connections, are gone
        through (a few dozen at most: each holds up to ``per_client``)."""
        clients = sorted(self.seats.values(), key=len, reverse=True)  # stable: the first come first
        for mine in clients:
            for seat in mine:
                if not seat.busy:
                    return seat
        return clients[0][0]

    def _drop(self, seat: Seat, why: str) -> None:
        self.leave(seat)  # out of the count at once: its file is closed as the loop turns
        seat.drop(why)

    def leave(self, seat: Seat) -> None:
        """``seat``'s connection is gone (or going): no longer held."""
        mine = self.seats.get(seat.address)
        if mine is None or seat not in mine:
            return
        mine.remove(seat)
        if not mine:
            del self.seats[seat.address]
        self.count -= 1

    def timed_out(self, client: str) -> None:
        self.slow.note(client)


def raw_answer(status: int, kind: str, message: str) -> bytes:
    """A whole JSON answer, written as bytes: to a request that never came
    whole (h11 answers only one it has read), or to a connection turned away
    before it is read."""
    body = json.dumps({"error": {"kind": kind, "message": message}}).encode()
    head = [f"HTTP/1.1 {status} {_REASONS[status]}", "content-type: application/json",
            f"content-length: {len(body)}", "connection: close", *(f"{k}: {v}" for k, v in FRAME_HEADERS)]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
