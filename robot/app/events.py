"""What the engine tells its faces and hears back: events, a doubt put to
a person, the person's answer, and the face interface itself.

The press-start engine (:mod:`robot.app.start`) runs the stages; the
terminal (:mod:`robot.app.terminal`) and the web panel (:mod:`robot.web`)
are faces on it. They all meet here, so none of them imports another."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..rig.errors import RigError

if TYPE_CHECKING:
    from vision.scan_result import ScanResult


@dataclass(frozen=True)
class Kind:
    """The fields one kind of event carries: their names and JSON types.
    ``optional`` ones appear when they apply (a CFOP turn's ``stage``)."""

    required: dict[str, type | tuple[type, ...]]
    optional: dict[str, type | tuple[type, ...]] = field(default_factory=dict)
    doc: str = ""


_NUM = (int, float)
_MAYBE_INT = (int, type(None))
_MAYBE_NUM = (int, float, type(None))

_HELD: dict[str, type | tuple[type, ...]] = {"action": str, "orientation": str, "move": str, "rotation": dict}
"""A robot move of a rig that moves the cube (robot/app/mechanism_events.py): the move as the
journal writes it, the cube face in each rig slot U R F D L B after it, the face turn a layer
turn makes, and a whole-cube turn ``{"slot", "quarters"}``."""

EVENTS: dict[str, Kind] = {
    "connected": Kind({"port": str, "simulated": bool, "firmware": str}, doc="the rig answered"),
    "waiting": Kind({"press": str}, doc="waiting for start: press 'person' or 'simulated'"),
    "started": Kind({"by": str}, doc="start was pressed (by: button, enter, page, auto)"),
    "scanning": Kind({"purpose": str, "capture": int, "views": list}, doc="capturing views"),
    "scan-move": Kind({"purpose": str, "step": str}, _HELD,
                      doc="a rig that moves the cube: a robot move of a scan's plan (a flip, a spin, a "
                          "regrip) that shows the camera the next face; no layer turns"),
    "scan": Kind({"purpose": str, "facelets": str, "valid": bool, "confidence": list, "doubtful": list,
                  "why": str, "views": list}, doc="a scan read: 54 letters, per-sticker confidence"),
    "recapture": Kind({"doubtful": list, "views": list},
                      doc="capturing the views of doubtful stickers again"),
    "doubt": Kind({"purpose": str, "facelets": str, "doubtful": list, "why": str},
                  doc="a person is asked to fix, rescan or stop"),
    "answer": Kind({"action": str}, doc="the person's answer: accept, rescan or stop"),
    "fix-invalid": Kind({"error": dict}, doc="the fixed stickers make no valid cube"),
    "look-again": Kind({"move": str}, {"doubtful": list}, doc="a face turned to see hidden stickers"),
    "solving": Kind({"facelets": str, "method": str}),
    "solution": Kind({"facelets": str, "moves": str, "length": int, "steps": list, "estimated_s": _NUM},
                     {"cost": _NUM, "metric": str, "dry_run": bool, "orientation": str},
                     doc="the moves the rig will turn (a rig that moves the cube: its robot moves as steps, "
                         "orientation where it holds the cube as they start)"),
    "turn-started": Kind({"index": int, "turns": int, "step": str}, {"stage": str, **_HELD},
                         doc="a turn (a rig that moves the cube: a robot move) begins"),
    "turn-done": Kind({"index": int, "turns": int, "step": str, "state_facelets": str, "ticks": _MAYBE_INT,
                       "elapsed_s": _NUM}, {"remaining_s": _NUM, "stage": str, **_HELD},
                      doc="the rig reported the turn done (ticks: its own clock)"),
    "confirmed": Kind({"solved": bool, "facelets": str}, doc="the confirmation scan"),
    "jogged": Kind({"facelets": str, "orientation": str, "moves": list},
                   doc="the rig was moved by hand between runs (a jog): the face turns it made (moves), "
                       "the last run's cube with them made (facelets), how a rig that moves the cube now "
                       "holds it (orientation); '' where it is not known (a jog stopped part-way, servo "
                       "angles set by hand, no run yet), and orientation '' on a six-motor rig"),
    "finished": Kind({"status": str}, {"estop": bool, "facelets": str, "total_s": _NUM, "final_state": str,
                                       "estimated_s": _NUM, "executed_s": _MAYBE_NUM},
                     doc="the run ended: status solved, scanned, already-solved, dry-run, stopped, "
                         "interrupted, failed or scan-doubtful"),
}
"""Every kind of event and what it carries: the one definition the engine
checks its events against and the terminal, the web server and the page
read (the page from ``GET /api/events/schema``)."""
EVENT_KINDS = tuple(EVENTS)
STATES = ("idle", "scanning", "needs_help", "solving", "turning", "done", "failed", "stopped")


class Stopped(RigError):
    """A person stopped the run (Stop, or the emergency stop), on any kind of
    rig: the six-motor engine and the mechanism runs raise the same one, so
    every face and every handler tells a stop apart from a failure alike."""

    def __init__(self, message: str, *, estop: bool = False):
        super().__init__(message)
        self.estop = estop


class EventError(TypeError):
    """An event that does not match :data:`EVENTS`: a bug in whoever made it."""


def check_event(kind: str, state: str, data: dict[str, Any]) -> None:
    """``data`` has every required field of ``kind`` and no other than its
    optional ones, each of its type."""
    spec = EVENTS.get(kind)
    if spec is None:
        raise EventError(f"unknown event kind {kind!r}")
    if state not in STATES:
        raise EventError(f"{kind}: unknown state {state!r}")
    missing = set(spec.required) - set(data)
    unknown = set(data) - set(spec.required) - set(spec.optional)
    if missing or unknown:
        raise EventError(f"{kind}: missing {sorted(missing)}, unknown {sorted(unknown)}")
    for name, value in data.items():
        want = spec.required.get(name) or spec.optional[name]
        if not isinstance(value, want) or (isinstance(value, bool) and want in (int, _NUM, _MAYBE_INT)):
            raise EventError(f"{kind}: {name} is {type(value).__name__}, not {want}")


def schema() -> dict[str, Any]:
    """:data:`EVENTS` as JSON, for the page and for docs/api.md."""
    def names(types: type | tuple[type, ...]) -> list[str]:
        ts = types if isinstance(types, tuple) else (types,)
        return sorted({_JSON_NAMES[t] for t in ts})

    return {"states": list(STATES),
            "kinds": {k: {"required": {n: names(t) for n, t in spec.required.items()},
                          "optional": {n: names(t) for n, t in spec.optional.items()}, "doc": spec.doc}
                      for k, spec in EVENTS.items()}}


_JSON_NAMES = {str: "string", bool: "boolean", int: "number", float: "number", list: "array", dict: "object",
               type(None): "null"}


@dataclass
class Event:
    """Something that happened in a run, for every face to show its way.

    ``kind`` names it and fixes what ``data`` holds (see :data:`EVENTS`; a
    mismatch is an :class:`EventError` when the event is made), ``state`` is
    the run's state after it, ``text`` is a sentence a face may print as it
    is, and ``result`` carries the scan (pictures, samples) to the faces that
    draw it; it is never serialised."""

    kind: str
    state: str
    data: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    t: float = field(default_factory=time.time)
    result: ScanResult | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_event(self.kind, self.state, self.data)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "state": self.state, "t": round(self.t, 4), "text": self.text, **self.data}


