"""OLL: the 57 ways the last layer can be oriented wrongly, and what fixes each.

Each row is ``(number, shape, picture, algorithm)``: the standard number (OLL
1 to 57), the shape people call it by, the top view (see
:mod:`solver.cfop.patterns`: ``X`` marks a sticker showing the U colour; rows
back side, three rows of left side + top + right side, front side), and the
algorithm in the usual notation (wide turns, slices and rotations allowed).

The engine turns U before an algorithm as needed, so a case matches in any of
its four turns. ``tests/test_cfop.py`` checks that every row orients its case
(and its turned copies) without touching the first two layers, and that the
57 rows together cover each of the 216 orientations of a last layer once.
"""

OLL_RULES: tuple[tuple[int, str, str, str], ...] = (
    (1, "Dot", ".X./X...X/X.X.X/X...X/.X.", "R U2 R2 F R F' U2 R' F R F'"),
    (2, "Dot", ".XX/X..../X.X.X/X..../.XX", "F R U R' U' F' f R U R' U' f'"),
    (3, "Dot", "XX./....X/X.X.X/X..X./.X.", "f R U R' U' f' U' F R U R' U' F'"),
    (4, "Dot", ".X./X..X./X.X.X/....X/XX.", "f R U R' U' f' U F R U R' U' F'"),
    (5, "Square", "XX./....X/X.XX./X.XX./...", "r' U2 R U R' U r"),
    (6, "Square", ".../X.XX./X.XX./....X/XX.", "r U2 R' U' R U' r'"),
    (7, "Small lightning", "X../..X.X/.XX.X/.X.../.XX", "r U R' U R U2 r'"),
    (8, "Small lightning", ".XX/.X.../.XX.X/..X.X/X..", "r' U' R U' R' U2 r"),
    (9, "Fish", "..X/X.X../.XX.X/...X./XX.", "R U R' U' R' F R2 U R' U' F'"),
    (10, "Fish", "XX./...X./.XX.X/X.X../..X", "R U R' U R' F R F' R U2 R'"),
    (11, "Small lightning", "X../..XX./.XX.X/X..../.XX", "r U R' U R' F R F' R U2 r'"),
    (12, "Small lightning", "..X/.XX../X.XX./....X/XX.", "M' R' U' R U' R' U2 R U' R r'"),
    (13, "Knight", "XX./....X/.XXX./.X.../.XX", "F U R U' R2 F' R U R U' R'"),
    (14, "Knight", ".XX/X..../.XXX./...X./XX.", "R' F R U R' F' R F U' F'"),
    (15, "Knight", "XX./....X/.XXX./X..X./.X.", "r' U' r R' U' R U r' U r"),
    (16, "Knight", ".X./X..X./.XXX./....X/XX.", "r U r' R U R' U' r U' r'"),
    (17, "Dot", ".XX/.X.../X.X.X/X..X./.X.", "R U R' U R' F R F' U2 R' F R F'"),
    (18, "Dot", ".X./.X.X./X.X.X/...../XXX", "r U R' U R U2 r2 U' R U' R' U2 r"),
    (19, "Dot", ".X./.X.X./X.X.X/X...X/.X.", "M U R U R' U' M' R' F R F'"),
    (20, "Dot", ".X./.X.X./X.X.X/.X.X./.X.", "r U R' U' M2 U R U' R' U' M'"),
    (21, "Cross H", "X.X/..X../.XXX./..X../X.X", "R U2 R' U' R U R' U' R U' R'"),
    (22, "Cross Pi", "..X/X.X../.XXX./X.X../..X", "R U2 R2 U' R2 U' R2 U2 R"),
    (23, "Cross headlights", "X.X/..X../.XXX./.XXX./...", "R2 D' R U2 R' D R U2 R"),
    (24, "Cross chameleon", "X../..XX./.XXX./..XX./X..", "r U R' U' r' F R F'"),
    (25, "Cross bowtie", ".../X.XX./.XXX./.XX../..X", "F' r U R' U' r' F R"),
    (26, "Antisune", ".../X.XX./.XXX./..X.X/X..", "R U2 R' U' R U' R'"),
    (27, "Sune", "X../..X.X/.XXX./.XX../..X", "R U R' U R U2 R'"),
    (28, "Corners oriented", ".../.XXX./.XX.X/.X.X./.X.", "r U R' U' r' R U R U' R'"),
    (29, "Awkward", "X../..XX./.XX.X/...X./XX.", "R U R' U' R U' R' F' U' F R U R'"),
    (30, "Awkward", ".../X.X.X/.XX.X/.X.X./.X.", "F R' F R2 U' R' U' R U R' F2"),
    (31, "P", "X../..XX./X.XX./...X./XX.", "R' U' F U R U' R' F' R"),
    (32, "P", "..X/.XX../.XX.X/.X.../.XX", "L U F' U' L' U L F L'"),
    (33, "T", "XX./...X./.XXX./...X./XX.", "R U R' U' R' F R F'"),
    (34, "C", ".X./X...X/.XXX./.X.X./.X.", "R U R2 U' R' F R U R U' F'"),
    (35, "Fish", ".X./.X..X/X.XX./..XX./X..", "R U2 R2 F R F' R U2 R'"),
    (36, "W", "..X/.XX../X.XX./X..X./.X.", "L' U' L U' L' U L U L F' L' F"),
    (37, "Fish", ".../.XX.X/.XX.X/...X./XX.", "F R' F' R U R U' R'"),
    (38, "W", "X../..XX./.XX.X/.X..X/.X.", "R U R' U R U' R' U' R' F R F'"),
    (39, "Big lightning", "XX./...X./.XXX./.X..X/.X.", "L F' L' U' L U F U' L'"),
    (40, "Big lightning", ".XX/.X.../.XXX./X..X./.X.", "R' F R U R' U' F' U R"),
    (41, "Awkward", "X.X/..X../.XX.X/.X.X./.X.", "R U R' U R U2 R' F R U R' U' F'"),
    (42, "Awkward", ".X./.X.X./.XX.X/..X../X.X", "R' U' R U' R' U2 R F R U R' U' F'"),
    (43, "P", ".../X.XX./X.XX./X..X./.X.", "F' U' L' U L F"),
    (44, "P", ".../.XX.X/.XX.X/.X..X/.X.", "F U R U' R' F'"),
    (45, "T", ".X./X..X./.XXX./X..X./.X.", "F R U R' U' F'"),
    (46, "C", ".../.XX.X/X.X.X/.XX.X/...", "R' U' R' F R F' U R"),
    (47, "Small L", "X../..X.X/X.XX./....X/XX.", "R' U' R' F R F' R' F R F' U R"),
    (48, "Small L", "..X/X.X../.XX.X/X..../.XX", "F R U R' U' R U R' U' F'"),
    (49, "Small L", "..X/X.X../X.XX./X..../.XX", "r U' r2 U r2 U r2 U' r"),
    (50, "Small L", ".XX/X..../X.XX./X.X../..X", "r' U r2 U' r2 U' r2 U r'"),
    (51, "I", "XX./....X/.XXX./....X/XX.", "F U R U' R' U R U' R' F'"),
    (52, "I", "X../..X.X/X.X.X/..X.X/X..", "R U R' U R U' B U' B' R'"),
    (53, "Small L", ".X./X...X/X.XX./X.X.X/...", "r' U' R U' R' U R U' R' U2 r"),
    (54, "Small L", ".../X.X.X/X.XX./X...X/.X.", "r U R' U R U' R' U R U2 r'"),
    (55, "I", ".../X.X.X/X.X.X/X.X.X/...", "R U2 R2 U' R U' R' U2 F R F'"),
    (56, "I", ".X./X...X/.XXX./X...X/.X.", "r U r' U R U' R' U R U' R' r U' r'"),
    (57, "H", ".X./.X.X./.XXX./.X.X./.X.", "R U R' U' M' U R U' r'"),
)
