"""How long moves take: the firmware's acceleration profile, simulated exactly.

The firmware steps every motor with one integer DDA (docs/protocol.md,
section 4). Because its duration depends only on ``(n, vmax_q, accel_q,
vmin_q)``, the host reproduces it tick for tick instead of approximating it,
so the estimates printed before a solve are what the rig then takes, and the
solver's turn costs describe this rig rather than an idealised one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .protocol import TICK_HZ, Q

SETTLE_TICKS_PER_MS = TICK_HZ // 1000


@dataclass(frozen=True)
class Profile:
    """One motor's motion settings in firmware units (what CONFIG_MOTOR sends)."""

    vmax_q: int
    accel_q: int
    vmin_q: int
    settle_ms: int = 0


def quantize(max_speed: float, acceleration: float, start_speed: float, settle_ms: int = 0) -> Profile:
    """Firmware units from steps/s, steps/s^2 and steps/s (protocol section 4)."""
    vmax_q = min(Q - 1, max(1, round(max_speed / TICK_HZ * Q)))
    accel_q = max(1, round(acceleration / TICK_HZ**2 * Q))
    vmin_q = min(vmax_q, max(1, round(start_speed / TICK_HZ * Q)))
    return Profile(vmax_q, accel_q, vmin_q, settle_ms)


@lru_cache(maxsize=4096)
def step_ticks(n: int, vmax_q: int, accel_q: int, vmin_q: int) -> tuple[int, ...]:
    """The tick (1-based, from the move's start) of each of the ``n`` steps.

    A literal transcription of the firmware's per-tick update; the last
    entry is the motor's duration ``T``.
    """
    if n <= 0:
        return ()
    v, acc, done, ramp, phase = vmin_q, 0, 0, 0, 0  # phase 0 ACCEL, 1 CRUISE, 2 DECEL
    tick = 0
    out: list[int] = []
    append = out.append
    while True:
        tick += 1
        acc += v
        if acc >= Q:
            acc -= Q
            done += 1
            append(tick)
            if done == n:
                return tuple(out)
        remaining = n - done
        if phase == 0:
            if remaining <= done:
                phase = 2
            else:
                v += accel_q
                if v >= vmax_q:
                    v = vmax_q
                    ramp = done
                    phase = 1
        elif phase == 1:
            if remaining <= ramp:
                phase = 2
        if phase == 2:
            v = v - accel_q if v >= vmin_q + accel_q else vmin_q


def motor_ticks(n: int, p: Profile) -> int:
    """Duration ``T`` in ticks of one motor turning ``|n|`` steps."""
    n = abs(n)
    return step_ticks(n, p.vmax_q, p.accel_q, p.vmin_q)[-1] if n else 0


@dataclass(frozen=True)
class PlannedMove:
    """What one MOVE asks of the rig, for timing: ``(motor, steps)`` pairs and
    the overlap in steps (0 = wait for the previous move to finish)."""

    parts: tuple[tuple[int, int], ...]
    overlap: int = 0


def move_ticks(parts: Iterable[tuple[int, int]], profiles: Sequence[Profile]) -> tuple[int, int]:
    """``(motion_ticks, settle_ticks)`` of a move, section 4.2."""
    parts = list(parts)
    motion = max(motor_ticks(steps, profiles[m]) for m, steps in parts)
    settle = max(profiles[m].settle_ms for m, _ in parts) * SETTLE_TICKS_PER_MS
    return motion, settle


def release_tick(parts: Iterable[tuple[int, int]], profiles: Sequence[Profile], k: int) -> int:
    """The tick of a move at which every motor has at most ``k`` steps left
    (section 4.3): the next, overlapping move starts at the tick after it."""
    worst = 0
    for m, steps in parts:
        n = abs(steps)
        if k >= n:
            continue
        p = profiles[m]
        worst = max(worst, step_ticks(n, p.vmax_q, p.accel_q, p.vmin_q)[n - k - 1])
    return worst


def schedule(moves: Sequence[PlannedMove], profiles: Sequence[Profile]) -> list[tuple[int, int]]:
    """``(start_tick, done_tick)`` of each move when the queue never runs dry.

    Tick 0 is the tick before the first move's first tick; a move's DONE
    comes at ``done_tick`` and, without overlap, the next starts right after.
    """
    out: list[tuple[int, int]] = []
    t = 0
    prev: PlannedMove | None = None
    prev_start = 0
    for i, mv in enumerate(moves):
        motion, settle = move_ticks(mv.parts, profiles)
        nxt = moves[i + 1] if i + 1 < len(moves) else None
        overlapped_by_next = nxt is not None and _may_overlap(mv, nxt)
        if prev is not None and _may_overlap(prev, mv):
            start = prev_start + release_tick(prev.parts, profiles, mv.overlap)
            # A move starts only when the one before its predecessor is over.
            if len(out) >= 2:
                start = max(start, out[-2][1])
        else:
            start = t
        done = start + motion + (0 if overlapped_by_next else settle)
        out.append((start, done))
        t = max(t, done)
        prev, prev_start = mv, start
    return out


def done_ticks(sched: Sequence[tuple[int, int]]) -> list[int]:
    """What each DONE reports for a schedule: the ticks from the later of the
    move's start and the previous DONE to its own DONE, so that the DONEs
    of a job add up to its time even where moves overlap (protocol 3)."""
    out, last = [], None
    for start, done in sched:
        out.append(done - (start if last is None else max(start, last)))
        last = done
    return out


def _may_overlap(prev: PlannedMove, mv: PlannedMove) -> bool:
    if mv.overlap <= 0:
        return False
    return not ({m for m, _ in prev.parts} & {m for m, _ in mv.parts})


def sequence_ticks(moves: Sequence[PlannedMove], profiles: Sequence[Profile]) -> int:
    """Total ticks from the first move's start to the last DONE."""
    sched = schedule(moves, profiles)
    return max((d for _, d in sched), default=0)


def ticks_to_s(ticks: int) -> float:
    return ticks / TICK_HZ


def turn_costs(profiles: Sequence[Profile], steps_per_quarter: Sequence[int]) -> tuple[float, float]:
    """Mean seconds of a quarter and of a half turn of one face, settle included.

    These are the solver's axial-metric costs: a step turning two opposite
    faces at once takes as long as its slower face, which the solver's
    metric models by charging the step once.
    """
    quarter = [sum(move_ticks([(m, q)], profiles)) for m, q in enumerate(steps_per_quarter)]
    half = [sum(move_ticks([(m, 2 * q)], profiles)) for m, q in enumerate(steps_per_quarter)]
    return ticks_to_s(sum(quarter)) / len(quarter), ticks_to_s(sum(half)) / len(half)
