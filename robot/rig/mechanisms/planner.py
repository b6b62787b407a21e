"""From a face-turn solution to robot moves, exactly the cheapest.

The solution names faces of the cube; the rig can turn only the faces in
the slots its turntable or grippers hold, so it must reorient the cube
(and regrip, and open and close) between turns. Which reorientation is best
depends on every turn after it, so the plan is a shortest path: nodes are
``(mechanism state, how much of the solution is done)``, edges are the
mechanism's possible moves (:meth:`Mechanism.steps`), priced by its own
timing table, and an edge that turns a layer is allowed only when that
layer, in the orientation the rig holds, makes the solution's next turn.
Dijkstra over that graph gives the least time (then the fewest moves) for
the solution as given; nothing cheaper exists for it, which
tests/test_mechanisms.py checks against a brute-force search. It can
minimise the robot moves first instead, or the price the search in the
mechanism's own metric uses (robot/rig/mechanisms/search.py): planned
seconds plus :data:`MOVE_WEIGHT` per robot move, so the plan a rig makes
is the one the search priced.

Two turns of opposite faces commute (they share no piece), so the search
may make them in either order: ``U D`` is the same cube as ``D U``, and on a
flipper one order may save two flips.

The solver hands several solutions (``solve(candidates=N)``); :func:`cheapest`
plans each and keeps the one the mechanism does best, as the six-motor
planner does (robot/rig/motion.py ``fastest``).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from solver import Move, parse_moves

from ..config import Config
from .base import Action, ImpossibleMove, Mechanism, Outcome, State
from .orientation import HeldCube, face_move, name

_NEVER = (float("inf"), float("inf"))
OBJECTIVES = ("time", "moves", "weighed")
"""What the search minimises first: the planned seconds, the robot moves
(the other breaks ties), or the seconds plus a weight per robot move
(fewer moves break ties)."""
MOVE_WEIGHT = 0.05
"""Default price of one robot move, in seconds, added to the planned time
by the ``weighed`` objective: it breaks ties between equally fast plans
towards fewer moves and leans a little towards fewer moves where the time
is nearly the same (a robot move is wear, and a chance to slip)."""


@dataclass(frozen=True)
class MechanismPlan:
    """The robot moves for one solution, with what they cost and do."""

    actions: tuple[Action, ...]
    seconds: float
    solution: tuple[Move, ...]
    """The solution as planned (maybe with commuting turns swapped)."""
    end: State

    @property
    def moves(self) -> int:
        """Robot moves: every flip, spin, grip change and layer turn is one."""
        return len(self.actions)

    def weighed(self, move_weight: float = MOVE_WEIGHT) -> float:
        """The plan's price in the ``weighed`` objective: its seconds plus
        ``move_weight`` per robot move."""
        return self.seconds + move_weight * self.moves

    @property
    def text(self) -> str:
        return ", ".join(str(a) for a in self.actions)


def mechanism_for(config: Config) -> Mechanism | None:
    """The config's mechanism (``[rig] kind``), or None for a six-motor rig
    (robot/rig/motion.py plans that one)."""
    from .flipper import Flipper  # lazy: out of --help's start-up
    from .grippers import TwoGripper  # lazy: out of --help's start-up

    kind = config.rig.kind
    if kind == "flipper":
        return Flipper.from_config(config)
    if kind == "two-gripper":
        return TwoGripper.from_config(config)
    return None


def _same_axis(a: Move, b: Move) -> bool:
    return a.face % 3 == b.face % 3


def plan(solution: str | Sequence[Move], mech: Mechanism, start: State | None = None, *,
         objective: str = "time", reorder: bool = True, move_weight: float = MOVE_WEIGHT) -> MechanismPlan:
    """The cheapest robot moves that make ``solution`` from ``start`` (the
    mechanism's own start when None), cheapest by ``objective``
    (:data:`OBJECTIVES`; ``move_weight`` is the weighed one's price of a
    robot move). ``reorder``: may swap two consecutive turns of opposite
    faces."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, not {objective!r}")
    moves = tuple(parse_moves(solution)) if isinstance(solution, str) else tuple(solution)
    n = len(moves)
    s0 = mech.start() if start is None else start
    g = mech.graph
    if s0 not in g.number:
        raise ImpossibleMove(f"the {mech.kind} rig cannot reach {mech.describe(s0)} from its start")
    w = move_weight if objective == "weighed" else 0.0
    by_moves = objective == "moves"
    may_swap = [reorder and i + 1 < n and _same_axis(moves[i], moves[i + 1]) for i in range(n)]
    # node: (state number, i, swapped): the first i turns are done, and with
    # swapped, turn i + 1 too (made before turn i, which it commutes with)
    first = (g.number[s0], 0, False)
    # cost: (primary, secondary) = (seconds, moves), (moves, seconds) or (seconds + w moves, moves)
    best: dict[tuple[int, int, bool], tuple[float, float]] = {first: (0.0, 0.0)}
    back: dict[tuple[int, int, bool], tuple[tuple[int, int, bool], Action]] = {}
    tie = itertools.count()
    heap: list[tuple[float, float, int, tuple[int, int, bool]]] = [(0.0, 0.0, next(tie), first)]
    goal = None
    while heap:
        c0, c1, _, node = heapq.heappop(heap)
        if best[node] < (c0, c1):
            continue  # a stale entry: a cheaper way here was found since
        k, i, swapped = node
        if i == n:
            goal = node
            break
        for action, after, seconds, made in g.edges[k]:
            if made is not None:
                if not swapped and made == moves[i]:
                    nxt = (after, i + 1, False)
                elif not swapped and may_swap[i] and made == moves[i + 1]:
                    nxt = (after, i, True)
                elif swapped and made == moves[i]:
                    nxt = (after, i + 2, False)
                else:
                    continue
            else:
                nxt = (after, i, swapped)
            c = (c0 + 1, c1 + seconds) if by_moves else (c0 + seconds + w, c1 + 1)
            if c < best.get(nxt, _NEVER):
                best[nxt] = c
                back[nxt] = (node, action)
                heapq.heappush(heap, (c[0], c[1], next(tie), nxt))
    if goal is None:
        raise ImpossibleMove(f"the {mech.kind} rig cannot make {' '.join(map(str, moves))} from "
                             f"{mech.describe(s0)}")
    actions: list[Action] = []
    node = goal
    while node != first:
        node, action = back[node]
        actions.append(action)
    actions.reverse()
    return replay(actions, mech, s0, moves)


