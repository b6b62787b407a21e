"""`cuberobot jog` on a flipper or two-gripper rig (issue 26: the terminal
works for every kind): robot moves by hand, checked against the rig's
rules from its home before anything moves, then made on a sim-rig in its
own process over a pty, as on a real rig."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_kinds import as_held

from robot.rig.errors import UserError
from robot.rig.loading import load_config
from robot.rig.mechanisms import Action, HeldCube, apply_to_cube, mechanism_for, plan
from robot.rig.mechanisms.commands import Commands
from robot.rig.mechanisms.flipper import D_SLOT, L_SLOT
from robot.rig.mechanisms.jog import (
    AT_NAMED_DEG,
    EXAMPLES,
    MAX_JOG_MOVES,
    ServoJog,
    check_any_jog,
    check_jog,
)
from robot.rig.mechanisms.journal import MechanismJournal
from robot.sim.mechanisms import Fault, virtual_mechanism
from robot.sim.pty_rig import SimRigProcess
from solver import SOLVED, random_cube

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("flipper", "two-gripper")


def _config(kind: str) -> Path:
    return ROOT / "config" / "examples" / f"{kind}.toml"


CONFIGS = {k: load_config(_config(k), settings=False) for k in KINDS + ("cubotino",)}
MECHS = {k: mechanism_for(CONFIGS[k]) for k in CONFIGS}


@settings(max_examples=60)
@given(kind=st.sampled_from(KINDS), picks=st.lists(st.integers(0, 99), max_size=12))
def test_a_jog_is_checked_as_the_rig_would_make_it(kind, picks):
    """Any walk of possible moves from home, written as the journal writes
    them: the jog's states are the rig's, step by step; a two-gripper walk
    that leaves a gripper's jaws across is refused (the next job assumes
    square jaws), and nothing else is."""
    m = MECHS[kind]
    assert m is not None
    state, walk, states, layers = m.start(), [], [], 0
    for p in picks:
        steps = m.steps(state)
        action, out = steps[p % len(steps)]
        walk.append(action)
        states.append(out.after)
        layers += out.turn is not None
        state = out.after
    if not walk:
        return
    text = ", ".join(str(a) for a in walk)
    across = kind == "two-gripper" and any(s[1] for s in state[1:])
    if across:
        with pytest.raises(UserError, match="jaws across"):
            check_jog(m, text)
        return
    jog = check_jog(m, text)
    assert jog.actions == tuple(walk) and jog.states == tuple(states) and jog.layer_turns == layers


@settings(max_examples=100)
@given(kind=st.sampled_from(KINDS), picks=st.lists(st.integers(0, 99), max_size=12),
       left=st.lists(st.integers(0, 99), max_size=8), held_pick=st.integers(0, 23),
       seed=st.integers(0, 10_000))
def test_a_jog_after_a_run_is_followed_from_wherever_the_run_left_the_rig(kind, picks, left, held_pick, seed):
    """The panel redraws its cube after a jog, which starts wherever the
    last run left the cube and the parts (``left``: a walk from any hold),
    not from home: the jog homes the rig first, and a flipper's turntable
    going home takes the cube with it. Followed through the face turns and
    the state ``Jog.follow`` names, the cube is the same, sticker for
    sticker in the rig's frame, as the homing's and the jog's robot moves
    make it one sticker at a time (:func:`apply_to_cube`)."""
    from robot.rig.mechanisms.orientation import all_orientations
    from solver import parse_facelets

    m = MECHS[kind]
    state, walk = m.start(), []
    for p in picks:
        steps = m.steps(state)
        action, out = steps[p % len(steps)]
        walk.append(action)
        state = out.after
    if not walk or (kind == "two-gripper" and any(s[1] for s in state[1:])):
        return
    jog = check_jog(m, ", ".join(str(a) for a in walk))
    before = (all_orientations()[held_pick], *m.start()[1:])
    for p in left:
        steps = m.steps(before)
        before = steps[p % len(steps)][1].after
    cube = random_cube(seed).to_facelets()
    followed = jog.follow(m, before)
    homing = m.homing(before)
    if homing is None:  # a two-gripper's jaws left across: homing cannot square them
        assert followed is None and kind == "two-gripper" and any(s[1] for s in before[1:])
        return
    assert followed is not None
    moves, after = followed
    assert len(moves) == jog.layer_turns and after[1:] == jog.states[-1][1:]
    made = parse_facelets(cube).apply(" ".join(str(x) for x in moves)).to_facelets()
    assert as_held(made, after[0]) == apply_to_cube(as_held(cube, before[0]), [*homing, *jog.actions], m,
                                                    start=before).stickers


@pytest.mark.parametrize("kind, text, says", [
    ("flipper", "turn +1", "robot move 1 ('turn +1'): the rig cannot make it after homing: turn with the"),
    ("flipper", "close cover, flip", "robot move 2 ('flip'): the rig cannot make it after close cover: flip"),
    ("flipper", "spin 1, spin 1", "the turntable at +1 quarters cannot go +1"),
    ("flipper", "spin 3", "the turntable turns 1 or 2 quarters either way, not 3"),
    ("flipper", "rotate D 1", "a flipper rig has no move 'rotate'; on a flipper rig for example: flip,"),
    ("flipper", "flip the cube over now", "a robot move is a kind, maybe a part and quarter turns"),
    ("flipper", "flip,,flip", "robot move 2 (''): there is no move between two commas: remove the extra"),
    ("flipper", "flip sideways", "too many words: 'sideways' after 'flip'; a robot move is a kind"),
    ("flipper", "spin --1", "the quarters must be a whole number: -2, -1, +1 or +2, not '--1'"),
    ("flipper", "spin 99999999", "robot move 1 ('spin 99999999'): 99999999 quarter turns: a move turns 1 or"),
    ("flipper", "flip, flip, flip, flip, close cover, flip", "after ..., flip, flip, close cover: flip with"),
    ("two-gripper", "open D, open L", "open gripper L while the other is open: the cube would fall"),
    ("two-gripper", "rotate X 1", "no gripper 'X'"),
    ("two-gripper", "rotate D 1", "leave gripper D's jaws across"),
    ("two-gripper", "flip", "a two-gripper rig has no move 'flip'"),
    ("flipper", ", ".join(["flip"] * (MAX_JOG_MOVES + 1)), f"at most {MAX_JOG_MOVES}"),
    ("flipper", "flip " * 300, "characters; at most 1000"),
])
def test_a_move_the_rig_cannot_make_is_one_line_naming_it(kind, text, says):
    with pytest.raises(UserError) as e:
        check_jog(MECHS[kind], text)
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


@pytest.mark.parametrize("kind, text, says", [
    # quarters that are not a whole number are named so, as typed, with the quarters a move can turn
    ("flipper", "spin 1.5", "robot move 1 ('spin 1.5'): the quarters must be a whole number: -2, -1, +1 or "
                            "+2, not '1.5'; on a flipper rig for example: flip,"),
    ("flipper", "spin one", "the quarters must be a whole number: -2, -1, +1 or +2, not 'one'"),
    ("flipper", "spin ++1", "the quarters must be a whole number: -2, -1, +1 or +2, not '++1'"),
    ("flipper", "close cover, turn 1.5", "robot move 2 ('turn 1.5'): the quarters must be a whole number"),
    ("flipper", "turn One", "not 'One'"),
    ("flipper", "spin \u22121", "the quarters must be a whole number: -2, -1, +1 or +2, not '\u22121'"),
    ("two-gripper", "rotate D 1.5", "robot move 1 ('rotate D 1.5'): the quarters must be a whole number: "
                                    "-2, -1, +1 or +2, not '1.5'"),
    ("two-gripper", "rotate D one", "not 'one'"),
    ("two-gripper", "rotate D ++1", "not '++1'"),
    # whole numbers a move cannot turn, small or huge
    ("flipper", "spin 0", "the turntable turns 1 or 2 quarters either way, not 0: write -2, -1, +1 or +2"),
    ("two-gripper", "rotate L -3", "a gripper turns 1 or 2 quarters either way, not -3: write -2, -1, +1 or"),
    ("two-gripper", "rotate D 123456789012345", "123456789012... quarter turns: a move turns 1 or 2 quarters "
                                                "either way: -2, -1, +1 or +2"),
    # missing quarters or part, a sign apart from its number
    ("flipper", "spin", "robot move 1 ('spin'): 'spin' needs quarter turns, -2, -1, +1 or +2, e.g. "
                        "'spin +1'"),
    ("flipper", "Turn", "'Turn' needs quarter turns, -2, -1, +1 or +2, e.g. 'Turn +1'"),
    ("flipper", "spin + 1", "the sign goes against the number: '+1', not '+ 1'"),
    ("two-gripper", "rotate D", "'rotate D' needs quarter turns, -2, -1, +1 or +2, e.g. 'rotate D +1'"),
    ("two-gripper", "open", "robot move 1 ('open'): 'open' needs a gripper, D or L: write 'open' and a "
                            "gripper"),
    ("two-gripper", "rotate 1", "'rotate' needs a gripper, D or L, before the quarters"),
    # the user's words quoted as typed, not lower-cased, with what is allowed
    ("two-gripper", "open grip_D", "robot move 1 ('open grip_D'): no gripper 'grip_D': the grippers are D "
                                   "and L"),
    ("two-gripper", "rotate x 1", "no gripper 'x': the grippers are D and L"),
    ("two-gripper", "U", "robot move 1 ('U'): a two-gripper rig has no move 'U'; on a two-gripper rig for "
                         "example: open D, rotate L +1, "),
    ("two-gripper", "U", "rotate D 2 (its moves: open, close, rotate)"),
    ("flipper", "Flap", "a flipper rig has no move 'Flap'; on a flipper rig for example: flip, spin +1, "
                        "close cover, turn -1, open cover (its moves: flip, spin, turn, open, close)"),
    ("flipper", "open grip_D", "a flipper rig opens only its cover, not 'grip_D': write 'open' or "
                               "'open cover'"),
    ("flipper", "close cover, close Lid", "robot move 2 ('close Lid'): a flipper rig closes only its cover, "
                                          "not 'Lid'"),
    ("flipper", "spin Cover 1", "'spin' names no part, not 'Cover': write 'spin' and quarter turns"),
    # extra words, and empty moves between commas
    ("flipper", "spin +1 Extra", "too many words: 'Extra' after 'spin +1'"),
    ("flipper", "flip 1", "too many words: '1' after 'flip'"),
    ("two-gripper", "open D L", "too many words: 'L' after 'open D'"),
    ("two-gripper", "rotate D 1 2", "too many words: '2' after 'rotate D 1'"),
    ("flipper", "close cover 1", "too many words: '1' after 'close cover'"),
    ("flipper", "flip,", "robot move 2 (''): there is no move after the last comma: remove the extra"),
    ("flipper", ",flip", "robot move 1 (''): there is no move before the first comma: remove the extra"),
    ("flipper", "  ", "robot move 1 (''): there is no move: write one, or several separated by commas"),
])
def test_a_move_that_is_not_written_right_is_one_line_quoting_it_as_typed(kind, text, says):
    """Each wrong robot move is named for what is wrong with it (not as the
    rule it would break once misread), in the user's own words."""
    with pytest.raises(UserError) as e:
        check_jog(MECHS[kind], text)
    message = str(e.value)
    assert says in message and "\n" not in message, message
    assert "the rig cannot make it" not in message and "nothing was moved" not in message, message


