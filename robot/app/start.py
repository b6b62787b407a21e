"""Press start: connect, wait for the button, scan, solve, turn, confirm.

This is the one place where vision, solver and rig meet. Each stage is a
function of its own so the order reads top-down in :func:`run`; the stages
share a :class:`Run` that collects what the summary and the run record need.

The rule that matters most: a scan that is doubtful or invalid never turns a
motor. It is captured again (only the views concerned), then shown to the
user for a fix, and in headless mode the run stops and says which stickers
are in doubt and why.
"""

from __future__ import annotations

import json
import logging
import random
import select
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from solver import Cube, random_cube
from solver.facelets import FACES, position_name

from ..rig import job
from ..rig.config import Config, rig_turn_costs
from ..rig.errors import RigError, UserError
from ..rig.journal import Journal, default_state_dir
from ..rig.link import Link
from ..sim import SimulatedRig
from ..sim import attach as attach_simulation

if TYPE_CHECKING:
    from solver.api import Solution
    from vision.profile import Profile
    from vision.render import Lighting
    from vision.scanning import ScanResult
    from vision.setup import ViewSpec

log = logging.getLogger(__name__)

EXIT_SCAN_DOUBTFUL = 3


class ScanDoubtful(RigError):
    """The scan could not be trusted; nothing was moved."""

    exit_code = EXIT_SCAN_DOUBTFUL

    def __init__(self, message: str, result: ScanResult | None = None):
        super().__init__(message)
        self.result = result


# ---------------------------------------------------------------- the rig


@dataclass
class RigHandle:
    """The link plus, for a simulated rig, a way to see its cube and press its
    button (what simulated cameras render and headless runs press)."""

    link: Link
    port: str
    simulated: SimulatedRig | None = None

    @property
    def sim_state(self) -> Callable[[], str] | None:
        return self.simulated.state if self.simulated else None

    @property
    def press(self) -> Callable[[], None] | None:
        return self.simulated.press if self.simulated else None

    def close(self) -> None:
        try:
            self.link.close()
        finally:
            if self.simulated is not None:
                self.simulated.close()


def open_rig(cfg: Config, *, port: str | None, firmware: str | None, seed: int | None) -> RigHandle:
    """Connect to the configured rig (handshake, motion settings sent).

    A simulated rig (``sim://`` or the firmware in simavr) gets a randomly
    scrambled cube, as if someone had put one in."""
    simulated = attach_simulation(cfg, port=port, firmware=firmware, scramble=random_cube(seed).to_facelets())
    url = simulated.port if simulated else (port or cfg.rig.port)
    link = Link(cfg, port=url)
    handle = RigHandle(link, url, simulated)
    try:
        link.connect()
    except BaseException:
        handle.close()
        raise
    return handle


# ---------------------------------------------------------------- the run


@dataclass
class Run:
    cfg: Config
    rig: RigHandle
    headless: bool
    out: Callable[[str], None]
    seed: int | None = None
    sim_lighting: Callable[[int], Lighting] | None = None
    """For simulated cameras: capture number -> lighting (None: random)."""
    captures: int = 0
    record: dict = field(default_factory=dict)
    images: dict[str, np.ndarray] = field(default_factory=dict)


def check_cameras(run: Run) -> None:
    """Open every real camera once, so a missing one is reported before the
    user presses start."""
    from vision.capture import open_camera

    for spec in run.cfg.cameras:
        if spec.source == "sim":
            if run.rig.sim_state is None:
                raise UserError(
                    f"camera {spec.name!r} is simulated, but the rig on {run.rig.port} is not: simulated "
                    "cameras can only show a simulated rig (sim:// or --firmware). Configure real cameras")
            continue
        cam = open_camera(spec)
        cam.close()


def wait_for_start(run: Run, *, no_wait: bool = False) -> str:
    """Block until the rig's button, Enter, or space in the preview."""
    link = run.rig.link
    if no_wait:
        return "no-wait"
    interactive = sys.stdin is not None and sys.stdin.isatty()
    before = link.buttons  # counted before a simulated press, so its event is never missed
    if run.rig.press is not None and (run.headless or not interactive):
        run.out("waiting for start: pressing the simulated rig's button")
        run.rig.press()
    elif interactive:
        run.out("ready: press the rig's start button or Enter")
    else:
        run.out("ready: press the rig's start button")
    window = None
    if not run.headless:
        from vision.preview import has_display

        if has_display():
            import cv2

            window = "cuberobot"
            blank = np.zeros((120, 640, 3), np.uint8)
            cv2.putText(blank, "press SPACE, Enter or the rig's button to start", (10, 65),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 1)
            cv2.imshow(window, blank)
    while True:
        link.poll(0.02)
        if link.buttons > before:
            return "button"
        if interactive and select.select([sys.stdin], [], [], 0)[0]:
            sys.stdin.readline()
            return "enter"
        if window is not None:
            import cv2

            if cv2.waitKey(1) & 0xFF == 32:
                return "space"


