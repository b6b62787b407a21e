"""CFOP as a person does it: cross, four pairs, orient the top, permute it.

Each stage reads the cube, looks its case up in the stage's rule table
(:mod:`solver.cfop.rules`), applies the rule's algorithm after the turn of U
that lines the case up, and then checks the stage's goal on the cube before
the next stage starts. A goal that does not hold raises
:class:`~solver.errors.SolverFault` (a wrong rule, never the caller's
fault); the tests make sure none does.

The pairs go in the order that costs fewest moves: before each pair, every
unsolved slot is planned (extracting its pieces from other slots if needed)
and the shortest plan is used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..cubie import Cube
from ..errors import SolverFault
from ..moves import Move, format_moves, simplify
from . import patterns
from .cross import cross_solved, solve_cross
from .notation import to_face_turns
from .rules import AUF_CUBES, AUF_MOVES, extractions, f2l_lookup, oll_lookup, oll_shapes, pll_lookup

SLOTS = ("FR", "FL", "BL", "BR")
"""The four F2L slots; slot k is seen as front-right after k turns of the
whole cube by y' (its corner is piece 4+k, its edge 8+k)."""

_Y = Cube((3, 0, 1, 2, 7, 4, 5, 6), (0,) * 8, (3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10), (0,) * 8 + (1,) * 4)
_Y_POWERS = (Cube(), _Y, _Y * _Y, _Y * _Y * _Y)
_Y_TEXT = ("", "y'", "y2", "y")
_OTHER_SLOT = {5: "FL", 6: "BL", 7: "BR", 9: "FL", 10: "BL", 11: "BR"}


@dataclass(frozen=True)
class Stage:
    """One step of the solution: ``moves`` are ``solution.moves[start:end]``."""

    name: str  # "cross", "F2L 1" .. "F2L 4", "OLL", "PLL"
    moves: tuple[Move, ...]
    start: int
    case: str | None = None  # the rule used: "OLL 27 (Sune)", "PLL T", the pair's case
    slot: str | None = None  # F2L: which slot, FR FL BL BR

    @property
    def end(self) -> int:
        return self.start + len(self.moves)

    def to_dict(self) -> dict:
        out: dict = {"name": self.name, "moves": format_moves(self.moves),
                     "start": self.start, "end": self.end}
        if self.case is not None:
            out["case"] = self.case
        if self.slot is not None:
            out["slot"] = self.slot
        return out


@dataclass(frozen=True)
class CfopSolution:
    """All the moves, and the stages they belong to, in order."""

    moves: tuple[Move, ...]
    stages: tuple[Stage, ...]
    elapsed_ms: float

    @property
    def length(self) -> int:
        return len(self.moves)

    def stage_of(self, index: int) -> Stage:
        """The stage that move number ``index`` (0-based) belongs to."""
        for stage in self.stages:
            if stage.start <= index < stage.end:
                return stage
        raise IndexError(f"move {index} of a {self.length}-move solution")

    def to_dict(self) -> dict:
        return {"moves": format_moves(self.moves), "length": self.length,
                "stages": [s.to_dict() for s in self.stages]}


def slot_solved(cube: Cube, k: int) -> bool:
    c, e = 4 + k, 8 + k
    return cube.cp[c] == c and cube.co[c] == 0 and cube.ep[e] == e and cube.eo[e] == 0


def f2l_solved(cube: Cube) -> bool:
    return cross_solved(cube) and all(slot_solved(cube, k) for k in range(4))


def last_layer_oriented(cube: Cube) -> bool:
    return not any(cube.co[:4]) and not any(cube.eo[:4])


# -- F2L -------------------------------------------------------------------

Plan = list[tuple[str, tuple[Move, ...]]]
"""(what it does, moves in the front-right view), step by step."""


def _plan_pair(view: Cube, k: int, depth: int = 0) -> Plan | None:
    """How to put the front-right pair of ``view`` home (None: not within
    two extractions, which only happens when an extraction puts the other
    piece back into a slot; another of the three extractions does not).
    ``k`` is the real slot the view shows at front right, to name others."""
    cs, co, es, eo = patterns.f2l_key(view)
    if (cs, co, es, eo) == (4, 0, 8, 0):
        return []
    stuck = _OTHER_SLOT.get(cs) or _OTHER_SLOT.get(es)
    if stuck is not None:
        if depth >= 2:
            return None
        best: Plan | None = None
        for moves in extractions()[stuck]:
            rest = _plan_pair(view.apply(moves), k, depth + 1)
            if rest is not None and (best is None or len(moves) + _length(rest) < _length(best)):
                real = SLOTS[(SLOTS.index(stuck) + k) % 4]
                best = [(f"take a piece out of {real}", moves), *rest]
        return best
    found = f2l_lookup().get((cs, co, es, eo))
    if found is None:
        raise SolverFault(f"F2L: no rule for the placement {patterns.f2l_pattern((cs, co, es, eo))}")
    rule, k = found
    return [(rule.name, AUF_MOVES[k] + rule.moves)]


