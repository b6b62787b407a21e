"""F2L: where a corner-edge pair can be, and how to put it into its slot.

The rows are written for the front-right slot; the engine turns its view of
the cube (a rotation about the U-D axis) to use them for the other three.
Each row of ``F2L_RULES`` is ``(pattern, algorithm)``: the pattern says in
which slot the pair's corner sits and which face its D-colour sticker looks at,
then the same for the edge and its F-colour sticker (see
:mod:`solver.cfop.patterns`); the engine turns U first when the pair matches
only after a turn. The 41 rows are the 41 cases of the usual sheets (corner
and edge in the top layer or in their slot); the algorithms are the shortest
in R, U and F turns that keep the cross and the other slots, found by
``python -m solver.cfop.derive``.

A pair piece sitting in another slot is first lifted out with that slot's
``EXTRACT`` algorithm (in the front-right view): it only disturbs that slot
(which holds a wrong piece anyway) and the top layer. The engine tries each
of the three and keeps the shortest total.

``tests/test_cfop.py`` checks every row on its case with the other slots solved
and scrambled, and every corner and edge placement reachable with the cross
solved (384 of them).
"""

F2L_RULES: tuple[tuple[tuple[str, str, str, str], str], ...] = (
    (('ULB', 'L', 'UB', 'B'), "F' U2 F"),
    (('URF', 'R', 'UB', 'U'), "R U R'"),
    (('UFL', 'L', 'UF', 'U'), "R U' R'"),
    (('URF', 'F', 'UL', 'L'), "F' U' F"),
    (('ULB', 'U', 'UR', 'U'), "F' U' F R U R'"),
    (('UBR', 'U', 'UF', 'F'), "F' U2 F2 R' F' R"),
    (('UFL', 'U', 'UR', 'U'), "R U2 R2 F R F'"),
    (('ULB', 'U', 'UF', 'F'), "R U R' F' U' F"),
    (('URF', 'U', 'FR', 'R'), "F' U F R U2 R'"),
    (('DFR', 'F', 'UR', 'U'), "F' U2 F R U2 R'"),
    (('DFR', 'F', 'UB', 'B'), "R U' R' F' U' F"),
    (('DFR', 'R', 'UL', 'U'), "F' U F R U R'"),
    (('DFR', 'R', 'UF', 'F'), "R U2 R' F' U2 F"),
    (('URF', 'U', 'UR', 'U'), "R U2 R' U' R U R'"),
    (('ULB', 'U', 'UL', 'L'), "F2 U2 F U F' U F2"),
    (('ULB', 'U', 'UB', 'U'), "R2 U2 R' U' R U' R2"),
    (('ULB', 'U', 'UB', 'B'), "F2 U2 R' F' R U2 F2"),
    (('URF', 'U', 'FR', 'F'), 'R2 U R2 U R2 U2 R2'),
    (('ULB', 'L', 'UL', 'U'), "R2 U R' U R U2 R2"),
    (('URF', 'R', 'UR', 'R'), "R U' R' U2 F' U' F"),
    (('URF', 'R', 'UF', 'U'), "R' U2 R2 U R2 U R"),
    (('ULB', 'L', 'UR', 'U'), "R U' R' U' R U R'"),
    (('UBR', 'B', 'UF', 'F'), "F2 U2 R' F R U2 F2"),
    (('URF', 'R', 'UB', 'B'), "R2 U2 F R2 F' U2 R2"),
    (('UFL', 'F', 'FR', 'F'), "R U R' U2 R U R'"),
    (('UFL', 'F', 'FR', 'R'), "F' U' F U' R U R'"),
    (('UBR', 'R', 'UB', 'B'), "R U2 R' U F' U' F"),
    (('URF', 'F', 'UF', 'U'), "F' U F U2 R U R'"),
    (('UFL', 'L', 'UL', 'L'), "F' U F U' F' U' F"),
    (('UBR', 'R', 'UF', 'U'), "R U2 R' U2 R U' R'"),
    (('UBR', 'R', 'UL', 'U'), "R U R' U2 R U' R'"),
    (('UFL', 'L', 'UR', 'R'), "R U R' U2 F' U' F"),
    (('UBR', 'R', 'FR', 'F'), "R U' R' U2 R U' R'"),
    (('ULB', 'B', 'FR', 'R'), "R U R' F R' F' R"),
    (('DFR', 'D', 'UF', 'U'), "F' U2 F U2 R U R'"),
    (('DFR', 'D', 'UR', 'R'), "R U2 R' U2 F' U' F"),
    (('DFR', 'D', 'FR', 'R'), "R U' R U2 F R2 F' U2 R2"),
    (('DFR', 'F', 'FR', 'F'), "R2 U2 R' U' R U' R' U2 R'"),
    (('DFR', 'F', 'FR', 'R'), "R F U R U' R' F' U' R'"),
    (('DFR', 'R', 'FR', 'F'), "R U2 R U R' U R U2 R2"),
    (('DFR', 'R', 'FR', 'R'), "R U F R U R' U' F' R'"),
)

EXTRACT: dict[str, tuple[str, ...]] = {
    "FL": ("L' U L", "L' U' L", "L' U2 L"),
    "BL": ("L U L'", "L U' L'", "L U2 L'"),
    "BR": ("R' U R", "R' U' R", "R' U2 R"),
}