def replay(actions: Sequence[Action], mech: Mechanism, start: State | None = None,
           expect: Sequence[Move] | None = None) -> MechanismPlan:
    """``actions`` made one by one through the mechanism's rules: their time,
    the turns they make and the state they end in (ImpossibleMove at the
    first impossible one; ValueError if ``expect`` is given and the turns are
    neither it nor it with commuting neighbours swapped)."""
    state = mech.start() if start is None else start
    seconds = 0.0
    made: list[Move] = []
    for a in actions:
        out = mech.apply(state, a)
        if out.turn is not None:
            made.append(face_move(mech.orientation(state), *out.turn))
        seconds += out.seconds
        state = out.after
    if expect is not None and not _same_turns(made, list(expect)):
        raise ValueError(f"the robot moves make {' '.join(map(str, made))}, not {' '.join(map(str, expect))}")
    return MechanismPlan(tuple(actions), seconds, tuple(made), state)


def _same_turns(made: list[Move], expect: list[Move]) -> bool:
    if len(made) != len(expect):
        return False
    i = 0
    while i < len(made):
        if made[i] == expect[i]:
            i += 1
        elif i + 1 < len(made) and _same_axis(expect[i], expect[i + 1]) \
                and (made[i], made[i + 1]) == (expect[i + 1], expect[i]):
            i += 2
        else:
            return False
    return True


