"""Resume a flipper's or two-gripper's job left unfinished: the safety
decisions, below every face (issue 45).

A job goes on only from a state the journal knows on a rig that still holds
the cube; otherwise it is ended "state unknown: scan again" and nothing
moves. The rig's word decides: a rig restarted since the job began (another
boot id) may have let its servos go; a rig whose last finished command is
not the job's has moved since (a jog, another run); a move sent and never
reported done leaves the cube's hold and layers unknown, unless the rig says
it finished it (its last done id, nothing queued or moving) and the journal
is completed from that word. An in-process virtual rig (``sim://``) ended
with the process that ran the job.

The six-motor rig's resume decisions live in robot/rig/job.py, whose
journal knows each turn; :func:`resume_six_motor_job` asks them and tells
the outcome in the same terms. The terminal (`cuberobot resume`) presents
what these decide, through robot/app/kindwork.py, never naming the kind.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from solver import SOLVED_CUBE

from ..rig.config import Config
from ..rig.errors import UserError
from ..rig.journal import Journal, default_state_dir
from ..rig.link import Link
from ..rig.mechanisms import mechanism_for, park
from ..rig.mechanisms.drive import LinkMechanism
from ..rig.mechanisms.journal import UNKNOWN, MechanismJournal, confirm_sent, resume_job
from ..rig.mechanisms.left import remember
from .kinds import KINDS
from .limits import rig_claims


@dataclass(frozen=True)
class Resumed:
    """How a resume ended: ``done`` (the job finished), ``nothing`` (no
    job waits), ``unknown`` (the job is ended "state unknown" and nothing
    moved, or it already was); ``message`` for a person."""

    outcome: str
    message: str


def refuse_other_kinds_job(folder: Path, kind: str) -> None:
    """A six-motor rig's jobs and a flipper's or two-gripper's are journalled
    apart: "nothing to resume" is not said while the other journal of the
    same folder holds an unfinished job (a set-up of the wrong kind given)."""
    waiting = None
    if not KINDS[kind].makes_robot_moves:
        last = MechanismJournal(folder).last()
        waiting = last.kind if last is not None and last.end is None else None
    else:
        with Journal(folder) as six:
            waiting = "six-motor" if six.unfinished() is not None else None
    if waiting is not None:
        raise UserError(f"the unfinished job in {folder} is for a {waiting} rig, the config for a {kind} "
                        "rig: resume with the job's config (--config), or scan the cube again")


OpenLink = Callable[[str], AbstractContextManager[Link]]
"""A face's way to open a line to the rig on a port (the terminal's registers ``sim://`` and ``gpio://``)."""


def resume_six_motor_job(cfg: Config, state_dir: str | None, port: str | None, open_link: OpenLink,
                         say: Callable[[str], None]) -> Resumed:
    """The six-motor job left unfinished in ``state_dir`` (None: the default
    folder) finished from the rig's word (robot/rig/job.py decides), on
    ``port`` or else the port the job ran on (not an in-process ``sim://``)
    or the config's; ``say`` hears the steps as they happen."""
    from ..rig import job  # lazy: out of --help's start-up

    with Journal(state_dir) as journal:
        js = journal.unfinished()
        if js is None:
            jobs = journal.read()
            if jobs and jobs[-1].end and jobs[-1].end["status"] == "unknown":
                return Resumed("unknown", "nothing to resume: the last job ended with the cube's state "
                                          f"unknown. {jobs[-1].end['message']}")
            refuse_other_kinds_job(journal.dir, cfg.rig.kind)
            return Resumed("nothing", f"nothing to resume (journal: {journal.path})")
        port = port or (js.port if js.port and not js.port.startswith("sim://") else None) or cfg.rig.port
        say(f"job {js.job} stopped with {js.done} of {len(js.steps)} turns journalled; asking the rig on "
            f"{port} how far it got")
        steps = len(js.steps)
        with rig_claims(port, state_dir), open_link(port) as link:
            report = job.resume(
                link, journal,
                on_turn=lambda td: say(f"  turn {td.index + 1}/{steps} {td.step.text}"),
                on_resume=lambda j: say(f"resuming job {j.job}: {j.done} of {len(j.steps)} turns done "
                                        "(the rig's word)"))
        if report is None:  # finished by someone else since we looked
            return Resumed("nothing", f"nothing to resume (journal: {journal.path})")
        return Resumed("done", f"done: {len(report.turns)} turns, final state {report.state}")


