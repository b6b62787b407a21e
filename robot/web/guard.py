"""The panel's gate, in front of every request (an ASGI middleware).

* ``Host`` must name this server: a page on another site that rebinds its
  DNS name to 127.0.0.1 still sends its own name, and is refused (400).
* A state-changing request (anything but GET, HEAD, OPTIONS) from a page of
  another origin is refused (403): its ``Origin`` (or, where a browser sends
  no Origin, ``Sec-Fetch-Site: cross-site``) gives it away.
* Off loopback, a token is needed for everything but the page's own files:
  ``?token=`` on the page's address once (answered with a cookie and a
  redirect to the bare address), then the cookie, or ``Authorization:
  Bearer``. Without it: 401. The emergency stop alone needs no token
  (:data:`OPEN_POSTS`): it can stop the rig, never start or clear anything,
  and a page whose cookie was lost must still stop a machine (docs/api.md).
* ``Host`` may also be any loopback address literally (``127.0.1.1``,
  ``[::1]``): a page on this machine opened by one is this server, and a
  rebinding page sends its own name, never a bare IP.
* A body announced larger than ``max_body`` is refused (413) before it is
  read; the API's reader counts the bytes of one sent without a length.
* A body must keep coming: after ``body_grace_s`` it must have arrived at
  ``min_body_rate`` bytes a second on average, or reading it raises
  :class:`SlowBody` (the API answers 408 and closes the connection), so a
  client dribbling a byte at a time cannot hold a connection for ever.

The guard's own reading of the request (headers, the query, the cookie) is
inside its error handling: whatever a client sends, the answer is a 4xx
with a JSON body.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import re
import secrets
import time
import urllib.parse
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger(__name__)

COOKIE = "cuberobot_token"
SAFE_METHODS = frozenset(("GET", "HEAD", "OPTIONS"))
OPEN_PATHS = ("/static/", "/favicon.ico")
"""The page's own files: served without a token (they hold no secret)."""
OPEN_POSTS = frozenset(("/api/estop",))
"""Requests that need no token: the emergency stop (the same Host and Origin
checks apply: another site's page cannot press it)."""
MAX_QUERY_FIELDS = 32
IGNORED_HEADERS = frozenset((b"range", b"if-range"))
"""Taken out before the application sees them: the panel's files are small
and sent whole (a malformed range would otherwise be a plain-text 400)."""
FRAME_HEADERS = [("x-frame-options", "DENY"), ("content-security-policy", "frame-ancestors 'none'")]
"""On every answer (robot/web/server.py puts them there): no page of another
site may show the panel in a frame (a framed panel, hidden under a decoy,
took a click meant for the decoy as a press of its e-stop or its start)."""
BODY_GRACE_S = 10.0
"""A body's first seconds, free of the floor rate (a phone waking its radio)."""
MIN_BODY_RATE = 32 * 1024
"""Bytes a second a body must average after the grace: a slow phone line
sends ten times that; a client dribbling bytes to hold the connection does not."""
_LENGTH = re.compile(r"[0-9]{1,15}")


class SlowBody(Exception):
    """The request's body came slower than the floor rate: it is dropped."""

    def __init__(self, got: int, seconds: float):
        super().__init__(f"the request body came too slowly ({got} bytes in {seconds:.0f} s; at least "
                         f"{MIN_BODY_RATE // 1024} KiB/s after the first {BODY_GRACE_S:g} s)")
        self.got, self.seconds = got, seconds


class Unreadable(ValueError):
    """A request the guard cannot read (its query, its headers)."""


async def send_json(send: Send, status: int, body: dict[str, Any],
                    headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"kind": kind, "message": message}}