@pytest.mark.parametrize("kind, text, actions", [
    ("flipper", "FLIP, Spin +1, CLOSE Cover, Turn -1, open COVER, close, open",
     ["flip", "spin +1", "close cover", "turn -1", "open cover", "close cover", "open cover"]),
    ("flipper", "spin 01, spin -01", ["spin +1", "spin -1"]),
    ("cubotino", "close, Turn +1, FLIP Close, turn -1, flip, spin 1", ["close cover", "turn +1", "flip close",
                                                                   "turn -1", "flip", "spin +1"]),
    ("two-gripper", "OPEN d, Rotate l +1, close D, OPEN L, rotate L -1, Close l, rotate d 2",
     ["open D", "rotate L +1", "close D", "open L", "rotate L -1", "close L", "rotate D +2"]),
])
def test_moves_are_read_in_any_case_and_with_or_without_a_sign(kind, text, actions):
    assert [str(a) for a in check_jog(MECHS[kind], text).actions] == actions


def test_a_flip_that_closes_the_cover_is_refused_in_one_line_where_a_flipper_servo_flips():
    with pytest.raises(UserError) as e:
        check_jog(MECHS["flipper"], "flip close")
    assert "cannot close the cover: 'flip', then 'close'" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("kind", KINDS + ("cubotino",))
