"""What a solver gives back: the moves, their length and cost, and the steps
a rig turns them in. Shared by the 3x3's two-phase search and the 2x2's
optimal one; a module of its own so the 2x2 needs none of the 3x3's
compiled search to say what it found."""

from __future__ import annotations

from dataclasses import dataclass

from .metrics import Step
from .moves import format_moves


@dataclass(frozen=True)
class Solution:
    moves: str
    length: int
    cost: float
    elapsed_ms: float
    steps: tuple[Step, ...] = ()
    """The moves as the rig turns them (:func:`solver.group_steps`), Move
    tuples all the way to the motion planner; :attr:`step_texts` and
    :meth:`to_dict` write them out for people and JSON."""
    metric: str = "htm"
    others: tuple[Solution, ...] = ()
    """Other cheap solutions, cheapest first, when more were asked for
    (``solve(candidates=...)``); not part of :meth:`to_dict`."""

    @property
    def step_texts(self) -> list[str]:
        """Each step as text, ``"U D'"``: for the terminal and the run's events."""
        return [format_moves(s) for s in self.steps]

    def to_dict(self) -> dict:
        """The JSON answer; its ``steps`` are lists of move strings (``[["U", "D'"], ["R2"]]``)."""
        return {"moves": self.moves, "length": self.length, "cost": self.cost,
                "elapsed_ms": round(self.elapsed_ms, 3), "steps": [[str(m) for m in s] for s in self.steps]}
