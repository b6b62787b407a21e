"""From face turns to motor commands, planned for the least time.

A step of a solution is one face turn, or two turns of opposite faces done
at the same time by their two motors (they never collide: they share an axis).
Each becomes one MOVE: motor numbers and signed step counts, with the
config's direction inversion applied, and an overlap where the cube allows
corner cutting.

The overlap comes from the cube's model (``[cube]``, :class:`OverlapModel`):
for every pair of consecutive steps, how far the previous face may still be
from aligned when the next one starts, by class of transition (quarter or
half before and after; whether the next turn moves the edge the two faces
share the way the previous face is still moving it). A half turn can go
either way round and leaves the cube in the same state, so each half turn's
direction is chosen by dynamic programming over the whole sequence, for the
cheapest transitions before and after it.

The only input is a solution's steps as Move tuples (text is parsed at the
edges: the command line, the web API, the journal). The plan is made once:
its :class:`MotorStep` list is what ``job.run`` and dry-run turn as it is,
:func:`estimate_s` of it is the time shown before the run and the time the
rig then measures, and the journal keeps each step's quarter turns so that
resume rebuilds the same plan (``plan(..., directions=...)``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from solver import FACES, Move, Step, check_step, format_moves

from .timing import PlannedMove, Profile, move_ticks, release_tick, sequence_ticks, ticks_to_s

if TYPE_CHECKING:
    from .config import Config, OverlapModel

AXIS = (0, 1, 2, 0, 1, 2)  # U R F D L B -> U/D, R/L, F/B
HALF_TURNS = ("short", "clockwise")
"""How half turns are given a direction: ``short`` by the dynamic programme
(the cheaper way round for the transitions around them), ``clockwise``
always (as the solver writes them; for measuring the gain)."""


@dataclass(frozen=True)
class MotorStep:
    """One MOVE: the face turns it makes and what each motor does."""

    moves: Step
    parts: tuple[tuple[int, int], ...]  # (motor index, signed steps)
    overlap: int = 0
    quarters: tuple[int, ...] = ()
    """Signed quarter turns of each move, clockwise positive: a half turn
    is +2 or -2 (the cube ends the same either way; the time does not)."""

    @property
    def text(self) -> str:
        return " ".join(str(m) for m in self.moves)

    def planned(self) -> PlannedMove:
        return PlannedMove(self.parts, self.overlap)


def motor_steps(move: Move, config: Config, quarters: int | None = None) -> tuple[int, int]:
    """``(motor, signed steps)``: clockwise is positive unless the motor is
    inverted; ``quarters`` (signed) picks a half turn's direction."""
    mc = config.motors[FACES[move.face]]
    if quarters is None:
        quarters = {1: 1, 2: 2, 3: -1}[move.power]
    steps = quarters * mc.steps_per_quarter
    return mc.motor, -steps if mc.invert else steps


def _directions(group: Sequence[Move], half_turns: str) -> list[tuple[int, ...]]:
    """The signed quarter turns a step may be made of (clockwise first)."""
    each = [(1,) if m.power == 1 else (-1,) if m.power == 3 else
            ((2, -2) if half_turns == "short" else (2,)) for m in group]
    return list(itertools.product(*each))


def _given(group: Step, quarters: Sequence[int]) -> list[tuple[int, ...]]:
    """The one direction a step was planned with (a journal's), checked
    against its moves: ValueError if it turns some face another way."""
    q = tuple(quarters)
    if len(q) != len(group) or q not in _directions(group, "short"):
        raise ValueError(f"the quarter turns {list(q)} do not make the step {format_moves(group)}")
    return [q]


class _Planner:
    """The config's mechanics and overlap model, for pricing transitions."""

    def __init__(self, config: Config, model: OverlapModel | None = None):
        self.config = config
        self.model = model if model is not None else config.overlap_model()
        self.profiles: list[Profile] = config.profiles()
        self.spq = [config.motor_for_index(i).steps_per_quarter for i in range(6)]

    def parts(self, group: Sequence[Move], quarters: Sequence[int]) -> tuple[tuple[int, int], ...]:
        return tuple(motor_steps(m, self.config, q) for m, q in zip(group, quarters))

    def overlap(self, prev: Sequence[Move], prev_q: Sequence[int], prev_parts: Sequence[tuple[int, int]],
                nxt: Sequence[Move], next_q: Sequence[int], next_parts: Sequence[tuple[int, int]]) -> int:
        """The MOVE's overlap in steps: how many steps every motor of the
        previous step may still have to go when this one starts (0: none)."""
        if {m for m, _ in prev_parts} & {m for m, _ in next_parts}:
            return 0
        if AXIS[prev[0].face] == AXIS[nxt[0].face]:
            deg = self.model.parallel
        else:
            deg = min(self.model.angle(abs(qp) == 2, abs(qn) == 2, (qp > 0) != (qn > 0))
                      for qp in prev_q for qn in next_q)
        if deg <= 0:
            return 0
        k = min(int(deg / 90 * self.spq[m] + 1e-9) for m, _ in prev_parts)
        # At least one step of the previous move left: a move that could start
        # with its predecessor's first tick would start a tick later on the rig.
        return max(0, min(k, min(abs(s) for _, s in prev_parts) - 1))

    def gap(self, prev_parts: Sequence[tuple[int, int]], k: int) -> int:
        """Ticks from one move's start to the next one's."""
        if k > 0:
            return release_tick(prev_parts, self.profiles, k)
        return sum(move_ticks(prev_parts, self.profiles))


