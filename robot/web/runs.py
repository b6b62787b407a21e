"""The web panel's side of a run: one press-start engine at a time in a
thread of its own, a face that passes its events to the page's live streams
and brings the person's answers back, and the run's state as the page and
``GET /api/status`` see it.

Events cross from the engine's thread to the server's event loop with
``call_soon_threadsafe``, so a turn the rig reports done is on its way to
every open page at once, without polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..app.engines import RunEngine, engine_for
from ..app.events import Answer, Doubt, Event, Face
from ..app.kinds import kind_of
from ..app.kindwork import WatchedDryRun, rig_facts, watched_dry_run
from ..app.solving import check_run
from ..rig.config import Config
from .between_runs import RigBetweenRuns
from .kept_line import KeptLine
from .options import Options
from .own_lines import OwnLines

log = logging.getLogger(__name__)

HISTORY = 400
"""Events of the current run kept for a page that connects late."""
SUBSCRIBER_BACKLOG = 1000
"""Events queued for one slow page before it is dropped (it reconnects)."""
MAX_SUBSCRIBERS = 32
ANSWER_POLL_S = 0.1
ASK_WAIT_S = 2.0
"""An answer that comes as the run says it needs help waits this long for it to ask."""
_HOLDERS = {"jog": "a jog is moving the rig",
            "clear": "the emergency stop is being cleared",
            "port": "the rig's serial port is being changed"}
"""What may hold the rig between runs (:meth:`Panel.holding`), as a refusal names it."""


class Busy(Exception):
    """A run is going on: one at a time."""


class NotAsking(Exception):
    """An answer came when no scan is waiting for one."""






class WebFace(Face):
    """The engine's face for the panel: events go to :meth:`Panel.publish`,
    a doubt waits for :meth:`Panel.answer` (or a stop)."""

    auto_start = True

    def __init__(self, panel: Panel, stop_flag: threading.Event, *, hold_the_end: bool = False):
        self.panel = panel
        self.stop_flag = stop_flag
        self.answers: queue.Queue[Answer] = queue.Queue()
        self.hold_the_end = hold_the_end
        """A run's ``finished`` is held until :meth:`release` (see :meth:`Panel._run_engine`)."""
        self.held: Event | None = None

    def emit(self, event: Event) -> None:
        if self.hold_the_end and event.kind == "finished":
            self.held = event
            return
        self.panel.publish(event)

    def release(self) -> None:
        """The held ``finished``, told now."""
        held, self.held = self.held, None
        if held is not None:
            self.panel.publish(held)

    def ask(self, doubt: Doubt) -> Answer | None:
        with self.panel.lock:
            self.panel.asking = self
        try:
            while not self.stop_flag.is_set():
                try:
                    return self.answers.get(timeout=ANSWER_POLL_S)
                except queue.Empty:
                    continue
            return Answer("stop", message="stopped by request")
        finally:
            with self.panel.lock:
                self.panel.asking = None


@dataclass
class Status:
    """What ``GET /api/status`` answers: the last run's state."""

    state: str = "idle"
    run: int = 0
    kind: str = ""  # "solve" or "scan"
    turn: int = 0
    turns: int = 0
    steps: list[str] = field(default_factory=list)
    facelets: str = ""
    doubtful: list[int] = field(default_factory=list)
    why: str = ""
    views: list[str] = field(default_factory=list)
    capture: int = 0
    message: str = ""
    result: str = ""
    estop: bool = False
    started: float = 0.0
    ended: float = 0.0
    estimated_s: float = 0.0
    moves: str = ""
    estop_sent: bool = False
    by: str = ""  # "page" or "button"
    method: str = ""
    stage: str = ""
    orientation: str = ""
    """A rig that moves the cube: the cube face in each of its slots U R F D L B (URFDLB: as put in)."""
    rig_kind: str = ""
    cleared: bool = False
    """The rig's emergency stop was cleared after this run ended (by the page,
    the terminal or the rig): the rig is idle, whatever this run ended as; the
    page's badge then says so instead of a stale "emergency stop" or "failed"."""

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        end = self.ended or (time.time() if self.started else 0.0)
        d["elapsed_s"] = round(end - self.started, 3) if self.started else 0.0
        return d


