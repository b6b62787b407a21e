"""Commands on cube strings: check, show, apply, scramble."""

from __future__ import annotations

import argparse
import json
import sys

from solver import (
    SOLVED,
    SOLVED_CUBE,
    Cube,
    CubeError,
    format_moves,
    normalize_facelets,
    parse_facelets,
    random_cube,
    random_scramble,
)

from ...rig.config import decode_text
from ...rig.errors import UserError
from ..limits import (
    MAX_APPLY_MOVES,
    MAX_SCRAMBLE_MOVES,
    MAX_SEED,
    STDIN_LIMIT,
    check_cube_text,
    check_moves,
    read_stdin,
    whole,
)
from ..netprint import render_net
from . import Registry


def read_cube_arg(text: str, where: str = "the cube") -> str:
    """A cube argument: 54 symbols, ``solved``, or ``-`` for the first word
    on standard input that is one of those (so commands can be piped;
    standard input is read up to 1 MiB)."""
    if text == "-":
        words = decode_text(read_stdin(STDIN_LIMIT, where), "standard input").split()
        cubes = [w for w in words if len(w) == 54 or w.lower() == "solved"]
        if not cubes:
            raise UserError("no cube on standard input: expected a word of 54 symbols or 'solved'")
        text = cubes[0]
    check_cube_text(text, where)
    if text.lower() == "solved":
        return SOLVED
    return text


def _check(args: argparse.Namespace) -> int:
    text = read_cube_arg(args.facelets)
    try:
        parse_facelets(text)
    except CubeError as e:
        if args.json:
            print(json.dumps({"valid": False, "error": e.to_dict()}))
        else:
            print(f"invalid ({e.kind}): {e}", file=sys.stderr)
        return 2
    print(json.dumps({"valid": True}) if args.json else "valid")
    return 0


def _show(args: argparse.Namespace) -> int:
    text = read_cube_arg(args.facelets)
    facelets = normalize_facelets(text)
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    print(render_net(facelets, color=color))
    parse_facelets(text)  # a drawable but unsolvable cube still exits 2 with the reason
    return 0


def _apply(args: argparse.Namespace) -> int:
    moves = " ".join(args.moves)
    check_moves(moves, "MOVES", MAX_APPLY_MOVES, " and apply the parts one after the other")
    cube = Cube.from_facelets(read_cube_arg(args.facelets))
    print(cube.apply(moves).to_facelets())
    return 0


def _scramble(args: argparse.Namespace) -> int:
    if args.moves is not None:
        moves = random_scramble(args.moves, args.seed)
        print(SOLVED_CUBE.apply(moves).to_facelets())
        print(format_moves(moves))
    else:
        print(random_cube(args.seed).to_facelets())
    return 0


def register(sub: Registry) -> None:
    p = sub.add_parser("check", help="check that a cube string describes a solvable cube")
    p.add_argument("facelets", help="54 symbols in U R F D L B face order, 'solved', or - for stdin")
    p.add_argument("--json", action="store_true", help="machine-readable answer")
    p.set_defaults(func=_check)

    p = sub.add_parser("show", help="draw a cube's net in the terminal")
    p.add_argument("facelets", help="54 symbols, 'solved', or - to read standard input")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.set_defaults(func=_show)

    p = sub.add_parser("apply", help="apply moves to a cube and print the result")
    p.add_argument("facelets", help="54 symbols, 'solved', or - for stdin")
    p.add_argument("moves", nargs="+", metavar="MOVES",
                   help=f"moves in Singmaster notation, e.g. \"R U R' U'\" (at most {MAX_APPLY_MOVES})")
    p.set_defaults(func=_apply)

    p = sub.add_parser("scramble", help="a random cube (or random moves) and its facelets")
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=None,
                   help=f"repeatable randomness (0 to {MAX_SEED})")
    p.add_argument("--moves", type=whole(0, MAX_SCRAMBLE_MOVES), default=None, metavar="N",
                   help="scramble with N random moves (0 to 10000) instead of drawing a uniform random"
                        " state; prints the facelets, then the moves")
    p.set_defaults(func=_scramble)