def test_the_example_in_messages_is_a_jog_the_rig_makes(kind):
    """The example each message ends with must itself be accepted (the
    two-gripper one rotated D while L's jaws lay across)."""
    assert check_jog(MECHS[kind], EXAMPLES[CONFIGS[kind].rig.kind]).actions


@given(kind=st.sampled_from(KINDS + ("cubotino",)), pick=st.integers(0, 9), deg=st.floats(0, 180))
def test_any_servo_angle_in_its_range_is_a_jog_turned_into_the_pulse_that_holds_it(kind, pick, deg):
    """One servo from home goes to any angle in its range (a real servo
    goes there), a named one or not; the jog says which it left between
    its named angles."""
    cfg = CONFIGS[kind]
    names = list(cfg.servos)
    name, deg = names[pick % len(names)], round(deg, 1)
    jog = check_any_jog(cfg, MECHS[kind], f"servo {name.upper()} {deg:g}")  # names in any case
    assert isinstance(jog, ServoJog)
    assert [(a.servo, a.deg) for a in jog.angles] == [(name, deg)]
    (a,) = jog.angles
    sc = cfg.servos[a.servo]
    assert sc.min_us <= a.pulse_us <= sc.max_us
    assert abs((a.pulse_us - sc.min_us) / (sc.max_us - sc.min_us) * sc.range_deg - a.deg) < 0.1
    at = [v + 90 * q for _, v in sc.angles for q in (range(-2, 3) if name == "turntable" else (0,))]
    named = any(abs(deg - v) <= AT_NAMED_DEG + 0.1 for v in at)
    assert named or any(left.startswith(f"{name} at ") for left in jog.left), jog.left