def plan(steps: Sequence[Step], config: Config, *, half_turns: str | None = None,
         model: OverlapModel | None = None,
         directions: Sequence[Sequence[int]] | None = None) -> list[MotorStep]:
    """The motor commands for ``steps`` (each a tuple of Moves made at once:
    one face turn, or two of opposite faces; :func:`solver.group_steps` makes
    them from moves, :func:`solver.parse_steps` from a journal's text), each
    half turn's direction chosen for the least time (``half_turns``), and
    overlaps from ``model`` (default: the config's, :meth:`Config.overlap_model`).

    ``directions``: each step's signed quarter turns as planned before (the
    :attr:`MotorStep.quarters` a journal keeps), so that a resumed job turns
    the very plan it was started with rather than one chosen again; a
    direction that does not make its step's moves is a ValueError."""
    half_turns = half_turns or config.cube.half_turns
    if half_turns not in HALF_TURNS:
        raise ValueError(f"half_turns must be one of {', '.join(HALF_TURNS)}, not {half_turns!r}")
    if isinstance(steps, str):
        raise TypeError("plan takes steps (tuples of Move), not text: solver.group_steps makes them")
    groups = [check_step(g) for g in steps]
    if directions is not None and len(directions) != len(groups):
        raise ValueError(f"{len(directions)} directions for {len(groups)} steps")
    if not groups:
        return []
    pl = _Planner(config, model)
    options = ([_directions(g, half_turns) for g in groups] if directions is None
               else [_given(g, q) for g, q in zip(groups, directions)])
    parts = [[pl.parts(g, q) for q in opts] for g, opts in zip(groups, options)]
    # best[i][j]: the least ticks from the first step's start to step i's
    # start with option j; back[i][j]: the option of step i - 1 it came from.
    best: list[list[int]] = [[0] * len(options[0])]
    back: list[list[int]] = [[0] * len(options[0])]
    for i in range(1, len(groups)):
        row, came = [], []
        for j, q in enumerate(options[i]):
            cands = [best[i - 1][h] + pl.gap(parts[i - 1][h], pl.overlap(
                groups[i - 1], qp, parts[i - 1][h], groups[i], q, parts[i][j]))
                for h, qp in enumerate(options[i - 1])]
            h = min(range(len(cands)), key=cands.__getitem__)  # the first (clockwise) of equals
            row.append(cands[h])
            came.append(h)
        best.append(row)
        back.append(came)
    j = min(range(len(best[-1])), key=best[-1].__getitem__)
    chosen = [0] * len(groups)
    for i in range(len(groups) - 1, -1, -1):
        chosen[i] = j
        j = back[i][j]
    out: list[MotorStep] = []
    for i, g in enumerate(groups):
        q, p = options[i][chosen[i]], parts[i][chosen[i]]
        k = 0
        if i:
            h = chosen[i - 1]
            k = pl.overlap(groups[i - 1], options[i - 1][h], parts[i - 1][h], g, q, p)
        out.append(MotorStep(g, p, k, q))
    return out


def fastest(candidates: Sequence[Sequence[Step]], config: Config, *,
            half_turns: str | None = None) -> tuple[int, list[MotorStep]]:
    """Which of several solutions' steps the rig finishes first, with its
    plan: ``(index, plan)``; of equally fast ones the first."""
    if not candidates:
        raise ValueError("no candidates to choose from")
    best: tuple[int, int, list[MotorStep]] | None = None
    for i, steps in enumerate(candidates):
        planned = plan(steps, config, half_turns=half_turns)
        t = estimate_ticks(planned, config)
        if best is None or t < best[0]:
            best = (t, i, planned)
    assert best is not None
    return best[1], best[2]


def estimate_s(steps: Sequence[MotorStep], config: Config) -> float:
    """Seconds the rig needs for this plan with its queue kept full."""
    return ticks_to_s(estimate_ticks(steps, config))


def estimate_ticks(steps: Sequence[MotorStep], config: Config) -> int:
    """Ticks the rig needs for this plan with its queue kept full."""
    return sequence_ticks([s.planned() for s in steps], config.profiles())
