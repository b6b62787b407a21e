"""CFOP, the method people learn: cross, F2L, OLL, PLL, with rule tables as data.

``solve_cfop(cube)`` gives a :class:`CfopSolution`: all the moves, and the
stages (name, moves, case, and the range ``start:end`` of the moves that
belong to each), so a caller can say which stage each move is part of.
The rules and how they test themselves are described in docs/cfop.md.
"""

from .engine import SLOTS, CfopSolution, Stage, solve_cfop

__all__ = ["SLOTS", "CfopSolution", "Stage", "solve_cfop"]
