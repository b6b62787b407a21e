"""One way to solve a cube, whichever face asks: `cuberobot solve`, the web
API's ``POST /api/solve``, and the press-start engine all build a
:class:`SolveRequest`, have it checked by :func:`check` (the same refusal, in
the same words, everywhere) and answered by :func:`answer` (the same moves).

The lists of methods and metrics live in the solver (solver/metrics.py);
this module decides which combinations make sense for which cube: the
two-phase search for a 3x3 in any metric, CFOP's fixed stages for a 3x3 with
no search options, and the 2x2's optimal solver in face or quarter turns.

The ``rig`` metric is priced here, not in the solver: the time a solution
takes depends on the rig's motion model (its motors, the cube's overlap
model, the half turns' directions), which only the config knows. So
:func:`for_the_rig` asks the solver for several of its cheapest solutions
and plans each exactly as the rig will turn it; the same function serves
the terminal, the web API and the press-start engine.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from solver import MAX_BUDGET_MS, MAX_SOLUTION_LENGTH, format_moves, group_steps, parse_facelets, simplify
from solver.metrics import METHODS, RIG_METRICS

from ..rig.config import rig_turn_costs
from ..rig.errors import RigError, UserError
from .kinds import kind_of

if TYPE_CHECKING:
    from solver import SolveError
    from solver.solution import Solution

    from ..rig.config import Config
    from ..rig.mechanisms import MechanismPlan, State
    from ..rig.motion import MotorStep

DEFAULT_BUDGET_MS = 100.0
POCKET_METRICS = ("htm", "qtm")
"""A 2x2 is solved optimally; the six-motor rig's axial time is a 3x3 notion."""


@dataclass(frozen=True)
class SolveRequest:
    """What a face asks for. ``None`` means "not given": CFOP refuses search
    options that were given, even at their default values."""

    facelets: str
    size: int = 3
    method: str = "two-phase"
    metric: str | None = None
    max_length: int | None = None
    budget_ms: float | None = None
    workers: int | None = None
    rig: Config | None = None
    """The set-up whose motion model prices ``metric="rig"`` (None: the
    default config, config/rig.toml)."""

    @property
    def metric_or_default(self) -> str:
        return self.metric or "htm"


def check(req: SolveRequest) -> None:
    """Refuse a request that no solver answers, in one line naming the
    option and what to do (a :class:`UserError`); the cube itself is checked
    by the solver (a ``CubeError``)."""
    if req.method not in METHODS:
        raise UserError(f"method {req.method!r}: expected one of {', '.join(METHODS)}")
    if req.metric is not None and req.metric not in RIG_METRICS:
        raise UserError(f"metric {req.metric!r}: expected one of {', '.join(RIG_METRICS)}")
    if req.size not in (2, 3):
        raise UserError(f"size {req.size}: cubes of size 2 and 3 are solved (larger ones can be turned "
                        "with `apply`)")
    if req.max_length is not None and not 0 <= req.max_length <= MAX_SOLUTION_LENGTH:
        raise UserError(f"max_length {req.max_length}: expected 0 to {MAX_SOLUTION_LENGTH}")
    if req.budget_ms is not None and not 0 <= req.budget_ms <= MAX_BUDGET_MS:
        raise UserError(f"budget_ms {req.budget_ms:g}: expected 0 to {MAX_BUDGET_MS:g}")
    if req.method == "cfop":
        if req.size == 2:
            raise UserError("method cfop is for a 3x3; a 2x2 is solved optimally without it")
        if req.metric is not None or req.max_length is not None or req.budget_ms is not None:
            raise UserError("method cfop turns the fixed CFOP stages (about 60 moves): leave out metric, "
                            "max_length and budget_ms, which are for the two-phase search")
    if req.size == 2 and req.metric is not None and req.metric not in POCKET_METRICS:
        raise UserError(f"metric {req.metric}: a 2x2 is solved optimally in {' or '.join(POCKET_METRICS)}")


