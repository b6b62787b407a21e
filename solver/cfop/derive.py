"""How the F2L table was made, kept so it can be made again and checked.

    python -m solver.cfop.derive          # prints the F2L rows of f2l_rules.py

For each place the front-right pair can be in (corner and edge in the top
layer or in their own slot: 150 placements, 42 cases once a turn of U is
allowed before), a meet-in-the-middle search finds the shortest sequence of
R, U and F turns that solves the pair and leaves the cross and the other
three slots exactly as they were. The table stores, per case, the
placement whose answer is shortest and does not start with a U turn (the
engine turns U to reach it), like the usual 41 cases on a teacher's sheet.

Nothing at run time imports this module; ``tests/test_cfop.py`` checks the
stored table on its own terms.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..cubie import MOVE_CUBES
from ..moves import Move, format_moves
from .patterns import f2l_pattern

_FACES = (0, 1, 2)  # U R F: the turns a person uses for a front-right pair
_MOVES = [3 * f + p for f in _FACES for p in range(3)]
_CORNERS = (4, 5, 7)  # DFR (the pair's), DLF and DRB: the ones R, U, F can disturb
_EDGES = (4, 5, 8, 9, 11)  # DR, DF (cross), FR (the pair's), FL, BR

State = tuple[int, ...]


def _tables() -> tuple[list[list[int]], list[list[int]]]:
    """Per move: corner (slot*3+twist) and edge (slot*2+flip) after the turn."""
    corner, edge = [], []
    for m in range(18):
        mc = MOVE_CUBES[m]
        c = [0] * 24
        e = [0] * 24
        for i in range(8):
            for o in range(3):
                c[mc.cp[i] * 3 + o] = i * 3 + (o + mc.co[i]) % 3
        for i in range(12):
            for o in range(2):
                e[mc.ep[i] * 2 + o] = i * 2 + (o + mc.eo[i]) % 2
        corner.append(c)
        edge.append(e)
    return corner, edge


_CT, _ET = _tables()
GOAL: State = tuple(p * 3 for p in _CORNERS) + tuple(p * 2 for p in _EDGES)


def turn(state: State, m: int) -> State:
    c, e = _CT[m], _ET[m]
    return tuple(c[x] for x in state[:3]) + tuple(e[x] for x in state[3:])


def _sequences(depth: int, last: int = -1) -> Iterator[list[int]]:
    """All move sequences of exactly ``depth`` turns, no face twice in a row."""
    if depth == 0:
        yield []
        return
    for m in _MOVES:
        if m // 3 == last:
            continue
        for rest in _sequences(depth - 1, m // 3):
            yield [m, *rest]


def goal_table(depth: int) -> dict[State, list[int]]:
    """Every state within ``depth`` turns of the goal, with the shortest way
    from the goal to it (breadth first)."""
    table: dict[State, list[int]] = {GOAL: []}
    frontier = [GOAL]
    for _ in range(depth):
        nxt = []
        for s in frontier:
            path = table[s]
            for m in _MOVES:
                if path and path[-1] // 3 == m // 3:
                    continue
                t = turn(s, m)
                if t not in table:
                    table[t] = [*path, m]
                    nxt.append(t)
        frontier = nxt
    return table


def _cost(seq: list[int]) -> tuple[int, int, int]:
    """Shortest first, then fewest F turns, then fewest U turns at the start."""
    return len(seq), sum(1 for m in seq if m // 3 == 2), int(bool(seq) and seq[0] // 3 == 0)


def _pick(seq: list[int]) -> tuple[int, int, int]:
    """Which placement of a case the table shows: one whose answer starts
    with a turn other than U (the engine's own U turn reaches it), shortest."""
    length, f_turns, starts_with_u = _cost(seq)
    return starts_with_u, length, f_turns


def solve_placement(start: State, table: dict[State, list[int]], front: int) -> list[int] | None:
    best: list[int] | None = None
    for d in range(front + 1):
        for seq in _sequences(d):
            s = start
            for m in seq:
                s = turn(s, m)
            back = table.get(s)
            if back is None:
                continue
            cand = seq + [m // 3 * 3 + (2 - m % 3) for m in reversed(back)]
            if best is None or _cost(cand) < _cost(best):
                best = cand
    return best


def placements() -> Iterator[tuple[int, int, int, int]]:
    for cs in (0, 1, 2, 3, 4):
        for co in range(3):
            for es in (0, 1, 2, 3, 8):
                for eo in range(2):
                    yield cs, co, es, eo


def main() -> None:
    table = goal_table(7)
    cases: dict[tuple, tuple[list[int], tuple[int, int, int, int]]] = {}
    for key in placements():
        cs, co, es, eo = key
        start = (cs * 3 + co, 15, 21, 8, 10, es * 2 + eo, 18, 22)
        sol = solve_placement(start, table, 5)
        assert sol is not None, key
        # The case: the placement up to turns of U (pieces in the top layer move).
        variants = []
        for k in range(4):
            c2 = cs if cs >= 4 else (cs + k) % 4
            e2 = es if es >= 8 else (es + k) % 4
            variants.append((c2, co, e2, eo))
        case = min(variants)
        if case not in cases or _pick(sol) < _pick(cases[case][0]):
            cases[case] = (sol, key)
    for _case, (sol, key) in sorted(cases.items(), key=lambda kv: (len(kv[1][0]), kv[0])):
        print(f"    ({f2l_pattern(key)!r}, {format_moves(Move.from_index(m) for m in sol)!r}),")


if __name__ == "__main__":
    main()
