"""The two-phase search (IDA* in both phases), compiled with numba.

Phase 1 looks for move sequences of exactly ``L1`` moves that bring the cube
into the subgroup <U, D, R2, L2, F2, B2>; ``L1`` grows from the phase-1
distance upwards. Every time phase 1 arrives, phase 2 searches for the
shortest completion within the subgroup that keeps the total under the
current bound. Longer phase-1 sequences often allow much shorter phase-2
ones, which is how the total comes down over time.

The search is an explicit stack rather than recursion so it can stop after a
number of nodes and resume later exactly where it was: the caller checks the
clock between slices and runs several searches (orientations of the cube, its
inverse) side by side. All state lives in the arrays of a :class:`Searcher`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from numba import njit

from . import coords as co
from .cubie import Cube
from .tables import P1_DEEPEST, PHASE2_MOVES, get2, get4

MAXD = 40

# indices into the int64 state vector: depth in phase 1, length of the
# phase-1 sequences being tried, whether a root in the subgroup still awaits
# phase 2, nodes so far, solution length, the root being searched, whether
# its children are known, whether the next root is to be found, and the
# current length counted with the premoves
D, L1, ROOT_PENDING, NODES, SOL_LEN, ROOT, ROOT_EXPANDED, NEXT_ROOT, LEVEL = range(9)
# columns of a root's coordinates
R_TW, R_FL, R_SS, R_H, R_LB = 0, 1, 2, 3, 4
# columns of the per-depth phase-1 array: twist, flip, place of the slice
# edges, phase-1 distance and the move taken
TW, FL, SS, H, MV = 0, 1, 2, 3, 4

PAUSED, FOUND, EXHAUSTED = 0, 1, 2

# What a search looks for. Compiled code sees these as constants.
LENGTH = 0
"""Search mode: any solution within the length bound; phase 2 stops at the
first completion it finds (the ``htm`` metric)."""
AXIAL = 1
"""Search mode: cheapest on a six-motor rig, where two consecutive turns of
opposite faces run at once and cost the dearer of the two (``axial``)."""
TURNS = 2
"""Search mode: cheapest as the plain sum of quarter- and half-turn costs
(``qtm``, or any weights)."""
P2_MAX = 12
"""Longest phase 2 tried: deeper ones are slow to find and rarely needed,
since a longer phase 1 usually leaves a much shorter phase 2."""
NO_DISTANCE = 99
"""What :func:`phase1_distance` gives when damaged tables lead it nowhere:
more than any bound, so the cube is never searched."""
ENUM_CAP = 100000
"""When minimising a cost: phase-2 nodes spent, after the first completion of
a phase-1 sequence, on cheaper alternatives of the same length."""


class Tables(NamedTuple):
    """The tables the search reads (see :mod:`solver.tables`), handed to the
    compiled functions as one argument. Each function reads the fields it
    needs into local names on entry, because reading them out of the tuple
    inside the per-node loops is much slower. From Python the entry points
    take it as a plain tuple and name it again inside, because numba is
    slower to dispatch a call with a named tuple, and a solve makes hundreds
    (docs/benchmarks.md has the figures)."""

    twist_move: np.ndarray
    flip_move: np.ndarray
    slice_move: np.ndarray
    slice_sorted_move: np.ndarray
    corners_move: np.ndarray
    ud_edges_move: np.ndarray
    fs_cs: np.ndarray
    twist_conj: np.ndarray
    phase1: np.ndarray
    twist_slice: np.ndarray
    flip_slice: np.ndarray
    cornslice: np.ndarray
    edgeslice: np.ndarray
    phase2: np.ndarray
    c_classidx: np.ndarray
    c_sym: np.ndarray
    ud_edges_conj: np.ndarray
    moves: np.ndarray
    """The 18 moves as cubie arrays (:data:`coords.MOVES`)."""

    @classmethod
    def select(cls, tables: dict[str, np.ndarray]) -> Tables:
        """The search's tables out of all of :func:`solver.tables.load`."""
        return cls._make([*(tables[name] for name in cls._fields[:-1]), co.MOVES])


