"""Where the last command left a flipper's or two-gripper's parts, for the
next command on the same rig.

Homing takes servos home but not a gripper's stepper (it has no home), so a
two-gripper run stopped between two moves (a Stop, the emergency stop,
Ctrl-C) may leave a gripper's jaws across; the next job, planned from
square jaws, would then turn a gripper into the other's crossed jaws. Each
command that moves the rig notes the state it left it in (None: a move was
cut, not known) beside the rig's claim in the user's runtime folder (a
rig living in this process, the panel's ``sim://NAME``, in memory), with
the rig's own word at that moment: its boot id and the id of the last move
it reported done. The next command believes the note only while the rig
still says both (nothing moved it since, it has not restarted, it is the
same rig on that port), and then parks the rig from there
(:func:`~robot.rig.mechanisms.parking`) before it homes. Otherwise it is
as before (docs/hardware.md: square the jaws by hand).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import RigError
from ..owner import port_key, port_lock
from .base import Mechanism, State, state_from_json

if TYPE_CHECKING:
    from ..link import Link


_IN_PROCESS: dict[str, str] = {}
"""The notes of rigs that live in this process (``sim://NAME``, the panel's
simulated rig): they end with it, and so do their notes."""
MAX_IN_PROCESS = 64
"""Notes kept in memory at most (a panel's run on a ``sim://`` of no name
has a rig of its own, so a long session meets many): the oldest go first."""


def _note(port: str) -> Path | None:
    key = port_key(port)
    return None if key is None else port_lock(key).with_suffix(".left.json")


def _write(port: str, text: str) -> None:
    path = _note(port)
    if path is None:
        _IN_PROCESS.pop(port, None)
        _IN_PROCESS[port] = text  # the newest last
        while len(_IN_PROCESS) > MAX_IN_PROCESS:
            del _IN_PROCESS[next(iter(_IN_PROCESS))]
        return
    with contextlib.suppress(OSError):  # a note lost costs only the parking it would have allowed
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)


def _read(port: str) -> object:
    """The note of ``port`` as JSON (None: none, or not readable)."""
    path = _note(port)
    try:
        text = _IN_PROCESS.get(port) if path is None else path.read_text(encoding="utf-8")[:10_000]
        return None if text is None else json.loads(text)
    except (OSError, ValueError):
        return None


def _rig_word(link: Link) -> tuple[int, int, bool] | None:
    """The rig's boot id, last move reported done and whether its emergency
    stop is latched, or None when it does not answer."""
    if link.hello is None:
        return None
    try:
        st = link.status()
    except RigError:
        return None
    return link.hello.boot_id, st.last_done_id, bool(st.estop)


def remember(link: Link, kind: str, state: State | None) -> None:
    """Note the state the rig on ``link`` is left in (None: not known). A
    latched rig's "not known" is not noted: a command that moved it noted
    that when it began (:func:`parts_left`), and one refused for the latch
    moved nothing, so the note of the command before stands."""
    full = _rig_word(link)
    if state is None and full is not None and full[2]:
        return
    word = full[:2] if full is not None else None
    note = {"kind": kind, "rig": list(word) if word else None, "state": state if word else None}
    _write(link.port, json.dumps(note))


def parts_left(mech: Mechanism, link: Link) -> State | None:
    """The parts as the last command left them on this rig (the cube's hold
    set to home: parking never turns the cube), when the rig still says
    what it said then and the state is one the mechanism can be in; else
    None. Called by a command about to move the rig, it notes "not known"
    until that command notes where it left them, so that a command killed
    on the way leaves no stale note behind."""
    note = _read(link.port)
    full = _rig_word(link)
    if full is not None and full[2]:  # latched: this command will be refused before it moves anything
        return None
    word = full[:2] if full is not None else None
    remember(link, mech.kind, None)
    if not isinstance(note, dict) or note.get("kind") != mech.kind or word is None \
            or note.get("rig") != list(word) or not isinstance(note.get("state"), list):
        return None
    state = state_from_json(note["state"])
    if len(state) != len(mech.start()) or state[1:] not in {s[1:] for s in mech.graph.states}:
        return None
    return (mech.start()[0], *state[1:])
