"""The panel's HTTP API (JSON) and its page, as a Starlette application.

Every answer is JSON except the page, its files, the scan pictures and the
event stream; every error is ``{"error": {"kind", "message"}}`` (an invalid
cube adds ``positions``, as ``cuberobot check --json`` does). docs/api.md
describes each endpoint with an example.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import math
import re
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, BinaryIO

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from solver import MAX_BUDGET_MS, MAX_SOLUTION_LENGTH
from solver.metrics import METHODS, RIG_METRICS

from ..app.events import Answer
from ..app.events import schema as events_schema
from ..app.limits import MAX_DRY_RUN_MOVES, MAX_SEED, check_moves, json_kind
from ..app.solving import POCKET_METRICS, SolveRequest
from ..app.solving import answer as answer_solve
from ..app.solving import check as check_solve
from ..rig.errors import UserError
from . import jogging, workshop
from .guard import SlowBody
from .runs import Busy, NotAsking, Panel, state_dir_runs

log = logging.getLogger(__name__)

STATIC = Path(__file__).with_name("static")
MAX_JSON_BYTES = 16 * 1024
"""A request body: the largest real one (a cube and options) is ~200 bytes."""
MAX_JSON_DEPTH = 16
"""Nesting: the deepest real body (corners: body, views, view, face, corner) is 5."""
MAX_NUMBER_CHARS = 24
"""Digits in a JSON number: every real one (a seed, a budget, a pixel) has at most 20."""
KEEPALIVE_S = 15.0
MAX_PHOTO_BYTES = 16 << 20
"""One uploaded photo: a phone's 12-megapixel JPEG is 3 to 6 MiB."""
MAX_UPLOAD_BYTES = 6 * MAX_PHOTO_BYTES + (64 << 10)
"""The six photos' form as a whole (the gate refuses more before reading)."""
MAX_FACE_UPLOAD_BYTES = MAX_PHOTO_BYTES + (64 << 10)
"""One face's photo, read as it is taken (``/api/photos/face``)."""
MAX_UPLOADS = 2
"""Photo uploads taken in at once (each may hold 96 MiB of temporary files,
and the photos are read one upload at a time anyway); more get 429."""
MAX_PIXEL = 100_000
MIN_DRY_SPEED, MAX_DRY_SPEED = 0.25, 50.0
SOLVE_THREADS = 4
NO_STORE = {"cache-control": "no-store"}
"""Answers that change from one call to the next (the host's load, the ports plugged in)."""
"""Searches at once (see :class:`SolvePool`)."""


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, *, detail: dict[str, Any] | None = None,
                 **extra: Any):
        super().__init__(message)
        self.status, self.kind, self.message, self.extra = status, kind, message, extra
        self.detail = detail or {}

    def response(self) -> JSONResponse:
        error = {"kind": self.kind, "message": self.message, **self.detail}
        return JSONResponse({**self.extra, "error": error}, status_code=self.status)


# ---------------------------------------------------------------- reading requests