@njit(cache=True, inline="always")
def _h1_mod3(tw, fl, sl, fs_cs, twist_conj, p1):
    cs = np.int64(fs_cs[sl * co.N_FLIP + fl])
    idx = (cs >> 4) * co.N_TWIST + twist_conj[tw, cs & 15]
    return get2(p1, idx)


@njit(cache=True)
def phase1_distance(tw, fl, ss, twist_move, flip_move, slice_move, fs_cs, twist_conj, p1):
    """Exact phase-1 distance: walk down the table, one move at a time.
    (``ss`` is the place of the slice edges, 0..494.) Damaged tables, where
    the walk finds no step down or goes on past P1_DEEPEST moves, give
    NO_DISTANCE, which rules the cube out, rather than walk forever."""
    depth = 0
    while not (tw == 0 and fl == 0 and ss == 0):
        if depth >= P1_DEEPEST:
            return NO_DISTANCE
        v = _h1_mod3(tw, fl, ss, fs_cs, twist_conj, p1)
        want = (v + 2) % 3
        stepped = False
        for m in range(18):
            t1 = twist_move[tw, m]
            f1 = flip_move[fl, m]
            s1 = slice_move[ss, m]
            if _h1_mod3(t1, f1, s1, fs_cs, twist_conj, p1) == want:
                tw, fl, ss = t1, f1, s1
                stepped = True
                break
        if not stepped:
            return NO_DISTANCE
        depth += 1
    return depth


@njit(cache=True, inline="always")
def _blocked(f, lf):
    """Same face twice, or opposite faces in the wrong order (D U, L R, B F)."""
    return f == lf or f == lf - 3


@njit(cache=True)
def _cost_and_open(seq, n, mode, qc, hc):
    """Cost of seq[:n] in ``mode`` (AXIAL or TURNS; quarter turns cost ``qc``,
    half turns ``hc``), and whether its last move is unpaired, so that in
    AXIAL it may still pair with a move appended to it."""
    total = 0.0
    open_ = False
    i = 0
    while i < n:
        c = hc if seq[i] % 3 == 1 else qc
        if mode == AXIAL and i + 1 < n and seq[i] // 3 % 3 == seq[i + 1] // 3 % 3:
            c2 = hc if seq[i + 1] % 3 == 1 else qc
            total += max(c, c2)
            i += 2
            open_ = False
        else:
            total += c
            i += 1
            open_ = mode == AXIAL
    return total, open_


@njit(cache=True)
def seq_cost(seq, n, mode, qc, hc):
    """Cost of seq[:n]: AXIAL pairs consecutive opposite-face turns into one
    step costing the larger of the two (the rig metric), TURNS adds up."""
    return _cost_and_open(seq, n, mode, qc, hc)[0]


