"""Collisions read from the firmware's step pulses (issue 25).

The virtual rig checks the cube's overlap model against its own idea of
where each face is; the firmware in simavr has to be checked by what it
does, not by what it says. The harness's edge log records every STEP and
DIR pin change with its CPU cycle, so each face's angle through time is
known pulse by pulse: this module takes that log and the plan the host
sent, gives each motor's pulses to its moves in order (a motor's pulses
for one move all come before those of its next), and at the cycle a move's
first pulse leaves, measures how far every face still turning from an
earlier move is from aligned. The class of the transition (quarter or
half, with or against) comes from the directions the pulses took, and the
verdict from the same :meth:`Mechanics.collision` the virtual rig uses, so
both rigs answer to one model.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..rig import protocol as P
from ..rig.motion import MotorStep
from ..rig.timing import Profile, schedule, step_ticks
from .virtual_rig import Collision, Mechanics


@dataclass(frozen=True)
class PulsedMove:
    """One planned move as the pins show it: each motor's rising STEP edges
    (CPU cycles) and the signed steps they add up to."""

    index: int
    pulses: dict[int, list[int]]
    signed: dict[int, int]

    @property
    def start(self) -> int:
        return min(c[0] for c in self.pulses.values())

    def command(self) -> P.MoveCommand:
        """The move as the pulses made it, in the protocol's shape for
        :meth:`Mechanics.collision`."""
        (ma, sa), *rest = self.signed.items()
        mb, sb = rest[0] if rest else (P.NO_MOTOR, 0)
        return P.MoveCommand(self.index, ma, sa, mb, sb)


def pulsed_moves(edges: Iterable[tuple[int, str, int]], steps: Sequence[MotorStep]) -> list[PulsedMove]:
    """Each planned move's pulses, from the harness's edge log (``cycle name
    value`` records, as tests/fwtools.read_edges gives them). ValueError if
    a motor made more or fewer pulses than the plan asks, or a move's
    pulses went the wrong way."""
    dir_level = [0] * 6
    rises: list[list[tuple[int, int]]] = [[] for _ in range(6)]
    for cycle, name, value in edges:
        if name.startswith("dir"):
            dir_level[int(name[3:])] = value
        elif name.startswith("step") and value == 1:
            m = int(name[4:])
            rises[m].append((cycle, 1 if dir_level[m] else -1))
    taken = [0] * 6
    out = []
    for i, step in enumerate(steps):
        pulses, signed = {}, {}
        for m, n in step.parts:
            mine = rises[m][taken[m]:taken[m] + abs(n)]
            if len(mine) < abs(n):
                raise ValueError(f"motor {m} made {len(mine)} of the {abs(n)} steps of move {i} "
                                 f"({step.text})")
            taken[m] += abs(n)
            pulses[m] = [c for c, _ in mine]
            signed[m] = sum(s for _, s in mine)
            if signed[m] != n:
                raise ValueError(f"motor {m} stepped {signed[m]:+d} for move {i} ({step.text}), "
                                 f"planned {n:+d}")
        out.append(PulsedMove(i, pulses, signed))
    extra = [m for m in range(6) if len(rises[m]) > taken[m]]
    if extra:
        raise ValueError(f"motor(s) {extra} made steps beyond the plan")
    return out


def collisions(edges: Iterable[tuple[int, str, int]], steps: Sequence[MotorStep],
               mechanics: Mechanics) -> list[Collision]:
    """Every move whose first pulse left while a face of an earlier move was
    farther from aligned than ``mechanics.cube`` allows (the worst such
    face for each move); empty when the firmware kept to the model."""
    moves = pulsed_moves(edges, steps)
    found = []
    for k, nxt in enumerate(moves):
        t = nxt.start
        worst: Collision | None = None
        for prev in moves[:k]:
            if all(cs[-1] < t for cs in prev.pulses.values()):
                continue  # aligned again before this move's first pulse
            done = {m: bisect.bisect_left(cs, t) for m, cs in prev.pulses.items()}
            hit = mechanics.collision(prev.command(), done, nxt.command())
            if hit is not None and (worst is None or hit.angle - hit.allowed > worst.angle - worst.allowed):
                worst = hit
        if worst is not None:
            found.append(worst)
    return found


def drift_ticks(moves: Sequence[PulsedMove], steps: Sequence[MotorStep], profiles: Sequence[Profile],
                cycles_per_tick: int = 16_000_000 // P.TICK_HZ) -> list[float]:
    """For each move, how many ticks later than the host's schedule its
    first pulse left, counted from the first move's first pulse, and last
    the same for the last pulse of all. The firmware counts its own ticks
    for its DONEs, so a tick interrupt that overran (and lost ticks) shows
    here, in the CPU's cycles, and not in what the firmware reports."""
    sched = schedule([s.planned() for s in steps], profiles)

    def first_tick(parts: Iterable[tuple[int, int]]) -> int:
        return min(_ticks(n, profiles[m])[0] for m, n in parts)

    t0 = moves[0].start
    model0 = sched[0][0] + first_tick(steps[0].parts)
    out = [(mv.start - t0) / cycles_per_tick - (start + first_tick(st.parts) - model0)
           for mv, st, (start, _) in zip(moves, steps, sched)]
    last = max(cs[-1] for cs in moves[-1].pulses.values())
    model_last = sched[-1][0] + max(_ticks(n, profiles[m])[-1] for m, n in steps[-1].parts)
    out.append((last - t0) / cycles_per_tick - (model_last - model0))
    return out


def _ticks(n: int, p: Profile) -> tuple[int, ...]:
    return step_ticks(abs(n), p.vmax_q, p.accel_q, p.vmin_q)
