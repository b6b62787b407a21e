"""Commands that talk to the rig: sim-rig, dry-run, resume, jog, estop."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from solver import SOLVED_CUBE, Cube, parse_facelets, random_cube

from ...app.dryrun import DryRunAsk
from ...app.jog import MAX_JOG_STEPS, clear_to_jog, refuse_unfinished
from ...app.kindwork import check_jog, dry_run_at_terminal, jog, resume
from ...app.limits import (
    MAX_DRY_RUN_HOURS,
    MAX_DRY_RUN_MOVES,
    MAX_JOG_TURNS,
    MAX_RENDER_MOVES,
    MAX_SEED,
    check_faults,
    check_firmware,
    check_port,
    check_port_and_folder,
    rig_claims,
)
from ...rig.config import Config
from ...rig.errors import RigError, UserError
from ...rig.loading import load_config
from ...rig.owner import port_holder
from ..limits import path, port_sim_speed, sim_speed, text, whole
from . import Registry
from .cube import read_cube_arg

if TYPE_CHECKING:
    from ...rig.link import Link


def _add_rig_options(p: argparse.ArgumentParser, state_dir: bool = True) -> None:
    p.add_argument("--config", metavar="FILE", type=path, help="set-up file (default: config/rig.toml)")
    p.add_argument("--port", metavar="PORT", type=text("port"),
                   help="serial port, pty path or pyserial URL (sim://...); overrides the config")
    if state_dir:
        p.add_argument("--state-dir", metavar="DIR", type=path,
                       help="where the journal lives (default: ~/.local/state/cuberobot)")


def _check_rig_options(args: argparse.Namespace) -> None:
    """--port not blank; --state-dir (or the default one) a folder that can
    be written, created if missing."""
    check_port_and_folder(args.port, args.state_dir)


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


def _link_for(args: argparse.Namespace, cfg: Config, *, default_port: str | None = None) -> Link:
    """A line to the rig (``--port``, else ``default_port``, else the config's),
    for any kind of rig: ``sim://`` and ``gpio://`` made openable first."""
    from ... import gpio, sim  # noqa: F401  (sim:// ports, the default rig's; gpio://, the Pi's pins)
    from ...rig.link import Link

    _check_port_arg(args)
    return Link(cfg, args.port or default_port or cfg.rig.port, kind=cfg.rig.kind)


def _check_port_arg(args: argparse.Namespace) -> None:
    check_port(getattr(args, "port", None))


def _dry_run(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    ask = DryRunAsk(args.moves, start=args.start, port=args.port, speed=args.speed, state_dir=args.state_dir,
                    render=args.render)
    dry_run_at_terminal(cfg, ask, read_cube_arg, lambda line: print(line, flush=True))
    return 0


# ---------------------------------------------------------------- resume


def _resume(args: argparse.Namespace) -> int:
    _check_rig_options(args)
    cfg = load_config(args.config)
    said = resume(cfg, args.state_dir, args.port, lambda port: _link_for(args, cfg, default_port=port),
                  lambda line: print(line, flush=True))
    print(said.message, file=sys.stdout if said.outcome != "unknown" else sys.stderr)
    return 1 if said.outcome == "unknown" else 0


# ---------------------------------------------------------------- jog / estop


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
    checked = check_jog(cfg, args.face, args.turns, args.steps)
    with rig_claims(args.port or cfg.rig.port, args.state_dir):
        if not args.give_up_job:  # refused before the port is opened
            refuse_unfinished(cfg, args.state_dir, _RESUME_FIRST)
        with _link_for(args, cfg) as link, link.estop_on_interrupt():
            link.connect()
            _clear_to_jog(args, cfg, link)
            print(jog(link, cfg, checked, out=lambda line: print(line, flush=True)).summary)
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
    with rig_claims(port, None, folder=False), _link_for(args, cfg) as link:
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
