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
cheapest transitions before and after it. The plan is made once: its
:class:`MotorStep` list is what ``job.run``, dry-run and resume take, and
:func:`estimate_s` of it is the time the rig then measures.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from solver import FACES, Move, group_steps, parse_moves

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

    moves: tuple[Move, ...]
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


Moves = str | Iterable[Move] | Iterable[str | Iterable[Move | str]]
"""A move sequence (text or Move objects), or steps already grouped (each a
string or a sequence of Moves or move strings)."""


def _groups(moves: Moves) -> list[list[Move]]:
    if isinstance(moves, str):
        return group_steps(moves)
    items: list[Any] = list(moves)
    if items and not isinstance(items[0], Move):
        # grouped steps, as Move objects or as text ("U", "D'")
        return [parse_moves(g if isinstance(g, str) else " ".join(str(m) for m in g)) for g in items]
    return group_steps(items)


def _directions(group: Sequence[Move], half_turns: str) -> list[tuple[int, ...]]:
    """The signed quarter turns a step may be made of (clockwise first)."""
    each = [(1,) if m.power == 1 else (-1,) if m.power == 3 else
            ((2, -2) if half_turns == "short" else (2,)) for m in group]
    return list(itertools.product(*each))


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


def plan(moves: Moves, config: Config, *, half_turns: str | None = None,
         model: OverlapModel | None = None) -> list[MotorStep]:
    """Motor commands for a move sequence (or already grouped steps), each
    half turn's direction chosen for the least time (``half_turns``), and
    overlaps from ``model`` (default: the config's, :meth:`Config.overlap_model`)."""
    half_turns = half_turns or config.cube.half_turns
    if half_turns not in HALF_TURNS:
        raise ValueError(f"half_turns must be one of {', '.join(HALF_TURNS)}, not {half_turns!r}")
    groups = _groups(moves)
    if not groups:
        return []
    pl = _Planner(config, model)
    options = [_directions(g, half_turns) for g in groups]
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
        out.append(MotorStep(tuple(g), p, k, q))
    return out


def fastest(candidates: Sequence[Moves], config: Config, *,
            half_turns: str | None = None) -> tuple[int, list[MotorStep]]:
    """Which of several move sequences the rig finishes first, with its
    plan: ``(index, steps)``; of equally fast ones the first."""
    if not candidates:
        raise ValueError("no candidates to choose from")
    best: tuple[int, int, list[MotorStep]] | None = None
    for i, moves in enumerate(candidates):
        steps = plan(moves, config, half_turns=half_turns)
        t = estimate_ticks(steps, config)
        if best is None or t < best[0]:
            best = (t, i, steps)
    assert best is not None
    return best[1], best[2]


def as_plan(moves: Moves | Sequence[MotorStep], config: Config) -> list[MotorStep]:
    """``moves`` as planned steps: a plan is taken as it is, anything else is planned."""
    if isinstance(moves, Sequence) and not isinstance(moves, str) and moves \
            and all(isinstance(s, MotorStep) for s in moves):
        return list(moves)  # type: ignore[arg-type]
    return plan(moves, config)  # type: ignore[arg-type]


def estimate_s(steps: list[MotorStep], config: Config) -> float:
    """Seconds the rig needs for these steps with its queue kept full."""
    return ticks_to_s(sequence_ticks([s.planned() for s in steps], config.profiles()))


def estimate_ticks(steps: list[MotorStep], config: Config) -> int:
    return sequence_ticks([s.planned() for s in steps], config.profiles())