def resume_mechanism_job(cfg: Config, state_dir: str | None, port: str | None, open_link: OpenLink,
                         say: Callable[[str], None]) -> Resumed:
    """The last flipper or two-gripper job in ``state_dir`` (None: the
    default folder) finished from the rig's word on ``port`` (or the
    config's), or ended "state unknown" with nothing moved. ``say`` hears
    the steps as they happen."""
    port = port or cfg.rig.port
    with rig_claims(None if port.startswith("sim://") else port, state_dir):
        return _resume_mechanism_job(cfg, Path(state_dir or default_state_dir()), port,
                                     lambda: open_link(port), say)


def _resume_mechanism_job(cfg: Config, state_dir: Path, port: str,
                          open_link: Callable[[], AbstractContextManager[Link]],
                          say: Callable[[str], None]) -> Resumed:
    """:func:`resume_mechanism_job` once the rig and the folder are claimed."""
    journal = MechanismJournal(state_dir)
    j = journal.last()
    if j is None or j.end is not None:
        if j is not None and j.end == UNKNOWN:
            return Resumed("unknown", f"nothing to resume: the last job ended {UNKNOWN} (`cuberobot start` "
                                      "scans the cube afresh and solves it)")
        refuse_other_kinds_job(journal.path.parent, cfg.rig.kind)
        return Resumed("nothing", f"nothing to resume (journal: {journal.path})")
    if j.kind != cfg.rig.kind:
        raise UserError(f"the unfinished job is for a {j.kind} rig, the config for "
                        f"a {cfg.rig.kind} rig: resume with the job's config, or scan the cube again")
    where = f"{j.done} of {len(j.actions)} robot moves done, the cube held {j.orientations[-1]}"
    under_way = f"robot move {j.done + 1} ({j.actions[j.done]}) was under way when the job stopped" \
        if j.sent != j.done else None
    if port.startswith("sim://"):
        why = under_way or "the virtual rig that held the cube ended with the process that ran it"
    else:
        mech = mechanism_for(cfg)
        assert mech is not None
        with open_link() as link:
            hello = link.connect()  # waits for the rig to finish what it had queued
            why = None
            if j.boot_id is not None and hello.boot_id != j.boot_id:
                why = "the rig has restarted since the job began (its servos may have let the cube go)"
            elif under_way is None and j.last_id is not None and link.status().last_done_id != j.last_id:
                why = "the rig has moved since the job stopped (its last move is not the job's)"
            elif under_way is not None:
                # The rig's word: the move's last command reported done, nothing
                # queued or moving, the same boot: the move was made whole.
                st = link.status()
                finished = j.sent_ids and st.last_done_id == j.sent_ids[-1]
                if finished and not st.moving and not st.queue_len:
                    confirm_sent(journal, mech, j)
                    say(f"the rig finished robot move {j.done + 1} ({j.actions[j.done]}) after the job "
                        "stopped")
                    j = journal.last()
                    assert j is not None
                    where = (f"{j.done} of {len(j.actions)} robot moves done, the cube held "
                             f"{j.orientations[-1]}")
                else:
                    why = under_way + " and the rig does not say it finished it"
            if why is None:
                say(f"resuming job {j.job} on the {j.kind} rig: {where}, on {port}")
                driver = LinkMechanism(link, cfg, j.state)
                remember(link, mech.kind, None)  # until it is known where this leaves it
                status, end, cube = resume_job(journal, mech, driver.do, ids=driver.ids)
                if status == UNKNOWN:  # written by another resume since we looked
                    return Resumed("unknown", f"nothing to resume: the last job ended {UNKNOWN}")
                if end is not None:  # as a run ends: a two-gripper's jaws square for the next job
                    end = park(mech, end, driver.do)
                remember(link, mech.kind, end)
                told = "solved" if cube == SOLVED_CUBE.to_facelets() else f"as planned: {cube}"
                return Resumed("done", f"done: {driver.sent} commands for {len(j.actions) - j.done} robot "
                                       f"moves; the cube {told}")
    journal.end(j.job, UNKNOWN)
    return Resumed("unknown", f"job {j.job} on the {j.kind} rig: {where}; {why}: {UNKNOWN}. "
                              "Nothing was moved.")