class TurnEvents:
    """The events of a job's turns, made one way for every job (a run, a dry
    run): ``turn-started`` as a turn heads the rig's queue, ``turn-done`` as
    the rig reports it, with the time left against the plan's estimate."""

    def __init__(self, steps: list[str], estimate_s: float, labels: list[str] | None = None):
        self.steps, self.estimate_s, self.labels = steps, estimate_s, labels
        self.t0 = time.monotonic()

    def _extras(self, index: int) -> dict[str, Any]:
        if self.labels is not None and 0 <= index < len(self.labels):
            return {"stage": self.labels[index]}
        return {}

    def started(self, index: int) -> Event:
        return Event("turn-started", "turning", {"index": index, "turns": len(self.steps),
                                                 "step": self.steps[index], **self._extras(index)})

    def done(self, index: int, state_facelets: str, ticks: int | None) -> Event:
        elapsed = time.monotonic() - self.t0
        return Event("turn-done", "turning", {
            "index": index, "turns": len(self.steps), "step": self.steps[index],
            "state_facelets": state_facelets, "ticks": ticks, "elapsed_s": round(elapsed, 3),
            "remaining_s": round(max(0.0, self.estimate_s - elapsed), 3), **self._extras(index)})


@dataclass
class Doubt:
    """A scan that needs a person: the result, which stickers and why."""

    purpose: str
    result: ScanResult
    doubtful: list[int]
    why: str


@dataclass
class Answer:
    """A person's answer to a :class:`Doubt`: ``accept`` (with the fixed
    ``facelets``), ``rescan``, or ``stop`` (with why, for the record)."""

    action: str
    facelets: str = ""
    message: str = ""


class Face:
    """One way of showing a run to a person and hearing back (the terminal
    with its preview window, the web page). The engine calls these from the
    thread that runs it; the defaults suit a face that only watches."""

    auto_start: bool = True
    """Nobody will press start: a simulated rig's button is pressed for them."""

    def emit(self, event: Event) -> None:
        """Show ``event``."""

    def ask(self, doubt: Doubt) -> Answer | None:
        """Let a person fix, rescan or stop; None when nobody can be asked."""
        return None

    def pressed(self) -> str | None:
        """Polled while waiting for start: how the person started, if they did."""
        return None