@njit(cache=True, inline="always")
def _cost_lb(d, open_, mode, cmin):
    """Least cost of d more moves; an open last move may pair with the next."""
    if mode == TURNS:
        return d * cmin
    if open_ and d > 0:
        d -= 1
    return ((d + 1) // 2) * cmin


@njit(cache=True, inline="always")
def phase2_distance(c, e, c_classidx, c_sym, ud_edges_conj, p2):
    """Distance of (corners, U/D edges) to solved within the subgroup: exact
    below ``tables.FAR``, which stands for FAR or more."""
    idx = np.int64(c_classidx[c]) * co.N_PERM8 + ud_edges_conj[e, c_sym[c]]
    return get4(p2, idx)


@njit(cache=True)
def _keep(st, sol, seq, n, mode, qc, hc, fcost):
    """Make seq[:n] the solution found, unless a cost is being minimised and
    it is neither cheaper than ``fcost[0]`` nor shorter than ``fcost[1]``.
    Whether it was kept."""
    if mode != LENGTH:
        c = seq_cost(seq, n, mode, qc, hc)
        if c >= fcost[0] and n >= fcost[1]:
            return False
        fcost[0] = c
    for i in range(n):
        sol[i] = seq[i]
    st[SOL_LEN] = n
    return True


@njit(cache=True)
def _phase2(st, lv, lp, sol, cn, sp, e, bound, tail, nt, t, mode, qc, hc, fcost, p2extra):
    """Shortest phase-2 completion of the current phase-1 sequence, which
    leaves corners ``cn``, slice-edge order ``sp`` and U/D edges ``e``; the
    solution ends with the root's ``nt`` premoves ``tail``. In mode LENGTH
    the first one found; otherwise all of that length are looked at and the
    cheapest in the metric wins if it beats ``fcost[0]`` (or is shorter than
    ``fcost[1]``), and so are completions up to ``p2extra`` moves longer,
    which are often cheaper: a longer phase 2 can pair more turns on
    opposite faces. ``t`` is the :class:`Tables`."""
    corners_move, ud_edges_move, slice_sorted_move = t.corners_move, t.ud_edges_move, t.slice_sorted_move
    cornslice, edgeslice, p2 = t.cornslice, t.edgeslice, t.phase2
    c_classidx, c_sym, ud_edges_conj = t.c_classidx, t.c_sym, t.ud_edges_conj
    n1 = st[L1]
    allowed = min(bound - n1 - nt, P2_MAX)
    if allowed < 0:
        return False
    # the three lower bounds, cheapest first
    hcs = cornslice[cn * 24 + sp]
    if hcs > allowed:
        return False
    hes = edgeslice[e * 24 + sp]
    if hes > allowed:
        return False
    d2 = phase2_distance(cn, e, c_classidx, c_sym, ud_edges_conj, p2)
    h = max(hcs, hes, d2)
    if h > allowed:
        return False
    lf = lv[n1 - 1, MV] // 3 if n1 > 0 else -9
    seq = np.empty(n1 + allowed + 1 + nt, dtype=np.int64)
    for i in range(n1):
        seq[i] = lv[i, MV]
    # the premoves after phase 2 cost at least what all but their first do
    # on their own (the first may pair with the last move of phase 2)
    tail_lb = seq_cost(tail[1:], nt - 1, mode, qc, hc) if nt > 1 else 0.0
    # cost of the sequence after k phase-2 moves, and whether its last move
    # is unpaired; k = 0 is the phase-1 part
    cmin = min(qc, hc)
    pcost = np.empty(allowed + 2, dtype=np.float64)
    popen = np.zeros(allowed + 2, dtype=np.bool_)
    pcost[0], popen[0] = _cost_and_open(seq, n1, mode, qc, hc)
    prune_cost = mode != LENGTH
    first = -1
    for n2 in range(h, allowed + 1):
        if n2 == 0:
            for i in range(nt):
                seq[n1 + i] = tail[i]
            return _keep(st, sol, seq, n1 + nt, mode, qc, hc, fcost)
        # depth-first over phase-2 sequences of exactly n2 moves; lp[k] holds
        # corners, U/D edges, slice edges and the move index at depth k
        found = False
        n0 = st[NODES]
        k = 0
        lp[0, 0] = cn
        lp[0, 1] = e
        lp[0, 2] = sp
        lp[0, 3] = -1
        while True:
            p = lp[k, 3] + 1
            prev = PHASE2_MOVES[lp[k - 1, 3]] // 3 if k > 0 else lf
            while p < 10 and _blocked(PHASE2_MOVES[p] // 3, prev):
                p += 1
            if p >= 10:
                if k == 0:
                    break
                k -= 1
                continue
            if found and st[NODES] - n0 > ENUM_CAP:
                break  # enough alternatives looked at for this phase-1 sequence
            lp[k, 3] = p
            mm = PHASE2_MOVES[p]
            c1 = corners_move[lp[k, 0], mm]
            s1 = slice_sorted_move[lp[k, 2], mm]
            st[NODES] += 1
            togo = n2 - k - 1
            if cornslice[c1 * 24 + s1] > togo:
                continue
            e1 = ud_edges_move[lp[k, 1], mm]
            if phase2_distance(c1, e1, c_classidx, c_sym, ud_edges_conj, p2) > togo:
                continue
            if prune_cost:
                # branch and bound on the metric: the cost so far plus the
                # least the remaining moves can cost must beat the best
                cm = hc if mm % 3 == 1 else qc
                prev_m = seq[n1 + k - 1] if k > 0 else lv[n1 - 1, MV]
                if popen[k] and prev_m // 3 % 3 == mm // 3 % 3:
                    cp = hc if prev_m % 3 == 1 else qc
                    pcost[k + 1] = pcost[k] - cp + max(cp, cm)
                    popen[k + 1] = False
                else:
                    pcost[k + 1] = pcost[k] + cm
                    popen[k + 1] = mode == AXIAL
                seq[n1 + k] = mm
                if n1 + n2 + nt >= fcost[1] and pcost[k + 1] + _cost_lb(togo, popen[k + 1], mode, cmin) \
                        + tail_lb >= fcost[0] - 1e-9:
                    continue
            if togo == 0:
                for i in range(n2):
                    seq[n1 + i] = PHASE2_MOVES[lp[i, 3]]
                for i in range(nt):
                    seq[n1 + n2 + i] = tail[i]
                if not _keep(st, sol, seq, n1 + n2 + nt, mode, qc, hc, fcost):
                    continue
                if mode == LENGTH:
                    return True
                if not found:
                    n0 = st[NODES]
                found = True
                continue
            k += 1
            lp[k, 0] = c1
            lp[k, 1] = e1
            lp[k, 2] = s1
            lp[k, 3] = -1
        if found and first < 0:
            first = n2
        if first >= 0 and n2 >= first + p2extra:
            return True
    return first >= 0


@njit(cache=True, inline="always")
def _expand(lv, ch, d, last, limit, t):
    """Children of the node at depth ``d``: coordinates and phase-1 distance
    for each move (99 for a move that may not follow the previous one).

    All children are looked up together rather than one at a time as the
    search visits them: their table reads do not depend on each other, so
    the processor overlaps the cache misses into the big pruning table,
    which is what a phase-1 node mostly waits for. Before that, two tables
    small enough to stay in the cache rule out most children that are more
    than ``limit`` moves from the subgroup, without the big table's cache
    miss. At the ``last`` level only the subgroup itself counts, which needs
    no table at all."""
    twist_move, flip_move, slice_move, fs_cs, twist_conj = t.twist_move, t.flip_move, t.slice_move, t.fs_cs, \
        t.twist_conj
    p1, twist_slice, flip_slice = t.phase1, t.twist_slice, t.flip_slice
    lf = lv[d - 1, MV] // 3 if d > 0 else -9
    tw0 = lv[d, TW]
    fl0 = lv[d, FL]
    ss0 = lv[d, SS]
    n = 0
    for m in range(18):
        if _blocked(m // 3, lf):
            ch[d, m, 3] = 99 if last else -1
            continue
        n += 1
        tw = twist_move[tw0, m]
        fl = flip_move[fl0, m]
        ss = slice_move[ss0, m]
        ch[d, m, 0] = tw
        ch[d, m, 1] = fl
        ch[d, m, 2] = ss
        if last:
            ch[d, m, 3] = 0 if tw == 0 and fl == 0 and ss == 0 else 99
        elif twist_slice[tw * co.N_SLICE + ss] > limit or flip_slice[fl * co.N_SLICE + ss] > limit:
            ch[d, m, 3] = -1
        else:
            ch[d, m, 3] = np.int64(fs_cs[ss * co.N_FLIP + fl])
    if last:
        return n
    hp = lv[d, H]
    for m in range(18):
        cs = ch[d, m, 3]
        if cs < 0:
            ch[d, m, 3] = 99
            continue
        v = get2(p1, (cs >> 4) * co.N_TWIST + twist_conj[ch[d, m, 0], cs & 15])
        ch[d, m, 3] = hp + (v - hp + 1) % 3 - 1
    return n


@njit(cache=True)
def _next_root(st, lv, cp, ep, rcube, rc, rk, bound, t):
    """Make the next root current: the next one in order whose phase-1
    distance allows sequences of the current length less its premoves, or
    else the first such at the next length. False (and nothing changed) if
    that would pass ``bound``. A root's distance is worked out only when it
    may matter: a lower bound rules most roots out before."""
    twist_move, flip_move, slice_move, fs_cs = t.twist_move, t.flip_move, t.slice_move, t.fs_cs
    twist_conj, p1, twist_slice, flip_slice = t.twist_conj, t.phase1, t.twist_slice, t.flip_slice
    r = st[ROOT]
    level = st[LEVEL]
    nr = rc.shape[0]
    while True:
        r += 1
        if r == nr:
            if level + 1 > bound:
                return False
            r = 0
            level += 1
            st[ROOT] = -1
            st[LEVEL] = level
        n1 = level - rk[r]
        if n1 < 0:
            continue
        if rc[r, R_LB] < 0:
            # the least distance that the small tables allow and the big
            # one's distance modulo 3 agree on
            lb = max(twist_slice[rc[r, R_TW] * co.N_SLICE + rc[r, R_SS]],
                     flip_slice[rc[r, R_FL] * co.N_SLICE + rc[r, R_SS]])
            v = _h1_mod3(rc[r, R_TW], rc[r, R_FL], rc[r, R_SS], fs_cs, twist_conj, p1)
            rc[r, R_LB] = lb + (v - lb) % 3
        if n1 < rc[r, R_LB]:
            continue
        if rc[r, R_H] < 0:
            rc[r, R_H] = phase1_distance(rc[r, R_TW], rc[r, R_FL], rc[r, R_SS], twist_move, flip_move,
                                         slice_move, fs_cs, twist_conj, p1)
        if n1 >= rc[r, R_H]:
            break
    st[ROOT] = r
    st[L1] = n1
    st[D] = 0
    lv[0, TW] = rc[r, R_TW]
    lv[0, FL] = rc[r, R_FL]
    lv[0, SS] = rc[r, R_SS]
    lv[0, H] = rc[r, R_H]
    lv[0, MV] = -1
    for j in range(8):
        cp[0, j] = rcube[r, j]
    for j in range(12):
        ep[0, j] = rcube[r, 16 + j]
    st[ROOT_PENDING] = 1 if n1 == 0 else 0
    st[ROOT_EXPANDED] = 0
    return True


@njit(cache=True, nogil=True)
def run(st, lv, lp, ch, cp, ep, sol, rcube, rc, rk, rp, bound, node_limit, tables, mode, qc, hc, fcost,
        p2extra):
    """Search on until a solution of at most ``bound`` moves is found
    (FOUND; ``sol`` holds it), the space is exhausted (EXHAUSTED: nothing of
    at most ``bound`` moves is left), or ``node_limit`` nodes (PAUSED).

    The roots are searched in turn at each length: the cube itself with
    phase-1 sequences of that length, and the cube after each premove
    sequence with sequences shorter by the premoves' number. ``tables`` is
    a :class:`Tables` as a plain tuple; ``mode`` LENGTH, AXIAL or TURNS, with ``qc`` and ``hc``
    the costs of quarter and half turns and ``fcost`` and ``p2extra`` as in
    :func:`_phase2`."""
    t = Tables(*tables)
    cornslice, moves = t.cornslice, t.moves
    stop = st[NODES] + node_limit
    while True:
        if st[NEXT_ROOT]:
            if not _next_root(st, lv, cp, ep, rcube, rc, rk, bound, t):
                return EXHAUSTED
            st[NEXT_ROOT] = 0
        r = st[ROOT]
        nt = rk[r]
        if st[ROOT_EXPANDED] == 0:
            # the root's children: limited by nothing, which is exact enough
            st[NODES] += _expand(lv, ch, 0, False, MAXD, t)
            st[ROOT_EXPANDED] = 1
        if st[ROOT_PENDING]:
            # a root in the subgroup: phase 2 straight away, then the next root
            st[ROOT_PENDING] = 0
            st[NEXT_ROOT] = 1
            cn = co.perm_rank(cp[0], 8)
            sp = co.perm_rank(ep[0, 8:12], 4)
            e = co.perm_rank(ep[0, 0:8], 8)
            if _phase2(st, lv, lp, sol, cn, sp, e, bound, rp[r], nt, t, mode, qc, hc, fcost, p2extra):
                return FOUND
            continue
        if st[LEVEL] > bound:
            return EXHAUSTED
        if st[NODES] >= stop:
            return PAUSED
        d = st[D]
        n1 = st[L1]
        togo = n1 - d - 1
        m = lv[d, MV] + 1
        while m < 18 and ch[d, m, 3] > togo:
            m += 1
        if m >= 18:
            if d == 0:
                st[NEXT_ROOT] = 1
            else:
                st[D] = d - 1
            continue
        lv[d, MV] = m
        lv[d + 1, TW] = ch[d, m, 0]
        lv[d + 1, FL] = ch[d, m, 1]
        lv[d + 1, SS] = ch[d, m, 2]
        lv[d + 1, H] = ch[d, m, 3]
        if togo == 0:
            # h == 0: in the subgroup. A last move inside the subgroup means a
            # shorter phase 1 was already tried with the same result.
            if m == 0 or m == 1 or m == 2 or m == 4 or m == 7 or m == 9 or m == 10 \
                    or m == 11 or m == 13 or m == 16:
                continue
            for j in range(8):
                cp[d + 1, j] = cp[d, moves[m, j]]
            for j in range(12):
                ep[d + 1, j] = ep[d, moves[m, 16 + j]]
            cn = co.perm_rank(cp[d + 1], 8)
            sp = co.perm_rank(ep[d + 1, 8:12], 4)  # the order, ranked: 8..11 rank as 0..3
            if cornslice[cn * 24 + sp] > min(bound - n1 - nt, P2_MAX):
                continue  # most phase-1 ends: phase 2 would give up at once
            e = co.perm_rank(ep[d + 1, 0:8], 8)
            if _phase2(st, lv, lp, sol, cn, sp, e, bound, rp[r], nt, t, mode, qc, hc, fcost, p2extra):
                return FOUND
            continue
        st[D] = d + 1
        lv[d + 1, MV] = -1
        # the corner and edge permutations are not needed by phase 1, only at
        # its end; carried along here as arrays (20 reads and writes in the
        # first level of the cache per node, cheaper than looking their
        # coordinates up in move tables, which the big table's traffic
        # pushes out of the cache), they save a walk through the whole
        # sequence at every end
        for j in range(8):
            cp[d + 1, j] = cp[d, moves[m, j]]
        for j in range(12):
            ep[d + 1, j] = ep[d, moves[m, 16 + j]]
        st[NODES] += _expand(lv, ch, d + 1, togo == 1, togo - 1, t)


def _premove_sequences(longest: int) -> list[tuple[int, ...]]:
    """The premove sequences up to ``longest`` moves, shortest first. A
    solution found from a root ends with its premoves after phase 2, so the
    first premove leaves the subgroup (otherwise it would be a phase-2 move
    and the solution one that a shorter premove sequence finds); after it,
    the same rules as in phase 1 keep every sequence of moves once."""
    outside = [m for m in range(18) if m not in PHASE2_MOVES]
    seqs: list[tuple[int, ...]] = [()]
    level: list[tuple[int, ...]] = [(m,) for m in outside]
    for _ in range(longest):
        seqs += level
        level = [q + (m,) for q in level for m in range(18)
                 if not (m // 3 == q[-1] // 3 or m // 3 == q[-1] // 3 - 3)]
    return seqs


PREMOVES_MAX = 3
_PRE_SEQS = _premove_sequences(PREMOVES_MAX)
_PRE_LEN = np.array([len(q) for q in _PRE_SEQS], dtype=np.int64)
_PRE_MOVES = np.full((len(_PRE_SEQS), PREMOVES_MAX), -1, dtype=np.int64)
for _i, _q in enumerate(_PRE_SEQS):
    _PRE_MOVES[_i, :len(_q)] = _q


@functools.cache
def _premove_cubes() -> np.ndarray:
    """The premove sequences as cubie arrays, made on first use with the
    compiled multiply (not at import, which would start numba)."""
    out = np.zeros((len(_PRE_SEQS), co.CUBE_LEN), dtype=np.int64)
    tmp = np.empty(co.CUBE_LEN, dtype=np.int64)
    for i, q in enumerate(_PRE_SEQS):
        out[i] = co.to_array(Cube())
        for m in q:
            co.multiply(out[i], co.MOVES[m], tmp)
            out[i] = tmp
    return out


@njit(cache=True)
def _start(st, lv, cp, ep, cube, pre_cubes, rcube, rc, rk, tables):
    """Set up the roots ``premoves * cube``, one for each row of ``rcube``,
    with their phase-1 coordinates (their distances are left for later), and
    make the first one current at the first length with anything to search,
    so that the search's depth tells where it stands from the outset.
    ``tables`` is a :class:`Tables` as a plain tuple."""
    for r in range(rcube.shape[0]):
        co.multiply(pre_cubes[r], cube, rcube[r])
        rc[r, R_TW] = co.get_twist(rcube[r])
        rc[r, R_FL] = co.get_flip(rcube[r])
        rc[r, R_SS] = co.get_slice_sorted(rcube[r]) // 24
        rc[r, R_H] = -1
        rc[r, R_LB] = -1
    st[ROOT] = -1
    _next_root(st, lv, cp, ep, rcube, rc, rk, MAXD, Tables(*tables))


def premove_count(longest: int) -> int:
    """How many roots a search with premoves up to ``longest`` moves has."""
    return int(np.sum(_PRE_LEN <= longest))


class Searcher:
    """One resumable two-phase search of one cube (given as a cubie array).

    With ``premoves`` k > 0 it also searches the cube after each premove
    sequence of up to k moves (see :func:`_premove_sequences`), at lengths
    counted with the premoves, which it appends to such a solution: a phase
    1, a phase 2 and then a few more moves, solutions the plain search never
    looks at. At a given total length such a root does the work of a phase 1
    shorter by its premoves (a thirteenth of the plain cube's per premove)
    and leaves phase 2 as much room as the plain cube does at that length.
    So where the plain search would go on to a longer phase 1, after which
    ever fewer sequences leave a phase 2 short enough, the premove roots
    keep finding solutions at the rate of the shorter lengths."""

    def __init__(self, cube: np.ndarray, tables: dict[str, np.ndarray], premoves: int = 0):
        if not 0 <= premoves <= PREMOVES_MAX:
            raise ValueError(f"premoves must be 0..{PREMOVES_MAX}")
        self.st = np.zeros(9, dtype=np.int64)
        self.lv = np.zeros((MAXD + 1, 5), dtype=np.int64)
        self.lp = np.zeros((MAXD + 1, 4), dtype=np.int64)
        self.cp = np.zeros((MAXD + 1, 8), dtype=np.int64)
        self.ep = np.zeros((MAXD + 1, 12), dtype=np.int64)
        self.ch = np.zeros((MAXD + 1, 18, 4), dtype=np.int64)
        self.sol = np.zeros(2 * MAXD + PREMOVES_MAX, dtype=np.int64)
        n = premove_count(premoves)
        self.rcube = np.zeros((n, co.CUBE_LEN), dtype=np.int64)
        self.rc = np.zeros((n, 5), dtype=np.int64)
        self.rk = _PRE_LEN[:n]
        self.rp = _PRE_MOVES[:n]
        self.done = False
        self.fcost = np.zeros(2, dtype=np.float64)
        self.tables = tuple(Tables.select(tables))
        _start(self.st, self.lv, self.cp, self.ep, np.ascontiguousarray(cube, dtype=np.int64),
               _premove_cubes(), self.rcube, self.rc, self.rk, self.tables)

    @property
    def depth(self) -> int:
        """Length of the solutions being tried, less their phase 2."""
        return int(self.st[LEVEL])

    def step(self, bound: int, node_limit: int, mode: int = LENGTH, quarter_cost: float = 1.0,
             half_cost: float = 1.5, cost_bound: float = np.inf, shorter_than: int = 0,
             p2extra: int = 0) -> list[int] | None:
        """Run up to ``node_limit`` nodes; a solution of at most ``bound``
        moves (as move indices) if one turned up. ``self.done`` is set when
        no solution within ``bound`` remains to be found. In ``mode`` AXIAL
        or TURNS only solutions cheaper than ``cost_bound`` or shorter than
        ``shorter_than`` count, and phase-2 completions up to ``p2extra``
        moves longer than the shortest are tried too."""
        if self.done:
            return None
        fcost = self.fcost
        fcost[0] = cost_bound
        fcost[1] = shorter_than
        r = run(self.st, self.lv, self.lp, self.ch, self.cp, self.ep, self.sol, self.rcube, self.rc,
                self.rk, self.rp, bound, node_limit, self.tables, mode, float(quarter_cost), float(half_cost),
                fcost, p2extra)
        if r == FOUND:
            return [int(x) for x in self.sol[:self.st[SOL_LEN]]]
        if r == EXHAUSTED:
            self.done = True
        return None