class Guard:
    """See the module's docstring. ``hosts`` are the accepted ``Host``
    values (lower case, with the port); ``token`` None means loopback, where
    none is needed."""

    def __init__(self, app: ASGIApp, *, hosts: set[str], token: str | None, max_body: int,
                 more_hosts: Callable[[], set[str]] | None = None,
                 large: dict[str, int] | None = None, body_grace_s: float = BODY_GRACE_S,
                 min_body_rate: float = MIN_BODY_RATE):
        self.app = app
        self.hosts = {h.lower() for h in hosts}
        self.origins = {f"http://{h}" for h in self.hosts}
        self.ports = {h.rsplit(":", 1)[1] for h in self.hosts if ":" in h}
        self.more_hosts = more_hosts
        """The addresses the machine has now, for a ``Host`` not in ``hosts``
        (one it gained since the start); None: only ``hosts``."""
        self.token = token
        self.max_body = max_body
        self.large = large or {}
        """Paths allowed a larger body (the photo upload), and how large."""
        self.body_grace_s, self.min_body_rate = body_grace_s, min_body_rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            refusal, token = self.gate(scope)
        except (ValueError, KeyError, TypeError) as e:  # the guard's own parsing: a client's mistake
            log.info("unreadable request %s: %s", str(scope.get("path", ""))[:80], e)
            refusal, token = (400, error(f"the request cannot be read: {e}", "bad-request")), None
        if refusal is not None:
            await send_json(send, *refusal)
            return
        if token is not None:
            await self.take_token(token, send)
            return
        scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() not in IGNORED_HEADERS]
        await self.app(scope, self.timed(receive), send)

    def gate(self, scope: Scope) -> tuple[tuple[int, dict[str, Any]] | None, str | None]:
        """(why this request may not go on, or None; the token given on the
        page's address, or None)."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.refuse(scope, headers)
        if refusal is not None:
            return refusal, None
        query = scope.get("query_string", b"").decode("latin-1")
        if self.token is not None and scope["path"] == "/" and "token=" in query:
            return None, given_token(query)
        return None, None

    def timed(self, receive: Receive) -> Receive:
        """``receive`` with the floor rate on the body (:class:`SlowBody`);
        once the body is in, passed through untouched (an event stream waits
        on it for the client to leave)."""
        start, got, done = time.monotonic(), 0, False

        async def timed_receive() -> MutableMapping[str, Any]:
            nonlocal got, done
            if done:
                return await receive()
            deadline = start + self.body_grace_s + got / self.min_body_rate
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                raise SlowBody(got, time.monotonic() - start) from None
            if message["type"] == "http.request":
                got += len(message.get("body", b""))
                done = not message.get("more_body", False)
            else:
                done = True
            return message

        return timed_receive

    def refuse(self, scope: Scope, headers: dict[str, str]) -> tuple[int, dict[str, Any]] | None:
        """Why this request may not go on (status, body), or None."""
        host = headers.get("host", "").lower()
        if host not in self.hosts and not self.loopback_literal(host) and not self.gained(host):
            ours = ", ".join(sorted(self.hosts))
            return 400, error(f"the Host {host[:100]!r} is not this server ({ours}): open the panel by the "
                              "address `cuberobot serve` printed", "foreign-host")
        if scope["method"] not in SAFE_METHODS:
            origin = headers.get("origin")
            if origin is not None and origin.lower() not in self.origins \
                    and origin.lower() != f"http://{host}":
                return 403, error(f"a request from the page of another site ({origin[:100]}) may not change "
                                  "the rig", "foreign-origin")
            if origin is None and headers.get("sec-fetch-site") == "cross-site":
                return 403, error("a request from the page of another site may not change the rig",
                                  "foreign-origin")
        open_post = scope["method"] == "POST" and scope["path"] in OPEN_POSTS
        if self.token is not None and not scope["path"].startswith(OPEN_PATHS) and scope["path"] != "/" \
                and not open_post:
            if not self.has_token(headers):
                return 401, error("this panel needs its token: open the address with ?token= that "
                                  "`cuberobot serve` printed, or send Authorization: Bearer TOKEN", "token")
        length = headers.get("content-length")
        if length is not None:
            if not _LENGTH.fullmatch(length):
                return 400, error(f"bad Content-Length {length[:20]!r}", "bad-request")
            limit = self.large.get(scope["path"], self.max_body)
            if int(length) > limit:
                return 413, error(f"the request body is {int(length)} bytes; at most {limit}", "too-large")
        return None

    def gained(self, host: str) -> bool:
        """``host`` is an address the machine has gained since the server
        started; it is then accepted from now on (and as an origin)."""
        if self.more_hosts is None or host not in self.more_hosts():
            return False
        self.hosts.add(host)
        self.origins.add(f"http://{host}")
        return True

    def loopback_literal(self, host: str) -> bool:
        """``host`` is a loopback IP address, written as such, with our port."""
        name, _, port = host.rpartition(":")
        if port not in self.ports:
            return False
        try:
            return ipaddress.ip_address(name[1:-1] if name.startswith("[") else name).is_loopback
        except ValueError:
            return False

    def has_token(self, headers: dict[str, str]) -> bool:
        assert self.token is not None
        given = ""
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        elif "cookie" in headers:
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(headers["cookie"])
            except Exception:  # noqa: BLE001 - a malformed cookie is no token
                return False
            given = jar[COOKIE].value if COOKIE in jar else ""
        return bool(given) and secrets.compare_digest(given.encode(), self.token.encode())

    async def take_token(self, given: str, send: Send) -> None:
        """``/?token=T``: a right token becomes a cookie (and the address
        loses it: it is not left in the history); a wrong one (a bookmark
        from before ``--new-token``, a mistyped address) goes to the page
        without it, whose sign-in screen says what happened and how to get
        in: a phone shows that, not a JSON refusal."""
        assert self.token is not None
        if not secrets.compare_digest(given.encode("utf-8", "replace"), self.token.encode()):
            await send({"type": "http.response.start", "status": 303,
                        "headers": [(b"location", b"/#wrong-token"), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        cookie = f"{COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", b"/"), (b"set-cookie", cookie.encode()),
                                (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


def given_token(query: str) -> str:
    """The ``token`` of the page's address (the first one); :class:`Unreadable`
    for an address with more than :data:`MAX_QUERY_FIELDS` fields."""
    try:
        fields = urllib.parse.parse_qs(query, max_num_fields=MAX_QUERY_FIELDS)
    except ValueError:
        raise Unreadable(f"the address has more than {MAX_QUERY_FIELDS} query fields") from None
    return (fields.get("token") or [""])[0]
