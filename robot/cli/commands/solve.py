"""``cuberobot solve``: solve one cube, or a file of cubes (one JSON line each)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from solver import MAX_BUDGET_MS, MAX_SOLUTION_LENGTH, MAX_WORKERS, CubeError, SolveError, parse_facelets
from solver.metrics import METHODS, RIG_METRICS

from ...app.limits import MAX_BATCH_BYTES, MAX_BATCH_HOURS, MAX_BATCH_LINES, MAX_LINE_CHARS, read_input
from ...app.solving import DEFAULT_BUDGET_MS, SolveRequest, answer, check
from ...rig.errors import UserError
from ..limits import number, path, whole
from ..progress import ProgressLine
from . import Registry
from .cube import read_cube_arg, whole_size


class Refused(UserError):
    """The cube is valid but has no answer as asked (a SolveError): one line,
    exit 1 like a run that failed, not 2 like a usage mistake."""

    exit_code = 1


def _request(args: argparse.Namespace, facelets: str = "") -> SolveRequest:
    """The options as the one solving service takes them (robot/app/solving.py)."""
    rig = None
    if args.metric == "rig":  # only the rig metric needs the set-up (its motion model)
        from ...rig.loading import load_config  # lazy: out of solve's start-up (only --metric rig reads one)

        rig = load_config(args.config)
    elif args.config is not None:
        raise UserError("--config is for --metric rig (the set-up whose turning time is the price)")
    return SolveRequest(facelets, size=_size(args), method=args.method, metric=args.metric,
                        max_length=args.max_length, budget_ms=args.budget_ms, workers=args.workers, rig=rig)


def _size(args: argparse.Namespace) -> int:
    """2 when --size 2 says so or the cube has 24 symbols; else 3."""
    if args.size is not None:
        return int(args.size)
    text = args.facelets
    return 2 if text is not None and text != "-" and len(text.strip()) == 24 else 3


def _prepare(args: argparse.Namespace) -> None:
    """Load the solver's tables, showing the one-time build when it happens."""
    from solver import prepare  # lazy: loads numba

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


def _batch(cubes: list[tuple[int, str]], req: SolveRequest) -> int:
    failed = 0
    for line_number, text in cubes:
        try:
            out = {"line": line_number, "cube": text, **answer(replace(req, facelets=text))}
        except (CubeError, SolveError) as e:
            failed += 1
            out = {"line": line_number, "cube": text, "error": e.to_dict()}
        print(json.dumps(out), flush=True)
    return 2 if failed else 0


def _solve(args: argparse.Namespace) -> int:
    req = _request(args)
    check(req)  # the same refusals as the web API's and the engine's
    if args.batch is not None:
        return _solve_batch(args, req)
    if args.facelets is None:
        raise UserError("give a 2x2 cube (24 symbols, 'solved', or - for stdin)" if req.size == 2 else
                        "give a cube (54 symbols, 'solved', or - for stdin) or --batch FILE")
    if req.size == 2:
        facelets = read_cube_arg(args.facelets, sizes=(2,) if args.size == 2 else (2, 3))
    else:
        facelets = read_cube_arg(args.facelets)
    req = replace(req, facelets=facelets)
    _prepare_for(req, args)
    try:
        out = answer(req)
    except SolveError as e:
        raise Refused(str(e)) from None
    if args.json:
        print(json.dumps(out))
    else:
        _print_answer(req, out)
    return 0


def _prepare_for(req: SolveRequest, args: argparse.Namespace) -> None:
    """Check the cube, then build or load the tables its solver needs, with
    the one-time build shown; a solved 3x3 needs none."""
    if req.method == "cfop":
        parse_facelets(req.facelets)
        return
    if req.size == 2:
        from solver.pocket import optimal, parse_pocket  # lazy: out of --help's start-up

        parse_pocket(req.facelets)  # a bad cube is refused before the table is built
        progress = ProgressLine(quiet=args.quiet)
        try:
            optimal.prepare(progress, req.metric_or_default)
        finally:
            progress.end()
        return
    if not parse_facelets(req.facelets).is_solved():  # a bad cube is refused before any table is built
        _prepare(args)


