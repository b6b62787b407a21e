"""Press start on a six-motor rig: connect, wait for the button, scan,
solve, turn, confirm.

This is where vision, solver and a six-motor rig meet. The engine
(app/engines.py) runs these stages through :class:`SixMotorStages`, each a
function of its own so the order reads top-down in
:meth:`SixMotorStages.go`; the stages share a :class:`Run` that collects what
the summary and the run record need. They show nothing themselves: they
tell a :class:`Face` what happens (an :class:`Event`) and ask it when a
person is needed (an :class:`Answer`). The terminal with its preview window
(:mod:`robot.app.terminal`) and the web panel (:mod:`robot.web`) are faces.

The rule that matters most: a scan that is doubtful or invalid never turns a
motor. It is captured again (only the views concerned), then shown to the
user for a fix, and in headless mode the run stops and says which stickers
are in doubt and why.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

import solver
import vision
from solver import SOLVED, Cube, format_moves, parse_facelets, random_cube, simplify
from solver.cfop import solve_cfop
from solver.facelets import FACES, position_name
from solver.metrics import Step, axial_cost, group_steps
from solver.solution import Solution
from solver.talk import ticking
from vision.profile import load_profile

from ..rig import job, motion  # motion.plan looked up when called (tests replace it)
from ..rig.config import Config, rig_turn_costs
from ..rig.errors import RigError, UserError
from ..rig.journal import Journal
from ..rig.link import STOP_HEARD_S
from ..rig.motion import estimate_s
from .doubt import (
    admits_solved,
    ask_a_person,
    doubtful_stickers,
    look_again,
    merge_recapture,
    trusted,
    why_in_doubt,
)
from .events import TurnEvents
from .rigs import RigHandle, attach_rig, connect_rig
from .run import Run
from .solving import SolveRequest, planned_solution

if TYPE_CHECKING:
    from vision.profile import Profile
    from vision.render import Lighting
    from vision.scan_result import ScanResult
    from vision.setup import ViewSpec

    from ..rig.motion import MotorStep
    from .stages import EngineView

log = logging.getLogger(__name__)

EXIT_SCAN_DOUBTFUL = 3


class ScanDoubtful(RigError):
    """The scan could not be trusted; nothing was moved."""

    exit_code = EXIT_SCAN_DOUBTFUL
    status = "scan-doubtful"
    """What the run record and the ``finished`` event say of a run it ended."""

    def __init__(self, message: str, result: ScanResult | None = None):
        super().__init__(message)
        self.result = result


def check_cameras(run: Run) -> None:
    """Open every real camera once, so a missing one is reported before the
    user presses start."""
    from vision.capture import open_camera  # lazy: loads OpenCV

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
    """Block until the rig's button or the face's own start (Enter, a key)."""
    link = run.rig.link
    if no_wait:
        return "no-wait"
    before = link.buttons  # counted before a simulated press, so its event is never missed
    if run.rig.press is not None and run.face.auto_start:
        run.emit("waiting", "idle", "waiting for start: pressing the simulated rig's button",
                 press="simulated")
        run.rig.press()
    else:
        run.emit("waiting", "idle", "ready: press the rig's start button", press="person")
    while True:
        link.poll(0.02)
        if link.buttons > before:
            return "button"
        by = run.face.pressed()
        if by:
            return by
        run.check_stop()


def _lighting(run: Run) -> Lighting | None:
    return run.sim_lighting(run.captures) if run.sim_lighting is not None else None


class _Scanner:
    """Capturing and classifying for one scan (the views, the profile and the
    simulated cube stay the same between captures)."""

    def __init__(self, run: Run, purpose: str):
        from vision.scanning import expand_views  # lazy: loads OpenCV and numba

        self.run, self.purpose = run, purpose
        self.profile = _profile(run.cfg)
        self.flat = expand_views(run.cfg.views)
        self.frames: dict[str, np.ndarray] = {}
        self.exposures: dict[str, float] = {}
        """Shortened where a view clipped; later captures start there."""

    def capture(self, which: list[ViewSpec]) -> ScanResult:
        """Capture ``which`` views again (the others are kept) and classify."""
        from vision.scanning import capture_frames  # lazy: loads OpenCV and numba

        run = self.run
        run.check_stop()
        run.emit("scanning", "scanning", purpose=self.purpose, capture=run.captures + 1,
                 views=[v.name for v in which])
        state = run.rig.sim_state() if run.rig.sim_state else None  # the cube as it is now
        frames = capture_frames(run.cfg.cameras, which, sim_state=state, sim_lighting=_lighting(run),
                                sim_seed=None if run.seed is None else run.seed * 7919 + run.captures,
                                profile=self.profile, exposures=self.exposures)
        run.captures += 1
        self.frames = {**self.frames, **frames}
        return self.evaluate()

    def evaluate(self) -> ScanResult:
        from vision.preview import annotate  # lazy: loads OpenCV
        from vision.scanning import (  # lazy: loads OpenCV and numba
            ScanResult,
            classify_measured,
            faces_seen_apart,
            measure,
        )

        samples, spread, glare = measure(self.frames, self.flat, self.profile)
        cls = classify_measured(samples, spread, glare, profile=self.profile,
                                faces_apart=faces_seen_apart(self.run.cfg.views))
        res = ScanResult(cls.facelets, cls, samples, spread, glare, frames=self.frames, views=self.flat)
        res.images = {v.name: annotate(self.frames[v.name], v, res)
                      for v in self.flat if v.name in self.frames}
        doubt = doubtful_stickers(res, self.run.cfg.start.min_confidence)
        self.run.emit("scan", purpose=self.purpose, facelets=res.facelets, valid=bool(cls.valid),
                      confidence=[round(float(c), 3) for c in cls.confidence], doubtful=doubt,
                      why=why_in_doubt(res) if doubt or not cls.valid else "", views=sorted(res.images),
                      result=res)
        return res


def scan(run: Run, *, purpose: str = "scan") -> tuple[ScanResult, str]:
    """Capture every view and classify; capture the doubtful views again up
    to ``recaptures`` times; then ask a person (:func:`resolve_doubt`)."""
    cfg = run.cfg
    scanner = _Scanner(run, purpose)
    result = scanner.capture(cfg.views)
    for _ in range(cfg.start.recaptures):
        doubt = doubtful_stickers(result, cfg.start.min_confidence)
        if result.classification.valid and not doubt:
            break
        concerned = _views_concerned(cfg.views, doubt)
        run.emit("recapture", text=f"{purpose}: {len(doubt)} doubtful sticker(s) ({_names(doubt)}); "
                 f"capturing {', '.join(v.name for v in concerned)} again", doubtful=doubt,
                 views=[v.name for v in concerned])
        result = _recapture(scanner, result, concerned)
    return resolve_doubt(run, scanner, result)


def _recapture(scanner: _Scanner, before: ScanResult, views: list[ViewSpec]) -> ScanResult:
    """Capture ``views`` again; both captures' evidence counts (a worse
    picture adds little rather than replacing a better one)."""
    return merge_recapture(before, scanner.capture(views), views)


def resolve_doubt(run: Run, scanner: _Scanner, result: ScanResult) -> tuple[ScanResult, str]:
    """A trusted scan goes on; a doubtful one goes to a person, who fixes
    stickers and accepts, asks for a new capture, or stops. With nobody to
    ask, the run ends and says which stickers are in doubt and why."""
    purpose = scanner.purpose
    doubt = doubtful_stickers(result, run.cfg.start.min_confidence)
    # the rig turns a face or two so doubtful stickers are seen elsewhere, before anyone is asked
    if purpose == "scan" and doubt and run.cfg.start.look_again:
        settled = look_again(run, result, doubt, rescan=lambda: scanner.capture(run.cfg.views),
                             doubtful=lambda r: doubtful_stickers(r, run.cfg.start.min_confidence))
        if settled is not None:
            return settled
    asked = ask_a_person(run, purpose, result, rescan=lambda: scanner.capture(run.cfg.views),
                         trusted=lambda r: trusted(r, run.cfg.start.min_confidence),
                         min_confidence=run.cfg.start.min_confidence)
    result = asked.result
    if asked.facelets is not None:
        return result, asked.facelets
    if asked.ended == "stop":
        raise ScanDoubtful(asked.message or f"{purpose} rejected. {_moved(run)}", result)
    if asked.ended == "rescans":
        raise ScanDoubtful(f"{purpose}: {asked.message}. {_moved(run)}", result)
    doubt = doubtful_stickers(result, run.cfg.start.min_confidence)
    raise ScanDoubtful(f"{purpose}: cannot trust the scan after {run.captures} capture(s): "
                       f"{why_in_doubt(result)}. Doubtful stickers: {_names(doubt) or 'none named'}. "
                       f"{_moved(run)} Check the light (glare, shadows) and run again, or run without "
                       "--headless to fix them", result)


def _confirm(run: Run) -> tuple[ScanResult, str]:
    """The confirmation scan. One still in doubt whose evidence admits the
    solved cube (:func:`.doubt.admits_solved`) counts as solved, with the
    doubt recorded (``confirmation_in_doubt``); one that rules it out ends
    the run as any doubtful scan does."""
    try:
        return scan(run, purpose="confirmation scan")
    except ScanDoubtful as e:
        if e.result is None or not admits_solved(e.result):
            raise
        run.record.confirmation_in_doubt = str(e)
        return e.result, SOLVED


def _moved(run: Run) -> str:
    """What the motors did before a doubtful scan ended the run."""
    if run.record.turning_s is not None:  # the confirmation scan: the solution was turned
        return (f"The rig turned the solution ({run.record.turns or 0} turns); only the check "
                "that the cube is solved could not be trusted.")
    if run.record.look_again_undone:
        return (f"The rig turned {run.record.look_again_undone} to look again and turned it back: "
                "the cube is as it was put in.")
    return "No motor was moved."


def _views_concerned(views: list[ViewSpec], doubt: list[int]) -> list[ViewSpec]:
    faces = {FACES[i // 9] for i in doubt}
    concerned = [v for v in views if any(f.face in faces for f in v.faces)]
    return concerned or list(views)


def _names(indices: Iterable[int]) -> str:
    return ", ".join(position_name(i) for i in indices)


def _profile(cfg: Config) -> Profile | None:
    if not cfg.profile:
        return None
    return load_profile(cfg.profile)


def solve(run: Run, facelets: str) -> tuple[Solution, list[MotorStep]]:
    """The solution to turn and its one plan (estimated, shown, journaled
    and turned). A cube the solver cannot answer as configured (no solution
    within ``[solver] max_length``) ends the run with a RigError before any
    motor turns."""
    run.check_stop()
    run.emit("solving", "solving", facelets=facelets, method=run.cfg.solver.method)
    s = run.cfg.solver
    if s.method == "cfop":
        q, h = rig_turn_costs(run.cfg)
        cfop = _solve_cfop(run, facelets, q, h)
        return cfop, motion.plan(cfop.steps, run.cfg)
    try:  # the one solving service, priced at this rig's turning times
        return planned_solution(SolveRequest(facelets, metric=s.metric, max_length=s.max_length,
                                             budget_ms=s.budget_ms, workers=s.workers), run.cfg)
    except solver.SolveError as e:
        where = f" ([solver] max_length in {run.cfg.path})" if e.kind == "max-length" and run.cfg.path else ""
        raise RigError(f"{e}{where}; no motor turned") from None


def _solve_cfop(run: Run, facelets: str, quarter_cost: float, half_cost: float) -> Solution:
    """``[solver] method = "cfop"``: the stages a person would turn, for a
    demonstration. The rig turns opposite faces together only within a
    stage, so every step belongs to one stage, and each step's label (the
    stage and its case) goes out with its turn events."""
    solution, run.step_labels = cfop_solution(facelets, quarter_cost, half_cost)
    return solution


def cfop_solution(facelets: str, quarter_cost: float, half_cost: float) -> tuple[Solution, list[str]]:
    """The CFOP solution of ``facelets`` and each step's label. Its moves are
    the ones a person reads, on the panel and in the terminal alike (both
    show this solution's ``moves``): simplified across the stages' seams
    too, where a stage ending ``U2 B`` and the next beginning ``B U2`` read
    ``U2 B2 U2``. The steps stay each stage's own, so that every turn the
    rig makes is under its stage's label."""
    sol = solve_cfop(parse_facelets(facelets))
    steps: list[Step] = []
    labels: list[str] = []
    for stage in sol.stages:
        label = f"{stage.name}: {stage.case}" if stage.case else stage.name
        for step in group_steps(stage.moves):
            steps.append(step)
            labels.append(label)
    read = simplify(sol.moves)
    return Solution(moves=format_moves(read), length=len(read),
                    cost=axial_cost(sol.moves, quarter_cost, half_cost), elapsed_ms=sol.elapsed_ms,
                    steps=tuple(steps), metric="axial"), labels


def turn(run: Run, start: Cube, steps: Sequence[MotorStep], journal: Journal) -> job.JobReport:
    """Execute a solution's plan ``steps`` (made once, by the caller, from
    the solution's steps; the estimate shown was made from it too), telling the
    faces as each turn starts and as the rig reports it done. A Stop ends the
    run after the turn being reported (the rig finishes the turns it has
    queued; the journal keeps the job for `cuberobot resume`)."""
    n = len(steps)
    events = TurnEvents([s.text for s in steps], run.record.estimated_turning_s or 0.0, run.step_labels)

    def on_turn(td: job.TurnDone) -> None:
        run.publish(events.done(td.index, td.state, td.ticks))
        log.debug("turn %d of %d: %s", td.index + 1, n, td.step.text)
        run.check_stop()
        if td.index + 1 < n:
            run.publish(events.started(td.index + 1))

    if n:
        run.publish(events.started(0))
    return job.run(run.rig.link, journal, start, steps, on_turn=on_turn)


def _settle_after_stop(run: Run) -> None:
    """After a Stop (not an emergency stop): let the rig finish what it has
    queued, so that the link is closed on an idle rig."""
    link = run.rig.link
    deadline = time.monotonic() + 10.0
    with contextlib.suppress(RigError):
        while time.monotonic() < deadline and not run.estop_flag.is_set():
            if link.status().queue_len == 0:
                return
            link.poll(0.05)


class SixMotorStages:
    """Six motors, one on each face: the stages of a press of start that
    the :class:`~robot.app.engines.Engine` runs on such a rig (its shell
    tells the ends these do not, keeps the record and honours the stops)."""

    between = ""
    """A stop ends the run at its next step, as its words say."""

    def __init__(self, engine: EngineView):
        self.engine = engine
        self.opened: RigHandle | None = None
        """The rig this run opened (and closes); None while it runs on a rig it was given."""

    def go(self, run: Run) -> None:
        """Prepare, connect, then check cameras, wait for start, scan, solve, turn, confirm."""
        engine = self.engine
        t_prepare = time.monotonic()
        # a fresh machine builds tables and compiles for half a minute or more:
        # the ticker keeps the progress line alive through each silent stretch
        with ticking(engine.progress) as say:
            solver.prepare(say)  # tables loaded before the button: pressing start is answered at once
            if say is not None:
                say.quietly("compiling the colour classifier, or loading it once compiled")
            _warm_up_vision()
            if say is not None:
                say.quietly("connecting to the rig")
            rig = self._connect(run)
        run.rig, run.link = rig, rig.link
        if run.estop_flag.is_set():
            rig.link.estop()  # pressed while connecting
        log.info("connected to the rig on %s (firmware %s)", rig.port, rig.link.hello)
        record = run.record
        record.port = rig.port
        record.prepare_s = time.monotonic() - t_prepare
        run.emit("connected", "idle", port=rig.port, simulated=rig.simulated is not None,
                 firmware=str(rig.link.hello))
        self._stages(run)

    def after_stop(self, run: Run, estop: bool) -> None:
        if run.link is None:
            return
        if estop:
            # the rig's own word that it latched, read before the run says "stopped", so that
            # the line the panel keeps refuses the next start at once: a run stopped between
            # two moves ends without reading the line again, and would leave the word unread
            run.link.latch_heard(STOP_HEARD_S)
        else:
            _settle_after_stop(run)

    def let_go(self, run: Run) -> None:
        run.link = None
        if self.opened is not None:
            self.opened.close()
            self.opened = None

    def _connect(self, run: Run) -> RigHandle:
        """The rig for this run: the one given, greeted again (it may have been
        reset since), or one opened now."""
        engine = self.engine
        if engine.rig is None:
            # Known before the handshake, so that a stop pressed meanwhile reaches the line.
            handle = attach_rig(engine.cfg, port=engine.port, firmware=engine.firmware, seed=engine.seed)
            run.link = handle.link
            self.opened = connect_rig(handle)  # which closes it if the handshake fails
            return self.opened
        run.link = engine.rig.link
        engine.rig.link.handshake()
        return engine.rig

    def _stages(self, run: Run) -> None:
        """check cameras, wait for start, scan, solve, turn, confirm."""
        cfg, rig, record = run.cfg, run.rig, run.record
        check_cameras(run)
        record.start_by = self.engine.started_by or wait_for_start(run, no_wait=self.engine.no_wait)
        run.emit("started", by=record.start_by)
        run.restart_clock()
        t_start = run.t0
        try:
            result, facelets = scan(run)
        except ScanDoubtful as e:
            if e.result is not None:
                run.results["scan"] = e.result
            raise
        finally:
            record.captures = run.captures
        run.results["scan"] = result
        run.images = dict(result.images)
        t_scanned = time.monotonic()
        record.scan_s = t_scanned - t_start
        record.facelets = facelets
        if rig.sim_state is not None:
            record.scan_correct = facelets == rig.sim_state()
        if self.engine.scan_only:
            record.status = "scanned"
            run.emit("finished", "done", f"scanned {facelets}", status="scanned", facelets=facelets)
            return
        start_cube = parse_facelets(facelets)
        if start_cube.is_solved():
            record.status = "already-solved"
            record.compute_s = 0.0
            record.turns = 0
            record.turning_s = 0.0
            run.emit("finished", "done", "the cube is already solved: no motor turns",
                     status="already-solved")
            return
        log.info("scan: %s after %d capture(s); warnings: %s", facelets, run.captures,
                 result.classification.warnings if result is not None else [])
        solution, steps = solve(run, facelets)  # the one plan: estimated, shown, journaled and turned
        t_solved = time.monotonic()
        log.info("solution (%s metric, cost %.2f): %s", solution.metric, solution.cost, solution.moves)
        estimate = estimate_s(steps, cfg)
        record.compute_s = t_solved - t_scanned
        record.moves = solution.moves
        record.length = solution.length
        record.cost = solution.cost
        record.metric = solution.metric
        record.turns = len(steps)
        record.estimated_turning_s = estimate
        record.start_to_first_move_s = t_solved - t_start
        run.emit("solution", "turning", f"scanned {facelets} in {record.scan_s:.2f} s; solution "
                 f"{solution.moves} ({solution.length} moves, {len(steps)} turns, ~{estimate:.1f} s)",
                 facelets=facelets, moves=solution.moves, length=solution.length, cost=solution.cost,
                 metric=solution.metric, steps=[s.text for s in steps],
                 estimated_s=round(estimate, 3))
        run.check_stop()
        with Journal(run.state_dir) as journal:
            t_turn = time.monotonic()
            report = turn(run, start_cube, steps, journal)
        t_turned = time.monotonic()
        record.turning_s = t_turned - t_turn
        record.measured_turning_s = report.executed_s
        record.final_state = report.state
        record.retransmissions = report.retransmissions
        record.host_s_per_turn = report.host_s / max(1, len(steps))
        if cfg.start.confirm_scan:
            confirm, seen = _confirm(run)
            run.results["confirmation scan"] = confirm
            record.confirmed = parse_facelets(seen).is_solved()
            run.emit("confirmed", solved=record.confirmed, facelets=seen)
            if not record.confirmed:
                raise RigError(f"the confirmation scan shows {seen}, not a solved cube: a motor may have "
                               "slipped or turned the wrong way (check with `cuberobot jog`)")
        record.status = "solved"
        record.total_s = time.monotonic() - t_start
        run.emit("finished", "done", "solved", status="solved", total_s=round(record.total_s, 3))


def _warm_up_vision() -> None:
    """Classify a made-up scan once, so the classifier's compiled code is
    loaded before the user presses start rather than after."""
    from vision.render import SCHEME, SHADES  # lazy: loads OpenCV

    cube = random_cube(0).to_facelets()
    samples = np.array([SHADES[SCHEME[f]][0] for f in cube], float)
    vision.classify(samples)