async def read_json(request: Request, fields: tuple[str, ...] = (),
                    limit: int = MAX_JSON_BYTES) -> dict[str, Any]:
    """The body as a JSON object holding only ``fields`` (the route's own);
    an empty body is ``{}``. Counted as it arrives, so a body sent without a
    length is bounded too; its nesting and its numbers are bounded before it
    is parsed (:func:`parse_json`)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise ApiError(413, "too-large", f"the request body is over {limit} bytes")
    return only_fields(parse_json(bytes(body)), fields, request.url.path)


def only_fields(body: dict[str, Any], fields: tuple[str, ...], route: str) -> dict[str, Any]:
    """``body``, or 400 naming the first field the route does not take: a
    misspelt field would otherwise be dropped and its default used (a jog
    sent ``{"turn": -1}`` turned the face the other way, by the default)."""
    unknown = sorted(k for k in body if k not in fields)
    if not unknown:
        return body
    name = unknown[0][:40]
    close = difflib.get_close_matches(name, fields, n=1)
    takes = f"{route} takes {', '.join(fields)}" if fields else f"{route} takes no fields"
    hint = f"did you mean {close[0]!r}? ({takes})" if close else takes
    raise ApiError(400, "bad-request", f"unknown field {name!r}: {hint}")


def parse_json(body: bytes) -> dict[str, Any]:
    """A request's JSON object, or :class:`ApiError` 400 saying what is
    wrong: not UTF-8, not JSON, nested deeper than :data:`MAX_JSON_DEPTH`
    (checked before parsing: the parser recurses), a number longer than
    :data:`MAX_NUMBER_CHARS` (a 400-digit integer would overflow every
    check of range), a text with a lone surrogate (which no file or
    terminal can hold), or not an object."""
    if not body.strip():
        return {}
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ApiError(400, "bad-json", f"the body is not UTF-8: {e.reason} at byte {e.start}") from None
    depth = _json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ApiError(400, "bad-json", f"the body is nested {depth} deep; at most {MAX_JSON_DEPTH}")
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_int=_json_int, parse_float=_json_float)
    except (json.JSONDecodeError, ValueError, RecursionError) as e:
        raise ApiError(400, "bad-json", f"the body is not JSON: {e}") from None
    where = _surrogate_in(value)
    if where is not None:
        raise ApiError(400, "bad-json", f"{where} holds a lone surrogate (U+D800 to U+DFFF), not text")
    if not isinstance(value, dict):
        raise ApiError(400, "bad-json", f"the body must be a JSON object, not {json_kind(value)}")
    return value


_JSON_OPENERS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
"""The strings (skipped whole, escapes included) and the brackets of a JSON text."""


def _json_depth(text: str) -> int:
    """How deep the text's brackets nest, outside its strings (a regex
    scan: no recursion, whatever the nesting)."""
    depth = deepest = 0
    for m in _JSON_OPENERS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_CHARS:
        raise ValueError(f"a number of {len(text)} digits; at most {MAX_NUMBER_CHARS}")
    return int(text)


def _json_float(text: str) -> float:
    if len(text) > 2 * MAX_NUMBER_CHARS:
        raise ValueError(f"a number of {len(text)} characters; at most {2 * MAX_NUMBER_CHARS}")
    return float(text)


def _surrogate_in(value: Any, where: str = "the body") -> str | None:
    """Where a text in ``value`` holds a lone surrogate, or None."""
    if isinstance(value, str):
        return where if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for k, v in value.items():
            name = f"{where}: a key" if _SURROGATE.search(k) else _surrogate_in(v, f"field {k[:40]!r}")
            if name is not None:
                return name
    if isinstance(value, list):
        for v in value:
            name = _surrogate_in(v, where)
            if name is not None:
                return name
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def field_str(body: dict[str, Any], name: str, *, max_chars: int = 256, required: bool = True) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise ApiError(400, "bad-request", f"{name!r} is missing" if name not in body
                           else f"{name!r} must be a string, not null")
        return None
    if not isinstance(value, str):
        raise ApiError(400, "bad-request", f"{name!r} must be a string, not {json_kind(value)}")
    if len(value) > max_chars:
        raise ApiError(400, "bad-request", f"{name!r} is {len(value)} characters; at most {max_chars}")
    return value


def field_number(body: dict[str, Any], name: str, lo: float, hi: float, *, whole: bool) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    wrong_kind = isinstance(value, bool) or not isinstance(value, (int, float))
    if wrong_kind or (whole and not isinstance(value, int)):
        raise ApiError(400, "bad-request", f"{name!r} must be a {'whole ' if whole else ''}number")
    if not _in_range(value, lo, hi):
        raise ApiError(400, "bad-request", f"{name!r} must be from {_plain(lo)} to {_plain(hi)}")
    return value


def _plain(x: float) -> str:
    """A bound as a person writes it: 4294967295, not 4.29497e+09."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _in_range(value: float, lo: float, hi: float) -> bool:
    """``lo <= value <= hi`` for a finite number; an integer too large for a
    float is simply out of range (math.isfinite would overflow on it)."""
    try:
        return math.isfinite(value) and lo <= value <= hi
    except OverflowError:
        return False


def cube_or_422(text: str, size: int = 3) -> str:
    """The facelets (``solved``, in any case, for the solved cube of the
    size, as the terminal takes it), or 422 with the check's kind, message
    and positions (a 2x2's as `cuberobot check` gives them for 24 symbols)."""
    from solver import CubeError, parse_facelets

    if text.strip().lower() == "solved":
        from solver.nxn import solved

        return solved(size)
    try:
        if size == 2:
            from solver.pocket import parse_pocket

            parse_pocket(text)
        else:
            parse_facelets(text)
    except CubeError as e:
        raise ApiError(422, e.kind, e.message, valid=False, detail={"positions": e.positions}) from None
    return text


