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

from typing import Any

from ..app.kindwork import check_panel_jog
from .runs import Panel


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
        panel.rig.jog_estop.clear()  # from here the emergency stop is this jog's
        # the rig's holder moves it (robot/web/kept_line.py, own_lines.py)
        return panel.rig.jog(checked, give_up_job, panel.jogged, after_dry_run=panel.status.kind == "dry-run")
