"""The baselines the planner is measured against: one solver move at a
time, never looking ahead (issue 26).

:func:`cubotino` is CUBOTino's own conversion (AndreaFavero71/cubotino,
``Cubotino_T_moves.py``), rebuilt from the rules its move tables state: it
tracks the cube's orientation and renames faces instead of putting the cube
back; the face to turn comes down by flips only when it is in the flipper's
plane (front one, top two, back three: the flipper tips one way), a side
face by a quarter spin first (towards the front from home; the one spin the
turntable has left otherwise, which may bring it to the back); the turn's
direction is the solver's, so a turntable at its end stop spins back first;
at the end the turntable returns home, and two flips are saved when the last
two turns are on opposite faces reached by three flips and two. The robot
moves its current code makes on the four example solutions in its file,
from both of its starts, are reproduced exactly (tests).

:func:`greedy` is the same idea made stronger, written from CUBOTino's
description before its tables were read: the back face by a half spin and
one flip, no spin back home, and spins that cancel merged. It is kept as a
harder baseline. Both go through the same mechanism rules as the planner,
so all are compared on the same moves and the same timing table. The
two-gripper greedy is the same idea for two grippers: a face at a gripper
is turned there, any other is brought to one by a fixed rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver import Move, parse_moves

from .base import Action, ImpossibleMove, Mechanism, State
from .flipper import CLOSE, FLIP, FLIP_CLOSE, OPEN, Flipper
from .grippers import SLOTS, TwoGripper
from .orientation import face_move, rotate
from .planner import MechanismPlan, replay

U, R, F, D, L, B = range(6)


def greedy(solution: str | Sequence[Move], mech: Mechanism, start: State | None = None) -> MechanismPlan:
    """The greedy plan of ``solution`` from ``start`` (the mechanism's own
    start if None), checked by replaying it through the rules."""
    moves = parse_moves(solution) if isinstance(solution, str) else list(solution)
    start = mech.start() if start is None else start
    if isinstance(mech, Flipper):
        actions = _tidy(_flipper(moves, mech, start), mech, start)
        if mech.cover_flips:
            actions = _cover_moves(actions, start, after_turn=False)
    elif isinstance(mech, TwoGripper):
        actions = _tidy(_grippers(moves, mech, start), mech, start)
    else:
        raise ValueError(f"no greedy planner for a {mech.kind} rig")
    return replay(actions, mech, start, expect=moves)


class _Run:
    """Actions appended one by one, the state kept up to date."""

    def __init__(self, mech: Mechanism, start: State | None = None):
        self.mech = mech
        self.state: State = mech.start() if start is None else start
        self.actions: list[Action] = []

    def do(self, action: Action) -> None:
        self.state = self.mech.apply(self.state, action).after
        self.actions.append(action)


def cubotino(solution: str | Sequence[Move], mech: Flipper, start: State | None = None) -> MechanismPlan:
    """CUBOTino's conversion of ``solution`` on the flipper ``mech`` from
    ``start`` (its own start if None), checked by replaying it through the
    rules. Its tables assume a turntable that reaches one quarter turn either
    way from home (a 180-degree servo), as the example config's does."""
    if (mech.lo, mech.hi) != (-1, 1):
        raise ValueError("CUBOTino's conversion needs a turntable reaching one quarter turn either way "
                         f"from home; this one reaches {mech.lo:+d} to {mech.hi:+d}")
    moves = parse_moves(solution) if isinstance(solution, str) else list(solution)
    start = mech.start() if start is None else start
    run = _Run(mech, start)
    for mv in moves:
        from_home_side = _cubotino_down(run, mv.face)
        _cubotino_turn(run, {1: 1, 3: -1, 2: 2}[mv.power], from_home_side)
    if run.state[1]:
        _cover(run, False)
        run.do(Action("spin", "", -run.state[1]))
    actions = _save_two_flips(run.actions, mech, start, moves)
    if mech.cover_flips:
        actions = _cover_moves(actions, start, after_turn=True)
    return replay(actions, mech, start, expect=moves)


def _cover_moves(actions: list[Action], start: State, *, after_turn: bool) -> list[Action]:
    """The cover's moves again, for a cover that flips the cube: it opens
    for a spin, closes for a turn, and the last flip before either comes
    down the way it needs (CUBOTino's ``flip_to_open`` and ``flip_to_close``).
    ``after_turn``: the cover opens after every turn, as CUBOTino's servo
    code does (``rotate_out``, ``rotate_home``), whatever comes next; else
    only when a spin needs it. The cover stands as ``start`` has it."""
    bare = [a for a in actions if a.kind not in ("open", "close")]
    out: list[Action] = []
    closed = bool(start[2])
    for i, a in enumerate(bare):
        nxt = bare[i + 1] if i + 1 < len(bare) else None
        if a.kind == "flip":
            closed = nxt is not None and nxt.kind == "turn"
            out.append(FLIP_CLOSE if closed else FLIP)
            continue
        if closed != (a.kind == "turn"):
            out.append(CLOSE if a.kind == "turn" else OPEN)
        out.append(a)
        closed = a.kind == "turn"
        if closed and after_turn:
            out.append(OPEN)
            closed = False
    return out