def cube_size(body: dict[str, Any], facelets: str) -> int:
    """2 or 3: ``size`` when given, else 2 for 24 symbols (as the CLI tells them apart)."""
    size = field_number(body, "size", 2, 3, whole=True)
    if size is not None:
        return int(size)
    return 2 if len(facelets.strip()) == 24 else 3


class SolvePool:
    """The API's searches, several at once on a few threads of their own.

    The solver keeps no state between calls but its tables (read only once
    loaded) and a search's own arrays, so searches may run side by side; only
    the first call's loading is done under a lock, so two first requests do
    not load the tables twice. The pool is small and bounded: a burst of
    requests waits its turn instead of starting dozens of searches."""

    def __init__(self, threads: int | None = None):
        self.pool = ThreadPoolExecutor(threads or SOLVE_THREADS, thread_name_prefix="api-solve")
        self.prepare_lock = threading.Lock()
        self.prepared = False

    async def run(self, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        def prepared_work() -> dict[str, Any]:
            if not self.prepared:
                import solver

                with self.prepare_lock:
                    solver.prepare()
                    self.prepared = True
            return work()

        return await asyncio.get_running_loop().run_in_executor(self.pool, prepared_work)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


async def in_thread(fn: Callable[..., Any], *args: Any, status: int = 400, kind: str = "bad-request") -> Any:
    """``fn(*args)`` off the event loop; its refusals as API errors (a
    person's mistake as ``status``/``kind``, a run going on 409, a camera or
    rig that fails 502)."""
    from vision.errors import VisionError

    from ..rig.errors import RigError

    try:
        return await run_in_threadpool(fn, *args)
    except Busy as e:
        raise ApiError(409, "busy", str(e)) from None
    except UserError as e:
        raise ApiError(status, kind, str(e)) from None
    except (RigError, VisionError) as e:
        raise ApiError(502, "device", str(e)) from None


def corners_field(body: dict[str, Any]) -> dict[str, dict[str, list[list[float]]]]:
    """``{"views": {VIEW: {FACE: [[x, y] x 4]}}}``, every number checked;
    each face's corners must go round a convex quadrilateral (422 naming the
    view and face): a crossed or folded one would warp the stickers into
    nonsense at the next scan."""
    views = body.get("views")
    if not isinstance(views, dict) or not views or len(views) > 16:
        raise ApiError(400, "bad-request", "'views' must be an object {view: {face: [[x, y] x 4]}}")
    out: dict[str, dict[str, list[list[float]]]] = {}
    for name, faces in views.items():
        if not isinstance(faces, dict) or not faces or len(faces) > 6:
            raise ApiError(400, "bad-request",
                           f"view {name[:40]!r}: give {{face: [[x, y] x 4]}} for 1 to 6 faces")
        out[name] = {}
        for face, points in faces.items():
            where = f"view {name[:40]!r}, face {face[:8]!r}"
            if not _four_corners(points):
                raise ApiError(400, "bad-request", f"{where}: give four corners [x, y] in pixels")
            corners = [[float(v) for v in p] for p in points]
            turns = _turns(corners)
            if 0.0 in turns:
                raise ApiError(400, "bad-request", f"{where}: three of the four corners are on one line; "
                                                   "give the face's four corners")
            if not is_convex(corners):
                raise ApiError(422, "bad-corners", f"{where}: the four corners do not go round a convex "
                                                   "quadrilateral (they cross or fold in); give them in "
                                                   "order around the face")
            out[name][face] = corners
    return out


def _four_corners(points: Any) -> bool:
    """Four [x, y] pairs of finite numbers within :data:`MAX_PIXEL`."""
    return isinstance(points, list) and len(points) == 4 and all(
        isinstance(p, list) and len(p) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and _in_range(v, -MAX_PIXEL, MAX_PIXEL)
            for v in p) for p in points)


def is_convex(corners: list[list[float]]) -> bool:
    """The corners, in order, turn the same way at every corner, none
    straight: a convex quadrilateral (four points can make no star, so
    turning one way also means the sides do not cross)."""
    turns = _turns(corners)
    return all(t > 0 for t in turns) or all(t < 0 for t in turns)


def _turns(corners: list[list[float]]) -> list[float]:
    """At each corner, which way the outline turns (the cross product of the
    sides in and out: its sign is the direction, 0 is straight on)."""
    turns = []
    for k in range(4):
        (ax, ay), (bx, by), (cx, cy) = corners[k], corners[(k + 1) % 4], corners[(k + 2) % 4]
        turns.append((bx - ax) * (cy - by) - (by - ay) * (cx - bx))
    return turns