def _doubtful(result: ScanResult, min_confidence: float) -> list[int]:
    c = result.classification
    doubt = set(c.suspects) | {i for i in range(54) if c.confidence[i] < min_confidence}
    return sorted(doubt)


def _why(result: ScanResult) -> str:
    c = result.classification
    reasons = []
    if c.error is not None:
        reasons.append(f"the colours do not make a valid cube ({c.error})")
    reasons += c.warnings
    return "; ".join(reasons) or "low confidence"


def _lighting(run: Run) -> Lighting | None:
    return run.sim_lighting(run.captures) if run.sim_lighting is not None else None


def scan(run: Run, *, purpose: str = "scan") -> tuple[ScanResult, str]:
    """Capture every view and classify; capture the doubtful views again up
    to ``recaptures`` times; then ask the user, or give up (headless)."""
    from vision.preview import annotate
    from vision.scanning import ScanResult, capture_frames, classify_measured, expand_views, measure

    cfg = run.cfg
    cameras, views = cfg.cameras, cfg.views
    profile = _profile(cfg)
    state = run.rig.sim_state() if run.rig.sim_state else None
    flat = expand_views(views)

    def capture(which: list[ViewSpec]) -> dict[str, np.ndarray]:
        frames = capture_frames(cameras, which, sim_state=state, sim_lighting=_lighting(run),
                                sim_seed=None if run.seed is None else run.seed * 7919 + run.captures)
        run.captures += 1
        return frames

    def evaluate(frames: dict[str, np.ndarray]) -> ScanResult:
        samples, spread, glare = measure(frames, flat, profile)
        cls = classify_measured(samples, spread, glare, profile=profile)
        res = ScanResult(cls.facelets, cls, samples, spread, glare, frames=frames, views=flat)
        res.images = {v.name: annotate(frames[v.name], v, res) for v in flat if v.name in frames}
        return res

    frames = capture(views)
    result = evaluate(frames)
    for _ in range(cfg.start.recaptures):
        doubt = _doubtful(result, cfg.start.min_confidence)
        if result.classification.valid and not doubt:
            break
        concerned = _views_concerned(views, doubt)
        run.out(f"{purpose}: {len(doubt)} doubtful sticker(s) ({_names(doubt)}); capturing "
                f"{', '.join(v.name for v in concerned)} again")
        frames = {**frames, **capture(concerned)}
        result = evaluate(frames)
    doubt = _doubtful(result, cfg.start.min_confidence)
    if result.classification.valid and not doubt:
        return result, result.facelets
    if run.headless:
        raise ScanDoubtful(
            f"{purpose}: cannot trust the scan after {run.captures} capture(s): {_why(result)}. "
            f"Doubtful stickers: {_names(doubt) or 'none named'}. No motor was moved. "
            "Check the light (glare, shadows) and run again, or run without --headless to fix them",
            result)
    return result, _ask_user(result, doubt)


def _ask_user(result: ScanResult, doubt: list[int]) -> str:
    from solver import CubeError
    from vision.preview import has_display, interactive

    if not has_display():
        raise ScanDoubtful(f"doubtful stickers {_names(doubt)} ({_why(result)}) and no display to fix them"
                           " on: run where a preview window can open, or recalibrate the colours", result)
    while True:
        action, facelets = interactive(result)
        if action == "quit":
            raise ScanDoubtful("scan rejected in the preview; no motor was moved", result)
        if action == "rescan":
            raise ScanDoubtful("rescan asked for in the preview: run `cuberobot start` again", result)
        try:
            Cube.from_facelets(facelets)
        except CubeError as e:
            print(f"still not a valid cube: {e}", file=sys.stderr)
            continue
        return facelets


