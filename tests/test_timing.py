"""The host's copy of the firmware's acceleration profile (protocol section 4)."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from robot.rig import timing
from robot.rig.protocol import TICK_HZ, Q


def test_quantize_matches_the_documented_formulas():
    p = timing.quantize(4800, 64000, 480, 20)
    assert p.vmax_q == round(4800 / 25000 * 2**24)
    assert p.accel_q == round(64000 / 25000**2 * 2**24)
    assert p.vmin_q == round(480 / 25000 * 2**24)
    assert timing.quantize(1e9, 1e-9, 1e9).vmax_q == Q - 1
    assert timing.quantize(100, 1e-9, 1e-9).accel_q == 1


profiles = st.builds(
    timing.quantize,
    st.floats(200, 20000), st.floats(1000, 400000), st.floats(10, 200),
)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000), profiles)
def test_profile_emits_n_steps_never_faster_than_vmax(n, p):
    ticks = timing.step_ticks(n, p.vmax_q, p.accel_q, p.vmin_q)
    assert len(ticks) == n
    gaps = [b - a for a, b in zip((0,) + ticks, ticks)]
    assert min(gaps) >= 1
    # At most vmax_q/Q steps per tick on average over any run of steps.
    assert min(gaps) >= math.floor(Q / p.vmax_q)
    # Accelerating from the start, decelerating at the end (up to the DDA's
    # one-tick jitter between steps).
    if n >= 10:
        assert gaps[0] >= gaps[n // 2] - 1 and gaps[-1] >= gaps[n // 2] - 1


def test_duration_agrees_with_continuous_kinematics():
    # 1600 steps/rev face: 3 rev/s, 40 rev/s^2, starting at 0.3 rev/s.
    vmax, acc, vmin = 4800.0, 64000.0, 480.0
    p = timing.quantize(vmax, acc, vmin)
    for n in (400, 800, 3000):
        ramp_t = (vmax - vmin) / acc
        ramp_d = (vmax**2 - vmin**2) / (2 * acc)
        if 2 * ramp_d <= n:
            expect = 2 * ramp_t + (n - 2 * ramp_d) / vmax
        else:
            vpeak = math.sqrt(vmin**2 + acc * n)
            expect = 2 * (vpeak - vmin) / acc
        got = timing.motor_ticks(n, p) / TICK_HZ
        assert abs(got - expect) / expect < 0.03, (n, got, expect)


def test_move_and_sequence_ticks_add_settle_and_run_back_to_back():
    p = timing.quantize(4800, 64000, 480, 20)
    profiles = [p] * 6
    motion, settle = timing.move_ticks([(0, 400), (3, -800)], profiles)
    assert motion == timing.motor_ticks(800, p) and settle == 20 * 25
    moves = [timing.PlannedMove(((0, 400),)), timing.PlannedMove(((1, -800), (4, 400)))]
    total = timing.sequence_ticks(moves, profiles)
    assert total == sum(sum(timing.move_ticks(m.parts, profiles)) for m in moves)


def test_overlap_starts_the_next_perpendicular_move_early():
    p = timing.quantize(4800, 64000, 480, 20)
    profiles = [p] * 6
    plain = [timing.PlannedMove(((0, 400),)), timing.PlannedMove(((1, 400),))]
    cut = [timing.PlannedMove(((0, 400),)), timing.PlannedMove(((1, 400),), overlap=40)]
    same_face = [timing.PlannedMove(((0, 400),)), timing.PlannedMove(((0, 400),), overlap=40)]
    t_plain = timing.sequence_ticks(plain, profiles)
    assert timing.sequence_ticks(cut, profiles) < t_plain - 500
    assert timing.sequence_ticks(same_face, profiles) == t_plain
    release = timing.release_tick([(0, 400)], profiles, 40)
    assert timing.schedule(cut, profiles)[1][0] == release
    assert timing.step_ticks(400, p.vmax_q, p.accel_q, p.vmin_q)[359] == release


def test_turn_costs_half_is_dearer_than_quarter_but_less_than_two():
    p = timing.quantize(4800, 64000, 480, 20)
    q, h = timing.turn_costs([p] * 6, [400] * 6)
    assert 0.1 < q < h < 2 * q