def _print_answer(req: SolveRequest, out: dict) -> None:
    """The moves on stdout, what they cost on stderr."""
    if req.method == "cfop":
        for stage in out["stages"]:
            label = f"{stage['name']} ({stage['slot']}):" if stage.get("slot") else f"{stage['name']}:"
            case = f" [{stage['case']}]" if stage.get("case") else ""
            print(f"{label:<14} {stage['moves'] or '-'}{case}")
        print(f"({out['length']} moves, {out['elapsed_ms']:.1f} ms)", file=sys.stderr)
        return
    print(out["moves"])
    if out["length"] == 0:
        print("the cube is already solved: no moves", file=sys.stderr)
    elif req.size == 2:
        print(f"({out['length']} moves, {req.metric_or_default} cost {out['cost']:g}, optimal, "
              f"{out['elapsed_ms']:.1f} ms)", file=sys.stderr)
    elif req.metric == "rig":
        print(f"({out['length']} moves, {len(out['steps'])} steps, {out['cost']:.3f} s of turning as the rig "
              f"plans it, the fastest of {out['planned']} planned; {out['elapsed_ms']:.1f} ms)",
              file=sys.stderr)
    else:
        print(f"({out['length']} moves, {req.metric_or_default} cost {out['cost']:g}, "
              f"{len(out['steps'])} steps, {out['elapsed_ms']:.1f} ms)", file=sys.stderr)


def _solve_batch(args: argparse.Namespace, req: SolveRequest) -> int:
    if req.size != 3 or req.method != "two-phase":
        raise UserError("--batch solves 3x3 cubes with the two-phase search; solve a 2x2, or with "
                        "--method cfop, one at a time")
    if args.facelets is not None:
        raise UserError("give either a cube or --batch FILE, not both")
    cubes = _read_batch(args.batch)  # a bad file is refused before any table is built
    budget = DEFAULT_BUDGET_MS if req.budget_ms is None else req.budget_ms
    hours = len(cubes) * budget / 3_600_000
    if hours > MAX_BATCH_HOURS:
        raise UserError(f"--batch: {len(cubes)} cubes at --budget-ms {budget:g} is {hours:.1f} "
                        f"hours of search; at most {MAX_BATCH_HOURS:g} hour: lower --budget-ms or split "
                        "the file")
    if cubes:  # an empty batch needs no tables
        _prepare(args)
    return _batch(cubes, req)


def register(sub: Registry) -> None:
    p = sub.add_parser("solve", help="find a short solution with the two-phase algorithm")
    p.add_argument("facelets", nargs="?",
                   help="54 symbols in U R F D L B face order, 'solved', or - for stdin")
    p.add_argument("--max-length", type=whole(0, MAX_SOLUTION_LENGTH), default=None, metavar="N",
                   help="never a solution longer than N moves; with --metric htm, return as soon as one"
                        " is found, with the other metrics the cheapest found in --budget-ms:"
                        " below 20 the search gives up (exit 1) after 2 s or --budget-ms, whichever is"
                        f" longer (0 to {MAX_SOLUTION_LENGTH})")
    p.add_argument("--budget-ms", type=number(0, MAX_BUDGET_MS), default=None, metavar="MS",
                   help=f"search time for the best solution (default {DEFAULT_BUDGET_MS:g}, at most "
                        f"{MAX_BUDGET_MS:.0f})")
    p.add_argument("--metric", choices=RIG_METRICS, default=None,
                   help="what 'best' means: face turns, quarter turns, six-motor rig time (axial), or rig:"
                        " of the cheapest solutions, the one the configured rig finishes first, overlaps"
                        " and half-turn directions planned ([solver] candidates of them)")
    p.add_argument("--config", metavar="FILE", type=path, default=None,
                   help="with --metric rig: the set-up whose motion model prices the solutions (default:"
                        " config/rig.toml)")
    p.add_argument("--workers", type=whole(1, MAX_WORKERS), default=None, metavar="N",
                   help=f"threads to search with (default: one to the first solution, then every core; 1 to"
                        f" {MAX_WORKERS}; 1 gives the"
                        " same answer for the same amount of search)")
    p.add_argument("--method", choices=METHODS, default="two-phase",
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
