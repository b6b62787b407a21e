"""Commands that talk to the rig: sim-rig, dry-run, resume, jog, estop."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from solver import SOLVED_CUBE, Cube, parse_facelets, random_cube

from ...app.jog import (
    MAX_JOG_STEPS,
    check_face_jog,
    clear_to_jog,
    jog_face,
    jog_mechanism,
    refuse_unfinished,
)
from ...app.limits import (
    MAX_DRY_RUN_HOURS,
    MAX_DRY_RUN_MOVES,
    MAX_JOG_TURNS,
    MAX_RENDER_MOVES,
    MAX_SEED,
    check_cube_text,
    check_dry_run_hours,
    check_faults,
    check_firmware,
    check_moves,
    check_output_dir,
    check_output_file,
    check_port,
    rig_claims,
)
from ...rig.config import Config
from ...rig.errors import RigError, UserError
from ...rig.journal import Journal
from ...rig.loading import load_config
from ...rig.owner import port_holder
from ...rig.timing import move_ticks, ticks_to_s
from ..limits import path, port_sim_speed, sim_speed, text, whole
from . import Registry
from .cube import read_cube_arg

if TYPE_CHECKING:
    from ...rig import job
    from ...rig.link import Link
    from ...rig.motion import MotorStep


def _add_rig_options(p: argparse.ArgumentParser, state_dir: bool = True) -> None:
    p.add_argument("--config", metavar="FILE", type=path, help="set-up file (default: config/rig.toml)")
    p.add_argument("--port", metavar="PORT", type=text("port"),
                   help="serial port, pty path or pyserial URL (sim://...); overrides the config")
    if state_dir:
        p.add_argument("--state-dir", metavar="DIR", type=path,
                       help="where the journal lives (default: ~/.local/state/cuberobot)")


def _check_rig_options(args: argparse.Namespace, *, default_state_dir: bool = True) -> None:
    """--port not blank; --state-dir (or the default one, where the command
    would use it) a folder that can be written, created if missing."""
    from ...rig import journal

    check_port(args.port)
    if args.state_dir is not None:
        check_output_dir(args.state_dir, "--state-dir")
    elif default_state_dir:
        check_output_dir(str(journal.default_state_dir()), "--state-dir")


# ---------------------------------------------------------------- sim-rig


def _start_cube(args: argparse.Namespace) -> Cube:
    if getattr(args, "state", None) and getattr(args, "scramble", None) is not None:
        raise UserError("give either --state or --scramble, not both")
    if getattr(args, "state", None):
        return parse_facelets(read_cube_arg(args.state))
    if getattr(args, "scramble", None) is not None:
        return random_cube(args.scramble)
    return SOLVED_CUBE


def _sim_rig(args: argparse.Namespace) -> int:
    from ...sim.virtual_rig import EventClock, Faults, Mechanics, VirtualRig, make_clock

    cfg = load_config(args.config)
    start = _start_cube(args)
    check_faults(args.faults)
    if args.sim_view:
        _check_view_file(args.sim_view)
    if args.firmware:
        from ...sim import simavr

        check_firmware(args.firmware)
        state = start.to_facelets() if start is not SOLVED_CUBE else None
        speed = "max" if isinstance(make_clock(args.speed), EventClock) else args.speed
        return simavr.serve(args.firmware, cfg, state=state, speed=speed, faults=args.faults,
                            view=args.sim_view)
    try:
        clock = make_clock(args.speed)
        faults = Faults.parse(args.faults)
    except ValueError as e:
        raise UserError(str(e)) from None
    rig = VirtualRig(clock=clock, faults=faults, seed=args.seed, cube=start,
                     mechanics=Mechanics.from_config(cfg))
    rig.adopt_config(cfg)  # a flipper's or two-gripper's parts, from the config
    from ...sim.pty_rig import serve
    return serve(rig, view=args.sim_view)


def _check_view_file(path: str) -> None:
    """``--sim-view FILE``: a file the rig can keep writing, refused in one
    line before the rig starts (not a bug report once it has)."""
    p = Path(path)
    if p.is_dir():
        raise UserError(f"--sim-view {path}: that is a folder; give a file name in it")
    if not p.parent.is_dir():
        raise UserError(f"--sim-view {path}: the folder {p.parent} does not exist; give a file in one "
                        "that does")
    if not os.access(p.parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UserError(f"--sim-view {path}: cannot write there; give a file in a folder you may write in")


# ---------------------------------------------------------------- dry-run


def _link_for(args: argparse.Namespace, cfg: Config, *, default_port: str | None = None,
              kind: str = "six-motor") -> Link:
    from ... import gpio, sim  # noqa: F401  (sim:// ports, the default rig's; gpio://, the Pi's pins)
    from ...rig.link import Link

    _check_port_arg(args)
    return Link(cfg, args.port or default_port or cfg.rig.port, kind=kind)


def _check_virtual_port(port: str | None, kind: str) -> None:
    """A flipper's or two-gripper's dry run on ``sim://`` runs on a virtual
    rig in this process, which takes only ``?speed=``: any other option
    would be silently ignored, so it is refused (a sim-rig on a pty takes them)."""
    if port is None or not port.startswith("sim://"):
        return
    from ...sim.protocol_sim import parse_sim_url

    try:
        options = parse_sim_url(port)[1]
    except ValueError as e:
        raise UserError(f"--port {port}: {e}") from None
    if other := sorted(set(options) - {"speed"}):
        raise UserError(f"--port {port}: a {kind} dry run on sim:// runs on a virtual rig of its own, "
                        f"which takes only ?speed=, not {', '.join(other)}: for those, run `cuberobot "
                        "sim-rig` with them and pass the pty it prints with --port")


def _check_port_arg(args: argparse.Namespace) -> None:
    check_port(getattr(args, "port", None))


def _check_dry_run(args: argparse.Namespace, cfg: Config) -> list[MotorStep]:
    """Bounds of a dry run, before anything is opened: at most 1000 moves
    (100 with --render), and at most an hour at the virtual rig's --speed.
    Returns the run's one plan (checked, shown and turned)."""
    from solver import group_steps

    from ...rig.motion import estimate_s, plan
    from ...sim.virtual_rig import EventClock, make_clock

    if args.render:
        check_moves(args.moves, "MOVES", MAX_RENDER_MOVES, " (drawing takes a third of a second a move)")
    else:
        check_moves(args.moves, "MOVES", MAX_DRY_RUN_MOVES, " (the rig turns each move)")
    if args.start:
        check_cube_text(args.start, "--from")
    if args.render:
        check_output_file(args.render, "--render")
    simulated = args.port is None or args.port.startswith("sim://")  # its journal is a temporary one
    _check_rig_options(args, default_state_dir=not simulated)
    speed, where = args.speed, "--speed"
    if args.port is not None and args.port.startswith("sim://"):
        from ...sim.protocol_sim import parse_sim_url

        try:
            speed, where = parse_sim_url(args.port)[1].get("speed", "1"), "--port's speed"
        except ValueError as e:
            raise UserError(f"--port {args.port}: {e}") from None
    try:
        clock = make_clock(speed)
    except ValueError as e:
        raise UserError(f"{where}: {e}") from None
    steps = plan(group_steps(args.moves), cfg)
    if (args.port is None or args.port.startswith("sim://")) and not isinstance(clock, EventClock):
        check_dry_run_hours(estimate_s(steps, cfg), float(speed), speed, where)
    return steps


