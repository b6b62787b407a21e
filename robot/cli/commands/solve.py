"""``cuberobot solve``: solve one cube, or a file of cubes (one JSON line each)."""

from __future__ import annotations

import argparse
import json
import sys

from solver import CubeError, parse_facelets

from ...rig.errors import UserError
from ..progress import ProgressLine
from . import Registry
from .cube import read_cube_arg


def _options(args: argparse.Namespace) -> dict:
    if args.max_length is not None and args.max_length < 0:
        raise UserError("--max-length must not be negative")
    if args.budget_ms < 0:
        raise UserError("--budget-ms must not be negative")
    return {"max_length": args.max_length, "budget_ms": args.budget_ms, "metric": args.metric}


def _prepare(args: argparse.Namespace) -> None:
    """Load the solver's tables, showing the one-time build when it happens."""
    from solver import prepare

    progress = ProgressLine(quiet=args.quiet)
    try:
        prepare(progress)
    finally:
        progress.end()


def _batch(args: argparse.Namespace, options: dict) -> int:
    from solver import solve

    try:
        f = sys.stdin if args.batch == "-" else open(args.batch, encoding="utf-8")
    except OSError as e:
        raise UserError(f"cannot read {args.batch}: {e.strerror}") from None
    failed = 0
    with f:
        for number, line in enumerate(f, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                out = {"line": number, "cube": text, **solve(text, **options).to_dict()}
            except CubeError as e:
                failed += 1
                out = {"line": number, "cube": text, "error": e.to_dict()}
            print(json.dumps(out), flush=True)
    return 2 if failed else 0


def _solve(args: argparse.Namespace) -> int:
    options = _options(args)
    if args.batch is not None:
        if args.facelets is not None:
            raise UserError("give either a cube or --batch FILE, not both")
        _prepare(args)
        return _batch(args, options)
    if args.facelets is None:
        raise UserError("give a cube (54 symbols, 'solved', or - for stdin) or --batch FILE")
    from solver import solve

    facelets = read_cube_arg(args.facelets)
    parse_facelets(facelets)  # a bad cube is refused before any table is built
    _prepare(args)
    sol = solve(facelets, **options)
    if args.json:
        print(json.dumps(sol.to_dict()))
    else:
        print(sol.moves)
        if sol.length == 0:
            print("the cube is already solved: no moves", file=sys.stderr)
            return 0
        print(f"({sol.length} moves, {args.metric} cost {sol.cost:g}, "
              f"{len(sol.steps)} steps, {sol.elapsed_ms:.1f} ms)", file=sys.stderr)
    return 0


def register(sub: Registry) -> None:
    p = sub.add_parser("solve", help="find a short solution with the two-phase algorithm")
    p.add_argument("facelets", nargs="?",
                   help="54 symbols in U R F D L B face order, 'solved', or - for stdin")
    p.add_argument("--max-length", type=int, default=None, metavar="N",
                   help="return as soon as a solution of at most N moves is found")
    p.add_argument("--budget-ms", type=float, default=100.0, metavar="MS",
                   help="search time for the best solution (default 100)")
    p.add_argument("--metric", choices=("htm", "qtm", "axial"), default="htm",
                   help="what 'best' means: face turns, quarter turns, or six-motor rig time")
    p.add_argument("--json", action="store_true", help="print moves, length, cost, elapsed_ms, steps as JSON")
    p.add_argument("--batch", metavar="FILE",
                   help="solve every cube in FILE (one per line, - for stdin); one JSON line per cube;"
                        " a bad line gets an error line and the rest go on (exit 2 if any was bad)")
    p.set_defaults(func=_solve)
