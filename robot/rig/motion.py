"""From face turns to motor commands.

A step of a solution is one face turn, or two turns of opposite faces done
at the same time by their two motors (they never collide: they share an axis).
Each becomes one MOVE: motor numbers and signed step counts, with the
config's direction inversion applied, and an overlap where corner cutting is
allowed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from solver import FACES, Move, group_steps, parse_moves

from .timing import PlannedMove, sequence_ticks, ticks_to_s

if TYPE_CHECKING:
    from .config import Config

AXIS = (0, 1, 2, 0, 1, 2)  # U R F D L B -> U/D, R/L, F/B


@dataclass(frozen=True)
class MotorStep:
    """One MOVE: the face turns it makes and what each motor does."""

    moves: tuple[Move, ...]
    parts: tuple[tuple[int, int], ...]  # (motor index, signed steps)
    overlap: int = 0

    @property
    def text(self) -> str:
        return " ".join(str(m) for m in self.moves)

    def planned(self) -> PlannedMove:
        return PlannedMove(self.parts, self.overlap)


def motor_steps(move: Move, config: Config) -> tuple[int, int]:
    """``(motor, signed steps)``: clockwise is positive unless the motor is inverted."""
    mc = config.motors[FACES[move.face]]
    quarters = {1: 1, 2: 2, 3: -1}[move.power]
    steps = quarters * mc.steps_per_quarter
    return mc.motor, -steps if mc.invert else steps


Moves = str | Iterable[Move] | Iterable[str | Iterable[Move | str]]
"""A move sequence (text or Move objects), or steps already grouped (each a
string or a sequence of Moves or move strings)."""


def plan(moves: Moves, config: Config) -> list[MotorStep]:
    """Motor commands for a move sequence (or already grouped steps)."""
    if isinstance(moves, str):
        groups = group_steps(moves)
    else:
        items: list[Any] = list(moves)
        if items and not isinstance(items[0], Move):
            # grouped steps, as Move objects or as text ("U", "D'")
            groups = [parse_moves(g if isinstance(g, str) else " ".join(str(m) for m in g)) for g in items]
        else:
            groups = group_steps(items)
    overlap_deg = config.rig.overlap_deg
    out: list[MotorStep] = []
    for group in groups:
        parts = tuple(motor_steps(m, config) for m in group)
        overlap = 0
        if overlap_deg > 0 and out:
            prev = out[-1]
            if AXIS[prev.moves[0].face] != AXIS[group[0].face]:
                spq = min(config.motor_for_index(m).steps_per_quarter for m, _ in prev.parts)
                overlap = int(overlap_deg / 90 * spq)
        out.append(MotorStep(tuple(group), parts, overlap))
    return out


def estimate_s(steps: list[MotorStep], config: Config) -> float:
    """Seconds the rig needs for these steps with its queue kept full."""
    return ticks_to_s(sequence_ticks([s.planned() for s in steps], config.profiles()))