def check_run(cfg: Config, *, method: str | None = None, metric: str | None = None) -> Config:
    """A press-start's options checked against what ``cfg``'s rig can honour,
    in one place for the terminal, the panel and the engine (one refusal,
    in the same words, a :class:`UserError`): ``method`` and ``metric``
    given by a face override ``[solver]``'s; the set-up's own ``[solver]
    method`` must be one the rig turns too. The set-up as the run uses it."""
    rig = kind_of(cfg)
    kind = rig.name
    if method is not None and method not in METHODS:
        raise UserError(f"method {method!r}: expected one of {', '.join(METHODS)}")
    if metric is not None and metric not in RIG_METRICS:
        raise UserError(f"metric {metric!r}: expected one of {', '.join(RIG_METRICS)}")
    chosen = method or cfg.solver.method
    if chosen not in rig.methods:
        where = "asked for" if method is not None else "set in [solver] method"
        raise UserError(f"method {chosen} ({where}) is for a six-motor rig: a {kind} rig solves with "
                        "two-phase and turns the plan cheapest in its own robot moves")
    if metric is not None and metric not in rig.metrics:
        raise UserError(f"metric {metric} is for a six-motor rig: a {kind} rig chooses its solution by "
                        "its own robot moves and seconds")
    if metric is not None and chosen == "cfop":
        raise UserError("method cfop turns the fixed CFOP stages: leave out metric, which is for two-phase")
    if method is not None:
        cfg = dataclasses.replace(cfg, solver=dataclasses.replace(cfg.solver, method=method))
    if metric is not None:
        cfg = dataclasses.replace(cfg, solver=dataclasses.replace(cfg.solver, metric=metric))
    return cfg


def answer(req: SolveRequest) -> dict[str, Any]:
    """The solution as a JSON-ready dict (``moves``, ``length``, and what the
    method adds: ``cost``, ``steps``, ``stages``, ``optimal``). Raises
    ``CubeError`` for a cube that cannot be and ``SolveError`` when the
    search finds nothing within what was asked."""
    check(req)
    if req.method == "cfop":
        return _cfop(req.facelets)
    if req.size == 2:
        return _pocket(req.facelets, req.metric_or_default, req.max_length)
    if parse_facelets(req.facelets).is_solved():  # nothing to search for: no tables to build or load
        return {"moves": "", "length": 0, "cost": 0.0, "elapsed_ms": 0.0, "steps": []}
    sol = solution(req)
    if req.metric == "rig":
        return {**sol.to_dict(), "metric": "rig", "planned": 1 + len(sol.others)}
    return sol.to_dict()


def solution(req: SolveRequest) -> Solution:
    """A 3x3's two-phase solution as the solver gives it (its grouped
    steps, for the rig to plan): what :func:`answer` tells a person. Given a
    set-up (``req.rig``), the axial metric prices quarter and half turns at
    that rig's times, and ``rig`` plans the candidates with its motion model;
    without one, ``rig`` reads the default set-up."""
    return _solve(req)[0]


def planned_solution(req: SolveRequest, cfg: Config) -> tuple[Solution, list[MotorStep]]:
    """The solution the rig ``cfg`` turns and its plan into motor steps,
    planned once: with ``metric = "rig"`` the plan that won the choice among
    the candidates, otherwise the solution planned here. The press-start
    engine estimates, shows, journals and turns this one plan."""
    from ..rig.motion import plan  # lazy: out of `cuberobot solve`'s start-up

    sol, steps = _solve(dataclasses.replace(req, rig=cfg))
    return sol, steps if steps is not None else plan(sol.steps, cfg)