def _servo_walk(kind: str, picks: list[tuple[int, int]]) -> list[tuple[str, float]]:
    """Servo angles picked among each servo's named angles, a few degrees off them and anywhere in
    its range: the walks a maker's tries make."""
    cfg = CONFIGS[kind]
    names = list(cfg.servos)
    walk = []
    for i, j in picks:
        name = names[i % len(names)]
        sc = cfg.servos[name]
        named = [v for _, v in sc.angles] + ([v + 90 for _, v in sc.angles] if name == "turntable" else [])
        around = [v + d for v in named for d in (0, 0, 0, 1, -1, 3, -3, 45, -45)]
        deg = around[j % len(around)] if j < 800 else (j - 800) * sc.range_deg / 199
        walk.append((name, round(min(sc.range_deg, max(0.0, deg)), 1)))
    return walk


@settings(max_examples=150)
@given(kind=st.sampled_from(KINDS + ("cubotino",)),
       picks=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 999)), min_size=1, max_size=8))
def test_servo_angles_the_jog_allows_never_jam_the_virtual_rig_and_homing_brings_it_back(kind, picks):
    """The jog's rules and the virtual rig's physics are written apart: a
    walk of servo angles the jog allows, made after homing, never jams the
    virtual rig, which the next job's homing then brings back square, ready
    for a plan. One the jog refuses jams it, or leaves a cube that homing
    cannot square."""
    cfg = CONFIGS[kind]
    walk = _servo_walk(kind, picks)
    text = ", ".join(f"servo {n} {d:g}" for n, d in walk)
    rig = virtual_mechanism(cfg, SOLVED)
    commands = Commands(cfg)
    for msg in commands.home():
        rig.execute(msg)
    try:
        check_any_jog(cfg, MECHS[kind], text)
    except UserError as e:
        assert "nothing was moved" in str(e) and "\n" not in str(e), str(e)
        try:
            for name, deg in walk:
                rig.execute(commands.angle(name, deg))
            for msg in commands.home():
                rig.execute(msg)
        except Fault:
            return
        assert "bottom layer" in str(e) and not rig.square(), (str(e), rig.skew, rig.twist)
        return
    for name, deg in walk:
        rig.execute(commands.angle(name, deg))
        assert abs(rig.angle[name] - deg) < 0.1
    for msg in commands.home():
        rig.execute(msg)
    assert rig.fault is None and (kind == "two-gripper" or rig.square())
    for action in plan("R U F'", MECHS[kind]).actions:  # the cube as it is now, solved by a plan
        rig.do(action)
    assert rig.fault is None


