"""The panel's jog (``POST /api/jog``, the page's Jog card): the rig moved by
hand between runs, as `cuberobot jog` moves it (robot/app/jog.py checks and
moves for both). `cuberobot serve` holds the rig's port for its whole life,
so while it serves this is the way to jog.

A jog holds the panel as a run does (:meth:`Panel.holding`): a run, a dry
run or another jog asked for meanwhile is refused (:class:`Busy`), and the
emergency stop reaches it on its line (the kept one; a flipper's or
two-gripper's own, :attr:`~.own_lines.OwnLines.jog_link`). Which of the two
it moves on is the rig's holder's to say (robot/web/between_runs.py).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..app.jog import clear_to_jog, refuse_unfinished
from ..app.kindwork import HOLD_UNKNOWN, check_panel_jog, follow_jog
from ..app.kindwork import jog as make_jog
from ..rig.errors import RigError
from ..rig.link import STOP_HEARD_S

if TYPE_CHECKING:
    from .own_lines import OwnLines
    from .runs import Panel
    from .standing_rig import StandingRig

_GIVE_UP_OR_RESUME = ("give it up to jog (the next Start scans the cube afresh), or stop the panel and run "
                      "`cuberobot resume` to finish it")
_GAVE_UP = "; the unfinished job was given up"


def jog(panel: Panel, *, face: str | None = None, turns: int | None = None, steps: int | None = None,
        moves: str | None = None, give_up_job: bool = False) -> dict[str, Any]:
    """Move the rig by hand between runs, as `cuberobot jog` does (robot/app/jog.py):
    ``face`` with ``turns`` or ``steps`` on a six-motor rig, over the kept
    line; robot ``moves`` on a flipper or two-gripper rig, from its home.
    :class:`Busy` during a run or another jog; a run asked for meanwhile
    is refused the same way. The emergency stop reaches a jog as a run.
    A job left unfinished in the journal (a run stopped before its end) is
    :class:`~robot.app.jog.UnfinishedJob` unless ``give_up_job``: then it
    is ended in the journal first (the next run scans afresh anyway)."""
    checked = check_panel_jog(panel.cfg, face=face, turns=turns, steps=steps, moves=moves)
    with panel.holding("jog"):  # Busy during a run, another jog or a clear
        return panel.rig.jog(panel, checked, give_up_job)  # on_kept_line or on_own_line


def on_kept_line(panel: Panel, standing: StandingRig, jog: Any, give_up_job: bool) -> dict[str, Any]:
    """A face jog on the standing rig's line, which the panel holds between runs."""
    with standing.lock:  # the listener lets go of the line within one slice
        link = standing.ready().link
        gave_up = clear_to_jog(link, panel.cfg, panel.options.state_dir, give_up=give_up_job,
                               then=_GIVE_UP_OR_RESUME)
        try:
            done = make_jog(link, panel.cfg, jog, lambda _line: None)
        except RigError:
            standing.report()
            raise
    standing.report()
    _follow(panel, jog)
    return {"moved": True, "message": done.summary + (_GAVE_UP if gave_up else ""), **done.details,
            "gave_up_job": gave_up}


def on_own_line(panel: Panel, rig: OwnLines, jog: Any, give_up_job: bool) -> dict[str, Any]:
    """Robot moves on a link opened for them (a ``sim://`` port with no name
    or ``--firmware``: a virtual or emulated rig of the jog's own, as for a
    run), which the emergency stop reaches."""
    from ..app.rigs import attach_rig, connect_rig, run_port

    if not give_up_job:  # refused before the port is opened; given up only once the rig answers
        refuse_unfinished(panel.cfg, panel.options.state_dir, then=_GIVE_UP_OR_RESUME)
    firmware = panel.options.firmware
    port = None if firmware else run_port(panel.cfg, panel.options.rig_port)
    handle = attach_rig(panel.cfg, port=port, firmware=firmware, seed=None, kind=panel.cfg.rig.kind)
    rig.jog_link = handle.link
    runs_rig = rig.lasting_port is not None  # whose cube the page draws; not a rig of the jog's own
    lines: list[str] = []  # the robot moves made, should the jog stop part-way
    try:
        connect_rig(handle)
        gave_up = clear_to_jog(handle.link, panel.cfg, panel.options.state_dir, give_up=give_up_job,
                               then=_GIVE_UP_OR_RESUME)
        if rig.jog_estop.is_set():  # pressed while the line opened: from here it would reach the line
            raise RigError("the emergency stop was pressed before the jog's first move: nothing moved")
        try:
            done = make_jog(handle.link, panel.cfg, jog, lines.append)
        except RigError:
            if lines and runs_rig:  # the rig was homed and may have moved: its hold is not known any more
                rig.rig_state = None
                panel.jogged(None, None, f"the jog stopped part-way: {HOLD_UNKNOWN}")
            raise
        if runs_rig:
            _follow(panel, jog)
    finally:
        rig.jog_link = None
        if handle.link.hello is not None:
            heard_at = time.monotonic()  # a stop sent from here on is newer than this word
            wait_s = STOP_HEARD_S if rig.jog_estop.is_set() else 0.0
            rig.note_latch(handle.link.latch_heard(wait_s), heard_at=heard_at)
        handle.close()
    kind, where = panel.cfg.rig.kind, ""
    if firmware:
        where = f" on an emulated {kind} rig of its own (the firmware in simavr)"
    elif handle.simulated is not None:
        where = (f" on a virtual {kind} rig of its own (the port is sim://)" if rig.lasting_port is None
                 else f" on the virtual {kind} rig")
    return {"moved": True, "message": done.summary + where + (_GAVE_UP if gave_up else ""), **done.details,
            "gave_up_job": gave_up}


def _follow(panel: Panel, jog: Any) -> None:
    """The page's cube after a jog on the rig the runs use (robot/app/kindwork.py
    follows it), from where the last run or jog left the rig
    (:attr:`~.between_runs.RigBetweenRuns.rig_state`)."""
    rig = panel.rig
    before, rig.rig_state = rig.rig_state, None
    # a dry run's cube on the page is a virtual rig's of its own, not this one's
    followed = follow_jog(panel.cfg, jog, before if panel.status.kind != "dry-run" else None)
    rig.rig_state = followed.state
    if followed.tell:
        panel.jogged(followed.moves, followed.orientation, followed.text)