def _solve(req: SolveRequest) -> tuple[Solution, list[MotorStep] | None]:
    """The solution, with the rig's plan when choosing it needed one."""
    from solver import solve  # lazy: loads numba

    check(req)
    budget = DEFAULT_BUDGET_MS if req.budget_ms is None else req.budget_ms
    if req.metric == "rig":
        from ..rig.loading import load_config  # lazy: out of `cuberobot solve`'s start-up

        cfg = req.rig if req.rig is not None else load_config(None)
        if kind_of(cfg).makes_robot_moves:
            cfg = dataclasses.replace(cfg, solver=dataclasses.replace(
                cfg.solver, max_length=req.max_length, budget_ms=int(budget), workers=req.workers))
            return _cheapest_to_make(cfg, req.facelets), None
        return _fastest_for_rig(cfg, req.facelets, max_length=req.max_length, budget_ms=budget,
                                workers=req.workers)
    if req.rig is None:
        return solve(req.facelets, max_length=req.max_length, budget_ms=budget, metric=req.metric_or_default,
                     workers=req.workers), None
    quarter, half = rig_turn_costs(req.rig)
    return solve(req.facelets, max_length=req.max_length, budget_ms=budget, metric=req.metric_or_default,
                 workers=req.workers, quarter_cost=quarter, half_cost=half), None


def for_the_rig(cfg: Config, facelets: str, *, max_length: int | None, budget_ms: float,
                workers: int | None) -> Solution:
    """``metric = "rig"``: of the solver's ``[solver] candidates`` cheapest
    solutions in the axial metric (priced with this rig's quarter and half
    turn times), the one whose plan the rig finishes first; its ``cost`` is
    that plan's time in seconds, the estimate the rig's clock then meets.
    ``others`` keeps the candidates that lost, so that a caller can say how
    many were planned."""
    return _fastest_for_rig(cfg, facelets, max_length=max_length, budget_ms=budget_ms, workers=workers)[0]


def for_the_mechanism(cfg: Config, facelets: str, *,
                      start: State | None = None) -> tuple[MechanismPlan, str, list[Solution]]:
    """A flipper's or two-gripper's solution and its plan from ``start``
    (where the scan left the rig; None: the rig's home), chosen in its own
    metric (planned seconds and robot moves, the planner's ``weighed``): of
    the solver's ``[solver] candidates`` the cheapest to make, then the
    search in the mechanism's metric for up to ``search_ms``. ``[solver]
    max_length`` and ``budget_ms`` bound it as they bound a six-motor rig's.
    With what chose it, for a person, and the candidates planned. The
    press-start engine turns this plan; `solve --metric rig` on that set-up
    prices it."""
    from solver import solve  # lazy: loads numba

    from ..rig.mechanisms import cheapest, mechanism_for  # lazy: out of `cuberobot solve`'s start-up
    from ..rig.mechanisms.search import best_solution  # lazy: loads numba

    s, m = cfg.solver, mechanism_for(cfg)
    assert m is not None, cfg.rig.kind
    sol = solve(facelets, max_length=s.max_length, budget_ms=s.budget_ms, candidates=max(1, s.candidates),
                workers=s.workers)
    planned = [c for c in (sol, *sol.others) if s.max_length is None or c.length <= s.max_length]
    cands = [c.moves for c in planned]
    i, best = cheapest(cands, m, start=start, objective="weighed")
    chosen = f"candidate {i + 1} of {len(cands)}"
    if s.search_ms > 0:  # then the search in the mechanism's own metric, the best candidate as the bar
        _, found = best_solution(facelets, m, start, s.search_ms / 1000, candidates=cands, workers=s.workers)
        if found.weighed() < best.weighed() and (s.max_length is None or len(found.solution) <= s.max_length):
            chosen = (f"found by the search in the {cfg.rig.kind}'s metric; the best candidate took "
                      f"{best.moves} robot moves, {best.seconds:.1f} s")
            best = found
    return best, chosen, planned


