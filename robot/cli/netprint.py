"""Drawing a cube's net in a terminal."""

from __future__ import annotations

# Background colours of the usual scheme (U white, R red, F green, D yellow,
# L orange, B blue), as 256-colour ANSI codes.
_ANSI = {"U": 231, "R": 160, "F": 34, "D": 226, "L": 208, "B": 27}


def render_net(facelets: str, color: bool = False) -> str:
    """The net as text; ``facelets`` must use URFDLB letters."""

    def cell(face: str, row: int, col: int) -> str:
        letter = facelets[9 * "URFDLB".index(face) + 3 * row + col]
        if not color:
            return letter + " "
        fg = 16 if letter in "UDL" else 231
        return f"\x1b[48;5;{_ANSI[letter]}m\x1b[38;5;{fg}m {letter}\x1b[0m"

    width = 6
    lines = []
    for face in "U":
        for r in range(3):
            lines.append(" " * (width + 1) + "".join(cell(face, r, c) for c in range(3)).rstrip())
    for r in range(3):
        lines.append(" ".join("".join(cell(f, r, c) for c in range(3)) for f in "LFRB").rstrip())
    for r in range(3):
        lines.append(" " * (width + 1) + "".join(cell("D", r, c) for c in range(3)).rstrip())
    return "\n".join(lines)


def render_net_size(facelets: str, n: int, color: bool = False) -> str:
    """The net of an NxN cube (6*n*n URFDLB letters), laid out as the 3x3's."""

    def cell(face: str, row: int, col: int) -> str:
        letter = facelets[n * n * "URFDLB".index(face) + n * row + col]
        if not color:
            return letter + " "
        fg = 16 if letter in "UDL" else 231
        return f"\x1b[48;5;{_ANSI[letter]}m\x1b[38;5;{fg}m {letter}\x1b[0m"

    def row_of(face: str, r: int) -> str:
        return "".join(cell(face, r, c) for c in range(n))

    indent = " " * (2 * n + 1)
    lines = [(indent + row_of("U", r)).rstrip() for r in range(n)]
    lines += [" ".join(row_of(f, r) for f in "LFRB").rstrip() for r in range(n)]
    lines += [(indent + row_of("D", r)).rstrip() for r in range(n)]
    return "\n".join(lines)
