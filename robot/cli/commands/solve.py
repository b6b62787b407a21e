"""``cuberobot solve``: solve one cube, or a file of cubes (one JSON line each)."""

from __future__ import annotations

import argparse
import json
import sys

from solver import MAX_WORKERS, CubeError, SolveError, format_moves, parse_facelets

from ...app.limits import (
    MAX_BATCH_BYTES,
    MAX_BATCH_HOURS,
    MAX_BATCH_LINES,
    MAX_BUDGET_MS,
    MAX_LINE_CHARS,
    MAX_SOLUTION_LENGTH,
    read_input,
)
from ...rig.errors import UserError
from ..limits import number, path, whole
from ..progress import ProgressLine
from . import Registry
from .cube import read_cube_arg, whole_size


class _Pocket:
    """``solve`` for a 2x2 (24 symbols, or --size 2): optimal in face turns
    or quarter turns, from a distance table built once (a second or two)."""

    @staticmethod
    def wanted(args: argparse.Namespace) -> bool:
        if args.size is not None:
            return bool(args.size == 2)
        text = args.facelets
        return text is not None and text != "-" and len(text.strip()) == 24

    @staticmethod
    def solve(args: argparse.Namespace) -> int:
        from solver.pocket import parse_pocket

        if args.batch is not None:
            raise UserError("--batch solves 3x3 cubes; solve a 2x2 one at a time")
        if args.metric not in ("htm", "qtm"):
            raise UserError(f"--metric {args.metric}: a 2x2 is solved optimally in htm or qtm")
        if args.facelets is None:
            raise UserError("give a 2x2 cube (24 symbols, 'solved', or - for stdin)")
        facelets = read_cube_arg(args.facelets, sizes=(2,) if args.size == 2 else (2, 3))
        parse_pocket(facelets)  # a bad cube is refused before the table is built
        from solver.pocket import optimal

        progress = ProgressLine(quiet=args.quiet)
        try:
            optimal.prepare(progress, args.metric)
        finally:
            progress.end()
        try:
            sol = optimal.solve(facelets, metric=args.metric, max_length=args.max_length)
        except SolveError as e:
            raise Refused(str(e)) from None
        if args.json:
            print(json.dumps(sol.to_dict()))
            return 0
        print(sol.moves)
        if sol.length == 0:
            print("the cube is already solved: no moves", file=sys.stderr)
        else:
            print(f"({sol.length} moves, {args.metric} cost {sol.cost:g}, optimal, {sol.elapsed_ms:.1f} ms)",
                  file=sys.stderr)
        return 0


class Refused(UserError):
    """The cube is valid but has no answer as asked (a SolveError): one line,
    exit 1 like a run that failed, not 2 like a usage mistake."""

    exit_code = 1


def _options(args: argparse.Namespace) -> dict:
    return {"max_length": args.max_length, "budget_ms": args.budget_ms, "metric": args.metric,
            "workers": args.workers}


def _prepare(args: argparse.Namespace) -> None:
    """Load the solver's tables, showing the one-time build when it happens."""
    from solver import prepare

    progress = ProgressLine(quiet=args.quiet)
    try:
        prepare(progress)
    finally:
        progress.end()


def _read_batch(name: str) -> list[tuple[int, str]]:
    """(line number, cube text) of each cube line of a --batch file, all
    read and bounded before the first cube is solved."""
    text = read_input(name, "--batch", MAX_BATCH_BYTES, "a file of cubes, one per line")
    where = "standard input" if name == "-" else name
    lines = text.splitlines()
    if len(lines) > MAX_BATCH_LINES:
        raise UserError(f"--batch {where}: {len(lines)} lines; at most {MAX_BATCH_LINES}: split the file")
    cubes = []
    for line_number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS:
            raise UserError(f"{where}:{line_number}: a line of {len(line)} characters; a cube line has at "
                            f"most {MAX_LINE_CHARS}: one cube (54 symbols) per line")
        text = line.strip()
        if text and not text.startswith("#"):
            cubes.append((line_number, text))
    return cubes


def _batch(cubes: list[tuple[int, str]], options: dict) -> int:
    from solver import solve

    failed = 0
    for line_number, text in cubes:
        try:
            out = {"line": line_number, "cube": text, **solve(text, **options).to_dict()}
        except (CubeError, SolveError) as e:
            failed += 1
            out = {"line": line_number, "cube": text, "error": e.to_dict()}
        print(json.dumps(out), flush=True)
    return 2 if failed else 0


