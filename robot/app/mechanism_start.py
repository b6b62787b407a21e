"""Press start on a flipper or a two-gripper rig: scan with one camera,
solve, turn, confirm.

The six-motor engine (app/start.py) drives its rig over the link; these
kinds have this loop of their own, on the same link (robot/rig/mechanisms/
drive.py sends each robot move as SERVO and MOVE commands): a virtual rig
(``sim://``, robot/sim/mechanisms.py's parts behind the protocol), the
firmware in simavr, or a real rig. The steps are those of a run: the scan
plan shows the camera each face, the six pictures
are read as separate faces, the solver's candidates are planned from where
the scan left the cube and the cheapest is made, every robot move
journalled with the orientation (robot/rig/mechanisms/journal.py), and a
confirmation scan must read the cube solved. A doubtful scan in headless
mode stops the run before any layer turns.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from solver import SOLVED, CubeError, SolveError, normalize_facelets
from vision.render import Lighting, render_view
from vision.scanning import ScanResult, capture_frames, classify_measured

from ..rig.config import Config
from ..rig.errors import RigError, UserError
from ..rig.journal import default_state_dir
from ..rig.link import STOP_HEARD_S, Link
from ..rig.mechanisms import HeldCube, Mechanism, State, mechanism_for
from ..rig.mechanisms.drive import LinkMechanism
from ..rig.mechanisms.journal import run_job
from ..rig.mechanisms.left import remember
from ..rig.mechanisms.scanplan import rescan_plan, scan_plan
from .doubt import ask_a_person, confirms_solved, doubtful_stickers, trusted, why_in_doubt
from .mechanism_events import BETWEEN_MOVES, MechanismEvents
from .mechanism_scan import Measured, capture_shots, scan_with_plan
from .record import RunRecord
from .rigs import attach_rig, connect_rig, pace_of, run_port
from .solving import check_run, for_the_mechanism, unsolvable

if TYPE_CHECKING:
    from .run import Run
    from .stages import EngineView

log = logging.getLogger(__name__)


def _merge(old: ScanResult, new: Measured) -> ScanResult:
    """A scan with some faces shown again: a sticker of a face shown again is
    taken from the new picture where the old reading doubted it or glare
    covered it more; then the whole cube is classified again (``faces_apart``)."""
    samples, spread, glare = old.samples.copy(), old.spread.copy(), old.glare.copy()
    n_samples, n_spread, n_glare, frames = new
    seen = ~np.isnan(n_samples).any(axis=1)
    doubted = np.zeros(54, bool)
    doubted[old.classification.suspects] = True
    take = seen & (doubted | (n_glare < glare))
    samples[take], spread[take], glare[take] = n_samples[take], n_spread[take], n_glare[take]
    result = classify_measured(samples, spread, glare, faces_apart=True)
    return ScanResult(result.facelets, result, samples, spread, glare, frames={**old.frames, **frames})


def _viewer(path: str) -> Callable[[], str]:
    """The cube a sim-rig in another process keeps in ``path`` (pty_rig.write_view)."""
    def read() -> str:
        try:
            text = Path(path).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as e:
            raise RigError(f"--sim-view {path}: cannot read the simulated rig's cube ({e}); is "
                           "`cuberobot sim-rig --sim-view` running?") from None
        if set(text) - set("URFDLB"):
            raise RigError(f"--sim-view {path}: not a cube's 54 stickers (letters other than U R F D L B)")
        try:
            normalize_facelets(text)  # the scan's check names stickers by their centres
        except CubeError as e:
            raise RigError(f"--sim-view {path}: not a cube's 54 stickers (six centres, each a face's letter "
                           f"once): {e}") from None
        return text

    return read


def run_mechanism_start(cfg: Config, *, port: str | None = None, seed: int | None = None,
                        state_dir: str | Path | None = None, firmware: str | None = None,
                        sim_view: str | None = None, out: Callable[[str], None] = print,
                        events: MechanismEvents | None = None, scan_only: bool = False,
                        sim_lighting: Callable[[int], Lighting] | None = None) -> RunRecord:
    """The whole loop on the config's flipper or two-gripper rig, driven over
    the link: a virtual rig (``sim://``), the firmware in simavr
    (``firmware``), or a real port. ``events``: the faces told as the
    six-motor engine tells them, over the run (its stop, its record: a run
    that raises has got as far as its record says). ``scan_only``: home,
    scan and stop there (`cuberobot scan`): status ``scanned`` or
    ``scan-doubtful``, the reading in ``events.run.results["scan"]``.
    ``sim_lighting``: the simulated camera's light for each capture of the
    run (the panel's ``--sim-glare``); by default one drawn at random for
    the run. The :class:`~robot.app.engines.Engine` runs this as a rig's
    stages; called alone (`cuberobot scan`, the tests), no end but the ones
    it knows is told, and no record is kept."""
    if not scan_only:
        check_run(cfg)  # what the faces refuse, should a caller have set it all the same
    if len(cfg.views) != 1 or len(cfg.cameras) != 1:
        raise UserError(f"a {cfg.rig.kind} rig scans with one camera and one [[view]] of the slot it sees; "
                        f"the config has {len(cfg.cameras)} cameras and {len(cfg.views)} views")
    m = mechanism_for(cfg)
    assert m is not None
    ev = events if events is not None else MechanismEvents()
    record = ev.run.record
    record.port = None if firmware else port or cfg.rig.port
    ev.started(m)
    handle = attach_rig(cfg, port=None if firmware else run_port(cfg, port), firmware=firmware, seed=seed,
                        kind=cfg.rig.kind)
    sim_state = handle.sim_state
    if sim_view is not None:
        sim_state = _viewer(sim_view)
    if sim_state is None and any(c.source == "sim" for c in cfg.cameras):
        handle.close()
        raise UserError(f"camera {cfg.cameras[0].name!r} is simulated, but the rig on {handle.port} is not: "
                        "simulated cameras can only show a simulated rig (sim:// or --firmware)")
    ev.run.link = handle.link  # the emergency stop goes onto the line from the moment it opens
    try:
        connect_rig(handle)
        with handle.link.estop_on_interrupt():  # Ctrl-C at the terminal stops the rig
            return _run(cfg, m, record, ev, handle.link, sim_state, seed, state_dir or default_state_dir(),
                        LinkMechanism, out, scan_only, sim_lighting)
    finally:
        ev.run.link = None
        if handle.link.hello is not None:
            remember(handle.link, m.kind, ev.run.rig_state)
            ev.run.rig_latched_at = time.monotonic()
            ev.run.rig_latched = handle.link.latch_heard(STOP_HEARD_S if ev.run.estop_flag.is_set() else 0.0)
        handle.close()


def _run(cfg: Config, m: Mechanism, run: RunRecord, ev: MechanismEvents, link: Link,
         sim_state: Callable[[], str] | None,
         seed: int | None, state_dir: str | Path, driver: type[LinkMechanism],
         out: Callable[[str], None], scan_only: bool = False,
         sim_lighting: Callable[[int], Lighting] | None = None) -> RunRecord:
    rig = driver(link, cfg, m.start())
    rng = np.random.default_rng(seed)
    light = Lighting.random(rng)
    view, cam = cfg.views[0], cfg.cameras[0]

    def picture() -> np.ndarray:
        if sim_state is None:  # a real camera on a real rig
            return capture_frames([cam], [view])[view.name]
        lit = light if sim_lighting is None else sim_lighting(ev.run.captures)
        return render_view(sim_state(), view, (cam.width, cam.height), lighting=lit, rng=rng)

    def scan(start: State | None, purpose: str = "scan") -> tuple[ScanResult, State]:
        """A scan from ``start``. A doubtful one shows the doubtful faces
        again, each turned in the picture a way it has not been shown yet
        (glare and shadow that sit at one place in the picture then fall on
        other stickers), up to [start] recaptures times."""
        sp = scan_plan(m, start=start)
        ev.scanning(purpose, view.name)
        result = scan_with_plan(sp, view, ev.scan_mover(rig.do, purpose, start or m.start()), picture)
        run.scan_moves = (run.scan_moves or 0) + sum(len(s.before) for s in sp.shots)
        end = sp.end
        used: dict[int, set[int]] = {f: set() for f in range(6)}
        for shot in sp.shots:
            used[shot.face].add(shot.turns)
        for _ in range(cfg.start.recaptures):
            if trusted(result, cfg.start.min_confidence):
                break
            faces = {i // 9 for i in doubtful_stickers(result, cfg.start.min_confidence)} or set(range(6))
            faces = {f for f in faces if len(used[f]) < 4}
            if not faces:
                break
            again = rescan_plan(m, end, {f: used[f] for f in faces})
            ev.recapture(purpose, result, sorted(faces))
            result = _merge(result, capture_shots(again, view, ev.scan_mover(rig.do, purpose, end), picture))
            run.scan_moves = (run.scan_moves or 0) + sum(len(s.before) for s in again.shots)
            end = again.end
            for shot in again.shots:
                used[shot.face].add(shot.turns)
        ev.scan(purpose, result, cfg.start.min_confidence)
        return result, end

    ev.check_stop()  # a stop pressed while the line opened: homing is a move too
    ev.park_as_left(rig.do, link)
    rig.home()  # a rig that a killed run left part-way is where the plan starts
    ev.homed()
    # a simulated rig's cube as the scan must read it: each colour named by the slot its centre is in
    held = normalize_facelets(sim_state()) if sim_state is not None else None
    scanned, scan_end = scan(None)
    run.scan_correct = scanned.facelets == held if held is not None else None
    ends = {"now": scan_end}

    def rescan() -> ScanResult:
        """The faces shown to the camera again, from where the last scan left the cube."""
        again, ends["now"] = scan(ends["now"])
        return again

    asked = ask_a_person(ev.run, "scan", scanned, trusted=lambda r: trusted(r, cfg.start.min_confidence),
                         rescan=rescan, min_confidence=cfg.start.min_confidence)
    scanned, scan_end, facelets = asked.result, ends["now"], asked.facelets
    run.facelets = facelets or scanned.facelets  # a doubtful reading is kept too
    run.captures = ev.run.captures
    if scan_only:
        run.status = "scanned" if facelets is not None else "scan-doubtful"
        ev.park(rig.do, scan_end)
        ev.ended(run)
        return run
    if facelets is None:
        run.status = "scan-doubtful"
        out(f"the scan is in doubt ({why_in_doubt(scanned)}): "
            "stopped before turning anything")
        ev.park(rig.do, scan_end)
        ev.ended(run)
        return run
    out(f"scanned through one camera ({run.scan_moves} robot moves)")
    if facelets == SOLVED:
        run.status = "already-solved"
        ev.park(rig.do, scan_end)
        ev.ended(run)
        return run
    t0 = time.perf_counter()
    try:
        plan, chosen, _ = for_the_mechanism(cfg, facelets, start=scan_end)
    except SolveError as e:
        raise unsolvable(e, cfg) from None
    run.compute_s = time.perf_counter() - t0
    run.moves, run.length = " ".join(str(x) for x in plan.solution), len(plan.solution)
    run.turns, run.estimated_turning_s = plan.moves, plan.seconds
    out(f"solution {run.moves} ({run.length} moves, {chosen}): "
        f"{plan.moves} robot moves, {plan.seconds:.1f} s planned")
    ev.solution(facelets, run.moves, run.length, plan.actions, scan_end, plan.seconds,
                f"solution {run.moves} ({run.length} moves): {plan.moves} robot moves, "
                f"{plan.seconds:.1f} s planned")
    journal = ev.journal(Path(state_dir))
    run_job(journal, m, facelets, plan.actions, ev.mover(rig.do), state=scan_end,
            boot_id=link.hello.boot_id if link.hello else None, ids=rig.ids, last_id=rig.last_id)
    again, again_end = scan(plan.end, "confirmation scan")
    ev.park(rig.do, again_end)  # the next job then starts where its plan does (a two-gripper's jaws square)
    # the one rule of every kind (app/doubt.py): a confirmation still in doubt that the solved cube
    # explains confirms, with a word
    doubtful = not trusted(again, cfg.start.min_confidence)
    run.confirmed = confirms_solved(again, cfg.start.min_confidence)
    ev.confirmed(run.confirmed, again.facelets)
    if run.confirmed and doubtful:
        out("the confirmation scan stayed in doubt, but what it saw fits a solved cube")
    # solved is what the rig did and the confirming scan saw, on a real rig as on a simulated one; the
    # simulation's own cube only says, for the tests and benchmarks, when the two disagree
    run.status = "solved" if run.confirmed else "failed"
    if run.confirmed and sim_state is not None and not HeldCube(sim_state()).is_solved():
        out("note: the simulated rig's cube is not solved, though the confirmation scan read it solved")
    ev.ended(run)
    return run


class RobotMoveStages:
    """A flipper or two grippers: the stages of a press of start that the
    :class:`~robot.app.engines.Engine` runs on a rig that moves the whole
    cube (:func:`run_mechanism_start`; the shell tells the ends these do
    not, keeps the record and honours the stops, between robot moves)."""

    between = BETWEEN_MOVES

    def __init__(self, engine: EngineView):
        self.engine = engine
        paced = engine.paced and engine.firmware is None
        self.pace = pace_of(engine.port or engine.cfg.rig.port) if paced else None
        """Times real time a ``sim://`` rig's robot moves take (the panel's); None: no waiting."""
        self.events: MechanismEvents | None = None

    def go(self, run: Run) -> None:
        e = self.engine
        self.events = MechanismEvents(run=run, pace=self.pace)
        run_mechanism_start(e.cfg, port=e.port, seed=e.seed, state_dir=e.state_dir, firmware=e.firmware,
                            sim_view=e.sim_view, out=e.out, events=self.events, scan_only=e.scan_only,
                            sim_lighting=e.sim_lighting)

    def after_stop(self, run: Run, estop: bool) -> None:
        """Nothing: a stop is honoured between robot moves, the rig idle."""

    def let_go(self, run: Run) -> None:
        """Nothing: :func:`run_mechanism_start` closes the line it opened."""