def apply_to_cube(facelets: str, actions: Sequence[Action], mech: Mechanism,
                  start: State | None = None) -> HeldCube:
    """The cube after the robot moves, moved sticker by sticker as the rig
    moves it (layer turns and whole-cube turns on :class:`HeldCube`), apart
    from the planner's own arithmetic: the check that a plan does what it
    says."""
    cube = HeldCube(facelets)
    state = mech.start() if start is None else start
    for a in actions:
        out: Outcome = mech.apply(state, a)
        if out.turn is not None:
            cube.turn(*out.turn)
        else:
            before, after = mech.orientation(state), mech.orientation(out.after)
            if before != after:
                _rotate_to(cube, a, mech)
        state = out.after
    return cube


def _rotate_to(cube: HeldCube, action: Action, mech: Mechanism) -> None:
    """The whole-cube turn a move makes, from the move itself (which slot's
    axis, how many quarters), not from the orientations the rules computed."""
    if action.kind == "flip":
        cube.rotate(4, 1)  # tipped forward: clockwise seen from the left
    elif action.kind == "spin":
        cube.rotate(3, action.quarters)
    elif action.kind == "rotate":
        cube.rotate({"D": 3, "L": 4}[action.part], action.quarters)
    else:  # pragma: no cover - every mechanism's whole-cube turns are above
        raise ValueError(f"{action} turned the whole cube")


def cheapest(candidates: Sequence[str | Sequence[Move]], mech: Mechanism, *,
             objective: str = "time", start: State | None = None,
             move_weight: float = MOVE_WEIGHT) -> tuple[int, MechanismPlan]:
    """Which of several solutions the mechanism makes cheapest from ``start``
    (where the scan left the cube; None: the mechanism's start) by
    ``objective`` (as :func:`plan`), with its plan: ``(index, plan)``; of
    equal ones the first."""
    if not candidates:
        raise ValueError("no candidates to choose from")
    best: tuple[tuple[float, float], int, MechanismPlan] | None = None
    for i, c in enumerate(candidates):
        p = plan(c, mech, objective=objective, start=start, move_weight=move_weight)
        key = {"time": (p.seconds, p.moves), "moves": (p.moves, p.seconds),
               "weighed": (p.weighed(move_weight), p.moves)}[objective]
        if best is None or key < best[0]:
            best = (key, i, p)
    assert best is not None
    return best[1], best[2]


def parking(mech: Mechanism, state: State) -> tuple[Action, ...] | None:
    """The fewest robot moves that leave the cube as it is (no layer turned,
    the cube not turned) and bring the parts to where homing can take them
    home (:meth:`Mechanism.homing`). A job or a scan may end with a
    two-gripper's jaws across, which homing cannot square (its steppers
    have no home): the next job, planned from square jaws, would jam. Every
    run ends parked. None: no such moves (not met on either kind)."""
    from collections import deque

    seen = {state}
    todo: deque[tuple[State, tuple[Action, ...]]] = deque([(state, ())])
    while todo:
        here, path = todo.popleft()
        if mech.homing(here) is not None:
            return path
        for action, out in mech.steps(here):
            still = out.turn is None and mech.orientation(out.after) == mech.orientation(here)
            if still and out.after not in seen:
                seen.add(out.after)
                todo.append((out.after, (*path, action)))
    return None


def park(mech: Mechanism, state: State, do: Callable[[Action], None],
         moved: Callable[[State], None] | None = None) -> State:
    """Make :func:`parking`'s moves from ``state`` through ``do`` (which
    makes one on the rig, or raises), telling ``moved`` each state as it is
    reached; returns the parked state (``state`` itself when no move is
    needed or none is found)."""
    for action in parking(mech, state) or ():
        do(action)
        state = mech.apply(state, action).after
        if moved is not None:
            moved(state)
    return state


def summary(p: MechanismPlan) -> str:
    """One line for the terminal: robot moves, planned time, end orientation."""
    return f"{p.moves} robot moves, {p.seconds:.1f} s planned, ends {name(p.end[0])}"
