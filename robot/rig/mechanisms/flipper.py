"""The flipper-and-turntable rig (CUBOTino and its kind).

The cube sits in a turntable that holds its bottom layer. A cover above
either holds the top two layers (*closed*: the turntable then turns the
bottom layer) or lets them go (*open*: the turntable spins the whole cube).
A flipper tips the cube forward, front face down (a quarter turn of the
whole cube, clockwise seen from the left). Only the bottom face can be
turned, so every other face is brought down first.

The flipper is either a servo of its own, which can tip the cube only
while the cover is open, or the cover itself, as on CUBOTino and the LEGO
robots: the cover's lifter rises past open to tip the cube and comes down
open or closed (``FLIP`` and ``FLIP_CLOSE``), from either. Then a layer
turn, a flip and the next turn need no opening and closing in between; only
a spin does.

The turntable is a hobby servo: it stands at a whole number of quarter
turns from its home angle, within its range (a 180-degree servo reaches one
quarter either way), and a layer turn moves it as a spin does. So the
direction of each turn matters: a turn that leaves the turntable at its end
stop forces the next move the other way. The state is
``(orientation, turntable quarters from home, cover closed)``; the planner
chooses directions with everything else.
"""

from __future__ import annotations

from ..config import Config, ServoConfig
from .base import Action, ImpossibleMove, Mechanism, Outcome, State
from .orientation import HOME, name, rotate

D_SLOT, L_SLOT = 3, 4

FLIP = Action("flip")
FLIP_CLOSE = Action("flip", "close")
"""A flip by a cover that flips, coming down closed (``FLIP`` comes down open)."""
OPEN = Action("open", "cover")
CLOSE = Action("close", "cover")


class Flipper(Mechanism):
    """The rules and the timing table of a flipper rig."""

    kind = "flipper"

    def __init__(self, table: ServoConfig, cover: ServoConfig, flipper: ServoConfig | None = None):
        home = table.angle("home_deg")
        self.lo = -int(home // 90 + 1e-9)
        self.hi = int((table.range_deg - home) // 90 + 1e-9)
        self.quarter_s = table.travel_s(90.0)
        self.half_s = table.travel_s(180.0)
        self.cover_s = cover.travel_s(cover.angle("closed_deg") - cover.angle("open_deg"))
        self.cover_flips = flipper is None
        """The cover is the flipper (no flipper servo): see the module's docstring."""
        if flipper is None:
            up = {c: cover.travel_s(cover.angle("flip_deg") - cover.angle(f"{c}_deg"))
                  for c in ("open", "closed")}
            # (cover closed before, comes down closed): seconds
            self.flip_times = {(a, b): up[a] + up[b] for a in ("open", "closed") for b in ("open", "closed")}
            self.flip_s = self.flip_times[("open", "open")]
            self.servos = {"turntable": table, "cover": cover}
        else:
            self.flip_s = 2 * flipper.travel_s(flipper.angle("flip_deg") - flipper.angle("rest_deg"))
            self.servos = {"turntable": table, "cover": cover, "flipper": flipper}

    @classmethod
    def from_config(cls, config: Config) -> Flipper:
        s = config.servos
        return cls(s["turntable"], s["cover"], s.get("flipper"))

    def start(self) -> State:
        """As the cube is put in: home orientation, turntable at home, cover open."""
        return (HOME, 0, False)

    def actions(self, state: State) -> tuple[Action, ...]:
        _, _, closed = state
        by_cover = (FLIP, FLIP_CLOSE) if self.cover_flips else ()  # a flip from either cover position
        if closed:
            return (OPEN,) + tuple(Action("turn", "", q) for q in (1, -1, 2, -2)) + by_cover
        return (CLOSE,) + (by_cover or (FLIP,)) + tuple(Action("spin", "", q) for q in (1, -1, 2, -2))

    def apply(self, state: State, action: Action) -> Outcome:
        o, pos, closed = state
        k = action.kind
        if k in ("open", "close"):
            if (k == "close") == closed:
                raise ImpossibleMove(f"the cover is already {'closed' if closed else 'open'}")
            return Outcome((o, pos, not closed), self.cover_s)
        if k == "flip":
            if action.part not in ("", "close"):
                raise ImpossibleMove(f"a flip comes down open or closed ('flip' or 'flip close'), "
                                     f"not {action}")
            after = rotate(o, L_SLOT, 1)
            if not self.cover_flips:
                if action.part:
                    raise ImpossibleMove("the flipper cannot close the cover: 'flip', then 'close'")
                if closed:
                    raise ImpossibleMove("flip with the cover closed: the cover holds the cube down")
                return Outcome((after, pos, closed), self.flip_s)
            ends = action.part == "close"
            seconds = self.flip_times[("closed" if closed else "open", "closed" if ends else "open")]
            return Outcome((after, pos, ends), seconds)
        if k in ("spin", "turn"):
            q = action.quarters
            if q not in (1, -1, 2, -2):
                raise ImpossibleMove(f"the turntable turns 1 or 2 quarters either way, not {q}")
            if not self.lo <= pos + q <= self.hi:
                raise ImpossibleMove(f"the turntable at {pos:+d} quarters cannot go {q:+d}: its range is "
                                     f"{self.lo:+d} to {self.hi:+d}")
            seconds = self.quarter_s if abs(q) == 1 else self.half_s
            if k == "spin":
                if closed:
                    raise ImpossibleMove("spin with the cover closed: that would turn the bottom layer")
                return Outcome((rotate(o, D_SLOT, q), pos + q, closed), seconds)
            if not closed:
                raise ImpossibleMove("turn with the cover open: the whole cube would spin")
            return Outcome((o, pos + q, closed), seconds, (D_SLOT, q))
        raise ImpossibleMove(f"a flipper rig has no move {action}")

    def homing(self, state: State) -> tuple[Action, ...] | None:
        """The cover opens, then the turntable goes home and spins the cube with it."""
        _, pos, closed = state
        return ((OPEN,) if closed else ()) + ((Action("spin", "", -pos),) if pos else ())

    def describe(self, state: State) -> str:
        o, pos, closed = state
        return f"orientation {name(o)}, turntable {pos:+d}, cover {'closed' if closed else 'open'}"
