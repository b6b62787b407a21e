"""What a solver gives back: the moves, their length and cost, and the steps
a rig turns them in. Shared by the 3x3's two-phase search and the 2x2's
optimal one; a module of its own so the 2x2 needs none of the 3x3's
compiled search to say what it found."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Solution:
    moves: str
    length: int
    cost: float
    elapsed_ms: float
    steps: list[list[str]] = field(default_factory=list)
    metric: str = "htm"
    others: tuple[Solution, ...] = ()
    """Other cheap solutions, cheapest first, when more were asked for
    (``solve(candidates=...)``); not part of :meth:`to_dict`."""

    def to_dict(self) -> dict:
        return {"moves": self.moves, "length": self.length, "cost": self.cost,
                "elapsed_ms": round(self.elapsed_ms, 3), "steps": self.steps}
