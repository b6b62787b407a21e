"""Serving the panel: the listening socket, the allowed host names, the
token, and uvicorn running the application until Ctrl-C.

The socket is bound here, before uvicorn starts, so that ``--port 0`` has
its real port in the printed address (the first line of output).

Importing this module caps the pixels OpenCV decodes in this process
(``OPENCV_IO_MAX_IMAGE_PIXELS``, which OpenCV reads once, when it is
loaded: the panel loads it later, for its first picture; vision/limits.py,
which every import of vision runs too). The photo reader refuses an
oversized photo from its header first (vision/photos.py); the cap is the
second net, for any picture a decoder would size differently."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import json
import logging
import os
import re
import secrets
import signal
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from vision.limits import cap_decoders

from ..rig.config import Config
from ..rig.errors import UserError
from .connections import Door, Limits, connection_limit, raw_answer
from .guard import FRAME_HEADERS
from .interfaces import Address, interface_addresses, reachable
from .runs import Options, Panel

if TYPE_CHECKING:
    import uvicorn

MAX_BODY = 64 * 1024
"""Any request body (the API's JSON is bounded tighter, at 16 KiB)."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

log = logging.getLogger(__name__)


cap_decoders()  # shared with the terminal's commands (vision/limits.py): importing vision sets it too


@dataclass
class Served:
    """A bound, not yet serving, panel."""

    sock: socket.socket
    url: str
    """The first address to open the panel by (with ``?token=`` off loopback)."""
    hosts: set[str]
    token: str | None
    urls: list[str] = field(default_factory=list)
    """Every address it can be opened at, best first (``url`` is the first)."""
    more_hosts: Callable[[], set[str]] | None = None
    """On every interface: the ``Host`` values of the addresses the machine
    has now (a service started before DHCP gave the LAN address)."""


TOKEN_FILE = "panel-token"
"""In the state folder: the token kept across restarts (mode 0600)."""
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")
AVAHI_SOCKET = Path("/run/avahi-daemon/socket")
"""Where avahi listens: while it runs, ``HOSTNAME.local`` reaches this machine."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int, *, token_file: Path | None = None, new_token: bool = False,
         addresses: Callable[[], list[Address]] = interface_addresses,
         mdns: Callable[[], bool] | None = None) -> Served:
    """Listen on ``host:port`` (0: a free port); the addresses to print, the
    ``Host`` values to accept and, off loopback, the token: the one kept in
    ``token_file`` (made there, mode 0600, when missing or ``new_token``), or
    a fresh one for this server only without a file. ``addresses`` lists the
    machine's interfaces (tests give their own); ``mdns`` says whether
    ``HOSTNAME.local`` is published (by default: avahi is running)."""
    try:
        infos = socket.getaddrinfo(_bare(host), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise UserError(f"--host {host!r}: {e.strerror}") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port}: {e.strerror} (another program on that port? "
                        "try --port 0 for a free one)") from None
    sock.listen(128)
    sock.set_inheritable(True)
    real_port = sock.getsockname()[1]
    bound = str(address[0]).split("%")[0]
    loopback = is_loopback(host) or is_loopback(bound)
    everywhere = ipaddress.ip_address(bound).is_unspecified
    names = [_url_host(host)]  # the address asked for, and the one it named
    if not everywhere:
        names.append(_url_host(bound))
    published = False
    if everywhere:
        own = addresses()
        name = socket.gethostname()
        published = (mdns or _avahi_running)()
        lan = [_url_host(a.address) for a in reachable(own)  # 0.0.0.0 listens on IPv4 only
               if family != socket.AF_INET or a.ip.version == 4]
        names = [*lan, *([f"{name}.local"] if published else []), name, *names,
                 *(_url_host(a.address) for a in own), *LOOPBACK_NAMES]
    elif loopback:
        names += LOOPBACK_NAMES
    hosts = {f"{n.lower()}:{real_port}" for n in names}
    if everywhere:
        hosts.add(f"{socket.gethostname().lower()}.local:{real_port}")  # avahi may start later
    token = None if loopback else _token(token_file, new_token)
    if everywhere:  # the LAN first (a phone's way in), loopback last (this machine only)
        shown = [*lan, *([f"{name}.local"] if published else []), name, "127.0.0.1"]
    else:
        shown = [names[0]]
    urls = [f"http://{n}:{real_port}/" + (f"?token={token}" if token else "") for n in dict.fromkeys(shown)]
    more = _addresses_now(addresses, real_port) if everywhere else None
    return Served(sock, urls[0], hosts, token, urls, more)


REREAD_S = 5.0
"""How often, at most, the interfaces are read again for a ``Host`` not yet known."""


def _addresses_now(addresses: Callable[[], list[Address]], port: int) -> Callable[[], set[str]]:
    """The ``Host`` values of the machine's addresses as they are now, read
    at most every :data:`REREAD_S` (a request naming an unknown host must not
    make the server list its interfaces at every request)."""
    kept: dict[str, Any] = {"at": -REREAD_S, "hosts": set()}
    lock = threading.Lock()

    def now() -> set[str]:
        with lock:
            if time.monotonic() - kept["at"] >= REREAD_S:
                kept["at"] = time.monotonic()
                kept["hosts"] = {f"{_url_host(a.address).lower()}:{port}" for a in addresses()}
            return set(kept["hosts"])

    return now


def _avahi_running() -> bool:
    try:
        return AVAHI_SOCKET.is_socket()
    except OSError:
        return False


def _token(token_file: Path | None, new: bool) -> str:
    """The panel's token: kept in ``token_file`` (mode 0600: it opens the
    panel) so that a bookmarked page works after a restart; made afresh when
    there is none, it is not one, or ``new``."""
    if token_file is None:
        return secrets.token_urlsafe(24)
    if not new:
        kept = kept_token(token_file)
        if kept is not None:
            return kept
    token = secrets.token_urlsafe(24)
    try:
        token_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = token_file.with_name(token_file.name + ".tmp")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(token + "\n")
        os.replace(tmp, token_file)
    except OSError as e:
        raise UserError(f"cannot keep the panel's token in {token_file}: {e.strerror}") from None
    return token


def kept_token(token_file: Path) -> str | None:
    """The token kept in ``token_file``, or None when there is none (no file,
    or a file that holds no token); :class:`UserError` for a file that must
    not be read. Read by the serve that keeps it, and by a second `serve` on
    the same state folder, which is refused and prints the running panel's
    address with it (a lost token found again, issue 48)."""
    try:
        # never through a symbolic link, never waiting on a pipe: it is the panel's key
        fd = os.open(token_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise UserError(f"{token_file} is not a regular file (a pipe, a folder or a device), so "
                                "it holds no panel token: remove it, and serve makes a new one")
            kept = f.read(200).decode("ascii", errors="replace").strip()
            if _TOKEN.fullmatch(kept):
                if mode & 0o077:
                    os.fchmod(fd, 0o600)  # readable by others: it no longer would be
                return kept
        log.warning("%s holds no token: a new one is made", token_file)
    except FileNotFoundError:
        pass
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UserError(f"{token_file} is a symbolic link: the panel's token is never read through "
                            "one (it opens the panel); remove it, and serve makes a new one") from None
        raise UserError(f"cannot read the panel's token from {token_file}: {e.strerror}") from None
    return None


def _bare(host: str) -> str:
    """``host`` as the resolver takes it: an IPv6 address without the
    brackets it is written in within an address (``[::1]``, as the panel
    prints it and as it is typed after ``http://``)."""
    if host.startswith("[") and host.endswith("]"):
        try:
            return str(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            return host
    return host


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def make_server(cfg: Config, options: Options, served: Served, *, verbose: bool = False,
                body_grace_s: float | None = None,
                limits: Limits | None = None) -> tuple[uvicorn.Server, Panel]:
    """The uvicorn server for the panel (not yet running) and the panel.
    ``body_grace_s`` shortens the guard's grace for a slow body, ``limits``
    the connections' bounds (tests; by default :class:`Limits` with the most
    connections from the open-files limit)."""
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    from .api import MAX_FACE_UPLOAD_BYTES, MAX_UPLOAD_BYTES, build
    from .guard import BODY_GRACE_S, Guard

    panel = Panel(cfg, options)
    app = Guard(build(panel), hosts=served.hosts, more_hosts=served.more_hosts, token=served.token,
                max_body=MAX_BODY,
                large={"/api/photos": MAX_UPLOAD_BYTES, "/api/photos/face": MAX_FACE_UPLOAD_BYTES},
                body_grace_s=BODY_GRACE_S if body_grace_s is None else body_grace_s)
    protocol = _http_protocol()
    config = uvicorn.Config(app, log_level="info" if verbose else "warning", access_log=verbose,
                            proxy_headers=False, server_header=False, timeout_graceful_shutdown=2,
                            h11_max_incomplete_event_size=16 * 1024, lifespan="on", http=protocol, ws="none",
                            headers=FRAME_HEADERS)
    bounds = limits or Limits(connections=connection_limit())
    quiet = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _OncePerRequest) for f in quiet.filters):
        quiet.addFilter(_OncePerRequest())

    class PanelServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            """uvicorn's start, with the panel's door (robot/web/connections.py)
            accepting on the bound socket instead of asyncio's server."""
            await self.lifespan.startup()
            if self.lifespan.should_exit:
                sys.exit(STARTUP_FAILURE)
            if not sockets or len(sockets) != 1:
                raise ValueError("the panel serves exactly one bound socket (server.bind)")
            loop = asyncio.get_running_loop()
            self.server_state.default_headers = list(self.config.encoded_headers)  # before the first tick

            def seat(address: str) -> Any:
                return protocol(config=self.config, server_state=self.server_state,
                                app_state=self.lifespan.state, _loop=loop, door=door, address=address)

            sockets[0].listen(self.config.backlog)  # as uvicorn's own start: a burst queues, not dropped
            door = Door(sockets[0], seat, bounds, loop)
            door.open()
            self.servers = [door]  # type: ignore[list-item]  # closed and awaited as uvicorn's servers
            self.started = True

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            panel.end_streams()  # the event streams never end by themselves
            panel.begin_close()  # the run stopped and the rig let go while the connections close
            await super().shutdown(sockets)
            if self.force_exit:
                # A second Ctrl-C: uvicorn waits for no connection, and skips the app's shutdown too,
                # whose task asyncio then cancels (logged as a traceback). The panel's close (the run
                # ended, the rig let go, the journal closed) is not to be skipped.
                await self.lifespan.shutdown()

    return PanelServer(config), panel