@pytest.mark.parametrize("kind, text, says", [
    ("flipper", "servo cover 181", "servo angle 1 ('servo cover 181'): the angle must be a number of degrees "
                                   "from 0 to 180"),
    ("flipper", "servo cover -1", "from 0 to 180"),
    ("flipper", "servo cover nan", "from 0 to 180"),
    ("flipper", "servo cover 1e999", "from 0 to 180"),
    ("flipper", "servo cover ninety", "from 0 to 180"),
    ("flipper", "servo lid 90", "a flipper rig has the servos turntable, cover, flipper"),
    ("flipper", "servo Lid 90", "servo angle 1 ('servo Lid 90'): no servo 'Lid': a flipper rig has the "
                                "servos"),
    ("flipper", "servo cover Ninety", "from 0 to 180 (the servo's range_deg), not 'Ninety'"),
    ("flipper", "servo cover 90,", "servo angle 2 (''): there is no servo angle after the last comma"),
    ("flipper", "servo cover 90,, servo cover 80", "there is no servo angle between two commas"),
    ("two-gripper", "servo cover 90", "a two-gripper rig has the servos grip_D, grip_L"),
    ("flipper", "servo cover", "a servo angle is 'servo NAME DEGREES', e.g. 'servo cover 95'"),
    ("flipper", "servo 90, flip", "a servo angle is 'servo NAME DEGREES'"),
    ("flipper", "servo cover 90, flip", "servo angle 2 ('flip'): servo angles are set on their own"),
    ("flipper", "flip, servo cover 90", "robot move 2 ('servo cover 90'): servo angles are set on their own"),
    ("flipper", ", ".join(["servo cover 90"] * (MAX_JOG_MOVES + 1)), f"a jog sets at most {MAX_JOG_MOVES}"),
    ("flipper", "servo cover 90 " * 80, "characters; at most 1000"),
])
def test_a_servo_angle_that_is_not_one_is_one_line_naming_it(kind, text, says):
    with pytest.raises(UserError) as e:
        check_any_jog(CONFIGS[kind], MECHS[kind], text)
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


@pytest.mark.parametrize("kind, angles", [
    ("flipper", {"turntable": 180.0, "cover": 85.0}),
    ("two-gripper", {"grip_D": 62.5}),
])
def test_jog_sets_servo_angles_for_tuning_on_a_sim_rig(kind, angles, tmp_path):
    """After homing, each servo is held where it was asked (the virtual
    rig's angle, read from the pulse it was sent), no layer turned."""
    text = ", ".join(f"servo {n} {d:g}" for n, d in angles.items())
    with SimRigProcess("--config", str(_config(kind)), "--speed", "max") as sim:
        r = _jog(kind, text, port=sim.port, state_dir=tmp_path)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
        assert r.stdout.startswith("homed:") and f"set {len(angles)} servo angle(s)" in r.stdout, r.stdout
        counts = sim.counts()
        assert counts["fault"] is None and counts["layer_turns"] == [], counts
        for name, deg in angles.items():
            assert abs(counts["angles"][name] - deg) <= 0.1, counts
            pulse = CONFIGS[kind].servos[name].pulse_us(deg)
            assert f"servo {name} {deg:g}: held at {deg:g} degrees ({pulse} us)" in r.stdout, r.stdout