async def read_photos_form(request: Request, folder: Path, one: bool = False) -> dict[str, Path]:
    """The uploaded form's six photos (``one``: its one photo, of any face),
    each copied into ``folder`` (face -> file) and bounded. The form's
    parser keeps at most a megabyte of each file in memory (the rest goes to
    a temporary file), and the copy goes in pieces: an upload's memory stays
    small whatever its size."""
    from starlette.datastructures import UploadFile

    most = 1 if one else 6
    try:
        form = await request.form(max_files=most, max_fields=most, max_part_size=1024)
    except HTTPException as e:
        raise ApiError(400, "bad-request", f"the upload is not a form of photos: {e.detail}") from None
    got: dict[str, Path] = {}
    try:
        for face, value in form.multi_items():
            if face not in workshop.PHOTO_FACES or not isinstance(value, UploadFile):
                raise ApiError(400, "bad-request",
                               f"{face[:20]!r} is not a photo field: name the six U R F D L B")
            if face in got:
                raise ApiError(400, "bad-request", f"two photos of face {face}: one each")
            got[face] = folder / f"{face}.photo"
            if not await run_in_threadpool(_copy_bounded, value.file, got[face], MAX_PHOTO_BYTES):
                raise ApiError(413, "too-large", f"the {face} photo is over {MAX_PHOTO_BYTES >> 20} MiB; "
                                                 "send it smaller")
    finally:
        await form.close()
    if one:
        if not got:
            raise ApiError(400, "bad-request", "no photo: send one file field named its face (U R F D L B)")
        return got
    missing = [f for f in workshop.PHOTO_FACES if f not in got]
    if missing:
        raise ApiError(400, "bad-request", f"no photo of face(s) {' '.join(missing)}: send all six")
    return got


def _copy_bounded(source: BinaryIO, path: Path, limit: int) -> bool:
    """Copy ``source`` to ``path`` a megabyte at a time; False (and the copy
    stopped) when it holds more than ``limit`` bytes."""
    copied = 0
    with open(path, "wb") as out:
        while chunk := source.read(1 << 20):
            copied += len(chunk)
            if copied > limit:
                return False
            out.write(chunk)
    return True


# ---------------------------------------------------------------- endpoints


def panel_of(request: Request) -> Panel:
    """The panel the application serves (``app.state.panel``, set by :func:`build`)."""
    panel: Panel = request.app.state.panel
    return panel


