"""`cuberobot start`: the whole scan, solve and turn loop."""

from __future__ import annotations

import argparse
import sys

from solver.metrics import METHODS

from ...app.limits import MAX_SEED, check_rig_options, rig_claims
from ...app.solving import check_run
from ...rig.config import Config
from ...rig.errors import UserError
from ...rig.loading import load_config
from ..limits import path, text, whole
from ..progress import ProgressLine
from . import Registry


def _start(args: argparse.Namespace) -> int:
    from ...app.record import summary
    from ...app.start import run_start

    cfg = check_run(load_config(args.config), method=args.method)
    check_rig_options(cfg, args.port, "--port", args.firmware, args.state_dir)
    if cfg.rig.kind != "six-motor":
        return _start_mechanism(cfg, args)
    if args.sim_view:
        raise UserError("--sim-view is for a flipper's or two-gripper's sim-rig in another process; "
                        "a six-motor run sees a simulated rig through sim:// or --firmware")
    with rig_claims(None if args.firmware else (args.port or cfg.rig.port), args.state_dir):
        progress = ProgressLine(quiet=args.quiet)
        try:
            record = run_start(cfg, port=args.port, headless=args.headless, firmware=args.firmware,
                               state_dir=args.state_dir, seed=args.seed, no_wait=args.no_wait,
                               out=lambda line: print(line, flush=True), progress=progress)
        finally:
            progress.end()
    print(summary(record))
    if record.scan_correct is False:
        print("note: the simulated rig's cube differed from the scan", file=sys.stderr)
    return 0


def _start_mechanism(cfg: Config, args: argparse.Namespace) -> int:
    """A flipper or two-gripper rig: its own loop (app/mechanism_start.py)."""
    from ...app.events import Event
    from ...app.mechanism_start import MechanismEngine
    from ...app.terminal import TerminalFace
    from ...rig.errors import RigError

    class MoveProgress(TerminalFace):
        """On a terminal, the live progress line of the robot moves (the loop prints its own lines)."""

        def emit(self, event: Event) -> None:
            if event.kind == "turn-done":
                self._turn_done(event)

    face = MoveProgress(lambda line: print(line, flush=True), headless=True)
    port = None if args.firmware else (args.port or cfg.rig.port)
    with rig_claims(None if port is None or port.startswith("sim://") else port, args.state_dir):
        # the engine keeps the run record (runs/<time>/run.json) as it does for the panel's runs
        engine = MechanismEngine(cfg, face, port=args.port, seed=args.seed, state_dir=args.state_dir,
                                 firmware=args.firmware, sim_view=args.sim_view, started_by="no-wait",
                                 out=lambda line: print(line, flush=True), paced=False)
        try:
            run = engine.run()
        finally:
            face.close()
    print(run.summary())
    if engine.record is not None and engine.record.run_dir is not None:
        print(f"run record and scan images: {engine.record.run_dir}")
    if run.status not in ("solved", "already-solved"):
        raise RigError(f"the {cfg.rig.kind} rig's run ended {run.status}")
    return 0


def register(sub: Registry) -> None:
    p = sub.add_parser("start", help="scan the cube, solve it and turn the motors (the whole job)")
    p.add_argument("--config", metavar="FILE", type=path,
                   help="set-up file (default: config/rig.toml, a simulated rig)")
    p.add_argument("--port", metavar="PORT", type=text("port"),
                   help="the rig's serial port, pty path or URL (overrides the config)")
    p.add_argument("--headless", action="store_true",
                   help="no preview window: a doubtful scan stops the run instead of asking you")
    p.add_argument("--firmware", metavar="ELF", type=path,
                   help="run against the real firmware in the simavr emulator instead of the configured rig")
    p.add_argument("--state-dir", metavar="DIR", type=path,
                   help="journal and run records (default: ~/.local/state/cuberobot)")
    p.add_argument("--seed", type=whole(0, MAX_SEED),
                   help=f"simulated rig: which random scramble and lighting (0 to {MAX_SEED})")
    p.add_argument("--method", choices=METHODS, default=None,
                   help="two-phase (fastest turning) or cfop (the stages a person would turn, named as "
                        "they turn); default: [solver] method")
    p.add_argument("--no-wait", action="store_true", help="do not wait for the start button or Enter")
    p.add_argument("--sim-view", metavar="FILE", type=path,
                   help="flipper or two-gripper: the simulated camera shows the cube that `cuberobot sim-rig "
                        "--sim-view FILE` (the rig on --port, in another process) keeps in FILE")
    p.set_defaults(func=_start)