def _length(plan: Plan) -> int:
    return sum(len(m) for _, m in plan)


def _in_frame(k: int, moves: tuple[Move, ...]) -> list[Move]:
    """Moves planned in slot k's front-right view, as turns of the real cube."""
    return to_face_turns(f"{_Y_TEXT[k]} {format_moves(moves)}")


def slot_view(cube: Cube, k: int) -> Cube:
    """The cube turned (y' k times) so that slot k is at front right."""
    return _Y_POWERS[k] * cube * _Y_POWERS[k].inverse()


def plan_slot(cube: Cube, k: int) -> tuple[list[str], list[Move]]:
    """The steps (in words) and the moves that put slot k's pair home."""
    plan = _plan_pair(slot_view(cube, k), k)
    if plan is None:
        raise SolverFault(f"F2L: no plan for slot {SLOTS[k]}")
    return [what for what, _ in plan], [m for _, part in plan for m in _in_frame(k, part)]


def _next_pair(cube: Cube) -> tuple[int, Plan]:
    """The unsolved slot with the shortest plan, and that plan."""
    options = []
    for k in range(4):
        if not slot_solved(cube, k):
            view = slot_view(cube, k)
            plan = _plan_pair(view, k)
            if plan is None:
                raise SolverFault(f"F2L: no plan for slot {SLOTS[k]}")
            options.append((_length(plan), k, plan))
    _, k, plan = min(options, key=lambda o: (o[0], o[1]))
    return k, plan


# -- the whole solve -----------------------------------------------------------

def solve_cfop(cube: Cube) -> CfopSolution:
    """Solve ``cube`` stage by stage, checking each stage's goal after it."""
    t0 = time.perf_counter()
    stages: list[Stage] = []
    moves: list[Move] = []

    def record(name: str, turns: list[Move], case: str | None = None, slot: str | None = None) -> Cube:
        turns = simplify(turns)
        stages.append(Stage(name, tuple(turns), len(moves), case, slot))
        moves.extend(turns)
        return cube.apply(turns)

    cube = record("cross", solve_cross(cube))
    if not cross_solved(cube):
        raise SolverFault("cross: the cross is not solved after its stage")
    done: list[int] = []
    for number in range(1, 5):
        if all(slot_solved(cube, k) for k in range(4)):
            break
        k, plan = _next_pair(cube)
        turns = [m for _, part in plan for m in _in_frame(k, part)]
        case = "; ".join(what for what, _ in plan)
        if k:  # the rules' words are for the pair at front right
            case = f"turned to front right: {case}"
        cube = record(f"F2L {number}", turns, case, SLOTS[k])
        done.append(k)
        if not (cross_solved(cube) and all(slot_solved(cube, s) for s in done)):
            raise SolverFault(f"F2L {number}: slot {SLOTS[k]} or an earlier pair or the cross is not solved")
    if not f2l_solved(cube):
        raise SolverFault("F2L: the first two layers are not solved after four pairs")

    if last_layer_oriented(cube):
        cube = record("OLL", [], "skip")
    else:
        rule, k = oll_lookup()[patterns.oll_key(cube)]
        name = f"{rule.name} ({oll_shapes()[rule.name]})"
        cube = record("OLL", list(AUF_MOVES[k] + rule.moves), name)
    if not (f2l_solved(cube) and last_layer_oriented(cube)):
        raise SolverFault("OLL: the last layer is not oriented (or the first two layers broke)")

    found = pll_lookup().get(patterns.pll_key(cube))
    pll: list[Move] = []
    case = "skip"
    if found is not None:
        rule, k = found
        pll = list(AUF_MOVES[k] + rule.moves)
        case = rule.name
    after = cube.apply(pll)
    auf = next((j for j in range(4) if (after * AUF_CUBES[j]).is_solved()), None)
    if auf is None:
        raise SolverFault(f"PLL: {case} does not leave the last layer one turn of U from solved")
    cube = record("PLL", pll + list(AUF_MOVES[auf]), case)
    if not cube.is_solved():
        raise SolverFault("PLL: the cube is not solved")
    return CfopSolution(tuple(moves), tuple(stages), (time.perf_counter() - t0) * 1000)