class Panel:
    """The run controller: the runs the web panel starts (one at a time, a
    dry run too), who listens to them, the person's answers, and what holds
    the rig between runs. The rig's own state between runs (its line, its
    latch, the cube's hold) is :attr:`rig`'s, chosen for the kind of rig."""

    def __init__(self, cfg: Config, options: Options):
        self.options = options
        self.kind = kind_of(cfg)
        """What applies to this rig (robot/app/kinds.py): asked, never named."""
        self.does = rig_facts(cfg)
        """The same, as the page reads it with every description of the rig."""
        self.rig = rig_between_runs(cfg, options, on_change=self._rig_changed, on_button=self._button,
                                    busy=self.running)
        """The rig between runs (robot/web/between_runs.py): the standing line's, or one line per need."""
        self.cfg = cfg
        self.lock = threading.Lock()
        # A flipper or two-gripper holds the cube as it was put in until a run or a jog moves it.
        self.status = Status(orientation="URFDLB" if self.kind.tells_orientation else "")
        self.history: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self.images: dict[str, bytes] = {}
        self.engine: RunEngine | None = None
        self.thread: threading.Thread | None = None
        self.asking: WebFace | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.subscribers: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self.seq = 0
        self.timeline: bytes | None = None
        """The last dry run's motor timeline (PNG), as `dry-run --render` draws it."""
        self.dry_stop = threading.Event()
        self.dry: WatchedDryRun | None = None
        """The last dry run (its emergency stop goes there while it runs)."""
        self.held_by: str | None = None
        """What holds the rig between runs (:meth:`holding`): a jog
        (web/jogging.py) or a clear of the emergency stop; runs, dry runs and
        jogs are refused meanwhile, naming it."""
        self._closing: threading.Thread | None = None
        """The server's shutdown, once begun (:meth:`begin_close`)."""
        self._latched_told = False
        """The latch in the last rig state told to the pages (:meth:`_rig_changed`)."""

    @property
    def cfg(self) -> Config:
        """The set-up the runs use (the page may change its colours and corners)."""
        return self._cfg

    @cfg.setter
    def cfg(self, cfg: Config) -> None:
        self._cfg = self.rig.cfg = cfg

    def open(self) -> None:
        """Server start: the rig made ready (robot/web/between_runs.py)."""
        self.rig.open()

    # -- runs ------------------------------------------------------------------
    def start(self, *, seed: int | None = None, scan_only: bool = False, method: str | None = None,
              metric: str | None = None,
              by: str = "page") -> int:
        """Start a run in its own thread on the kept rig; :class:`Busy` if one
        is going on. ``method`` (two-phase or cfop) overrides ``[solver] method``,
        ``metric`` (for two-phase) ``[solver] metric``."""
        cfg = check_run(self.cfg, method=method, metric=metric)  # what the terminal refuses, in its words
        with self.lock:
            self.check_free()
            if self.describe_rig().get("estop_latched"):  # refused at once, not after a scan and a solve
                raise Busy("the rig's emergency stop is latched: check it is safe, then press Clear "
                           "emergency stop (or run `cuberobot estop --clear`) and start again")
            port, firmware = self.rig.line_for_a_run()  # none: the rig lends the run its line as it starts
            engine = engine_for(cfg, Face(), port=port, firmware=firmware,
                                state_dir=self.options.state_dir, seed=seed, scan_only=scan_only,
                                sim_lighting=self.options.sim_lighting, started_by=by, no_wait=True)
            engine.face = WebFace(self, engine.stop_flag, hold_the_end=True)
            self.engine = engine
            number = self.status.run + 1
            self.status = Status(state="scanning", run=number, kind="scan" if scan_only else "solve",
                                 started=time.time(), by=by, method=cfg.solver.method,
                                 rig_kind=cfg.rig.kind,
                                 orientation="URFDLB" if self.kind.tells_orientation else "")
            self.history.clear()
            self.images = {}
            self.thread = threading.Thread(target=self._run, args=(engine,), name=f"run-{number}",
                                           daemon=True)
            self.thread.start()
        return number

    def start_dry_run(self, moves: str, *, speed: str = "1", start: str | None = None) -> int:
        """Turn ``moves`` on a virtual rig of its own (the configured rig is
        not touched), with the same events as a run's turns, so the page's
        cube and turn list follow it; :class:`Busy` if a run is going on."""
        from solver import SOLVED_CUBE, parse_facelets

        cube = parse_facelets(start) if start else SOLVED_CUBE
        with self.lock:
            self.check_free()  # refused before the planning and drawing, which take seconds
        dry = watched_dry_run(self.cfg, moves, speed, cube)
        with self.lock:
            self.check_free()
            number = self.status.run + 1
            self.status = Status(state="turning", run=number, kind="dry-run", started=time.time(),
                                 rig_kind=self.cfg.rig.kind,
                                 orientation="URFDLB" if self.kind.tells_orientation else "")
            self.history.clear()
            self.engine = None
            self.timeline = dry.picture
            self.dry_stop = threading.Event()
            opening = dry.begin(WebFace(self, self.dry_stop), self.dry_stop)
            self.dry = dry
            self.thread = threading.Thread(target=self._dry_run, args=(dry,), daemon=True,
                                           name=f"dry-run-{number}")
        self.publish(opening)
        self.thread.start()
        return number

    def _dry_run(self, dry: WatchedDryRun) -> None:
        """The dry run's thread: its moves, then how it ended, told to the page."""
        self.publish(dry.run())

    def _run(self, engine: RunEngine) -> None:
        """The run's thread, on the line the rig lends it (the kept one, or the run's own)."""
        self.rig.run(engine, self.status, lambda: self._run_engine(engine), self._finish_unreported)

    @staticmethod
    def _run_engine(engine: Any) -> None:
        """``engine.run()``, its ``finished`` told once it has returned or
        raised: an engine writes the run's record as it ends, after telling
        the end, and a page or a client told "done" asks for the last runs at
        once (the record was not always there yet)."""
        try:
            engine.run()
        finally:
            if isinstance(engine.face, WebFace):
                engine.face.release()

    def _button(self) -> None:
        """The rig's start button, heard between runs: a run as the page's Start."""
        try:
            self.start(by="button")
        except Busy:
            log.info("the rig's button was pressed while the panel could not start a run: ignored")

    def _finish_unreported(self, message: str) -> None:
        """A run that failed before the engine could say so (no rig, no camera)."""
        if self.status.state in ("done", "failed", "stopped"):
            return
        self.publish(Event("finished", "failed", {"status": "failed"}, message))

    def running(self) -> bool:
        """A run is going on: started and not yet finished (its thread may still
        be writing the record after it told the page it ended)."""
        return self.thread is not None and self.thread.is_alive() and not self.status.ended

    def check_free(self) -> None:
        """Under :attr:`lock`: :class:`Busy` while a run goes on or something
        holds the rig (:meth:`holding`: a jog, a clear); a run that has finished
        is let end its thread first."""
        if self._closing is not None:
            raise Busy("the server is shutting down")
        if self.held_by is not None:
            raise Busy(f"{_HOLDERS[self.held_by]}: start again when it has ended")
        if self.thread is None or not self.thread.is_alive():
            return
        if self.status.ended:
            self.thread.join(timeout=10)
            if not self.thread.is_alive():
                return
        raise Busy(f"a run is already going on (state {self.status.state}): stop it first")

    @contextlib.contextmanager
    def holding(self, what: str) -> Iterator[None]:
        """Hold the rig for ``what`` (a key of ``_HOLDERS``) while the block
        runs: :class:`Busy` now if a run or another holder has it, and runs,
        dry runs and jogs asked for meanwhile are refused, naming it."""
        with self.lock:
            self.check_free()
            self.held_by = what
        try:
            yield
        finally:
            self.held_by = None

    def stop(self) -> bool:
        """Stop the run at its next step; False when none is going on."""
        engine = self.engine
        if not self.running():
            return False
        if engine is None:  # a dry run
            self.dry_stop.set()
            return True
        engine.stop()
        return True

    def estop(self) -> dict[str, Any]:
        """The emergency stop: onto the running link at once; with no run,
        through a link opened for it (a real rig latches it until cleared)."""
        engine = self.engine
        dry = self.dry
        running = self.running()
        if engine is None and dry is not None and running:  # a dry run: its virtual rig of its own
            self.status.estop_sent = True
            return dry.estop()
        return self.rig.estop(engine if running else None, self.status, self.held_by)

    def estop_is_quick(self) -> bool:
        """The emergency stop is a write onto an open line (no connecting to do)."""
        return self.running() or self.rig.estop_is_quick()

    def clear_estop(self) -> dict[str, Any]:
        """Clear a latched emergency stop (only between runs)."""
        if self.running():
            raise Busy("a run is going on: the emergency stop can be cleared only between runs")
        return self.rig.clear(self.holding)

    def answer(self, answer: Answer) -> None:
        """A person's answer to the scan that waits for one. The run tells
        the page it needs help a moment before it sits down to wait: an
        answer sent on that word (a quick hand, a script) waits for the run
        to ask, up to ASK_WAIT_S, rather than being refused."""
        deadline = time.monotonic() + ASK_WAIT_S
        while True:
            with self.lock:
                face = self.asking
            if face is not None or self.status.state != "needs_help" or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        if face is None:
            raise NotAsking(f"no scan is waiting for an answer (state {self.status.state})")
        face.answers.put(answer)

    def begin_close(self) -> None:
        """The server begins to shut down: :meth:`close`'s work starts now,
        in a thread of its own, while the server closes its connections (after
        them, the time given to the run came on top of theirs, and a busy
        machine took `serve` past the 2 s it promises after Ctrl-C). Runs, dry
        runs and jogs are refused from now on."""
        with self.lock:
            if self._closing is None:
                self._closing = threading.Thread(target=self._close, name="panel-close", daemon=True)
                self._closing.start()

    def close(self) -> None:
        """Server shutdown (begun by :meth:`begin_close`, if it was), within
        about 1 s of its beginning whatever the run is doing: stop the run (a
        stop, not an emergency stop) and give it half a second to end; one
        that has not ended by then loses its line, and has another half
        second to let go of it (a run waiting on the rig ends at once then; a
        table build or a capture, which cannot, is not waited for any longer:
        `serve` promises to end within 2 s of Ctrl-C on a busy machine too).
        The rig runs its queued turns to their end, as after a crash
        (`cuberobot resume` finishes the job). Then end every stream."""
        self.begin_close()
        assert self._closing is not None
        self._closing.join()

    def _close(self) -> None:
        self.stop()
        if self.thread is not None:
            self.thread.join(timeout=0.5)
        self.rig.close(timeout=0.5)
        self.end_streams()

    def end_streams(self) -> None:
        """End every event stream (on the event loop)."""
        for q in list(self.subscribers):
            with contextlib.suppress(asyncio.QueueFull):
                q.put_nowait(None)

    # -- events ----------------------------------------------------------------
    def jogged(self, moves: list[str] | None, orientation: str | None, text: str) -> None:
        """After a jog, the page's cube follows the rig: ``moves``, the face
        turns the jog made (None: not known, as after a jog stopped part-way
        or servo angles set by hand), made on the last run's cube; and how a
        flipper or two-gripper now holds the cube (None: not known). A cube
        or a hold not known is not drawn as if it were: the orientation is
        told as unknown and the cube is left as the last run left it, which
        the next Start scans afresh anyway."""
        from solver import parse_facelets

        with self.lock:
            last, state = self.status.facelets, self.status.state
        facelets = ""
        if moves is not None and last:
            try:
                facelets = parse_facelets(last).apply(" ".join(moves)).to_facelets()
            except ValueError:  # the last reading was no cube (a scan left in doubt)
                facelets = ""
        self.publish(Event("jogged", state, {"facelets": facelets, "orientation": orientation or "",
                                             "moves": list(moves or [])}, text=text))

    def publish(self, event: Event) -> None:
        """From the engine's thread: update the status, keep the scan's
        pictures, and hand the event to every open stream."""
        data = event.to_json()
        with self.lock:
            self._update(event)
            data["run"] = self.status.run
            # the run's clock is the server's: a page computes elapsed from these, after a reload too
            data["run_started"], data["run_ended"] = self.status.started, self.status.ended
            data["run_kind"] = self.status.kind
            self.seq += 1
            data["seq"] = self.seq
            if event.result is not None:
                self._keep_images(event.result.images)
            self.history.append(data)
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._fan_out, data)

    def _rig_changed(self, rig: dict[str, Any]) -> None:
        """From the rig's listener: the rig's state changed (connected, its
        emergency stop latched or cleared); every open page is told at once
        (``event: rig`` on the stream, not one of the run's events). A latch
        cleared between runs marks the last run's status ``cleared``."""
        if rig.get("connected"):  # a line down tells nothing of the latch
            latched = bool(rig.get("estop_latched"))
            if self._latched_told and not latched and not self.running():
                self.status.cleared = True
            self._latched_told = latched
        loop = self.loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._fan_out, {"rig": {**rig, "does": self.does}})

    def _fan_out(self, data: dict[str, Any]) -> None:
        for q in list(self.subscribers):
            try:
                q.put_nowait(data)
            except asyncio.QueueFull:  # a page that stopped reading: its stream ends at its next keep-alive
                self.subscribers.discard(q)

    def _update(self, event: Event) -> None:
        s, d = self.status, event.data
        s.state = event.state
        kind = event.kind
        if kind == "scanning":
            s.capture = d.get("capture", s.capture)
        elif kind == "scan":
            s.facelets, s.doubtful, s.why, s.views = d["facelets"], d["doubtful"], d["why"], d["views"]
        elif kind == "doubt":
            s.doubtful, s.why, s.facelets = d["doubtful"], d["why"], d["facelets"]
        elif kind == "solution":
            s.steps, s.turns, s.turn, s.facelets = d["steps"], len(d["steps"]), 0, d["facelets"]
            s.estimated_s, s.moves = d["estimated_s"], d["moves"]
            s.orientation = d.get("orientation", s.orientation)
        elif kind == "scan-move":  # a page that comes in now draws the cube held as the scan left it
            s.orientation = d.get("orientation", s.orientation)
        elif kind == "turn-started":
            s.turn, s.stage = d["index"] + 1, d.get("stage", "")
        elif kind == "turn-done":
            s.turn, s.facelets, s.stage = d["index"] + 1, d["state_facelets"], d.get("stage", s.stage)
            s.orientation = d.get("orientation", s.orientation)
        elif kind == "jogged":  # between runs: the state stays the last run's
            s.facelets = d["facelets"] or s.facelets
            s.orientation = d["orientation"] if self.kind.tells_orientation else ""
        elif kind == "finished":
            s.result, s.message, s.estop = d.get("status", ""), event.text, bool(d.get("estop", False))
            s.ended = time.time()

    def _keep_images(self, images: dict[str, Any]) -> None:
        import cv2

        for name, img in images.items():
            ok, jpg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 80])
            if ok:
                self.images[name] = jpg.tobytes()

    def subscribe(self) -> tuple[asyncio.Queue[dict[str, Any] | None], list[dict[str, Any]]]:
        """A stream's queue and the events so far (on the event loop)."""
        if len(self.subscribers) >= MAX_SUBSCRIBERS:
            raise Busy(f"too many open event streams (at most {MAX_SUBSCRIBERS})")
        q: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(SUBSCRIBER_BACKLOG)
        with self.lock:
            self.subscribers.add(q)
            return q, list(self.history)

    def unsubscribe(self, q: asyncio.Queue[dict[str, Any] | None]) -> None:
        self.subscribers.discard(q)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            # ``now``: the server's clock, from which a page whose own clock is off reckons elapsed
            return {**self.status.to_json(), "rig": self.describe_rig(), "seq": self.seq, "now": time.time()}

    def describe_rig(self) -> dict[str, Any]:
        """The rig as the page shows it (robot/web/between_runs.py)."""
        return {**self.rig.describe(), "does": self.does}


def rig_between_runs(cfg: Config, options: Options, *, on_change: Callable[[dict[str, Any]], None],
                     on_button: Callable[[], None], busy: Callable[[], bool]) -> RigBetweenRuns:
    """The holder of ``cfg``'s rig between runs, the one place that asks
    whether the rig keeps its line (robot/app/kinds.py): the standing line's
    (six motors), else a line of its own for each run, jog, stop or clear (a
    flipper, two grippers). ``on_change``: the rig's state changed (every
    page is told); ``on_button``: the rig's start button, heard between
    runs; ``busy``: a run is going on."""
    if kind_of(cfg).keeps_its_line:
        return KeptLine(cfg, options, on_change=on_change, on_button=on_button, busy=busy)
    return OwnLines(cfg, options, on_change=on_change)


def state_dir_runs(state_dir: str | None) -> Path:
    """Where run records are (``runs/`` under the state directory)."""
    from ..rig.journal import default_state_dir

    return (Path(state_dir) if state_dir else default_state_dir()) / "runs"
