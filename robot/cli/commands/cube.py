"""Commands on cube strings: check, show, apply, scramble.

A cube's size comes from ``--size N`` (2 to 7) or else from its length (24
stickers: a 2x2; otherwise a 3x3, whose path is unchanged). Sizes other
than the 3x3 go through :mod:`solver.nxn` and :mod:`solver.pocket`, plain
Python and numpy: no solver tables. Every cube these commands print is in
the one canonical naming of :mod:`solver.nxn.canonical`, which is also how
they read one, so ``apply`` in two calls is ``apply`` in one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from solver import (
    SOLVED,
    SOLVED_CUBE,
    CubeError,
    format_moves,
    normalize_facelets,
    parse_facelets,
    random_cube,
    random_scramble,
)

from ...app.limits import (
    MAX_APPLY_MOVES,
    MAX_CUBE_CHARS,
    MAX_SCRAMBLE_MOVES,
    MAX_SEED,
    STDIN_LIMIT,
    check_cube_text,
    check_moves,
    read_stdin,
)
from ...rig.config import decode_text
from ...rig.errors import UserError
from ..limits import whole
from ..netprint import render_net, render_net_size
from . import Registry

SIZES = (2, 3, 4, 5, 6, 7)


def read_cube_arg(text: str, where: str = "the cube", sizes: tuple[int, ...] = (3,)) -> str:
    """A cube argument: 54 symbols (or 6*N*N for the ``sizes`` allowed),
    ``solved``, or ``-`` for the first word on standard input that is one of
    those (so commands can be piped; standard input is read up to 1 MiB).
    ``solved`` is a 3x3 when 3 is allowed, else the first size's."""
    if text == "-":
        words = decode_text(read_stdin(STDIN_LIMIT, where), "standard input").split()
        lengths = {6 * n * n for n in sizes}
        cubes = [w for w in words if len(w) in lengths or w.lower() == "solved"]
        if not cubes:
            raise UserError(f"no cube on standard input: expected a word of "
                            f"{' or '.join(str(k) for k in sorted(lengths))} symbols or 'solved'")
        text = cubes[0]
    if max(sizes) <= 3:
        check_cube_text(text, where)
    elif len(text) > 6 * max(sizes) ** 2 + MAX_CUBE_CHARS:
        raise UserError(f"{where}: {len(text)} characters is not a cube: give {6 * max(sizes) ** 2} symbols,"
                        " 'solved', or - for standard input")
    if text.lower() == "solved":
        return SOLVED if 3 in sizes else solved_of_size(sizes[0])
    return text


def solved_of_size(n: int) -> str:
    from solver.nxn import solved  # lazy: out of --help's start-up

    return solved(n)


def cube_size(args: argparse.Namespace) -> int | None:
    """The size asked for, or None for the 3x3 path of old."""
    text = args.facelets
    size: int | None = getattr(args, "size", None)
    if size is not None:
        return size
    if text != "-" and len(text.strip()) == 24:
        return 2
    return None


def read_sized(args: argparse.Namespace) -> tuple[int, str]:
    """(size, cube text) for a command that takes any size: --size, else the
    length: 24 symbols a 2x2, anything else a 3x3 (on standard input, the
    first word of 54 or 24 symbols)."""
    size = cube_size(args)
    text = read_cube_arg(args.facelets, sizes=(size,) if size else (3, 2))
    if size is None:
        size = 2 if len(text.strip()) == 24 else 3
    return size, text


def normalize_sized(text: str, size: int) -> str:
    """The cube in face letters after every check its size allows."""
    from solver.nxn import normalize  # lazy: out of --help's start-up

    return normalize(text, size)


def _check(args: argparse.Namespace) -> int:
    size, text = read_sized(args)
    try:
        if size == 3:
            parse_facelets(text)
        else:
            normalize_sized(text, size)
    except CubeError as e:
        if args.json:
            print(json.dumps({"valid": False, "error": e.to_dict()}))
        else:
            print(f"invalid ({e.kind}): {e}", file=sys.stderr)
        return 2
    print(json.dumps({"valid": True}) if args.json else "valid")
    return 0


def _show(args: argparse.Namespace) -> int:
    size, text = read_sized(args)
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    if size != 3:
        return _show_sized(text, size, color)
    facelets = normalize_facelets(text)
    print(render_net(facelets, color=color))
    parse_facelets(text)  # a drawable but unsolvable cube still exits 2 with the reason
    return 0


def _show_sized(text: str, size: int, color: bool) -> int:
    """A cube is drawn in its canonical letters (as ``apply`` would print
    it); a wrong cube in face letters is drawn as given, so that it is seen,
    and still exits 2 with the reason."""
    text = text.strip()
    try:
        named = normalize_sized(text, size)
    except CubeError:
        if len(text) == 6 * size * size and set(text) <= set("URFDLB"):
            print(render_net_size(text, size, color=color))
        raise
    print(render_net_size(named, size, color=color))
    return 0


