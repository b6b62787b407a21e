"""`cuberobot start`: the whole scan, solve and turn loop."""

from __future__ import annotations

import argparse
import sys

from solver.metrics import METHODS

from ...app.kindwork import StartAsk, start_at_terminal
from ...app.limits import MAX_SEED, check_rig_options
from ...app.solving import check_run
from ...rig.loading import load_config
from ..limits import path, text, whole
from ..progress import ProgressLine
from . import Registry


def _start(args: argparse.Namespace) -> int:
    cfg = check_run(load_config(args.config), method=args.method)
    check_rig_options(cfg, args.port, "--port", args.firmware, args.state_dir)
    ask = StartAsk(port=args.port, firmware=args.firmware, state_dir=args.state_dir, seed=args.seed,
                   headless=args.headless, no_wait=args.no_wait, sim_view=args.sim_view)
    progress = ProgressLine(quiet=args.quiet)
    try:
        start_at_terminal(cfg, ask, out=lambda line: print(line, flush=True),
                          err=lambda line: print(line, file=sys.stderr), progress=progress)
    finally:
        progress.end()
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
