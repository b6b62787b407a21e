"""What a solution costs: move counts, and the time a six-motor rig needs.

In a rig with one motor per face, two opposite faces can turn at the same
time, so consecutive turns of opposite faces form one *step* that takes as
long as the slower of the two. The robot's motion planner executes exactly
the steps of :func:`group_steps`, so the solver's cost model and the rig's
behaviour cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import CubeError
from .facelets import FACES, OPPOSITE
from .moves import Move, parse_moves

METRICS = ("htm", "qtm", "axial")
"""What a solution's cost counts: face turns, quarter turns, or the six-motor
rig's time (opposite faces together, half turns dearer)."""
RIG_METRICS = (*METRICS, "rig")
"""What a caller with a rig may ask for: the solver's metrics, and ``rig``,
which the solver cannot price alone: it hands several of its cheapest
solutions in the axial metric and the robot plans each with the rig's
motion model (overlaps, half-turn directions; robot/rig/motion.py) and
turns the one whose plan ends first. Listed here, beside the solver's own,
so that the CLI, the config and the web API offer one list."""
METHODS = ("two-phase", "cfop")
"""How a 3x3 is solved: the shortest found by the two-phase search, or the
stages a person turns (cross, F2L, OLL, PLL)."""


Step = tuple[Move, ...]
"""What the rig does at once: one face turn, or two turns of opposite faces
(their motors share an axis and never collide). A solution's steps are
these from the solver to the motion planner; text is for people and files."""


def group_steps(moves: str | Iterable[Move]) -> tuple[Step, ...]:
    """Moves grouped into what the rig does at once: a move joins the step
    before it when that step is a single move on the opposite face."""
    steps: list[list[Move]] = []
    for m in parse_moves(moves):
        if steps and len(steps[-1]) == 1 and OPPOSITE[FACES[steps[-1][0].face]] == m.letter:
            steps[-1].append(m)
        else:
            steps.append([m])
    return tuple(tuple(s) for s in steps)


def check_step(step: Step) -> Step:
    """``step`` if it is one the rig can make at once (a Move, or two Moves of
    opposite faces), else CubeError (kind ``moves``) naming it."""
    ok = (isinstance(step, tuple) and all(isinstance(m, Move) for m in step)
          and (len(step) == 1 or len(step) == 2 and OPPOSITE[step[0].letter] == step[1].letter))
    if not ok:
        what = " ".join(str(m) for m in step) if isinstance(step, tuple | list) else repr(step)
        raise CubeError("moves", f"{what or 'nothing'!r} is not one step: a step is one face turn or "
                                 "two turns of opposite faces")
    return step


def parse_steps(texts: Iterable[str]) -> tuple[Step, ...]:
    """Steps written one to a string (``["U D'", "R2"]``, as a journal or the
    web API has them), each kept as written and checked: CubeError if a
    string is not a move, or its moves are not one step."""
    return tuple(check_step(tuple(parse_moves(t))) for t in texts)


def _turn_cost(m: Move, quarter_cost: float, half_cost: float) -> float:
    return half_cost if m.power == 2 else quarter_cost


def axial_cost(moves: str | Iterable[Move], quarter_cost: float = 1.0, half_cost: float = 1.5) -> float:
    """Time of a sequence on a six-motor rig, in units of a quarter turn:
    the sum over steps of the slowest move in each step."""
    total = sum(max(_turn_cost(m, quarter_cost, half_cost) for m in step)
                for step in group_steps(moves))
    # costs such as 1.2 do not add up exactly in binary: 18, not 17.999999999999996
    return round(float(total), 9)


def cost(moves: str | Iterable[Move], metric: str, quarter_cost: float = 1.0,
         half_cost: float = 1.5) -> float:
    moves = parse_moves(moves)
    if metric == "htm":
        return float(len(moves))
    if metric == "qtm":
        return float(sum(2 if m.power == 2 else 1 for m in moves))
    if metric == "axial":
        return axial_cost(moves, quarter_cost, half_cost)
    raise ValueError(f"unknown metric {metric!r}: choose one of {', '.join(METRICS)}")