async def page(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", headers={"cache-control": "no-store"})


async def status(request: Request) -> Response:
    panel = panel_of(request)
    return JSONResponse(panel.snapshot())


async def check(request: Request) -> Response:
    body = await read_json(request, ("facelets", "size"))
    facelets = field_str(body, "facelets")
    assert facelets is not None
    cube_or_422(facelets, cube_size(body, facelets))  # "solved" is a valid cube
    return JSONResponse({"valid": True})


async def solve(request: Request) -> Response:
    panel = panel_of(request)
    body = await read_json(request, ("facelets", "size", "method", "metric", "max_length", "budget_ms"))
    facelets = field_str(body, "facelets")
    assert facelets is not None
    size = cube_size(body, facelets)
    facelets = cube_or_422(facelets, size)
    max_length = field_number(body, "max_length", 0, MAX_SOLUTION_LENGTH, whole=True)
    budget = field_number(body, "budget_ms", 0, MAX_BUDGET_MS, whole=False)
    req = SolveRequest(facelets, size=size,
                       method=field_str(body, "method", max_chars=20, required=False) or "two-phase",
                       metric=field_str(body, "metric", max_chars=20, required=False),
                       max_length=None if max_length is None else int(max_length), budget_ms=budget,
                       rig=panel.cfg)
    try:
        check_solve(req)  # the same refusals, in the same words, as the terminal's and the engine's
    except UserError as e:
        raise ApiError(400, "bad-request", str(e)) from None
    from solver import SolveError

    try:
        return JSONResponse(await request.app.state.solves.run(lambda: answer_solve(req)))
    except SolveError as e:
        raise ApiError(422, e.kind, e.message) from None


async def solve_options(request: Request) -> Response:
    """What POST /api/solve takes, from the one list each (solver/metrics.py),
    so that a page offers exactly what the service answers; ``rig`` is
    priced with this server's config."""
    panel = panel_of(request)
    return JSONResponse({"methods": list(METHODS), "metrics": list(RIG_METRICS),
                         "pocket_metrics": list(POCKET_METRICS), "default_metric": "htm",
                         "rig_metric": panel.cfg.solver.metric,
                         "candidates": panel.cfg.solver.candidates})


async def start(request: Request) -> Response:
    return await _start(request, scan_only=False)


async def scan(request: Request) -> Response:
    return await _start(request, scan_only=True)


async def _start(request: Request, *, scan_only: bool) -> Response:
    panel = panel_of(request)
    body = await read_json(request, ("seed", "method", "metric"))  # a scan refuses the last two below
    seed = field_number(body, "seed", 0, MAX_SEED, whole=True)
    method = field_str(body, "method", max_chars=20, required=False)
    if method is not None and (scan_only or method not in METHODS):
        raise ApiError(400, "bad-request", "'method' is for /api/start, one of two-phase or cfop"
                       if scan_only else f"'method' must be one of {', '.join(METHODS)}")
    metric = field_str(body, "metric", max_chars=20, required=False)
    if metric is not None and (scan_only or metric not in RIG_METRICS or method == "cfop"):
        raise ApiError(400, "bad-request", f"'metric' is for /api/start with two-phase, one of "
                       f"{', '.join(RIG_METRICS)}")
    try:  # off the event loop: a start may wait for the last run's thread, and the stop must not
        run = await run_in_threadpool(panel.start, seed=None if seed is None else int(seed),
                                      scan_only=scan_only, method=method, metric=metric)
    except Busy as e:
        raise ApiError(409, "busy", str(e)) from None
    except UserError as e:
        raise ApiError(400, "bad-request", str(e)) from None
    return JSONResponse({"run": run, "state": "scanning"}, status_code=202)


async def stop(request: Request) -> Response:
    panel = panel_of(request)
    await read_json(request)
    if not panel.stop():
        raise ApiError(409, "not-running", "no run is going on")
    return JSONResponse({"stopping": True})


async def estop(request: Request) -> Response:
    panel = panel_of(request)
    # straight to the open line from here: no body to wait for, no thread hop
    if panel.estop_is_quick():
        return JSONResponse(panel.estop())
    return JSONResponse(await run_in_threadpool(panel.estop))


async def clear_estop(request: Request) -> Response:
    panel = panel_of(request)
    await read_json(request)
    from ..rig.errors import RigError

    try:
        cleared = await run_in_threadpool(panel.clear_estop)
        return JSONResponse({**cleared, "rig": panel.describe_rig()})
    except Busy as e:
        raise ApiError(409, "busy", str(e)) from None
    except RigError as e:
        raise ApiError(502, "rig", str(e)) from None


async def answer(request: Request) -> Response:
    panel = panel_of(request)
    body = await read_json(request, ("action", "facelets"))
    action = field_str(body, "action")
    if action not in ("accept", "rescan", "stop"):
        raise ApiError(400, "bad-request", "'action' must be accept, rescan or stop")
    facelets = ""
    if action == "accept":
        facelets = cube_or_422(field_str(body, "facelets") or "")
        from solver import normalize_facelets

        facelets = normalize_facelets(facelets)
    try:
        panel.answer(Answer(action, facelets, "scan rejected on the web panel; no motor was moved"))
    except NotAsking as e:
        raise ApiError(409, "not-asking", str(e)) from None
    return JSONResponse({"accepted": action})


async def image(request: Request) -> Response:
    panel = panel_of(request)
    name = request.path_params["view"]
    data = panel.images.get(name)
    if data is None:
        raise ApiError(404, "not-found", f"no scan picture of a view {name[:40]!r} (yet)")
    return Response(data, media_type="image/jpeg", headers={"cache-control": "no-store"})


async def event_schema(request: Request) -> Response:
    """Every kind of event and its fields: the definition the engine checks its events against."""
    return JSONResponse(events_schema())


async def events(request: Request) -> Response:
    panel = panel_of(request)
    panel.loop = asyncio.get_running_loop()
    try:
        q, history = panel.subscribe()
    except Busy as e:
        raise ApiError(503, "busy", str(e)) from None
    return StreamingResponse(_stream(panel, q, history), media_type="text/event-stream",
                             headers={"cache-control": "no-store", "x-accel-buffering": "no"})

# -- the workshop pages (robot/web/workshop.py) --------------------------------


async def live_picture(request: Request) -> Response:
    name = request.path_params["view"]
    try:
        data, source = await in_thread(request.app.state.live.picture, name)
    except KeyError:
        raise ApiError(404, "not-found", f"no picture of a view {name[:40]!r} (yet)") from None
    return Response(data, media_type="image/jpeg",
                    headers={"cache-control": "no-store", "x-picture": source})


async def live_reading(request: Request) -> Response:
    return JSONResponse(await in_thread(request.app.state.live.read))


async def calibrate(request: Request) -> Response:
    panel = panel_of(request)
    body = await read_json(request, ("profile", "replace"))
    name = field_str(body, "profile", max_chars=100, required=False) or None  # None: as the terminal's
    replace_old = body.get("replace", False)
    if not isinstance(replace_old, bool):
        raise ApiError(400, "bad-request",
                       f"'replace' must be true or false, not {json_kind(replace_old)}")

    def calibrate_or_409() -> dict[str, Any]:
        from ..app.calibrate import ProfileExists

        try:
            return workshop.calibrate_colours(panel, name, replace_old)
        except ProfileExists as e:  # the page asks, then sends "replace": true
            raise ApiError(409, "exists", str(e)) from None

    return JSONResponse(await in_thread(calibrate_or_409, status=422, kind="calibration"))


async def effective_config(request: Request) -> Response:
    panel = panel_of(request)
    return JSONResponse(await in_thread(workshop.effective_config, panel))


async def geometry(request: Request) -> Response:
    panel = panel_of(request)
    return JSONResponse(workshop.geometry(panel))


async def geometry_picture(request: Request) -> Response:
    panel = panel_of(request)
    name = request.path_params["view"]
    try:
        data = await in_thread(workshop.geometry_picture, panel, name)
    except KeyError:
        raise ApiError(404, "not-found", f"no view {name[:40]!r} with corners to set") from None
    return Response(data, media_type="image/jpeg", headers={"cache-control": "no-store"})


async def set_geometry(request: Request) -> Response:
    panel = panel_of(request)
    body = await read_json(request, ("views",))
    return JSONResponse(await in_thread(workshop.set_geometry, panel, corners_field(body)))


async def dry_run(request: Request) -> Response:
    panel = panel_of(request)
    body = await read_json(request, ("moves", "speed", "start"))
    moves = field_str(body, "moves", max_chars=16 * MAX_DRY_RUN_MOVES + 1024)
    assert moves is not None
    speed = field_number(body, "speed", MIN_DRY_SPEED, MAX_DRY_SPEED, whole=False) or 1.0
    start_cube = field_str(body, "start", required=False)
    if start_cube:
        start_cube = cube_or_422(start_cube)
    try:
        check_moves(moves, "'moves'", MAX_DRY_RUN_MOVES)
        # off the event loop: planning and drawing a long dry run takes seconds; the stop cannot wait
        run = await run_in_threadpool(panel.start_dry_run, moves, speed=f"{speed:g}", start=start_cube)
    except Busy as e:
        raise ApiError(409, "busy", str(e)) from None
    except (UserError, ValueError) as e:
        raise ApiError(400, "bad-request", str(e)) from None
    return JSONResponse({"run": run, "state": "turning"}, status_code=202)


async def jog(request: Request) -> Response:
    panel = panel_of(request)
    from ..app.jog import MAX_JOG_STEPS
    from ..app.limits import MAX_JOG_TURNS
    from ..rig.mechanisms.jog import MAX_JOG_TEXT

    body = await read_json(request, ("face", "turns", "steps", "moves", "give_up_job"))
    face = field_str(body, "face", max_chars=8, required=False)
    moves = field_str(body, "moves", max_chars=MAX_JOG_TEXT, required=False)
    turns = field_number(body, "turns", -MAX_JOG_TURNS, MAX_JOG_TURNS, whole=True)
    steps = field_number(body, "steps", -MAX_JOG_STEPS, MAX_JOG_STEPS, whole=True)

    give_up = body.get("give_up_job", False)
    if not isinstance(give_up, bool):
        raise ApiError(400, "bad-request", "'give_up_job' must be true or false")

    def run() -> dict[str, Any]:
        from ..app.jog import UnfinishedJob

        try:
            return jogging.jog(panel, face=face, turns=None if turns is None else int(turns),
                               steps=None if steps is None else int(steps), moves=moves,
                               give_up_job=give_up)
        except UnfinishedJob as e:  # the page offers to give the job up
            raise ApiError(409, "unfinished-job", str(e)) from None

    return JSONResponse({**await in_thread(run), "rig": panel.describe_rig()})


async def dry_run_timeline(request: Request) -> Response:
    panel = panel_of(request)
    if panel.timeline is None:
        raise ApiError(404, "not-found", "no dry run yet")
    return Response(panel.timeline, media_type="image/png", headers={"cache-control": "no-store"})


async def runs(request: Request) -> Response:
    panel = panel_of(request)
    return JSONResponse(await in_thread(workshop.last_runs, panel))


async def run_picture(request: Request) -> Response:
    panel = panel_of(request)
    run_id, name = request.path_params["run"], request.path_params["name"]
    try:
        return Response(await run_in_threadpool(workshop.run_picture, panel, run_id, name),
                         media_type="image/png")
    except KeyError:
        raise ApiError(404, "not-found", f"no picture {name[:40]!r} in run {run_id[:40]!r}") from None


async def upload_photos(request: Request) -> Response:
    return await _upload(request, one=False)


async def upload_face(request: Request) -> Response:
    return await _upload(request, one=True)


async def _upload(request: Request, one: bool) -> Response:
    if request.headers.get("content-length") is None:
        raise ApiError(411, "length-required", "send the photos with a Content-Length (as a browser's "
                                               "form upload does)")
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise ApiError(400, "bad-request", "send the photos as multipart/form-data, one file field per "
                                           "face named U R F D L B")
    if request.app.state.uploads >= MAX_UPLOADS:
        raise ApiError(429, "busy", f"{MAX_UPLOADS} photo uploads are being read; send yours again when "
                                    "they are done")
    photos = request.app.state.photos
    request.app.state.uploads += 1
    try:
        with tempfile.TemporaryDirectory(prefix="cuberobot-photos-") as folder:
            got = await read_photos_form(request, Path(folder), one)
            if one:
                face, photo = next(iter(got.items()))
                answer = await in_thread(photos.read_face, face, photo, status=422, kind="photos")
                return JSONResponse(answer)
            as_drawn = request.query_params.get("as-drawn", "") in ("1", "true", "yes")
            return JSONResponse(await in_thread(photos.read, got, as_drawn, status=422, kind="photos"))
    finally:
        request.app.state.uploads -= 1


async def photo_picture(request: Request) -> Response:
    face = request.path_params["face"]
    data = request.app.state.photos.pictures.get(face)
    if data is None:
        raise ApiError(404, "not-found", f"no photo of face {face[:2]!r} read (yet)")
    return Response(data, media_type="image/jpeg", headers={"cache-control": "no-store"})


async def host(request: Request) -> Response:
    """The machine the panel runs on: load, temperature, free disk of the state folder
    (robot/app/host.py)."""
    panel = panel_of(request)
    from ..app.host import host_status

    state = state_dir_runs(panel.options.state_dir).parent
    return JSONResponse(await run_in_threadpool(host_status, state), headers=NO_STORE)


async def ports(request: Request) -> Response:
    """The serial ports `cuberobot doctor` lists, the one in use (robot/web/porting.py)."""
    panel = panel_of(request)
    from . import porting

    return JSONResponse(await run_in_threadpool(porting.ports, panel), headers=NO_STORE)


async def choose_port(request: Request) -> Response:
    """The standing rig moved onto a listed port, between runs and with the stop not latched."""
    panel = panel_of(request)
    from . import porting

    body = await read_json(request, ("port",))
    wanted = field_str(body, "port", max_chars=256)
    assert wanted is not None

    def run() -> dict[str, Any]:
        try:
            return porting.choose(panel, wanted)
        except Busy as e:
            raise ApiError(409, "busy", str(e)) from None
        except porting.Latched as e:
            raise ApiError(409, "estop-latched", str(e)) from None

    return JSONResponse(await in_thread(run))


async def on_api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "http")
    where = f"{request.method} {request.url.path[:80]}"
    return ApiError(exc.status_code, kind, f"{exc.detail}: {where}").response()


