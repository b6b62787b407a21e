"""The rule tables turned into cube states and lookup tables.

A :class:`Rule` is one row of a table: its case as a cube (made from the
written pattern), its algorithm as written and as face turns. Each stage's
lookup maps what the engine reads off a cube (:mod:`solver.cfop.patterns`) to
the one rule that applies and the turn of U to make first. Building a lookup
refuses two rules that claim the same case: a table with such a mistake is
never used.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..cubie import SOLVED_CUBE, Cube
from ..moves import Move, parse_moves
from . import patterns
from .f2l_rules import EXTRACT, F2L_RULES
from .notation import to_face_turns
from .oll_rules import OLL_RULES
from .pll_rules import PLL_RULES

AUF_TEXT = ("", "U", "U2", "U'")
AUF_MOVES = tuple(tuple(parse_moves(t)) for t in AUF_TEXT)
AUF_CUBES = tuple(SOLVED_CUBE.apply(t) for t in AUF_TEXT)
"""Turn k of U (k quarter turns clockwise), as text, moves and a cube."""


class RuleConflict(ValueError):
    """Two rules of one stage claim the same case."""


@dataclass(frozen=True)
class Rule:
    stage: str  # "F2L", "OLL" or "PLL"
    name: str  # "OLL 27", "PLL T", or the F2L pattern in words
    pattern: str | tuple[str, ...]
    algorithm: str  # as written in the table
    moves: tuple[Move, ...]  # as face turns
    case: Cube  # the pattern as a cube


def _f2l_name(p: tuple[str, str, str, str]) -> str:
    return f"corner {p[0]} (D colour on {p[1]}), edge {p[2]} (F colour on {p[3]})"


@cache
def oll_rules() -> tuple[Rule, ...]:
    return tuple(Rule("OLL", f"OLL {n}", pic, alg, tuple(to_face_turns(alg)), patterns.oll_cube(pic))
                 for n, _shape, pic, alg in OLL_RULES)


@cache
def oll_shapes() -> dict[str, str]:
    return {f"OLL {n}": shape for n, shape, _pic, _alg in OLL_RULES}


@cache
def pll_rules() -> tuple[Rule, ...]:
    return tuple(Rule("PLL", f"PLL {n}", pat, alg, tuple(to_face_turns(alg)), patterns.pll_cube(pat))
                 for n, pat, alg in PLL_RULES)


@cache
def f2l_rules() -> tuple[Rule, ...]:
    return tuple(Rule("F2L", _f2l_name(p), p, alg, tuple(to_face_turns(alg)), patterns.f2l_cube(p))
                 for p, alg in F2L_RULES)


@cache
def extractions() -> dict[str, tuple[tuple[Move, ...], ...]]:
    """Per other slot (front-right view), the ways of lifting its pieces out."""
    return {slot: tuple(tuple(to_face_turns(a)) for a in algs) for slot, algs in EXTRACT.items()}


Lookup = dict[tuple[int, ...], tuple[Rule, int]]


def _claim(table: Lookup, key: tuple[int, ...], rule: Rule, auf: int) -> None:
    held = table.get(key)
    if held is None:
        table[key] = (rule, auf)
    elif held[0] is not rule:
        raise RuleConflict(f"{held[0].stage}: {held[0].name} and {rule.name} both claim one case")


@cache
def oll_lookup() -> Lookup:
    """Top orientation -> (rule, k): turn U k times, then the rule's algorithm."""
    table: Lookup = {}
    for rule in oll_rules():
        for k in range(4):
            _claim(table, patterns.oll_key(rule.case * AUF_CUBES[k].inverse()), rule, k)
    return table


@cache
def pll_lookup() -> Lookup:
    """Top permutation -> (rule, k), for any turn before and any colour turn."""
    table: Lookup = {}
    for rule in pll_rules():
        for k in range(4):
            for colours in AUF_CUBES:
                _claim(table, patterns.pll_key(colours * rule.case * AUF_CUBES[k].inverse()), rule, k)
    return table


@cache
def f2l_lookup() -> Lookup:
    """Front-right pair placement -> (rule, k)."""
    table: Lookup = {}
    for rule in f2l_rules():
        for k in range(4):
            _claim(table, patterns.f2l_key(rule.case * AUF_CUBES[k].inverse()), rule, k)
    return table