def _apply(args: argparse.Namespace) -> int:
    moves = " ".join(args.moves)
    check_moves(moves, "MOVES", MAX_APPLY_MOVES, " and apply the parts one after the other")
    size, text = read_sized(args)
    if size != 3 or args.size == 3:
        from solver.nxn import turn  # lazy: out of --help's start-up

        print(turn(text, size, moves))  # read and printed in the one naming: calls add up
        return 0
    cube = parse_facelets(text)
    print(cube.apply(moves).to_facelets())
    return 0


def _scramble_sized(args: argparse.Namespace) -> int:
    """A 2x2: a uniform random state (or --moves face turns); bigger cubes:
    random outer and wide turns (--moves, or as many as a competition
    scramble), the state and then the moves. The state is printed in the
    canonical naming, as ``apply`` prints the same moves on a solved cube
    (a random 2x2 keeps its DBL corner in place, so it is canonical as drawn)."""
    from solver import pocket  # lazy: out of --help's start-up
    from solver.nxn import format_turns, random_turns, scramble_length, scrambled  # lazy: as above

    n = args.size
    if n == 2 and args.moves is None:
        print(pocket.random_pocket(args.seed).to_facelets())
        return 0
    if n == 2:
        moves = format_moves(random_scramble(args.moves, args.seed))
    else:
        count = scramble_length(n) if args.moves is None else args.moves
        moves = format_turns(random_turns(n, count, args.seed))
    print(scrambled(n, moves))
    print(moves)
    return 0


def _scramble(args: argparse.Namespace) -> int:
    if args.size not in (None, 3):
        return _scramble_sized(args)
    if args.moves is not None:
        moves = random_scramble(args.moves, args.seed)
        print(SOLVED_CUBE.apply(moves).to_facelets())
        print(format_moves(moves))
    else:
        print(random_cube(args.seed).to_facelets())
    return 0


def whole_size(allowed: tuple[int, ...] = SIZES) -> Callable[[str], int]:
    """An argparse ``type``: a cube size among ``allowed``."""
    convert = whole(min(allowed), max(allowed))

    def size(text: str) -> int:
        return convert(text)

    size.__name__ = "cube size"
    return size


def add_size(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--size", type=whole_size(), default=None, metavar="N",
                   help=f"the cube is NxN, 2 to 7 ({what});"
                        " default: from the length, 24 symbols a 2x2, else 3x3")


def register(sub: Registry) -> None:
    p = sub.add_parser("check", help="check that a cube string describes a solvable cube")
    p.add_argument("facelets", help="54 symbols in U R F D L B face order (6*N*N with --size N),"
                                    " 'solved', or - for stdin")
    p.add_argument("--json", action="store_true", help="machine-readable answer")
    add_size(p, "sizes 4 to 7: lengths, symbols, colour counts, odd sizes' centres, the corners")
    p.set_defaults(func=_check)

    p = sub.add_parser("show", help="draw a cube's net in the terminal")
    p.add_argument("facelets",
                   help="54 symbols (6*N*N with --size N), 'solved', or - to read standard input")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    add_size(p, "the net drawn N stickers a side")
    p.set_defaults(func=_show)

    p = sub.add_parser("apply", help="apply moves to a cube and print the result")
    p.add_argument("facelets", help="54 symbols (6*N*N with --size N), 'solved', or - for stdin")
    p.add_argument("moves", nargs="+", metavar="MOVES",
                   help=f"moves in Singmaster notation, e.g. \"R U R' U'\" (at most {MAX_APPLY_MOVES});"
                        " with --size also WCA wide, slice and rotation moves: Rw 3Rw 2R x y z")
    add_size(p, "WCA moves: R, Rw, 3Rw, 2R, x y z, with ' or 2")
    p.set_defaults(func=_apply)

    p = sub.add_parser("scramble", help="a random cube (or random moves) and its facelets")
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=None,
                   help=f"repeatable randomness (0 to {MAX_SEED})")
    p.add_argument("--moves", type=whole(0, MAX_SCRAMBLE_MOVES), default=None, metavar="N",
                   help="scramble with N random moves (0 to 10000) instead of drawing a uniform random"
                        " state; prints the facelets, then the moves")
    p.add_argument("--size", type=whole_size(), default=None, metavar="N",
                   help="an NxN cube, 2 to 7: a 2x2 is a uniform random state (or --moves face turns);"
                        " 4x4 to 7x7 are random outer and wide turns (--moves, default 40 to 100)")
    p.set_defaults(func=_scramble)
