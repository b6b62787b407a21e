"""What the engine tells its faces and hears back: events, a doubt put to
a person, the person's answer, and the face interface itself.

The press-start engine (:mod:`robot.app.start`) runs the stages; the
terminal (:mod:`robot.app.terminal`) and the web panel (:mod:`robot.web`)
are faces on it. They all meet here, so none of them imports another."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vision.scanning import ScanResult


@dataclass
class Event:
    """Something that happened in a run, for every face to show its way.

    ``kind`` names it (see :data:`EVENT_KINDS`), ``state`` is the run's state
    after it, ``data`` holds plain JSON values (a face may add its own extras,
    and later stages may add keys such as a turn's ``stage`` label), ``text``
    is a sentence a face may print as it is, and ``result`` carries the scan
    (pictures, samples) to the faces that draw it; it is never serialised."""

    kind: str
    state: str
    data: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    t: float = field(default_factory=time.time)
    result: ScanResult | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "state": self.state, "t": round(self.t, 4), "text": self.text, **self.data}


EVENT_KINDS = ("connected", "waiting", "started", "scanning", "recapture", "scan", "doubt", "answer",
               "fix-invalid", "look-again", "solving", "solution", "turn-started", "turn-done", "confirmed",
               "finished")
STATES = ("idle", "scanning", "needs_help", "solving", "turning", "done", "failed", "stopped")


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