async def on_disconnect(request: Request, exc: Exception) -> Response:
    # the client left mid-body: nobody to answer, nothing wrong with the server
    log.info("%s %s: the client left before its request was sent whole", request.method,
             request.url.path[:80])
    return ApiError(400, "disconnected", "the client left before its request was sent whole").response()


async def on_slow_body(request: Request, exc: Exception) -> Response:
    log.info("%s %s: %s; dropped", request.method, request.url.path[:80], exc)
    response = ApiError(408, "too-slow", f"{exc}; the request was dropped: send it again").response()
    response.headers["connection"] = "close"
    return response


async def on_crash(request: Request, exc: Exception) -> Response:
    return ApiError(500, "internal", f"the panel failed: {type(exc).__name__}: {exc}").response()


# ---------------------------------------------------------------- the application


ROUTES = [
    Route("/", page),
    Route("/api/status", status),
    Route("/api/events", events),
    Route("/api/events/schema", event_schema),
    Route("/api/check", check, methods=["POST"]),
    Route("/api/solve", solve, methods=["POST"]),
    Route("/api/solve/options", solve_options),
    Route("/api/start", start, methods=["POST"]),
    Route("/api/scan", scan, methods=["POST"]),
    Route("/api/stop", stop, methods=["POST"]),
    Route("/api/estop", estop, methods=["POST"]),
    Route("/api/estop/clear", clear_estop, methods=["POST"]),
    Route("/api/answer", answer, methods=["POST"]),
    Route("/api/images/{view}.jpg", image),
    Route("/api/live", live_reading),
    Route("/api/live/{view}.jpg", live_picture),
    Route("/api/calibrate", calibrate, methods=["POST"]),
    Route("/api/geometry", geometry),
    Route("/api/config", effective_config),
    Route("/api/geometry", set_geometry, methods=["POST"]),
    Route("/api/geometry/{view}.jpg", geometry_picture),
    Route("/api/dry-run", dry_run, methods=["POST"]),
    Route("/api/dry-run/timeline.png", dry_run_timeline),
    Route("/api/jog", jog, methods=["POST"]),
    Route("/api/runs", runs),
    Route("/api/runs/{run}/{name}.png", run_picture),
    Route("/api/photos", upload_photos, methods=["POST"]),
    Route("/api/photos/face", upload_face, methods=["POST"]),
    Route("/api/photos/{face}.jpg", photo_picture),
    Route("/api/host", host),
    Route("/api/ports", ports),
    Route("/api/port", choose_port, methods=["POST"]),
    Mount("/static", StaticFiles(directory=STATIC), name="static"),
]
"""Every route of the panel, each to its handler above."""


