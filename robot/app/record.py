"""The run record: what one press of start did, kept as ``runs/<time>/run.json``
beside the scan pictures, printed as the terminal's summary and listed by the
panel's last-runs card.

One typed record, filled in as the run goes: a field a stage did not reach
stays ``None`` and is left out of the JSON, so a record says how far its run
got. Times are seconds."""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..rig.errors import UserError
from ..rig.journal import default_state_dir

if TYPE_CHECKING:
    from vision.scan_result import ScanResult

log = logging.getLogger(__name__)


@dataclass
class RunRecord:
    # -- the run
    seed: int | None = None
    port: str | None = None
    config: str | None = None
    started: str | None = None
    """Local time the run began, ``YYYY-mm-ddTHH:MM:SS``."""
    prepare_s: float | None = None
    """Loading the solver's tables and warming up the vision, before start."""
    start_by: str | None = None
    status: str | None = None
    """solved, already-solved, scanned, scan-doubtful, stopped, interrupted or failed."""
    message: str | None = None
    estop: bool | None = None
    run_dir: str | None = None
    # -- the scan
    captures: int | None = None
    scan_s: float | None = None
    facelets: str | None = None
    scan_correct: bool | None = None
    """A simulated rig only: the scan equals the cube the simulation holds."""
    scan_moves: int | None = None
    """A rig that moves the cube: the robot moves its scans made (none turns a layer)."""
    look_again_turns: list[str] | None = None
    look_again_undone: str | None = None
    # -- the solution
    compute_s: float | None = None
    moves: str | None = None
    length: int | None = None
    cost: float | None = None
    metric: str | None = None
    turns: int | None = None
    """The turns the rig makes to solve: motor turns on six motors, robot
    moves on a rig that moves the cube."""
    estimated_turning_s: float | None = None
    start_to_first_move_s: float | None = None
    # -- the turning
    turning_s: float | None = None
    measured_turning_s: float | None = None
    final_state: str | None = None
    retransmissions: int | None = None
    host_s_per_turn: float | None = None
    # -- the end
    confirmed: bool | None = None
    confirmation_in_doubt: str | None = None
    total_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The fields a run reached, as JSON values."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    def write(self, run_dir: Path) -> None:
        """``run_dir/run.json``, replaced whole (a crash leaves the old one or none)."""
        tmp = run_dir / "run.json.tmp"
        tmp.write_text(json.dumps(self.to_json(), indent=1, default=str) + "\n")
        tmp.replace(run_dir / "run.json")


def summary(record: RunRecord) -> str:
    """The lines printed at the end of a run."""
    if record.status == "already-solved":
        return f"already solved; scan {record.scan_s or 0:.2f} s; run record: {record.run_dir}/run.json"
    measured = record.measured_turning_s
    lines = [
        f"solved in {record.turns} turns ({record.length} moves): "
        f"scan {record.scan_s or 0:.2f} s, compute {record.compute_s or 0:.2f} s, "
        f"turning {record.turning_s or 0:.2f} s, total {record.total_s or 0:.2f} s",
        f"turning time: estimated {record.estimated_turning_s or 0:.3f} s, measured by the rig "
        + (f"{measured:.3f} s" if measured is not None else "unknown (a completion report was lost)"),
        f"run record and scan images: {record.run_dir}",
    ]
    if record.confirmation_in_doubt:
        lines.insert(2, "the confirmation scan stayed in doubt, but what it saw fits a solved cube")
    return "\n".join(lines)


PICTURES = (("scan", "scan"), ("confirmation scan", "confirm"))
"""The scans whose pictures a run keeps beside its record: (purpose, file prefix)."""


def run_dir(state_dir: str | Path | None, started: float | None = None) -> Path:
    """A new folder for one run's record under ``runs/``, named by when the run began."""
    base = Path(state_dir) if state_dir is not None else default_state_dir()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(started))
    for n in range(1000):
        d = base / "runs" / (f"{stamp}" if n == 0 else f"{stamp}-{n}")
        try:
            d.mkdir(parents=True)
            return d
        except FileExistsError:
            continue
        except OSError as e:
            raise UserError(f"cannot create the run directory {d}: {e.strerror}") from None
    raise UserError(f"too many runs in {base / 'runs'} this second")


def save_images(folder: Path, prefix: str, result: ScanResult | None) -> None:
    """A scan's pictures (as annotated for the faces) beside the run's record."""
    if result is None:
        return
    import cv2  # lazy: loads OpenCV

    for name, img in result.images.items():
        cv2.imwrite(str(folder / f"{prefix}-{name.replace(':', '-')}.png"), img)
