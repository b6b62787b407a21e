"""Serving the panel: the listening socket, the allowed host names, the
token, and uvicorn running the application until Ctrl-C.

The socket is bound here, before uvicorn starts, so that ``--port 0`` has
its real port in the printed address (the first line of output)."""

from __future__ import annotations

import ipaddress
import secrets
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..rig.config import Config
from ..rig.errors import UserError
from .panel import Options, Panel

if TYPE_CHECKING:
    import uvicorn

MAX_BODY = 64 * 1024
"""Any request body (the API's JSON is bounded tighter, at 16 KiB)."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


@dataclass
class Served:
    """A bound, not yet serving, panel."""

    sock: socket.socket
    url: str
    hosts: set[str]
    token: str | None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> Served:
    """Listen on ``host:port`` (0: a free port); the address to print, the
    ``Host`` values to accept and, off loopback, a fresh token."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
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
    loopback = is_loopback(host)
    names = set(LOOPBACK_NAMES) if loopback else {_url_host(host)}
    if host in ("0.0.0.0", "::"):
        names |= set(LOOPBACK_NAMES) | _own_names()
    hosts = {f"{n}:{real_port}" for n in names}
    token = None if loopback else secrets.token_urlsafe(24)
    shown = _url_host("127.0.0.1" if host in ("0.0.0.0", "::") and loopback else host)
    if host in ("0.0.0.0", "::"):
        shown = socket.gethostname()
    url = f"http://{shown}:{real_port}/" + (f"?token={token}" if token else "")
    return Served(sock, url, hosts, token)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _own_names() -> set[str]:
    """This machine's names and addresses (for a panel on every interface)."""
    name = socket.gethostname()
    names = {name, f"{name}.local"}
    try:
        for info in socket.getaddrinfo(name, None):
            names.add(_url_host(str(info[4][0])))
    except socket.gaierror:
        pass
    return names


def make_server(cfg: Config, options: Options, served: Served, *, verbose: bool = False
                ) -> tuple[uvicorn.Server, Panel]:
    """The uvicorn server for the panel (not yet running) and the panel."""
    import uvicorn

    from .api import MAX_UPLOAD_BYTES, build
    from .guard import Guard

    panel = Panel(cfg, options)
    app = Guard(build(panel), hosts=served.hosts, token=served.token, max_body=MAX_BODY,
                large={"/api/photos": MAX_UPLOAD_BYTES})
    config = uvicorn.Config(app, log_level="info" if verbose else "warning", access_log=verbose,
                            proxy_headers=False, server_header=False, timeout_graceful_shutdown=2,
                            h11_max_incomplete_event_size=16 * 1024, lifespan="on")

    class PanelServer(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            panel.end_streams()  # the event streams never end by themselves
            await super().shutdown(sockets)

    return PanelServer(config), panel


def serve(cfg: Config, options: Options, served: Served, *, verbose: bool = False) -> None:
    """Run the panel on ``served`` until Ctrl-C (a run going on is stopped)."""
    server, _ = make_server(cfg, options, served, verbose=verbose)
    server.run(sockets=[served.sock])