def build(panel: Panel) -> Starlette:
    """The application: the page, its files, the API; what the handlers
    share is on ``app.state`` (the panel, the searches' pool, the live
    camera, the photos read, the photo uploads being taken in)."""
    app = Starlette(routes=ROUTES, lifespan=_lifespan,
                    exception_handlers={ApiError: on_api_error, HTTPException: on_http_error,
                                        ClientDisconnect: on_disconnect, SlowBody: on_slow_body,
                                        Exception: on_crash})
    app.state.panel = panel
    app.state.solves = SolvePool()
    app.state.live, app.state.photos = workshop.Live(panel), workshop.Photos()
    app.state.uploads = 0  # photo uploads being taken in (on the event loop: no lock needed)
    return app


@asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    panel: Panel = app.state.panel
    panel.loop = asyncio.get_running_loop()
    panel.open()
    yield
    app.state.solves.close()
    await run_in_threadpool(panel.close)


async def _stream(panel: Panel, q: asyncio.Queue[dict[str, Any] | None],
                  history: list[dict[str, Any]]) -> AsyncIterator[str]:
    """Server-Sent Events: the status, the current run's events so far, then
    each event as it happens; a comment every KEEPALIVE_S keeps proxies and
    the browser from giving up on a quiet line."""
    try:
        yield f"event: status\ndata: {json.dumps(panel.snapshot())}\n\n"
        last = 0
        for old in history:
            last = old["seq"]
            yield f"data: {json.dumps(old)}\n\n"
        while True:
            try:
                data = await asyncio.wait_for(q.get(), KEEPALIVE_S)
            except TimeoutError:
                if q not in panel.subscribers:
                    return
                yield ": keep-alive\n\n"
                continue
            if data is None:
                return
            if "seq" not in data:  # the rig's state, between the run's events (kind "rig" for a
                # reader that takes every data line as one of the run's events)
                yield f"event: rig\ndata: {json.dumps({'kind': 'rig', **data['rig']})}\n\n"
                continue
            if data["seq"] <= last:
                continue  # already sent with the history
            yield f"data: {json.dumps(data)}\n\n"
    finally:
        panel.unsubscribe(q)