class _OncePerRequest(logging.Filter):
    """Leaves out uvicorn's own line for each request it cannot parse: the
    door says it at most once a second (:class:`~.connections.Tally`), so a
    client sending garbage in a loop cannot fill the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "Invalid HTTP request received."


def _http_protocol() -> type:
    """uvicorn's HTTP/1.1 protocol (h11), answering a request it cannot parse
    (a bad request line, a header with a control character) with the API's
    JSON error, as every other refusal, instead of a line of plain text; and
    seated at the door (robot/web/connections.py): counted while it is open,
    closed when its request's headers are not complete in time or to make
    room for a new connection."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class PanelProtocol(H11Protocol):
        def __init__(self, *args: Any, door: Door | None = None, address: str = "", **kwargs: Any):
            super().__init__(*args, **kwargs)
            self.door, self.address = door, address
            self.heard = False
            """Bytes of a request whose headers are not complete yet have come."""
            self.dropped = False
            self.deadline: asyncio.TimerHandle | None = None

        @property
        def busy(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def _should_upgrade(self) -> bool:
            """Never: the panel has no WebSocket (a connection handed to one
            would leave the door's count; uvicorn would log two warnings for
            each such request). An ``Upgrade`` request is answered as any other."""
            return False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if self.dropped or (self.door is not None and self.door.closed):
                transport.abort()  # made room for another before it was connected, or the server ends
                return
            self.watch()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if not self.busy:
                self.heard = True
            self.watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.watch()

        def connection_lost(self, exc: Exception | None) -> None:
            super().connection_lost(exc)
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None
            if self.door is not None:
                self.door.leave(self)

        def watch(self) -> None:
            """The header deadline: running from the moment the connection
            waits for a request, stopped while one is answered."""
            if self.transport is None or self.transport.is_closing():
                return
            if self.busy:
                self.heard = False
                if self.deadline is not None:
                    self.deadline.cancel()
                    self.deadline = None
            elif self.deadline is None and self.door is not None:
                self.deadline = self.loop.call_later(self.door.limits.header_deadline_s, self.too_slow)

        def too_slow(self) -> None:
            self.deadline = None
            if self.busy or self.transport.is_closing():
                return
            if self.door is not None:
                self.door.timed_out(self.address)
                seconds = self.door.limits.header_deadline_s
                self.refuse(408, "too-slow", f"the request's headers did not come whole within {seconds:g} s "
                                             "(of the connection's start, or of the last answer on it); send "
                                             "the request again, whole")

        def drop(self, why: str) -> None:
            self.dropped = True
            if self.transport is None or self.transport.is_closing():
                return
            if self.busy:
                self.transport.abort()  # its answer is cut short: the client sees the connection end
                return
            self.refuse(503, "full", f"the panel closed this connection to make room for a new one ({why}); "
                                     "send the request again")

        def refuse(self, status: int, kind: str, message: str) -> None:
            """Close the waiting connection; with ``status`` when part of a
            request had come (an idle one is closed as its keep-alive ends)."""
            if self.heard and self.conn.our_state is h11.IDLE:
                self.transport.write(raw_answer(status, kind, message))
            if self.transport.get_write_buffer_size():
                self.transport.abort()  # a client that reads nothing: its file is freed at once
            else:
                self.transport.close()

        def send_400_response(self, msg: str) -> None:
            if self.door is not None:
                self.door.unreadable.note(self.address)
            message = "the request is not HTTP/1.1 as this server reads it (its request line or a header)"
            body = json.dumps({"error": {"kind": "bad-request", "message": message}}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close"),
                       *((k.encode(), v.encode()) for k, v in FRAME_HEADERS)]
            for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                          h11.Data(data=body), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event) or b"")
            self.transport.close()

    return PanelProtocol


def serve(cfg: Config, options: Options, served: Served, *, verbose: bool = False) -> None:
    """Run the panel on ``served`` until Ctrl-C (a run going on is stopped);
    KeyboardInterrupt after a Ctrl-C, once the server has ended.

    Ctrl-C is this function's from the first moment: a KeyboardInterrupt
    raised wherever the main thread happens to be (in asyncio's start, in
    the lifespan's start) would leave tracebacks of cancelled tasks, so the
    signal only asks the server to end (uvicorn's own handler does the same
    while it runs, and passes the signal back here when it stops)."""
    interrupted = threading.Event()
    server: uvicorn.Server | None = None

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        if interrupted.is_set() and server is not None:
            server.force_exit = True  # a second Ctrl-C: no more waiting for connections
        interrupted.set()
        if server is not None:
            server.should_exit = True

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_interrupt) if main else None
    try:
        server, _ = make_server(cfg, options, served, verbose=verbose)
        if not interrupted.is_set():
            server.run(sockets=[served.sock])
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
    if interrupted.is_set():
        raise KeyboardInterrupt