def _cheapest_to_make(cfg: Config, facelets: str) -> Solution:
    """``metric = "rig"`` on a flipper or two-gripper: :func:`for_the_mechanism`
    as the solver's answer, its cost the plan's seconds."""
    from solver.solution import Solution  # lazy: out of --help's start-up

    t0 = time.perf_counter()
    best, _, planned = for_the_mechanism(cfg, facelets)
    moves = format_moves(list(best.solution))
    return Solution(moves, len(best.solution), round(best.seconds, 4), (time.perf_counter() - t0) * 1000,
                    tuple(group_steps(moves)), metric="rig",
                    others=tuple(c for c in planned if c.moves != moves))


def unsolvable(e: SolveError, cfg: Config) -> RigError:
    """A run's cube the solver cannot answer as configured: one line that
    names the setting, before any motor turns."""
    where = f" ([solver] max_length in {cfg.path})" if e.kind == "max-length" and cfg.path else ""
    return RigError(f"{e}{where}; no motor turned")


def _fastest_for_rig(cfg: Config, facelets: str, *, max_length: int | None, budget_ms: float,
                     workers: int | None) -> tuple[Solution, list[MotorStep]]:
    """:func:`for_the_rig` with the winner's plan, so nobody plans it again:
    the candidates planned, then, for up to ``[solver] search_ms``, the
    search in the rig's own time (robot/rig/motion_automaton.py: the rig
    compiled into a cost automaton, as a flipper is) with the candidates'
    best as the time to beat. The faster exact plan wins; the search's is
    kept only when it is faster, so this is never slower than the
    candidates alone."""
    from solver import parse_moves, solve  # lazy: loads numba

    from ..rig.motion import estimate_s, fastest  # lazy: out of `cuberobot solve`'s start-up
    from ..rig.motion_automaton import best_solution

    t0 = time.perf_counter()
    q, h = rig_turn_costs(cfg)
    sol = solve(facelets, max_length=max_length, budget_ms=budget_ms, metric="axial", quarter_cost=q,
                half_cost=h, workers=workers, candidates=cfg.solver.candidates)
    cands = [sol, *sol.others]
    i, steps = fastest([c.steps for c in cands], cfg)
    won = dataclasses.replace(cands[i], cost=round(estimate_s(steps, cfg), 4), metric="rig",
                              others=tuple(c for j, c in enumerate(cands) if j != i))
    found = best_solution(facelets, cfg, cfg.solver.search_ms / 1000, candidates=[parse_moves(won.moves)],
                          max_length=max_length, workers=workers)
    if found is not None:
        moves, steps = found
        text = format_moves(moves)
        won = dataclasses.replace(won, moves=text, length=len(moves), steps=tuple(group_steps(text)),
                                  cost=round(estimate_s(steps, cfg), 4), others=tuple(cands))
    if cfg.solver.search_ms > 0:  # the time to answer includes the search's
        won = dataclasses.replace(won, elapsed_ms=(time.perf_counter() - t0) * 1000)
    return won, steps


def _cfop(facelets: str) -> dict[str, Any]:
    """The moves and each named stage (its moves and the case it met). The
    whole is simplified across the stages' seams (a stage ending ``U2 B``
    and the next beginning ``B U2`` read ``U2 B2 U2``), as the engine's run
    shows it; each stage keeps its own moves."""
    from solver.cfop import solve_cfop  # lazy: out of --help's start-up

    t0 = time.perf_counter()
    sol = solve_cfop(parse_facelets(facelets))
    out = sol.to_dict()
    whole = simplify(sol.moves)
    out["moves"], out["length"] = format_moves(whole), len(whole)
    out["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 3)
    keep = ("name", "moves", "case", "slot")
    out["stages"] = [{k: v for k, v in stage.items() if k in keep} for stage in out["stages"]]
    return out


def _pocket(facelets: str, metric: str, max_length: int | None) -> dict[str, Any]:
    """An optimal 2x2 solution in ``metric``."""
    from solver.pocket import normalize_pocket, optimal  # lazy: out of --help's start-up

    sol = optimal.solve(facelets, metric=metric, max_length=max_length)
    return {**sol.to_dict(), "metric": metric, "optimal": True, "size": 2,
            "facelets": normalize_pocket(facelets)}