def _solve_cfop(args: argparse.Namespace) -> int:
    """``--method cfop``: the stages a person would turn, each named."""
    if args.batch is not None:
        raise UserError("--method cfop solves one cube: give it a cube, not --batch")
    if args.max_length is not None or args.metric != "htm":
        raise UserError("--max-length and --metric are for the two-phase search; --method cfop turns the"
                        " fixed CFOP stages (about 60 moves): leave them out")
    if args.facelets is None:
        raise UserError("give a cube (54 symbols, 'solved', or - for stdin)")
    from solver.cfop import solve_cfop

    sol = solve_cfop(parse_facelets(read_cube_arg(args.facelets)))
    if args.json:
        out = sol.to_dict()
        keep = ("name", "moves", "case")
        out["stages"] = [{k: v for k, v in s.items() if k in keep} for s in out["stages"]]
        print(json.dumps(out))
        return 0
    for stage in sol.stages:
        label = f"{stage.name} ({stage.slot}):" if stage.slot else f"{stage.name}:"
        case = f" [{stage.case}]" if stage.case else ""
        print(f"{label:<14} {format_moves(stage.moves) or '-'}{case}")
    print(f"({sol.length} moves, {sol.elapsed_ms:.1f} ms)", file=sys.stderr)
    return 0


def _solve(args: argparse.Namespace) -> int:
    if _Pocket.wanted(args):
        if args.method == "cfop":
            raise UserError("--method cfop is for a 3x3; a 2x2 is solved optimally without it")
        return _Pocket.solve(args)
    if args.method == "cfop":
        return _solve_cfop(args)
    options = _options(args)
    if args.batch is not None:
        if args.facelets is not None:
            raise UserError("give either a cube or --batch FILE, not both")
        cubes = _read_batch(args.batch)  # a bad file is refused before any table is built
        hours = len(cubes) * args.budget_ms / 3_600_000
        if hours > MAX_BATCH_HOURS:
            raise UserError(f"--batch: {len(cubes)} cubes at --budget-ms {args.budget_ms:g} is {hours:.1f} "
                            f"hours of search; at most {MAX_BATCH_HOURS:g} hour: lower --budget-ms or split "
                            "the file")
        if cubes:  # an empty batch needs no tables
            _prepare(args)
        return _batch(cubes, options)
    if args.facelets is None:
        raise UserError("give a cube (54 symbols, 'solved', or - for stdin) or --batch FILE")
    from solver import solve

    facelets = read_cube_arg(args.facelets)
    cube = parse_facelets(facelets)  # a bad cube is refused before any table is built
    if cube.is_solved():  # nothing to search for: no tables to build or load
        from solver.solution import Solution

        sol = Solution(moves="", length=0, cost=0.0, elapsed_ms=0.0, steps=[], metric=args.metric)
    else:
        _prepare(args)
        try:
            sol = solve(facelets, **options)
        except SolveError as e:
            raise Refused(str(e)) from None
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
    p.add_argument("--max-length", type=whole(0, MAX_SOLUTION_LENGTH), default=None, metavar="N",
                   help="return as soon as a solution of at most N moves is found; never a longer one:"
                        " below 20 the search gives up (exit 1) after 2 s or --budget-ms, whichever is"
                        f" longer (0 to {MAX_SOLUTION_LENGTH})")
    p.add_argument("--budget-ms", type=number(0, MAX_BUDGET_MS), default=100.0, metavar="MS",
                   help=f"search time for the best solution (default 100, at most {MAX_BUDGET_MS:.0f})")
    p.add_argument("--metric", choices=("htm", "qtm", "axial"), default="htm",
                   help="what 'best' means: face turns, quarter turns, or six-motor rig time")
    p.add_argument("--workers", type=whole(1, MAX_WORKERS), default=None, metavar="N",
                   help=f"threads to search with (default: every core; 1 to {MAX_WORKERS}; 1 gives the"
                        " same answer for the same amount of search)")
    p.add_argument("--method", choices=("two-phase", "cfop"), default="two-phase",
                   help="two-phase (default): a short solution; cfop: cross, F2L, OLL, PLL as a person"
                        " solves it, each stage named")
    p.add_argument("--json", action="store_true", help="print moves, length, cost, elapsed_ms, steps as JSON"
                                                       " (cfop: moves, length, stages)")
    p.add_argument("--batch", metavar="FILE", type=path,
                   help="solve every cube in FILE (one per line, - for stdin); one JSON line per cube;"
                        " a bad line (or a cube with no solution within --max-length) gets an error line"
                        " and the rest go on (exit 2 if any was bad);"
                        f" at most {MAX_BATCH_LINES} lines of {MAX_LINE_CHARS} characters, 1 MiB, and"
                        f" {MAX_BATCH_HOURS:g} hour of search in all")
    p.add_argument("--size", type=whole_size((2, 3)), default=None, metavar="N",
                   help="2 for a 2x2 (solved optimally, htm or qtm; 24 symbols are a 2x2 anyway),"
                        " 3 for a 3x3")
    p.set_defaults(func=_solve)