def test_the_readmes_servo_finding_step_works_on_cubotino(tmp_path):
    """`cuberobot jog "servo cover 95"` on config/examples/cubotino.toml, the
    README's step (issues 46 and 48): on the command's own virtual rig
    (sim://), and on a sim-rig in its own process, where the parts stay
    where the jog left them: the next jog homes them from there and makes
    its robot moves; angles that would jam are one line, nothing moved."""
    r = subprocess.run([sys.executable, "-m", "robot", "jog", "servo cover 95", "--config",
                        str(_config("cubotino")), "--state-dir", str(tmp_path / "own")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0 and r.stderr == "", (r.stdout, r.stderr)
    assert "servo cover 95: held at 95 degrees (1556 us)" in r.stdout
    assert "between named angles now: cover at 95 degrees (open 70, closed 110, flip 0)" in r.stdout, r.stdout
    with SimRigProcess("--config", str(_config("cubotino")), "--speed", "max") as sim:
        r = _jog("cubotino", "servo cover 95", port=sim.port, state_dir=tmp_path)
        assert r.returncode == 0 and sim.counts()["angles"]["cover"] == 95.0, (r.stdout, r.stderr)
        r = _jog("cubotino", "servo cover 110, servo turntable 45", port=sim.port, state_dir=tmp_path)
        assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, (r.stdout, r.stderr)
        assert "bottom layer turned 45 degrees" in r.stderr and "nothing was moved" in r.stderr, r.stderr
        r = _jog("cubotino", "servo cover 95, servo turntable 45", port=sim.port, state_dir=tmp_path)
        assert r.returncode == 2 and "half way between open (70 degrees) and closed (110 degrees)" in r.stderr
        counts = sim.counts()
        assert counts["angles"]["cover"] == 95.0 and counts["fault"] is None, counts  # nothing moved
        r = _jog("cubotino", "servo turntable 130", port=sim.port, state_dir=tmp_path)  # homed: cover open
        assert r.returncode == 0 and "turntable at 130 degrees (home 90)" in r.stdout, (r.stdout, r.stderr)
        assert sim.counts()["angles"] == {"turntable": 130.0, "cover": 70.0}
        r = _jog("cubotino", "close cover, turn +1, flip close, turn -1", port=sim.port, state_dir=tmp_path)
        counts = sim.counts()
        assert r.returncode == 0 and counts["fault"] is None, (r.stdout, r.stderr, counts)
        assert counts["layer_turns"] == [[3, 1], [3, -1]], counts


def _jog(kind: str, *args: str, port: str, state_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot", "jog", *args, "--config", str(_config(kind)),
                           "--port", port, "--state-dir", str(state_dir)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


@pytest.mark.parametrize("kind, moves, turned", [
    ("flipper", "close cover, turn +1, open cover", "D"),
    ("two-gripper", "rotate D 1, open D, rotate D -1, close D", "D"),
])
def test_jog_homes_the_rig_then_makes_the_moves_on_a_sim_rig(kind, moves, turned, tmp_path):
    """On a sim-rig over a pty: the moves made, the layer they turn turned
    once on the cube the rig holds, no part ever asked for what it cannot do;
    a move the rig cannot make is refused in one line and nothing moves."""
    cube = random_cube(11)
    rig = ("--config", str(_config(kind)), "--state", cube.to_facelets(), "--speed", "max")
    with SimRigProcess(*rig) as sim:
        r = _jog(kind, moves, port=sim.port, state_dir=tmp_path)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
        assert r.stdout.startswith("homed: orientation URFDLB"), r.stdout
        assert "1 of them layer turns" in r.stdout, r.stdout
        counts = sim.counts()
        assert counts["fault"] is None and len(counts["layer_turns"]) == 1, counts
        assert sim.ask("state") == cube.apply(turned).to_facelets()
        before = sim.counts()
        bad = "open D, open L" if kind == "two-gripper" else "flip, close cover, turn 1, flip"
        r = _jog(kind, bad, port=sim.port, state_dir=tmp_path)
        assert r.returncode == 2 and "nothing was moved" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
        assert sim.counts() == before


def test_jog_waits_for_an_unfinished_job_to_be_resumed(tmp_path):
    """A killed job's journal knows where the rig stood; a jog would make it
    wrong, so it is refused until `cuberobot resume` has settled the job, or
    until the maker gives the job up on purpose (--give-up-job)."""
    m = MECHS["flipper"]
    assert m is not None
    journal = MechanismJournal(tmp_path)
    journal.start_job(m, random_cube(3).to_facelets(), [Action("flip")], m.start())
    with SimRigProcess("--config", str(_config("flipper")), "--speed", "max") as sim:
        r = _jog("flipper", "flip", port=sim.port, state_dir=tmp_path)
        assert r.returncode == 2 and "run `cuberobot resume` first" in r.stderr, r.stderr
        assert "--give-up-job" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert sim.counts()["moves"] == 0
        r = _jog("flipper", "flip", "--give-up-job", port=sim.port, state_dir=tmp_path)
        assert r.returncode == 0 and "gave up the job" in r.stdout, r.stderr
        assert sim.counts()["moves"] > 0 and MechanismJournal(tmp_path).last().end is not None
        r = _jog("flipper", "flip", port=sim.port, state_dir=tmp_path)  # nothing waits now
        assert r.returncode == 0 and "gave up" not in r.stdout, r.stderr


@pytest.fixture(scope="module")
def elf():
    from fwtools import make

    make("all", "sim")
    return ROOT / "firmware" / "build" / "uno" / "cuberobot.elf"


def test_a_flipper_jog_on_the_firmware_in_simavr(elf, tmp_path):
    """The real firmware's servo pulses move the virtual parts (the physics
    reads the pins): homing and the moves come out as the rules say, the
    layer turned once and nothing jammed."""
    cube, moves = random_cube(5), "flip, close cover, turn -1, open cover, spin +1"
    rig = ("--config", str(_config("flipper")), "--state", cube.to_facelets(), "--speed", "max")
    with SimRigProcess(*rig, firmware=str(elf)) as sim:
        r = _jog("flipper", moves, port=sim.port, state_dir=tmp_path)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
        counts = sim.counts()
        assert counts["fault"] is None and counts["layer_turns"] == [[3, -1]], counts
        held = HeldCube(cube.to_facelets())  # the stickers in the rig's frame, as the sim-rig reports them
        held.rotate(L_SLOT, 1)  # the flip: front face down
        held.turn(D_SLOT, -1)
        held.rotate(D_SLOT, 1)  # the spin
        assert sim.ask("state") == held.stickers
        assert apply_to_cube(cube.to_facelets(), check_jog(MECHS["flipper"], moves).actions,
                             MECHS["flipper"]).stickers == held.stickers  # the planner's model agrees


def test_servo_angles_on_the_firmware_in_simavr_measured_from_the_pins(elf, tmp_path):
    """The angle the firmware's pulse holds, measured from the pin's edges,
    is the one asked for, within a degree (11 us; the pulses measured here
    come out up to 7 us from the asked width, well inside the virtual
    parts' 2 degrees)."""
    with SimRigProcess("--config", str(_config("flipper")), "--speed", "max", firmware=str(elf)) as sim:
        r = _jog("flipper", "servo turntable 180, servo cover 87.5", port=sim.port, state_dir=tmp_path)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
        counts = sim.counts()
        assert counts["fault"] is None, counts
        angles = counts["angles"]
        assert abs(angles["cover"] - 87.5) <= 1.0 and abs(angles["turntable"] - 180) <= 1.0, angles


def test_the_emergency_stop_ends_a_flipper_jog_on_the_firmware_part_way(elf, tmp_path):
    """A jog of many flips on the firmware in simavr at real speed, stopped
    from another terminal (`cuberobot estop` beside the jog that holds the
    port): the jog ends at once in one line naming the move under way, and
    the rig makes none of the moves after it."""
    import time

    moves = ", ".join(["flip"] * 12)  # about 12 x 1.1 s on the example's servos
    rig = ("--config", str(_config("flipper")), "--speed", "1")
    with SimRigProcess(*rig, firmware=str(elf)) as sim:
        jog = subprocess.Popen([sys.executable, "-m", "robot", "jog", moves, "--config",
                                str(_config("flipper")), "--port", sim.port, "--state-dir", str(tmp_path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            deadline = time.monotonic() + 60
            while sim.counts()["moves"] < 6:  # homed (3 servo commands) and into the flips
                assert time.monotonic() < deadline and jog.poll() is None, "the jog did not start"
                time.sleep(0.1)
            r = subprocess.run([sys.executable, "-m", "robot", "estop", "--config", str(_config("flipper")),
                                "--port", sim.port], capture_output=True, text=True, timeout=60, cwd=ROOT)
            assert r.returncode == 0 and "emergency stop sent" in r.stdout, (r.stdout, r.stderr)
            out, err = jog.communicate(timeout=30)
        finally:
            if jog.poll() is None:
                jog.kill()
        assert jog.returncode == 1 and "the rig stopped during the robot move flip" in err, (out, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        made = out.count("  flip:")
        assert made < 12, out
        time.sleep(1.5)  # a flip the stop did not end would come up within this
        counts = sim.counts()
        assert counts["estops"] == 1 and counts["moves"] <= 3 + 2 * (made + 1), counts  # none after the stop