def _cover(run: _Run, closed: bool) -> None:
    """The cover closed (or open), moving it only if it is not already."""
    if run.state[2] != closed:
        run.do(CLOSE if closed else OPEN)


def _cubotino_down(run: _Run, face: int) -> bool:
    """The face to the bottom as CUBOTino brings it; whether it was a side
    face spun from home (its half turns then differ, as its table has it)."""
    o, pos, _ = run.state
    slot = o.index(face)
    side_from_home = slot in (L, R) and pos == 0
    if slot in (L, R):
        q = next(q for q in (1, -1) if rotate(o, D, q)[F] == face) if pos == 0 else -pos
        _cover(run, False)
        run.do(Action("spin", "", q))
        slot = run.state[0].index(face)
    if slot != D:
        _cover(run, False)
        for _ in range({F: 1, U: 2, B: 3}[slot]):
            run.do(FLIP)
    return side_from_home


def _cubotino_turn(run: _Run, q: int, from_home_side: bool) -> None:
    """The bottom layer turned ``q`` quarters, its direction the solver's: a
    quarter turn the turntable cannot make from where it stands is preceded
    by a spin back; a half turn goes from one end stop to the other (from
    home it first spins to the end stop it turns away from)."""
    pos = run.state[1]
    spin = 0
    if abs(q) == 1:
        spin = -pos if pos == q else 0
    elif pos == 0:
        q, spin = 2, -1
    elif pos == 1 and from_home_side:
        q, spin = 2, -2
    else:
        q = -2 * pos
    if spin:
        _cover(run, False)
        run.do(Action("spin", "", spin))
    _cover(run, True)
    run.do(Action("turn", "", q))


def _save_two_flips(actions: list[Action], mech: Flipper, start: State | None,
                    moves: list[Move]) -> list[Action]:
    """CUBOTino's one saving after the conversion: when the last two faces
    came down by three flips and then two, with the same spins and turns
    after each, the first comes down by one flip instead (the two turns are
    then made on the same opposite faces in the other order). Kept only if
    the rules allow it and it makes the same cube."""
    groups = [i for i, a in enumerate(actions) if a == FLIP and (i == 0 or actions[i - 1] != FLIP)]
    if len(groups) < 2:
        return actions
    a, b = groups[-2], groups[-1]

    def run_of(i: int) -> int:
        n = 0
        while i + n < len(actions) and actions[i + n] == FLIP:
            n += 1
        return n

    def rest(i: int, stop: int) -> list[Action]:
        return [x for x in actions[i + run_of(i):stop] if x.kind in ("spin", "turn")]

    if (run_of(a), run_of(b)) != (3, 2):
        return actions
    between, after = rest(a, b), rest(b, len(actions))
    half = {Action("turn", "", 2), Action("turn", "", -2)}

    def same(x: Action, y: Action) -> bool:
        return x == y or {x, y} == half

    if len(after) < len(between) or any(not same(x, y) for x, y in zip(between, after)) \
            or any(x.kind == "turn" for x in after[len(between):]):
        return actions
    trial = actions[:a + 1] + actions[a + 3:]
    try:
        replay(trial, mech, start, expect=moves)
    except (ImpossibleMove, ValueError):
        return actions
    return trial


