"""PLL: the 21 ways an oriented last layer can be permuted, and what fixes each.

Each row is ``(name, side stickers, algorithm)``: the standard name, the
twelve side stickers of the last layer (F R B L faces, each read left to right
as you face it, each letter the face whose colour the sticker has; see
:mod:`solver.cfop.patterns`), and the algorithm in the usual notation.

A case matches with any turn of U before it and with its colours turned any
way round (which only means one more turn of U after it, the final AUF).
``tests/test_cfop.py`` checks that every row solves its case up to that last
turn without touching the rest of the cube, and that the 21 rows cover each of
the 288 permutations of an oriented last layer once.
"""

PLL_RULES: tuple[tuple[str, str, str], ...] = (
    ("Aa", "FFB LRF RBR BLL", "x R' U R' D2 R U' R' D2 R2 x'"),
    ("Ab", "FFR BRB LBF RLL", "x R2 D2 R U R' D2 R U' R x'"),
    ("E", "LFR BRF RBL FLB", "x' R U' R' D R U R' D' R U R' D R U' R' D' x"),
    ("F", "FBR BRF RFB LLL", "R' U' F' R U R' U' R' F R2 U' R' U' R U R' U R"),
    ("Ga", "FRR BLF RFB LBL", "R2 U R' U R' U' R U' R2 U' D R' U R D'"),
    ("Gb", "FBR BFF RLB LRL", "R' U' R U D' R2 U R' U R U' R U' R2 D"),
    ("Gc", "FBR BLF RRB LFL", "R2 U' R U' R U R' U R2 U D' R U' R' D"),
    ("Gd", "FLR BBF RFB LRL", "R U R' U' D R2 U' R U' R' U R' U R2 D'"),
    ("H", "FBF RLR BFB LRL", "M2 U M2 U2 M2 U M2"),
    ("Ja", "FFR BBF RRB LLL", "x R2 F R F' R U2 r' U r U2 x'"),
    ("Jb", "LFF RLL FRR BBB", "R U R' F' R U R' U' R' F R2 U' R'"),
    ("Na", "BFF RLL FBB LRR", "R U R' U R U R' F' R U R' U' R' F R2 U' R' U2 R U' R'"),
    ("Nb", "FFB LLR BBF RRL", "R' U R U' R' F' U' F R U R' F R' F' R U' R"),
    ("Ra", "LLF RFL FBR BRB", "R U' R' U' R U R D R' U' R D' R' U2 R'"),
    ("Rb", "RFB LBR BLL FRF", "R2 F R U R U' R' F' R U2 R' U2 R"),
    ("T", "FFR BLF RBB LRL", "R U R' U' R' F R2 U' R' U' R U R' F'"),
    ("Ua", "FRF RLR BBB LFL", "M2 U M U2 M' U M2"),
    ("Ub", "FLF RFR BBB LRL", "M2 U' M U2 M' U' M2"),
    ("V", "FFB LBR BRF RLL", "R' U R' U' y R' F' R2 U' R' U R' F R F"),
    ("Y", "FFB LRR BLF RBL", "F R U' R' U' R U R' F' R U R' U' R' F R F'"),
    ("Z", "LBL FRF RFR BLB", "M' U M2 U M2 U M' U2 M2"),
)
