"""Robot moves and planned time on the flipper and two-gripper rigs (issue 26).

For each of N random cubes (seeds 1..N, default 200) the solver is asked
once for its cheapest solutions (``candidates``, one thread, so the run is
repeatable), and each mechanism plans them three ways:

* **CUBOTino** (the flipper only): the solver's first solution converted by
  CUBOTino's own rules (robot/rig/mechanisms/greedy.py ``cubotino``: the
  same robot moves its current code makes, tests/test_mechanism_baselines.py);
* **greedy**: the same solution converted by our stronger one-move-at-a-time
  rule (``greedy``; the two-gripper's is the same idea for two grippers);
* **exact**: every candidate planned by shortest path over the mechanism's
  states (robot/rig/mechanisms/planner.py), the cheapest in planned time kept,
  then (``--search-s``, default 1 s a cube and mechanism) the search in the
  mechanism's own metric (robot/rig/mechanisms/search.py) for a cheaper
  solution, on ``--workers`` threads (default: every core, as on a rig),
  planned exactly again; ``--search-s 0`` is the planner alone.

Every plan is then made on the virtual mechanism (robot/sim/mechanisms.py)
from the cube's stickers: a move it refuses counts as impossible, and the
cube must end solved. Robot moves count every flip, spin, cover or grip
change and layer turn as one; "without cover" leaves out the cover's opens
and closes, as CUBOTino's own count folds them into its turns and spins.
Beside them it prints a counting floor (benchmarks/mechanism_floor.py): the
least average, over random cubes, that any planner could reach.

With ``--start N`` it runs instead the press-start loop
(``cuberobot start --headless``, app/mechanism_start.py) N times on each
example config (config/examples/flipper.toml, cubotino.toml, two-gripper.toml): scan
through the one camera in rendered light, solve, turn, confirm.

    python benchmarks/mechanisms.py                 # 200 cubes, 8 candidates
    python benchmarks/mechanisms.py --cubes 20 --candidates 4
    python benchmarks/mechanisms.py --start 50
    python benchmarks/mechanisms.py --start 10 --firmware firmware/build/uno/cuberobot.elf --kinds flipper
    python benchmarks/mechanisms.py --power-cut 20
    python benchmarks/mechanisms.py --power-cut 20 --cut-at turn
    python benchmarks/mechanisms.py --line-faults 5 --one-rig 10

``--firmware ELF`` runs the press-start loop on the firmware in simavr (its
servo pulses and step pulses turned into the parts' moves, robot/sim/
simavr.py). ``--power-cut N`` kills ``cuberobot start`` (SIGKILL) N times a
kind at a random moment (``--cut-at turn``: once the rig reports a random
part of the job's layer turns made, as the suite's test does with two), the
rig a sim-rig on a pty in its own process, and runs ``cuberobot resume`` in
a new process each time (tests/mechanism_soak.py): never a layer turned
twice, never a false state. ``--line-faults N`` runs `start` N times a kind
on a sim-rig whose line drops and damages 2 % of the bytes, ``--one-rig N``
N cubes in a row on one rig (tests/test_mechanism_link_faults.py at full
size).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.mechanism_floor import floor  # noqa: E402
from robot.rig.config import Config, parse_config  # noqa: E402
from robot.rig.loading import load_config  # noqa: E402
from robot.rig.mechanisms import ImpossibleMove, MechanismPlan, cheapest, mechanism_for, plan  # noqa: E402
from robot.rig.mechanisms.flipper import Flipper  # noqa: E402
from robot.rig.mechanisms.greedy import cubotino, greedy  # noqa: E402
from robot.rig.mechanisms.orientation import parse as parse_orientation  # noqa: E402
from robot.rig.mechanisms.search import best_solution  # noqa: E402
from solver import default_workers, parse_moves, random_cube, solve  # noqa: E402

KINDS = ("flipper", "cubotino", "two-gripper")
"""The rigs measured: the flipper and the two-gripper with the default
timing tables, and a flipper built as CUBOTino is, whose cover flips the
cube (config/examples/cubotino.toml: no flipper servo)."""


def rig_config(kind: str) -> Config:
    """The config a rig of the benchmark is measured with."""
    if kind == "cubotino":
        return load_config(ROOT / "config" / "examples" / "cubotino.toml")
    return parse_config(f'[rig]\nkind = "{kind}"\n')
FLOOR_CAP, FLOOR_CAP_S, FLOOR_UNIT_S = 2, 4, 0.05
"""How far above its least a price vector's entries are followed exactly by
the floor, in robot moves and in units of FLOOR_UNIT_S seconds (a larger
cap: a higher floor, for more time; about a minute each here)."""
CUBOTINO_EXTRA = 0.85
"""CUBOTino's published figure: about 85 % more robot movements than solver moves."""
QPHASE_MOVES = 19
"""efrantar/qphase: about 19 robot moves per solve on a two-gripper robot, regrips included."""
CUBOTINO_EXAMPLES = (
    ("U2 L R D2 B2 R D2 B2 D2 L' B' R' F2 D' L U2 F2 D' B' D", 87),
    ("R2 L D' F2 L2 B L U' R F L2 D' F2 D F2 B2 D2", 83),
    ("L D2 L D2 R2 F2 D2 R F' R U R2 B' L' D R D2 B2 F'", 88),
    ("F' U D2 R2 L2 U2 D2 R L2", 44),
)
"""The example solutions in CUBOTino's Cubotino_T_moves.py with the robot
movements its comments give (each flip, spin and layer rotation one; the
cover not counted). The comments are older than its code: the code as it
stands makes 70, 65, 69 and 29 from where its scan leaves the cube."""
AFTER_SCAN = "LBURFD"
"""Where CUBOTino's scan leaves the cube, which its own counts start from."""