def _dry_run(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    if cfg.rig.kind != "six-motor":
        return _dry_run_mechanism(args, cfg)
    steps = _check_dry_run(args, cfg)  # the moves parsed and planned before anything opens
    start = parse_facelets(read_cube_arg(args.start)) if args.start else SOLVED_CUBE
    if args.render:
        from ...app.dryrun_pictures import check_path
        check_path(args.render)
    profiles = cfg.profiles()
    _check_port_arg(args)
    header = [f"{'step':>4}  {'turn':<7} {'motors':<22} {'estimate':>9} {'rig':>9}"]

    def on_turn(td: job.TurnDone) -> None:
        if header:
            print(header.pop())
        est = ticks_to_s(sum(move_ticks(td.step.parts, profiles)))
        motors = " ".join(f"{cfg.motor_for_index(m).face}:{s:+d}" for m, s in td.step.parts)
        rig = f"{ticks_to_s(td.ticks):.3f} s" if td.ticks is not None else "?"
        print(f"{td.index + 1:>4}  {td.step.text:<7} {motors:<22} {est:>7.3f} s {rig:>9}", flush=True)

    from ...app.dryrun import dry_run

    simulated = args.port is None or args.port.startswith("sim://")  # a rig and a journal of its own
    # A virtual rig of its own; with no --state-dir, a journal of its own too.
    with rig_claims(None if simulated else args.port, args.state_dir,
                    folder=not simulated or args.state_dir is not None):
        report = dry_run(cfg, start, steps, port=args.port, speed=args.speed, state_dir=args.state_dir,
                         on_turn=on_turn)
    executed = f"{report.executed_s:.3f} s" if report.executed_s is not None else "unknown (a DONE was lost)"
    print(f"total: estimated {report.estimated_s:.3f} s, executed {executed} (rig's clock), "
          f"{len(steps)} steps, wall {report.wall_s:.3f} s")
    print(f"final state: {report.state}")
    if args.render:
        from ...app.dryrun_pictures import render
        written = render(args.render, start, steps, cfg)
        for path in written:
            print(f"wrote {path}")
    return 0


def _dry_run_mechanism(args: argparse.Namespace, cfg: Config) -> int:
    """A flipper or two-gripper dry run: the moves planned into robot moves,
    made on the kind's virtual rig or on the rig at --port (homed first,
    journalled as a run), a line for each; ``--render`` writes the timeline
    (one lane per servo and stepper) beside the name given."""
    from ...app.events import Event, Face
    from ...app.mechanism_dryrun import dry_run_mechanism, lane, mechanism_plan, timeline
    from ...app.mechanism_events import MechanismEvents
    from ...app.rigs import pace_of

    kind = cfg.rig.kind
    limit = MAX_RENDER_MOVES if args.render else MAX_DRY_RUN_MOVES
    check_moves(args.moves, "MOVES", limit, "" if not args.render else " (with --render)")
    if args.start:
        check_cube_text(args.start, "--from")
    simulated = args.port is None or args.port.startswith("sim://")  # a virtual rig of its own
    _check_rig_options(args, default_state_dir=not simulated)
    _check_virtual_port(args.port, kind)
    fast = args.speed.strip().lower() in ("max", "inf", "event")
    pace = pace_of(args.port) if args.port else (None if fast else float(args.speed))
    start = parse_facelets(read_cube_arg(args.start)) if args.start else SOLVED_CUBE
    m, p = mechanism_plan(cfg, args.moves)
    check_dry_run_hours(p.seconds, pace, args.speed, "--speed")
    tl_path = None
    if args.render:
        from ...app.dryrun_pictures import check_path

        given = check_path(args.render)
        tl_path = Path(given).with_name(Path(given).stem + "-timeline.png")
    header = [f"{'step':>4}  {'robot move':<18} {'part':<10} {'estimate':>9}  holds"]

    class Lines(Face):
        def emit(self, event: Event) -> None:
            d = event.data
            if event.kind == "turn-done":
                if header:  # once the rig has made a move: an error before is a line of its own
                    print(header.pop())
                action = p.actions[d["index"]]
                print(f"{d['index'] + 1:>4}  {d['step']:<18} {lane(m, action):<10} "
                      f"{seconds[d['index']]:>7.3f} s  {d['orientation']}", flush=True)

    state, seconds = m.start(), []
    for a in p.actions:
        out = m.apply(state, a)
        seconds.append(out.seconds)
        state = out.after
    events = MechanismEvents(Lines(), pace=pace)
    with rig_claims(None if simulated else args.port, args.state_dir, folder=not simulated):
        if not simulated:  # the rig's journal: a job waiting there must not be moved under
            refuse_unfinished(cfg, args.state_dir, _RESUME_OR_START, moving="a dry run")
        report = dry_run_mechanism(cfg, start, m, p, events, port=args.port, state_dir=args.state_dir)
    where = f"the virtual {kind} rig" if simulated else f"the {kind} rig on {args.port}"
    print(f"total: {len(p.actions)} robot moves for {len(p.solution)} face turns, estimated "
          f"{p.seconds:.3f} s on {where}; it ends holding the cube {report.orientation}")
    print(f"final state: {report.final_state}")
    if tl_path is not None:
        import cv2

        if not cv2.imwrite(str(tl_path), timeline(cfg, m, p)):
            raise UserError(f"cannot write {tl_path}")
        print(f"wrote {tl_path} (the animation of a {kind} rig is drawn by the web panel's dry run, "
              "`cuberobot serve`)")
    return 0


# ---------------------------------------------------------------- resume


def _resume(args: argparse.Namespace) -> int:
    _check_rig_options(args)
    from ...app.resume import refuse_other_kinds_job
    from ...rig import job

    cfg = load_config(args.config)
    if cfg.rig.kind != "six-motor":
        return _resume_mechanism(cfg, args)
    with Journal(args.state_dir) as journal:
        js = journal.unfinished()
        if js is None:
            jobs = journal.read()
            if jobs and jobs[-1].end and jobs[-1].end["status"] == "unknown":
                print(f"nothing to resume: the last job ended with the cube's state unknown. "
                      f"{jobs[-1].end['message']}", file=sys.stderr)
                return 1
            refuse_other_kinds_job(journal.dir, cfg.rig.kind)
            print(f"nothing to resume (journal: {journal.path})")
            return 0
        port = args.port or (js.port if js.port and not js.port.startswith("sim://") else None) \
            or cfg.rig.port
        print(f"job {js.job} stopped with {js.done} of {len(js.steps)} turns journalled; asking the rig on "
              f"{port} how far it got", flush=True)
        with rig_claims(port, args.state_dir), _link_for(args, cfg, default_port=port) as link:
            report = job.resume(
                link, journal,
                on_turn=lambda td: print(f"  turn {td.index + 1}/{len(js.steps)} {td.step.text}", flush=True),
                on_resume=lambda j: print(f"resuming job {j.job}: {j.done} of {len(j.steps)} turns done "
                                          "(the rig's word)", flush=True))
        if report is None:  # finished by someone else since we looked
            print(f"nothing to resume (journal: {journal.path})")
            return 0
        print(f"done: {len(report.turns)} turns, final state {report.state}")
    return 0


def _resume_mechanism(cfg: Config, args: argparse.Namespace) -> int:
    """A flipper's or two-gripper's job: robot/app/resume.py decides from the
    journal and the rig's word; this presents it."""
    from ...app.resume import resume_mechanism_job
    from ...rig.journal import default_state_dir

    port = args.port or cfg.rig.port
    with rig_claims(None if port.startswith("sim://") else port, args.state_dir):
        said = resume_mechanism_job(cfg, Path(args.state_dir or default_state_dir()), port,
                                    lambda: _link_for(args, cfg, default_port=port, kind=cfg.rig.kind),
                                    lambda line: print(line, flush=True))
    print(said.message, file=sys.stdout if said.outcome != "unknown" else sys.stderr)
    return 1 if said.outcome == "unknown" else 0


# ---------------------------------------------------------------- jog / estop


_RESUME_OR_START = "run `cuberobot resume` first, or `cuberobot start`, which scans the cube afresh"
_RESUME_FIRST = ("run `cuberobot resume` first, or give --give-up-job to give it up (the next start scans "
                 "the cube afresh)")


def _clear_to_jog(args: argparse.Namespace, cfg: Config, link: Link) -> None:
    """On the connected rig, before the jog: refused when latched; a job
    waiting in the journal refused, or with --give-up-job given up."""
    if clear_to_jog(link, cfg, args.state_dir, give_up=args.give_up_job, then=_RESUME_FIRST):
        print("gave up the job left unfinished in the journal; the next start scans the cube afresh")


def _jog(args: argparse.Namespace) -> int:
    _check_rig_options(args)
    cfg = load_config(args.config)
    if cfg.rig.kind != "six-motor":
        return _jog_mechanism(args, cfg)
    jog = check_face_jog(args.face, args.turns, args.steps)
    with rig_claims(args.port or cfg.rig.port, args.state_dir):
        if not args.give_up_job:  # refused before the port is opened
            refuse_unfinished(cfg, args.state_dir, _RESUME_FIRST)
        with _link_for(args, cfg) as link, link.estop_on_interrupt():
            link.connect()
            _clear_to_jog(args, cfg, link)
            print(jog_face(link, cfg, jog).describe())
    return 0


def _jog_mechanism(args: argparse.Namespace, cfg: Config) -> int:
    """``jog "close cover, turn +1, open cover"`` on a flipper or two-gripper
    rig: the rig homed, then the robot moves, all checked against its rules
    before anything moves (robot/rig/mechanisms/jog.py)."""
    from ...rig.mechanisms import mechanism_for
    from ...rig.mechanisms.jog import check_any_jog

    if args.steps is not None:
        raise UserError(f"--steps is for a six-motor rig; on a {cfg.rig.kind} rig give robot moves, "
                        "separated by commas in one argument")
    text = args.face
    if args.turns is not None:  # `jog spin -1`: the quarters as a word of their own
        if "," in text or len(text.split()) != 1:
            raise UserError("give the quarter turns inside the robot moves (\"close cover, turn -1, open "
                            "cover\"), not after them")
        text = f"{text} {args.turns}"
    mech = mechanism_for(cfg)
    assert mech is not None
    jog = check_any_jog(cfg, mech, text)
    with rig_claims(args.port or cfg.rig.port, args.state_dir):
        if not args.give_up_job:
            refuse_unfinished(cfg, args.state_dir, _RESUME_FIRST)
        with _link_for(args, cfg, kind=cfg.rig.kind) as link, link.estop_on_interrupt():
            link.connect()
            _clear_to_jog(args, cfg, link)
            print(jog_mechanism(link, cfg, jog, out=lambda line: print(line, flush=True)))
    return 0


def _estop(args: argparse.Namespace) -> int:
    _check_port_arg(args)
    if args.port and args.port.startswith("gpio://"):
        return _estop_pins(args.clear)
    if args.port and not args.clear and (holder := port_holder(args.port)) is not None:
        # Before the set-up file is read: a stop beside a running command
        # needs only the port, and a set-up file being edited (or broken)
        # while the rig runs must not hold it back.
        return _estop_held_port(args.port, holder)
    cfg = load_config(args.config)
    if (args.port or cfg.rig.port).startswith("gpio://"):
        return _estop_pins(args.clear)
    if (args.port or cfg.rig.port).startswith("sim://"):
        # An in-process virtual rig lives only as long as this command: a
        # latch set here would be gone before the next command, so saying
        # "latched" would report a state no rig is in.
        raise UserError("the rig is simulated inside each command (sim://), so there is no running rig "
                        "to stop; for an emergency stop that lasts, run `cuberobot sim-rig` and pass the "
                        "pty it prints with --port")
    port = args.port or cfg.rig.port
    if not args.clear and (holder := port_holder(port)) is not None:
        return _estop_held_port(port, holder)
    with rig_claims(port, None, folder=False), _link_for(args, cfg, kind=cfg.rig.kind) as link:
        if args.clear:
            link.connect()
            link.clear_latch()  # "cleared" only when the rig says so
            print("emergency stop cleared")
        else:
            link.open()
            link.estop()
            link.connect()
            if not link.status().estop:  # say "latched" only when the rig says so
                raise RigError(f"the rig on {link.port} did not latch its emergency stop: check the "
                               "cable, and cut the motors' power if they must stop")
            print(f"emergency stop latched (drivers off); clear with {link.clear_command}")
    return 0


def _estop_pins(clear: bool) -> int:
    """The rig on the Pi's pins lives inside the command that drives them:
    the order goes to that command (robot/gpio/remote.py), which answers
    with what its rig then says."""
    from ...gpio.remote import tell_owner

    print(tell_owner("clear" if clear else "estop"))
    return 0


def _estop_held_port(port: str, holder: dict) -> int:
    """The rig is held by another command (a run, the panel): the stop goes
    straight onto the line beside it, with no handshake that would cut into
    that command's session. The holder hears the latch from the rig and says so."""
    from ... import gpio  # noqa: F401  (gpio:// ports: it says where that rig's stop is)
    from ...rig.link import estop_beside
    from ...rig.owner import describe_holder

    estop_beside(port)
    print(f"emergency stop sent to the rig on {port}, which {describe_holder(holder)} holds; it reports "
          "the latch. Clear it there (the panel's Clear, or `cuberobot estop --clear` once it has ended)")
    return 0


# ---------------------------------------------------------------- registration


def register(sub: Registry) -> None:
    p = sub.add_parser("resume", help="finish the job a crash or a pulled cable interrupted")
    _add_rig_options(p)
    p.set_defaults(func=_resume)

    p = sub.add_parser("jog", help="turn one face, or make robot moves, by hand (maintenance)")
    p.add_argument("face", metavar="FACE|MOVES",
                   help="U R F D L or B; on a flipper or two-gripper rig, robot moves separated by commas, "
                        "made after homing the rig (\"close cover, turn +1, open cover\", \"flip\"; "
                        "\"open D, rotate D 1, close D, rotate D -1\"), or servo angles to try "
                        "(\"servo cover 95\")")
    p.add_argument("turns", nargs="?", type=whole(-MAX_JOG_TURNS, MAX_JOG_TURNS), default=None,
                   metavar="TURNS",
                   help=f"quarter turns, negative: anticlockwise (-{MAX_JOG_TURNS} to {MAX_JOG_TURNS},"
                        " not 0; default 1)")
    p.add_argument("--steps", type=whole(-MAX_JOG_STEPS, MAX_JOG_STEPS), metavar="N",
                   help="turn N motor steps instead (negative: anticlockwise; not 0), to align a face")
    p.add_argument("--give-up-job", action="store_true",
                   help="give up a job left unfinished in the journal instead of refusing (`resume` could "
                        "finish it; the next start scans the cube afresh)")
    _add_rig_options(p)
    p.set_defaults(func=_jog)

    p = sub.add_parser("estop", help="emergency stop (or --clear it)")
    p.add_argument("--clear", action="store_true", help="clear a latched emergency stop")
    _add_rig_options(p, state_dir=False)
    p.set_defaults(func=_estop)

    p = sub.add_parser("sim-rig", help="run a virtual rig on a pseudo-terminal (prints its path)")
    p.add_argument("--speed", default="1", type=port_sim_speed,
                   help="times real time (0.25 to 10000: the host takes a slower rig's moves for stalled "
                        "ones), or 'max' (default 1)")
    p.add_argument("--faults", default="", metavar="SPEC", type=text("--faults", 1000),
                   help="faults: drop:P and corrupt:P (probability per byte), disconnect:BYTES "
                        "(cable pulled after that many bytes), reset:S (firmware restart S seconds "
                        "after the first motor or servo move), stall:FACE; e.g. "
                        "drop:0.01,corrupt:0.01,reset:2.5")
    p.add_argument("--config", metavar="FILE", type=path, help="set-up file for the rig's mechanics")
    p.add_argument("--state", metavar="FACELETS", help="the virtual cube's starting state")
    p.add_argument("--scramble", type=whole(0, MAX_SEED), metavar="SEED",
                   help=f"start from a random cube (SEED 0 to {MAX_SEED})")
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=0,
                   help=f"seed of the fault injection (0 to {MAX_SEED})")
    p.add_argument("--firmware", metavar="ELF", type=path, help="run the real firmware in simavr instead")
    p.add_argument("--sim-view", metavar="FILE", type=path,
                   help="keep the cube (as a camera sees it) in FILE, for `cuberobot start --sim-view FILE` "
                        "in another process")
    p.set_defaults(func=_sim_rig)

    p = sub.add_parser("dry-run", help="run moves on the virtual rig (or --port) and time them")
    p.add_argument("moves", metavar="MOVES",
                   help=f"moves, e.g. \"R U R' U'\" (at most {MAX_DRY_RUN_MOVES}, {MAX_RENDER_MOVES} with"
                        f" --render, and at most {MAX_DRY_RUN_HOURS:g} hour at the virtual rig's --speed)")
    p.add_argument("--from", dest="start", metavar="FACELETS", help="starting state (default solved)")
    _add_rig_options(p)
    p.add_argument("--speed", default="max", type=sim_speed,
                   help="virtual rig speed: times real time (0.01 to 10000) or 'max' (default)")
    p.add_argument("--render", metavar="FILE", type=path,
                   help="write an animation (.gif, .webm, or .mp4 where OpenCV can encode H.264) "
                        "and a timeline PNG")
    p.set_defaults(func=_dry_run)
