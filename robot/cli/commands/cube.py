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

from ...rig.errors import UserError
from ..netprint import render_net
from . import Registry

STDIN_LIMIT = 1 << 20
"""Bytes of standard input a cube argument reads at most."""


def read_cube_arg(text: str) -> str:
    """A cube argument: 54 symbols, ``solved``, or ``-`` for the first word
    on standard input that is one of those (so commands can be piped)."""
    if text == "-":
        words = sys.stdin.read(STDIN_LIMIT).split()
        cubes = [w for w in words if len(w) == 54 or w.lower() == "solved"]
        if not cubes:
            raise UserError("no cube on standard input: expected a word of 54 symbols or 'solved'")
        text = cubes[0]
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
    cube = Cube.from_facelets(read_cube_arg(args.facelets))
    print(cube.apply(" ".join(args.moves)).to_facelets())
    return 0


def _scramble(args: argparse.Namespace) -> int:
    if args.moves is not None:
        if args.moves < 0 or args.moves > 10000:
            raise UserError("--moves must be between 0 and 10000")
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
    p.add_argument("moves", nargs="+", help="moves in Singmaster notation, e.g. \"R U R' U'\"")
    p.set_defaults(func=_apply)

    p = sub.add_parser("scramble", help="a random cube (or random moves) and its facelets")
    p.add_argument("--seed", type=int, default=None, help="repeatable randomness")
    p.add_argument("--moves", type=int, default=None, metavar="N",
                   help="scramble with N random moves instead of drawing a uniform random state;"
                        " prints the facelets, then the moves")
    p.set_defaults(func=_scramble)
