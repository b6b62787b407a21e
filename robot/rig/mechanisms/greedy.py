"""The baseline the planner is measured against: one move at a time, as
CUBOTino's controller is described (issue 26).

CUBOTino tracks the cube's orientation and renames faces instead of putting
the cube back, brings each face of the solution down by a fixed rule (front:
one flip; top: two; back: a half spin and a flip; a side: a quarter spin
towards the front and a flip), turns it, and afterwards drops spins that
cancel and flips that add up to nothing. It plans one solution and never
looks ahead. This module follows that description (written from it, not
from CUBOTino's code), through the same mechanism rules as the planner, so
the two are compared on the same moves and the same timing table. The
two-gripper greedy is the same idea for two grippers: a face at a gripper
is turned there, any other is brought to one by a fixed rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver import Move, parse_moves

from .base import Action, Mechanism, State
from .flipper import CLOSE, FLIP, OPEN, Flipper
from .grippers import SLOTS, TwoGripper
from .orientation import face_move, rotate
from .planner import MechanismPlan, replay

U, R, F, D, L, B = range(6)


def greedy(solution: str | Sequence[Move], mech: Mechanism) -> MechanismPlan:
    """The greedy plan of ``solution`` (checked by replaying it through the rules)."""
    moves = parse_moves(solution) if isinstance(solution, str) else list(solution)
    if isinstance(mech, Flipper):
        actions = _tidy(_flipper(moves, mech), mech)
    elif isinstance(mech, TwoGripper):
        actions = _tidy(_grippers(moves, mech), mech)
    else:
        raise ValueError(f"no greedy planner for a {mech.kind} rig")
    return replay(actions, mech, expect=moves)


class _Run:
    """Actions appended one by one, the state kept up to date."""

    def __init__(self, mech: Mechanism):
        self.mech = mech
        self.state: State = mech.start()
        self.actions: list[Action] = []

    def do(self, action: Action) -> None:
        self.state = self.mech.apply(self.state, action).after
        self.actions.append(action)


def _flipper(moves: list[Move], mech: Flipper) -> list[Action]:
    run = _Run(mech)
    for mv in moves:
        _bring_down(run, mv.face, mech)
        q = {1: 1, 3: -1, 2: 2}[mv.power]
        pos = run.state[1]
        if mv.power == 2 and not mech.lo <= pos + 2 <= mech.hi:
            q = -2
        if not mech.lo <= pos + q <= mech.hi:
            # the turntable is at its end stop: spin back (the bottom stays down)
            _open(run)
            for back in (-q // abs(q), -2 * q // abs(q), q // abs(q), 2 * q // abs(q)):
                if mech.lo <= pos + back <= mech.hi and mech.lo <= pos + back + q <= mech.hi:
                    run.do(Action("spin", "", back))
                    break
        if not run.state[2]:
            run.do(CLOSE)
        run.do(Action("turn", "", q))
    return run.actions


def _open(run: _Run) -> None:
    if run.state[2]:
        run.do(OPEN)


def _bring_down(run: _Run, face: int, mech: Flipper) -> None:
    """CUBOTino's fixed rule: the face to the bottom by flips and spins."""
    slot = run.state[0].index(face)
    if slot == D:
        return
    _open(run)
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


def _grippers(moves: list[Move], mech: TwoGripper) -> list[Action]:
    run = _Run(mech)
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


def _tidy(actions: list[Action], mech: Mechanism) -> list[Action]:
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
            if trial is not None and _valid(trial, mech, actions):
                out = trial
                changed = True
                break
    return out


def _valid(actions: list[Action], mech: Mechanism, original: list[Action]) -> bool:
    """Every move possible and the same layer turns as ``original``."""
    from .base import ImpossibleMove

    def turns(seq: list[Action]) -> list[Move] | None:
        state = mech.start()
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