def _flipper(moves: list[Move], mech: Flipper, start: State) -> list[Action]:
    run = _Run(mech, start)
    for mv in moves:
        _bring_down(run, mv.face, mech)
        q = {1: 1, 3: -1, 2: 2}[mv.power]
        pos = run.state[1]
        if mv.power == 2 and not mech.lo <= pos + 2 <= mech.hi:
            q = -2
        if not mech.lo <= pos + q <= mech.hi:
            # the turntable is at its end stop: spin back (the bottom stays down)
            _cover(run, False)
            for back in (-q // abs(q), -2 * q // abs(q), q // abs(q), 2 * q // abs(q)):
                if mech.lo <= pos + back <= mech.hi and mech.lo <= pos + back + q <= mech.hi:
                    run.do(Action("spin", "", back))
                    break
        _cover(run, True)
        run.do(Action("turn", "", q))
    return run.actions


def _bring_down(run: _Run, face: int, mech: Flipper) -> None:
    """CUBOTino's fixed rule: the face to the bottom by flips and spins."""
    slot = run.state[0].index(face)
    if slot == D:
        return
    _cover(run, False)
    if slot == F:
        run.do(FLIP)
    elif slot == U:
        run.do(FLIP)
        run.do(FLIP)
    elif slot == B:
        pos = run.state[1]
        half = next((q for q in (2, -2) if mech.lo <= pos + q <= mech.hi), None)
        if half is not None:
            run.do(Action("spin", "", half))
            run.do(FLIP)
        else:
            for _ in range(3):
                run.do(FLIP)
    else:  # a side: a quarter spin brings it to the front
        to_front = next(q for q in (1, -1) if rotate(run.state[0], D, q)[F] == face)
        pos = run.state[1]
        q = to_front if mech.lo <= pos + to_front <= mech.hi else -to_front
        run.do(Action("spin", "", q))
        _bring_down(run, face, mech)


def _grippers(moves: list[Move], mech: TwoGripper, start: State) -> list[Action]:
    run = _Run(mech, start)
    for mv in moves:
        o = run.state[0]
        slot = o.index(mv.face)
        if slot not in (D, L):
            # a side face around the bottom gripper's axis goes to the left
            # gripper by a spin of the bottom one; the top goes to the bottom
            # by a half spin of the left one
            g, q = ("L", 2) if slot == U else ("D", next(q for q in (1, -1, 2)
                                                          if rotate(o, D, q)[L] == mv.face))
            _spin(run, g, q)
            slot = run.state[0].index(mv.face)
        g = "D" if slot == D else "L"
        other = "L" if g == "D" else "D"
        _square(run, other)
        _close(run, g)
        q = {1: 1, 3: -1, 2: 2}[mv.power]
        assert face_move(run.state[0], SLOTS[g], q) == mv
        run.do(Action("rotate", g, q))
    return run.actions


def _idx(g: str) -> int:
    return 1 if g == "D" else 2


def _close(run: _Run, g: str) -> None:
    if not run.state[_idx(g)][0]:
        run.do(Action("close", g))


def _square(run: _Run, g: str) -> None:
    """Gripper ``g`` closed with its jaws square (a regrip if they lie across)."""
    closed, across = run.state[_idx(g)]
    if across:
        if closed:
            run.do(Action("open", g))
        run.do(Action("rotate", g, 1))
    _close(run, g)


def _spin(run: _Run, g: str, q: int) -> None:
    """The whole cube turned by gripper ``g``: the other lets go and holds again."""
    other = "L" if g == "D" else "D"
    _close(run, g)
    if run.state[_idx(other)][0]:
        run.do(Action("open", other))
    run.do(Action("rotate", g, q))
    run.do(Action("close", other))


def _tidy(actions: list[Action], mech: Mechanism, start: State) -> list[Action]:
    """Drop what cancels, as CUBOTino does after planning: neighbouring
    spins (or rotations of one gripper in one grip) merged into one, four
    flips in a row and an open straight after a close removed. A merge is
    kept only if the rules still allow the sequence."""
    out = list(actions)
    changed = True
    while changed:
        changed = False
        for i in range(len(out) - 1):
            a, b = out[i], out[i + 1]
            trial = None
            if a.kind == b.kind and a.part == b.part and a.kind in ("spin", "rotate"):
                q = (a.quarters + b.quarters + 4) % 4
                q = {0: 0, 1: 1, 2: 2 if a.quarters + b.quarters > 0 else -2, 3: -1}[q]
                trial = out[:i] + ([Action(a.kind, a.part, q)] if q else []) + out[i + 2:]
            elif {a.kind, b.kind} == {"open", "close"} and a.part == b.part:
                trial = out[:i] + out[i + 2:]
            elif a.kind == "flip" and out[i:i + 4] == [FLIP] * 4:
                trial = out[:i] + out[i + 4:]
            if trial is not None and _valid(trial, mech, start, actions):
                out = trial
                changed = True
                break
    return out


def _valid(actions: list[Action], mech: Mechanism, start: State, original: list[Action]) -> bool:
    """Every move possible and the same layer turns as ``original``."""
    def turns(seq: list[Action]) -> list[Move] | None:
        state = start
        made = []
        for a in seq:
            try:
                out = mech.apply(state, a)
            except ImpossibleMove:
                return None
            if out.turn is not None:
                made.append(face_move(mech.orientation(state), *out.turn))
            state = out.after
        return made

    got = turns(actions)
    return got is not None and got == turns(original)