def _views_concerned(views: list[ViewSpec], doubt: list[int]) -> list[ViewSpec]:
    faces = {FACES[i // 9] for i in doubt}
    concerned = [v for v in views if any(f.face in faces for f in v.faces)]
    return concerned or list(views)


def _names(indices: Iterable[int]) -> str:
    return ", ".join(position_name(i) for i in indices)


def _profile(cfg: Config) -> Profile | None:
    if not cfg.profile:
        return None
    from vision.profile import load_profile

    return load_profile(cfg.profile)


def solve(run: Run, facelets: str) -> Solution:
    """The solution to turn. A cube the solver cannot answer as configured
    (no solution within ``[solver] max_length``) ends the run with a
    RigError before any motor turns."""
    import solver

    q, h = rig_turn_costs(run.cfg)
    s = run.cfg.solver
    try:
        return solver.solve(facelets, max_length=s.max_length, budget_ms=s.budget_ms, metric=s.metric,
                            quarter_cost=q, half_cost=h, workers=s.workers)
    except solver.SolveError as e:
        where = f" ([solver] max_length in {run.cfg.path})" if e.kind == "max-length" and run.cfg.path else ""
        raise RigError(f"{e}{where}; no motor turned") from None


def plan_picture(scan_image: np.ndarray, steps: list[str], done: int) -> np.ndarray:
    """The scan with the plan under it: turns done in grey, the next one
    highlighted, the rest in white."""
    import cv2

    h, w = scan_image.shape[:2]
    per_row = 12
    rows = (len(steps) + per_row - 1) // per_row
    band = np.zeros((40 + 34 * rows, w, 3), np.uint8)
    cv2.putText(band, f"turn {min(done + 1, len(steps))} of {len(steps)}", (10, 28),
                cv2.FONT_HERSHEY_SIMPLEX, 0.8, (255, 255, 255), 2)
    cell = max(60, (w - 20) // per_row)
    for i, text in enumerate(steps):
        x, y = 10 + (i % per_row) * cell, 66 + (i // per_row) * 34
        colour = (110, 110, 110) if i < done else ((0, 215, 255) if i == done else (255, 255, 255))
        cv2.putText(band, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.7, colour, 2)
    return np.vstack([scan_image, band])


def turn(run: Run, start: Cube, solution: Solution, journal: Journal) -> job.JobReport:
    """Execute the solution's steps with a live progress line (and the plan
    in the preview window when there is one)."""
    n = len(solution.steps)
    tty = sys.stderr.isatty()
    t0 = time.monotonic()
    estimate = run.record.get("estimated_turning_s", 0.0)
    texts = [" ".join(step) for step in solution.steps]
    show = None
    if not run.headless and run.images:
        from vision.preview import has_display

        if has_display():
            import cv2

            tiles = list(run.images.values())
            height = min(t.shape[0] for t in tiles)
            scan_image = np.hstack([cv2.resize(t, (t.shape[1] * height // t.shape[0], height))
                                    for t in tiles])
            scale = min(1.0, 1600 / scan_image.shape[1])
            scan_image = cv2.resize(scan_image, None, fx=scale, fy=scale)

            def show(done: int) -> None:
                cv2.imshow("cuberobot", plan_picture(scan_image, texts, done))
                cv2.waitKey(1)

            show(0)

    def on_turn(td: job.TurnDone) -> None:
        if show is not None:
            show(td.index + 1)
        if tty:
            elapsed = time.monotonic() - t0
            left = max(0.0, estimate - elapsed)
            sys.stderr.write(f"\rturn {td.index + 1} of {n}  {td.step.text:<7} elapsed {elapsed:5.1f} s"
                             f"  remaining ~{left:4.1f} s ")
            sys.stderr.flush()
        log.debug("turn %d of %d: %s", td.index + 1, n, td.step.text)

    report = job.run(run.rig.link, journal, start, solution.steps, on_turn=on_turn)
    if tty:
        sys.stderr.write("\n")
    return report


def run_start(cfg: Config, *, port: str | None = None, headless: bool = False, firmware: str | None = None,
              state_dir: str | Path | None = None, seed: int | None = None, no_wait: bool = False,
              sim_lighting: Callable[[int], Lighting] | None = None,
              out: Callable[[str], None] = print, progress: Callable[[str], None] | None = None) -> dict:
    """The whole loop. Returns the run record (also written to the state dir).
    ``progress`` hears about the solver's one-time table build, if it happens."""
    import solver

    if seed is None:
        seed = random.SystemRandom().randrange(2**31)
    t_prepare = time.monotonic()
    solver.prepare(progress)  # tables loaded before the button, so pressing start is answered at once
    _warm_up_vision()
    rig = open_rig(cfg, port=port, firmware=firmware, seed=seed)
    log.info("connected to the rig on %s (firmware %s)", rig.port, rig.link.hello)
    run = Run(cfg, rig, headless, out, seed=seed, sim_lighting=sim_lighting)
    record = run.record
    record.update(seed=seed, port=rig.port, config=str(cfg.path) if cfg.path else None,
                  started=time.strftime("%Y-%m-%dT%H:%M:%S"), prepare_s=time.monotonic() - t_prepare)
    run_dir = _run_dir(state_dir)
    try:
        check_cameras(run)
        record["start_by"] = wait_for_start(run, no_wait=no_wait)
        t_start = time.monotonic()
        try:
            result, facelets = scan(run)
        except ScanDoubtful as e:
            _save_images(run_dir, "scan", e.result)
            raise
        finally:
            record["captures"] = run.captures
        _save_images(run_dir, "scan", result)
        run.images = dict(result.images)
        t_scanned = time.monotonic()
        record.update(scan_s=t_scanned - t_start, facelets=facelets)
        if rig.sim_state is not None:
            record["scan_correct"] = facelets == rig.sim_state()
        start_cube = Cube.from_facelets(facelets)
        if start_cube.is_solved():
            out("the cube is already solved: no motor turns")
            record.update(status="already-solved", compute_s=0.0, turns=0, turning_s=0.0)
            return record
        log.info("scan: %s after %d capture(s); warnings: %s", facelets, run.captures,
                 result.classification.warnings if result is not None else [])
        solution = solve(run, facelets)
        t_solved = time.monotonic()
        log.info("solution (%s metric, cost %.2f): %s", solution.metric, solution.cost, solution.moves)
        from ..rig.motion import estimate_s, plan

        steps = plan(solution.steps, cfg)
        estimate = estimate_s(steps, cfg)
        record.update(compute_s=t_solved - t_scanned, moves=solution.moves, length=solution.length,
                      cost=solution.cost, metric=solution.metric, turns=len(steps),
                      estimated_turning_s=estimate, start_to_first_move_s=t_solved - t_start)
        out(f"scanned {facelets} in {record['scan_s']:.2f} s; solution {solution.moves} "
            f"({solution.length} moves, {len(steps)} turns, ~{estimate:.1f} s)")
        with Journal(state_dir) as journal:
            t_turn = time.monotonic()
            report = turn(run, start_cube, solution, journal)
        t_turned = time.monotonic()
        record.update(turning_s=t_turned - t_turn, measured_turning_s=report.executed_s,
                      final_state=report.state, retransmissions=report.retransmissions,
                      host_s_per_turn=report.host_s / max(1, len(steps)))
        if cfg.start.confirm_scan:
            confirm, seen = scan(run, purpose="confirmation scan")
            _save_images(run_dir, "confirm", confirm)
            record["confirmed"] = Cube.from_facelets(seen).is_solved()
            if not record["confirmed"]:
                raise RigError(f"the confirmation scan shows {seen}, not a solved cube: a motor may have "
                               "slipped or turned the wrong way (check with `cuberobot jog`)")
        record["status"] = "solved"
        record["total_s"] = time.monotonic() - t_start
        return record
    except ScanDoubtful as e:
        record.update(status="scan-doubtful", message=str(e))
        raise
    except KeyboardInterrupt:
        record.update(status="interrupted")
        raise
    except RigError as e:
        record.update(status="failed", message=str(e))
        raise
    finally:
        rig.close()
        record["run_dir"] = str(run_dir)
        _write_record(run_dir, record)


def _warm_up_vision() -> None:
    """Classify a made-up scan once, so the classifier's compiled code is
    loaded before the user presses start rather than after."""
    import vision
    from vision.render import SCHEME, SHADES

    cube = random_cube(0).to_facelets()
    samples = np.array([SHADES[SCHEME[f]][0] for f in cube], float)
    vision.classify(samples)


def _run_dir(state_dir: str | Path | None) -> Path:
    base = Path(state_dir) if state_dir is not None else default_state_dir()
    stamp = time.strftime("%Y%m%d-%H%M%S")
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


def _save_images(run_dir: Path, prefix: str, result: ScanResult | None) -> None:
    if result is None:
        return
    import cv2

    for name, img in result.images.items():
        cv2.imwrite(str(run_dir / f"{prefix}-{name.replace(':', '-')}.png"), img)


def _write_record(run_dir: Path, record: dict) -> None:
    tmp = run_dir / "run.json.tmp"
    tmp.write_text(json.dumps(record, indent=1, default=str) + "\n")
    tmp.replace(run_dir / "run.json")


def summary(record: dict) -> str:
    """The lines printed at the end of a run."""
    if record.get("status") == "already-solved":
        return f"already solved; scan {record['scan_s']:.2f} s; run record: {record['run_dir']}/run.json"
    measured = record.get("measured_turning_s")
    lines = [
        f"solved in {record['turns']} turns ({record['length']} moves): "
        f"scan {record['scan_s']:.2f} s, compute {record['compute_s']:.2f} s, "
        f"turning {record['turning_s']:.2f} s, total {record['total_s']:.2f} s",
        f"turning time: estimated {record['estimated_turning_s']:.3f} s, measured by the rig "
        + (f"{measured:.3f} s" if measured is not None else "unknown (a completion report was lost)"),
        f"run record and scan images: {record['run_dir']}",
    ]
    return "\n".join(lines)
