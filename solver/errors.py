"""The one error type the solver library raises for bad input.

Callers (the CLI, the vision code, the robot) need to tell *what* was wrong
and *where* without parsing prose, so every error carries a machine-readable
``kind`` and the facelet ``positions`` (0-based indices into the 54-character
string) or token positions it is about.
"""

from __future__ import annotations


class CubeError(ValueError):
    """Invalid cube description or move sequence.

    ``kind`` is one of: ``length``, ``symbols``, ``centers``, ``count``,
    ``corner-impossible``, ``edge-impossible``, ``duplicate-piece``,
    ``corner-twist``, ``edge-flip``, ``parity`` (cube strings) or ``moves``
    (move sequences).
    """

    def __init__(self, kind: str, message: str, positions: list[int] | tuple[int, ...] = ()):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.positions = sorted(set(int(p) for p in positions))

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message, "positions": self.positions}


class SolveError(Exception):
    """A valid cube the solver could not answer as asked. The cube is fine,
    so this is not a :class:`CubeError`.

    ``kind`` is ``max-length`` (no solution of at most ``max_length`` moves
    turned up within the time limit, see :data:`solver.api.REFUSE_AFTER_MS`)
    or ``time-limit`` (no solution at all within the search's hard wall-clock
    limit, see :data:`solver.api.WALL_MARGIN_MS`: the tables are likely
    damaged).
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message}


class SolverFault(RuntimeError):
    """The solver went wrong (a solution that does not solve the cube): a
    bug or damaged tables, never the caller's fault."""
