"""A dry run: a plan turned on the virtual rig (or a given port) and timed,
shared by `cuberobot dry-run` and the web panel's dry-run page. Each makes
its plan once (:func:`robot.rig.motion.plan`), estimates and draws it, and
hands that same plan here to be turned.

A virtual rig made for the run starts from ``start`` and keeps its journal
in a temporary folder, so a dry run leaves nothing behind; a real port's
journal is the usual one (``state_dir``)."""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from solver import Cube

from ..rig.config import Config
from ..rig.errors import UserError
from ..rig.journal import Journal

if TYPE_CHECKING:
    from ..rig import job
    from ..rig.link import Link
    from ..rig.motion import MotorStep


def virtual_port(start: Cube, speed: str) -> str:
    """A fresh virtual rig's address, holding ``start``, at ``speed``."""
    from ..sim.protocol_sim import sim_url
    from ..sim.virtual_rig import make_clock

    try:
        make_clock(speed)
    except ValueError as e:
        raise UserError(f"speed {speed!r}: {e}") from None
    return sim_url(f"dry-run-{time.monotonic_ns()}", speed=speed, state=start.to_facelets())


@contextlib.contextmanager
def _journal_dir(port: str, state_dir: str | Path | None) -> Iterator[str | Path | None]:
    if state_dir is None and port.startswith("sim://"):
        with tempfile.TemporaryDirectory(prefix="cuberobot-dry-run-") as tmp:
            yield tmp
    else:
        yield state_dir


def dry_run(cfg: Config, start: Cube, steps: Sequence[MotorStep], *, port: str | None = None,
            speed: str = "1", state_dir: str | Path | None = None,
            on_turn: Callable[[job.TurnDone], None] | None = None,
            on_link: Callable[[Link | None], None] | None = None) -> job.JobReport:
    """Turn the plan ``steps`` as it is from ``start`` on ``port`` (default:
    a new virtual rig at ``speed``), telling ``on_turn`` as the rig reports
    each one done. ``on_link`` hears the connected link (and None once it is closed), so
    that another thread can send it the emergency stop."""
    from .. import sim  # noqa: F401  (sim:// ports)
    from ..rig import job
    from ..rig.link import Link

    port = port or virtual_port(start, speed)
    with _journal_dir(port, state_dir) as journal_dir, Journal(journal_dir) as journal, \
            Link(cfg, port) as link:
        link.connect()
        if on_link is not None:
            on_link(link)
        try:
            return job.run(link, journal, start, steps, on_turn=on_turn)
        finally:
            if on_link is not None:
                on_link(None)