def on_rig(kind: str, facelets: str, p: MechanismPlan) -> tuple[bool, int]:
    """``(solved, refused)``: the plan made on the virtual mechanism."""
    try:
        from robot.sim.mechanisms import virtual_mechanism
    except ImportError:  # before the virtual mechanisms: the rules and the sticker model
        from robot.rig.mechanisms import apply_to_cube

        m = mechanism_for(rig_config(kind))
        assert m is not None
        try:
            return apply_to_cube(facelets, p.actions, m).is_solved(), 0
        except ImpossibleMove:
            return False, 1
    rig = virtual_mechanism(rig_config(kind), facelets)
    refused = 0
    for a in p.actions:
        try:
            rig.do(a)
        except ImpossibleMove:
            refused += 1
            break
    return rig.is_solved(), refused


def without_cover(p: MechanismPlan) -> int:
    return sum(1 for a in p.actions if a.part != "cover")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cubes", type=int, default=200)
    ap.add_argument("--candidates", type=int, default=8)
    ap.add_argument("--budget-ms", type=int, default=100)
    ap.add_argument("--search-s", type=float, default=1.0,
                    help="search seconds a cube and mechanism (0: the planner alone)")
    ap.add_argument("--workers", type=int, default=0, metavar="N",
                    help="threads the search runs on (default 0: every core this process may use)")
    ap.add_argument("--start", type=int, default=0, metavar="N",
                    help="run the press-start loop N times on each example config instead")
    ap.add_argument("--firmware", metavar="ELF", help="with --start: on the firmware in simavr")
    ap.add_argument("--kinds", default=",".join(KINDS), help="with --start or --power-cut: which kinds")
    ap.add_argument("--power-cut", type=int, default=0, metavar="N",
                    help="kill `cuberobot start` N times a kind and resume in a new process")
    ap.add_argument("--speed", default="4", help="with --power-cut: the sim-rig's speed")
    ap.add_argument("--cut-at", choices=("time", "turn"), default="time",
                    help="with --power-cut: kill at a random moment of a whole run (time), or once the rig "
                         "reports a random part of the job's layer turns made (turn: the suite's test, "
                         "tests/test_mechanism_link.py, at full size)")
    ap.add_argument("--line-faults", type=int, default=0, metavar="N",
                    help="N runs of `cuberobot start` a kind on a line that drops and damages 2 %% of "
                         "the bytes (tests/test_mechanism_link_faults.py at full size)")
    ap.add_argument("--one-rig", type=int, default=0, metavar="N",
                    help="N cubes in a row a kind on one rig, `cuberobot start` for each")
    args = ap.parse_args()
    kinds = tuple(k for k in args.kinds.split(",") if k)
    if args.power_cut:
        return power_cuts(args.power_cut, kinds, args.speed, args.cut_at)
    if args.line_faults or args.one_rig:
        return line_faults_and_one_rig(args.line_faults, args.one_rig, kinds)
    if args.start:
        return start_runs(args.start, kinds, args.firmware)
    workers = args.workers or default_workers()
    mechs = {k: mechanism_for(rig_config(k)) for k in KINDS}
    rows: dict[str, list[dict]] = {k: [] for k in KINDS}
    t0 = time.perf_counter()
    plan_s = {k: 0.0 for k in KINDS}
    for seed in range(1, args.cubes + 1):
        cube = random_cube(seed)
        s = solve(cube, budget_ms=args.budget_ms, candidates=args.candidates, workers=1)
        cands = [s.moves] + [o.moves for o in s.others]
        for kind, m in mechs.items():
            assert m is not None
            g = greedy(s.moves, m)
            c = cubotino(s.moves, m) if isinstance(m, Flipper) else None
            t = time.perf_counter()
            f = cube.to_facelets()
            if args.search_s > 0:
                _, p = best_solution(f, m, budget_s=args.search_s, candidates=cands, workers=workers)
            else:
                _, p = cheapest(cands, m)
            plan_s[kind] += time.perf_counter() - t
            solved_p, refused_p = on_rig(kind, f, p)
            solved_g, refused_g = on_rig(kind, f, g)
            solved_c, refused_c = on_rig(kind, f, c) if c is not None else (True, 0)
            rows[kind].append({"length": s.length, "chosen_length": len(p.solution), "moves": p.moves,
                               "seconds": p.seconds, "g_moves": g.moves, "g_seconds": g.seconds,
                               "c_moves": c.moves if c else float("nan"),
                               "c_seconds": c.seconds if c else float("nan"),
                               "solved": solved_p and solved_g and solved_c,
                               "refused": refused_p + refused_g + refused_c,
                               "nc": without_cover(p), "g_nc": without_cover(g),
                               "c_nc": without_cover(c) if c else float("nan")})
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {platform.machine()}, {os.cpu_count()} cores, load {load:.1f}, "
          f"Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}; {args.cubes} cubes, {args.candidates} candidates, "
          f"{args.budget_ms} ms a solve, {args.search_s:g} s search on {workers} "
          f"thread{'s' if workers > 1 else ''}; "
          f"{time.perf_counter() - t0:.0f} s")
    print("| kind | solved | impossible | solver moves | robot moves: exact, CUBOTino's, greedy "
          "| ratio to CUBOTino's, to greedy | planned time: exact, CUBOTino's, greedy "
          "| ratio to CUBOTino's, to greedy | robot moves per solver move, exact (greedy) "
          "| without cover: exact, CUBOTino's, greedy | plan time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    averages: dict[str, dict[str, float]] = {}
    for kind, rs in rows.items():
        mean = statistics.fmean
        averages[kind] = {k: mean(r[k] for r in rs)
                          for k in ("moves", "g_moves", "c_moves", "seconds", "g_seconds", "c_seconds")}
        averages[kind]["sd"] = statistics.stdev(r["moves"] for r in rs) if len(rs) > 1 else 0.0
        averages[kind]["n"] = len(rs)
        moves, g_moves = averages[kind]["moves"], averages[kind]["g_moves"]
        secs, g_secs = averages[kind]["seconds"], averages[kind]["g_seconds"]
        length, chosen = mean(r["length"] for r in rs), mean(r["chosen_length"] for r in rs)
        c_moves, c_secs = averages[kind]["c_moves"], averages[kind]["c_seconds"]
        nc, g_nc, c_nc = (mean(r[k] for r in rs) for k in ("nc", "g_nc", "c_nc"))
        print(f"| {kind} | {sum(r['solved'] for r in rs)}/{len(rs)} | {sum(r['refused'] for r in rs)} "
              f"| {chosen:.1f} ({length:.1f}) | {moves:.1f}, {c_moves:.1f}, {g_moves:.1f} "
              f"| {moves / c_moves:.3f}, {moves / g_moves:.3f} "
              f"| {secs:.2f} s, {c_secs:.2f} s, {g_secs:.2f} s | {secs / c_secs:.3f}, {secs / g_secs:.3f} "
              f"| {moves / chosen:.2f} ({g_moves / length:.2f}) | {nc:.1f}, {c_nc:.1f}, {g_nc:.1f} "
              f"| {plan_s[kind] / len(rs) * 1000:.0f} ms |")
    print(f"\nCounting floor (benchmarks/mechanism_floor.py, cap {FLOOR_CAP} moves / "
          f"{FLOOR_CAP_S * FLOOR_UNIT_S:.2f} s): no planner can average less on random cubes")
    for kind, a in averages.items():
        m = mechs[kind]
        assert m is not None
        fm = floor(m, cap=FLOOR_CAP)
        fs = floor(m, seconds=True, unit=FLOOR_UNIT_S, cap=FLOOR_CAP_S, limit=1000)
        moves, g_moves, secs, g_secs = a["moves"], a["g_moves"], a["seconds"], a["g_seconds"]
        theirs = f"{fm / a['c_moves']:.3f} x CUBOTino's, " if isinstance(m, Flipper) else ""
        theirs_s = f"{fs / a['c_seconds']:.3f} x CUBOTino's, " if isinstance(m, Flipper) else ""
        print(f"  {kind}: {fm:.1f} robot moves ({theirs}{fm / g_moves:.3f} x greedy; exact is "
              f"{moves / fm:.2f} x the floor), {fs:.1f} s ({theirs_s}{fs / g_secs:.3f} x greedy; exact "
              f"{secs / fs:.2f} x the floor); "
              f"exact's spread {a['sd']:.1f} robot moves a cube, so +-{a['sd'] / a['n'] ** 0.5:.2f} on an "
              f"average of {a['n']:.0f} cubes")
    print("\nCUBOTino's own examples, counted as it counts (flips, spins, layer turns; no cover), from "
          "where its scan leaves the cube: its comments / its code (our rebuild) / our greedy / our exact "
          "planner, on the same solution")
    m = mechs["flipper"]
    assert isinstance(m, Flipper)
    after_scan = (parse_orientation(AFTER_SCAN), 0, False)
    for text, theirs in CUBOTINO_EXAMPLES:
        given = parse_moves(text)
        print(f"  {len(given)} moves: {theirs} / {without_cover(cubotino(given, m, after_scan))} / "
              f"{without_cover(greedy(given, m, after_scan))} / {without_cover(plan(given, m, after_scan))}")
    print(f"\nPublished: CUBOTino about {CUBOTINO_EXTRA:.0%} more robot movements than solver moves "
          f"({1 + CUBOTINO_EXTRA:.2f} per solver move); qphase about {QPHASE_MOVES} robot moves per solve "
          "(two grippers, regrips included). Bar: exact <= 0.8 x the greedy planner CUBOTino describes "
          "(CUBOTino's own rules on the flipper) in robot moves and in time.")
    return 0


def power_cuts(n: int, kinds: tuple[str, ...], speed: str, cut_at: str = "time") -> int:
    """N kill -9 runs a kind, each resumed in a new process. ``cut_at``
    "time": at a random moment from 1.5 s to the length of a whole run
    (timed first); "turn": once the rig reports a random part of the job's
    layer turns made (at least one, at least two before the last), a kill
    inside the job whatever the machine's speed."""
    import random
    import tempfile
    from collections import Counter

    sys.path.insert(0, str(ROOT / "tests"))
    import mechanism_soak  # test tooling

    print("| kind | runs | finished by resume | state unknown (nothing moved) | ended before the kill "
          "| killed before the job | failures | wall |")
    print("|---|---|---|---|---|---|---|---|")
    bad = 0
    for kind in kinds:
        t0 = time.perf_counter()
        outcomes: Counter[str] = Counter()
        failures = []
        whole_s = 0.0
        if cut_at == "time":
            with tempfile.TemporaryDirectory() as d:  # one run to its end: how long a run takes here
                whole = mechanism_soak.power_cut_run(kind, 0, Path(d), kill_after_s=float("inf"), speed=speed)
            assert whole.start_s is not None and not whole.failures, whole
            whole_s = whole.start_s
            print(f"  {kind}: a whole run takes {whole_s:.1f} s; kills at random from 1.5 s to that",
                  file=sys.stderr, flush=True)
        for k in range(1, n + 1):
            rng = random.Random(f"{kind}-{k}")
            with tempfile.TemporaryDirectory() as d:
                if cut_at == "time":
                    kill = rng.uniform(1.5, whole_s)
                    r = mechanism_soak.power_cut_run(kind, k, Path(d), kill_after_s=kill, speed=speed)
                    when = f"kill at {kill:.1f} s"
                else:
                    part = rng.random()
                    r = mechanism_soak.power_cut_run(kind, k, Path(d), kill_at=part, speed=speed)
                    when = f"kill at {part:.2f} of the job, {r.turns_at_kill} of {r.plan_turns} layers turned"
                    if r.outcome not in ("finished", "unknown"):  # as tests/test_mechanism_link.py holds it
                        r.failures.append(f"the kill fell outside the job: {r.outcome}")
            outcomes[r.outcome] += 1
            failures += r.failures
            said = "".join(f"; {f}" for f in r.failures)
            print(f"  {kind} run {k}: {when}, {r.done_at_kill} robot moves journalled done, "
                  f"{r.outcome}{said}", file=sys.stderr, flush=True)
        bad += len(failures)
        print(f"| {kind} | {n} | {outcomes['finished']} | {outcomes['unknown']} | {outcomes['ended']} "
              f"| {outcomes['not-begun']} | {len(failures)} | {time.perf_counter() - t0:.0f} s |", flush=True)
    return 1 if bad else 0


def line_faults_and_one_rig(line_runs: int, one_rig: int, kinds: tuple[str, ...]) -> int:
    """tests/test_mechanism_link_faults.py's two soaks at full size: runs on
    a faulty line (seeds 5, 6, ...) and cubes in a row on one rig."""
    import tempfile

    sys.path.insert(0, str(ROOT / "tests"))
    import mechanism_soak  # test tooling

    bad = 0
    for kind in kinds:
        if line_runs:
            t0 = time.perf_counter()
            failures = []
            for seed in range(5, 5 + line_runs):
                with tempfile.TemporaryDirectory() as d:
                    t = time.perf_counter()
                    said = mechanism_soak.line_fault_run(kind, seed, Path(d), mechanism_soak.LINE_FAULTS)
                failures += said
                how = "FAILED: " + "; ".join(said) if said else "confirmed solved, every layer once"
                print(f"  {kind} seed {seed}: {how} ({time.perf_counter() - t:.1f} s)", file=sys.stderr,
                      flush=True)
            bad += len(failures)
            print(f"line faults ({mechanism_soak.LINE_FAULTS}), {kind}: {line_runs} runs of `start`, "
                  f"{line_runs - len(failures)} confirmed solved with every layer turned once in the plan's "
                  f"order, failures {len(failures)}; {time.perf_counter() - t0:.0f} s wall", flush=True)
        if one_rig:
            t0 = time.perf_counter()
            seeds = [4, *range(11, 10 + one_rig)]
            with tempfile.TemporaryDirectory() as d:
                failures = mechanism_soak.one_rig_runs(kind, seeds, Path(d))
            bad += len(failures)
            for f in failures:
                print(f"  FAIL {f}", file=sys.stderr)
            print(f"one rig, {kind}: {len(seeds)} cubes in a row (seeds {', '.join(map(str, seeds))}), "
                  f"failures {len(failures)}; {time.perf_counter() - t0:.0f} s wall", flush=True)
    return 1 if bad else 0


def start_runs(n: int, kinds: tuple[str, ...] = KINDS, firmware: str | None = None) -> int:
    """``cuberobot start --headless --seed K`` for K = 1..n on each example config."""
    import tempfile

    from robot.app.mechanism_start import run_mechanism_start

    print("| kind | rig | solved | confirmed | scans correct | robot moves per solve | planned time "
          "| scan robot moves | wall |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in kinds:
        cfg = load_config(ROOT / "config" / "examples" / f"{kind}.toml")
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            runs = [run_mechanism_start(cfg, seed=k, state_dir=d, firmware=firmware, out=lambda _line: None)
                    for k in range(1, n + 1)]
        done = [r for r in runs if r.turns]
        solved = sum(r.status == "solved" for r in runs)
        correct = sum(bool(r.scan_correct) for r in runs)
        moves = statistics.fmean(r.turns or 0 for r in done)
        planned = statistics.fmean(r.estimated_turning_s or 0.0 for r in done)
        scan_moves = statistics.fmean(r.scan_moves or 0 for r in runs)
        confirmed = sum(bool(r.confirmed) for r in runs)
        rig = "firmware in simavr" if firmware else "virtual (sim://)"
        print(f"| {kind} | {rig} | {solved}/{n} | {confirmed}/{n} | {correct}/{n} | {moves:.1f} "
              f"| {planned:.1f} s | {scan_moves:.1f} | {time.perf_counter() - t0:.0f} s |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
