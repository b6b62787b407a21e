"""Move tables and pruning tables: built once, cached on disk, memory-mapped.

Move tables say where each coordinate goes under each of the 18 moves.
Pruning tables give, for a pair of coordinates, the exact number of moves to
the goal of a phase; the search uses them as lower bounds.

- Phase 1 (reach the subgroup <U, D, R2, L2, F2, B2>): distance over
  (flip-slice symmetry class, corner twist), 64,430 x 2,187 entries. Only the
  distance modulo 3 is stored, in 2 bits, which is enough because a move
  changes the distance by at most one and the search always knows the
  parent's exact distance.
  Two small tables give the exact distance of what two of the three
  coordinates alone say, (twist, slice places) and (flip, slice places),
  one byte each and 2 MB in all: they stay in the processor's cache and
  rule out three in four of the moves the search looks at before the big
  table is read.
- Phase 2 (solve within the subgroup): distance over (corner-permutation
  symmetry class, order of the U/D edges), 2,768 x 40,320 entries, exact in
  4 bits (14 standing for 14 or more, which is more than phase 2 is ever
  allowed): a phase-1 end needs one read to know its phase-2 distance, where
  a table modulo 3 would need a walk down to the goal with a cache miss per
  move, and the ends are where a search for a short or a cheap solution
  spends much of its time. Also over (corner permutation, order of the slice
  edges) and (U/D edge order, order of the slice edges), one byte each, which
  are cheap to look up and rule out most phase-1 ends first.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numba import njit

from . import coords as co
from . import residency
from . import symmetry as sy
from .cache import cache_dir, load_or_build, read_tables

log = logging.getLogger(__name__)

VERSION = 12
"""The table files' format: 12 has a SHA-256 where 11 had a CRC-32."""

# Phase-2 moves, as indices into the 18 moves: U U2 U' R2 F2 D D2 D' L2 B2.
PHASE2_MOVES = np.array([0, 1, 2, 4, 7, 9, 10, 11, 13, 16], dtype=np.int64)
EMPTY = 3
P1_DEEPEST = 12
"""Every cube is at most this many moves from the phase-2 subgroup."""
"""An entry of a 2-bit table not filled in yet."""


class BuildProgress:
    """Numbers the steps of a table build and reports them as one-line
    messages: to ``report`` if given, else to the log (a step's start at
    INFO, how far it has got at DEBUG)."""

    def __init__(self, report: Callable[[str], None] | None, total: int, where: Path):
        self.report = report
        self.total = total
        self.where = where
        self.step = 0
        self.built = False
        self.what = ""
        self.percent = 0
        self.t0 = time.perf_counter()

    def _say(self, text: str, level: int) -> None:
        line = (f"building the solver's tables (once; cached in {self.where}): "
                f"step {self.step} of {self.total}, {text}")
        if self.report is not None:
            self.report(line)
        else:
            log.log(level, "%s", line)

    def start(self, what: str) -> None:
        """The next step begins."""
        self.step += 1
        self.built = True
        self.what = what
        self.percent = 0
        self._say(what, logging.INFO)

    def part(self, share: float) -> None:
        """The current step is this far (0..1) through its work: reported
        when the whole percentage changes."""
        percent = int(share * 100)
        if percent > self.percent:
            self.percent = percent
            self._say(f"{self.what}: {percent} %", logging.DEBUG)

    def skip_to(self, step: int) -> None:
        """Steps up to ``step`` are done without this process doing them."""
        self.step = max(self.step, step)

    def finish(self) -> None:
        """Report the end of a build (nothing if there was none)."""
        if not self.built:
            return
        line = f"solver tables built in {time.perf_counter() - self.t0:.0f} s"
        if self.report is not None:
            self.report(line)
        else:
            log.info("%s", line)


# -- move tables -----------------------------------------------------------
@njit(cache=True, nogil=True)
def _move_tables(moves):
    twist = np.empty((co.N_TWIST, 18), dtype=np.uint16)
    flip = np.empty((co.N_FLIP, 18), dtype=np.uint16)
    sl = np.empty((co.N_SLICE_SORTED, 18), dtype=np.uint16)
    corners = np.empty((co.N_PERM8, 18), dtype=np.uint16)
    ud = np.zeros((co.N_PERM8, 18), dtype=np.uint16)
    a = co.identity()
    b = np.empty(co.CUBE_LEN, dtype=np.int64)
    for t in range(co.N_TWIST):
        co.set_twist(a, t)
        for m in range(18):
            co.multiply(a, moves[m], b)
            twist[t, m] = co.get_twist(b)
    for f in range(co.N_FLIP):
        co.set_flip(a, f)
        for m in range(18):
            co.multiply(a, moves[m], b)
            flip[f, m] = co.get_flip(b)
    for s in range(co.N_SLICE_SORTED):
        co.set_slice_sorted(a, s)
        for m in range(18):
            co.multiply(a, moves[m], b)
            sl[s, m] = co.get_slice_sorted(b)
    a = co.identity()
    for c in range(co.N_PERM8):
        co.set_corners(a, c)
        for m in range(18):
            co.multiply(a, moves[m], b)
            corners[c, m] = co.get_corners(b)
    a = co.identity()
    for e in range(co.N_PERM8):
        co.set_ud_edges(a, e)
        for m in (0, 1, 2, 4, 7, 9, 10, 11, 13, 16):
            co.multiply(a, moves[m], b)
            ud[e, m] = co.get_ud_edges(b)
    return twist, flip, sl, corners, ud


def build_moves(steps: BuildProgress) -> dict[str, np.ndarray]:
    steps.start("move tables")
    twist, flip, sl, corners, ud = _move_tables(co.MOVES)
    steps.start("symmetries of the coordinates")
    fs_classidx, fs_sym, fs_rep, fs_stab = sy.build_flipslice_classes(sy.SYMS, sy.SYM_INV)
    c_classidx, c_sym, c_rep, c_stab = sy.build_corner_classes(sy.SYMS, sy.SYM_INV)
    return {
        # class and symmetry in one word: one memory access per phase-1 node
        "fs_cs": (fs_classidx.astype(np.uint32) << 4) | fs_sym,
        "slice_move": (sl[::24].astype(np.int64) // 24).astype(np.uint16),
        "c_classidx": c_classidx, "c_sym": c_sym, "c_rep": c_rep, "c_stab": c_stab,
        "ud_edges_conj": sy.build_ud_edges_conj(sy.SYMS, sy.SYM_INV),
        "twist_move": twist, "flip_move": flip, "slice_sorted_move": sl,
        "corners_move": corners, "ud_edges_move": ud,
        "twist_conj": sy.build_twist_conj(sy.SYMS, sy.SYM_INV),
        "fs_classidx": fs_classidx, "fs_sym": fs_sym, "fs_rep": fs_rep, "fs_stab": fs_stab,
    }


# -- 2-bit tables ------------------------------------------------------------
@njit(cache=True, inline="always")
def get2(table, i):
    return (table[i >> 2] >> ((i & 3) << 1)) & 3


@njit(cache=True, inline="always")
def set2(table, i, v):
    shift = (i & 3) << 1
    table[i >> 2] = (table[i >> 2] & ~np.uint8(3 << shift)) | np.uint8(v << shift)


@njit(cache=True, inline="always")
def get4(table, i):
    return (table[i >> 1] >> ((i & 1) << 2)) & 15


@njit(cache=True, inline="always")
def set4(table, i, v):
    shift = (i & 1) << 2
    table[i >> 1] = (table[i >> 1] & ~np.uint8(15 << shift)) | np.uint8(v << shift)


FAR = 14
"""Phase-2 distances of 14 or more are stored as 14."""
EMPTY4 = 15


@njit(cache=True)
def _fill_stab(table, c, t, v, stab, conj, nt, bits):
    """Mark the entries equivalent to (c, t) under the class's self-symmetries,
    in a table of 2 or 4 bits an entry."""
    added = 0
    st = stab[c]
    if st != 1:
        for k in range(1, 16):
            if (st >> k) & 1:
                j = c * nt + conj[t, k]
                if bits == 2:
                    if get2(table, j) == EMPTY:
                        set2(table, j, v)
                        added += 1
                elif get4(table, j) == EMPTY4:
                    set4(table, j, v)
                    added += 1
    return added


@njit(cache=True, nogil=True)  # a long pass: the progress ticker's thread runs meanwhile
def _phase1_pass(table, depth, done, slice_move, twist_move, flip_move, twist_conj, fs_classidx, fs_sym,
                 fs_rep, fs_stab):
    """One breadth-first pass over the phase-1 table: mark the entries at
    distance ``depth + 1`` (stored modulo 3), given that ``done`` entries are
    known. While few are known it goes forward, from each entry at ``depth``
    to its unknown neighbours; once most are known, backward, from each
    unknown entry to any neighbour at ``depth``, which finds the rest sooner.
    Returns how many entries are known after the pass."""
    nt = co.N_TWIST
    n = fs_rep.shape[0] * nt
    d3 = depth % 3
    nxt = (depth + 1) % 3
    backward = done > n // 10
    for i in range(n):
        v = get2(table, i)
        if backward:
            if v != EMPTY:
                continue
        elif v != d3:
            continue
        c = i // nt
        t = i % nt
        fs = fs_rep[c]
        fl = fs % co.N_FLIP
        sl = fs // co.N_FLIP
        for m in range(18):
            fs1 = slice_move[sl, m] * co.N_FLIP + flip_move[fl, m]
            c1 = np.int64(fs_classidx[fs1])
            t1 = np.int64(twist_conj[twist_move[t, m], fs_sym[fs1]])
            j = c1 * nt + t1
            if backward:
                if get2(table, j) == d3:
                    set2(table, i, nxt)
                    done += 1 + _fill_stab(table, c, t, nxt, fs_stab, twist_conj, nt, 2)
                    break
            elif get2(table, j) == EMPTY:
                set2(table, j, nxt)
                done += 1 + _fill_stab(table, c1, t1, nxt, fs_stab, twist_conj, nt, 2)
    return done


def _phase1_prune(moves: dict[str, np.ndarray], steps: BuildProgress) -> np.ndarray:
    """Phase-1 distances modulo 3 over (flip-slice class, twist), one pass a
    distance; the share of entries known tells how far it is."""
    n = moves["fs_rep"].shape[0] * co.N_TWIST
    table = np.full((n + 3) // 4, 0xFF, dtype=np.uint8)
    slice_move = moves["slice_move"].astype(np.int64)
    set2(table, 0, 0)
    done = 1
    depth = 0
    while done < n:
        done = _phase1_pass(table, depth, done, slice_move, moves["twist_move"], moves["flip_move"],
                            moves["twist_conj"], moves["fs_classidx"], moves["fs_sym"], moves["fs_rep"],
                            moves["fs_stab"])
        depth += 1
        steps.part(done / n)
    return table


@njit(cache=True, nogil=True)  # a long pass: the progress ticker's thread runs meanwhile
def _phase2_pass(table, depth, done, corners_move, ud_edges_move, ud_edges_conj, c_classidx, c_sym, c_rep,
                 c_stab, moves):
    """One breadth-first pass over the phase-2 table, phase-2 moves only:
    mark the entries at distance ``depth + 1``, forward while few entries
    are known and backward once a quarter are (as in :func:`_phase1_pass`).
    Returns how many entries are known after the pass."""
    ne = co.N_PERM8
    n = c_rep.shape[0] * ne
    nxt = depth + 1
    backward = done > n // 4
    for i in range(n):
        v = get4(table, i)
        if backward:
            if v != EMPTY4:
                continue
        elif v != depth:
            continue
        cl = i // ne
        e = i % ne
        c = c_rep[cl]
        for m in moves:
            c1 = corners_move[c, m]
            cl1 = np.int64(c_classidx[c1])
            e1 = np.int64(ud_edges_conj[ud_edges_move[e, m], c_sym[c1]])
            j = cl1 * ne + e1
            if backward:
                if get4(table, j) == depth:
                    set4(table, i, nxt)
                    done += 1 + _fill_stab(table, cl, e, nxt, c_stab, ud_edges_conj, ne, 4)
                    break
            elif get4(table, j) == EMPTY4:
                set4(table, j, nxt)
                done += 1 + _fill_stab(table, cl1, e1, nxt, c_stab, ud_edges_conj, ne, 4)
    return done


@njit(cache=True, nogil=True)
def _cap_far(table, n):
    """Entries still unknown are FAR or more moves away."""
    for i in range(n):
        if get4(table, i) == EMPTY4:
            set4(table, i, FAR)


def _phase2_prune(moves: dict[str, np.ndarray], steps: BuildProgress) -> np.ndarray:
    """Exact distances over (corner class, U/D edge order), phase-2 moves,
    up to FAR (which stands for FAR or more); one pass a distance."""
    n = moves["c_rep"].shape[0] * co.N_PERM8
    table = np.full((n + 1) // 2, 0xFF, dtype=np.uint8)
    set4(table, 0, 0)
    done = 1
    depth = 0
    while done < n and depth < FAR - 1:
        done = _phase2_pass(table, depth, done, moves["corners_move"], moves["ud_edges_move"],
                            moves["ud_edges_conj"], moves["c_classidx"], moves["c_sym"], moves["c_rep"],
                            moves["c_stab"], PHASE2_MOVES)
        depth += 1
        steps.part(done / n)
    _cap_far(table, n)
    steps.part(1.0)
    return table


@njit(cache=True)
def _pair_prune(move_a, move_b, na, nb, moves):
    """Exact distances over (a, b) pairs, a * nb + b, under the given moves."""
    n = na * nb
    table = np.full(n, 255, dtype=np.uint8)
    table[0] = 0
    done = 1
    depth = 0
    while done < n:
        for i in range(n):
            if table[i] != depth:
                continue
            a = i // nb
            b = i % nb
            for m in moves:
                j = move_a[a, m] * nb + move_b[b, m]
                if table[j] == 255:
                    table[j] = depth + 1
                    done += 1
        depth += 1
    return table


def build_phase1(moves: dict[str, np.ndarray], steps: BuildProgress) -> dict[str, np.ndarray]:
    steps.start("phase-1 pruning table")
    p1 = _phase1_prune(moves, steps)
    steps.start("small phase-1 tables")
    every = np.arange(18, dtype=np.int64)
    return {"phase1": p1,
            "twist_slice": _pair_prune(moves["twist_move"], moves["slice_move"], co.N_TWIST, co.N_SLICE,
                                       every),
            "flip_slice": _pair_prune(moves["flip_move"], moves["slice_move"], co.N_FLIP, co.N_SLICE,
                                      every)}


def build_phase2(moves: dict[str, np.ndarray], steps: BuildProgress) -> dict[str, np.ndarray]:
    steps.start("small phase-2 tables")
    sl24 = np.ascontiguousarray(moves["slice_sorted_move"][:24])
    cornslice = _pair_prune(moves["corners_move"], sl24, co.N_PERM8, 24, PHASE2_MOVES)
    edgeslice = _pair_prune(moves["ud_edges_move"], sl24, co.N_PERM8, 24, PHASE2_MOVES)
    steps.start("phase-2 pruning table")
    return {"phase2": _phase2_prune(moves, steps), "cornslice": cornslice, "edgeslice": edgeslice}


# -- probes: a few entries checked against what they must be ---------------
PROBES = 256
"""Random entries each probe checks: a millisecond or two at every load."""
_INVERSE = np.array([3 * (m // 3) + 2 - m % 3 for m in range(18)], dtype=np.int64)


def _probe_moves(t: dict[str, np.ndarray], rng: np.random.Generator) -> str | None:
    """Every move table undoes itself: a coordinate moved by a move and then
    by its inverse is back where it was."""
    every = np.arange(18)
    for name, moves in (("twist_move", every), ("flip_move", every), ("slice_move", every),
                        ("slice_sorted_move", every), ("corners_move", every),
                        ("ud_edges_move", PHASE2_MOVES)):
        a = t[name]
        x = rng.integers(0, a.shape[0], PROBES)
        y = a[x[:, None], moves[None, :]].astype(np.int64)
        if (y >= a.shape[0]).any() or (a[y, _INVERSE[moves][None, :]] != x[:, None]).any():
            return f"the move table {name} does not undo its own moves"
    return None


def _probe_exact(table: np.ndarray, move_a: np.ndarray, move_b: np.ndarray, moves: np.ndarray,
                 rng: np.random.Generator) -> bool:
    """Whether an exact distance table over (a, b) pairs is right at random
    entries and at the goal: 0 there only, and elsewhere one more than the
    nearest of its neighbours under ``moves``."""
    nb = move_b.shape[0]
    i = np.concatenate([[0], rng.integers(1, table.shape[0], PROBES)])
    d = table[i].astype(np.int64)
    near = table[move_a[i // nb][:, moves].astype(np.int64) * nb + move_b[i % nb][:, moves]].min(axis=1)
    return bool(d[0] == 0 and (d[1:] > 0).all() and (near[1:] == d[1:] - 1).all())


def _h1(t: dict[str, np.ndarray], tw: np.ndarray, fl: np.ndarray, ss: np.ndarray) -> np.ndarray:
    """Phase-1 distance modulo 3, as the search reads it."""
    cs = t["fs_cs"][ss * co.N_FLIP + fl].astype(np.int64)
    idx = (cs >> 4) * co.N_TWIST + t["twist_conj"][tw, cs & 15]
    return (t["phase1"][idx >> 2] >> ((idx & 3) << 1)) & 3


def _probe_phase1(t: dict[str, np.ndarray], rng: np.random.Generator) -> str | None:
    """The solved cube has distance 0; from random coordinates, following the
    move that lowers the distance modulo 3 reaches the subgroup within
    P1_DEEPEST moves, and no sooner than the small tables say."""
    every = np.arange(18)
    if not _probe_exact(t["twist_slice"], t["twist_move"], t["slice_move"], every, rng) \
            or not _probe_exact(t["flip_slice"], t["flip_move"], t["slice_move"], every, rng):
        return "a small phase-1 table disagrees with the move tables"
    zero = np.zeros(1, dtype=np.int64)
    if _h1(t, zero, zero, zero)[0] != 0:
        return "the solved cube is not at phase-1 distance 0"
    tw = rng.integers(0, co.N_TWIST, PROBES)
    fl = rng.integers(0, co.N_FLIP, PROBES)
    ss = rng.integers(0, co.N_SLICE, PROBES)
    least = np.maximum(t["twist_slice"][tw * co.N_SLICE + ss], t["flip_slice"][fl * co.N_SLICE + ss])
    steps = np.zeros(PROBES, dtype=np.int64)
    for _ in range(P1_DEEPEST):
        away = (tw != 0) | (fl != 0) | (ss != 0)
        if not away.any():
            break
        want = (_h1(t, tw, fl, ss) + 2) % 3
        ntw = t["twist_move"][tw].astype(np.int64)
        nfl = t["flip_move"][fl].astype(np.int64)
        nss = t["slice_move"][ss].astype(np.int64)
        down = _h1(t, ntw, nfl, nss) == want[:, None]
        if not down[away].any(axis=1).all():
            return "the phase-1 pruning table disagrees with the move tables"
        m = down.argmax(axis=1)
        k = np.arange(PROBES)
        tw = np.where(away, ntw[k, m], tw)
        fl = np.where(away, nfl[k, m], fl)
        ss = np.where(away, nss[k, m], ss)
        steps += away
    if ((tw != 0) | (fl != 0) | (ss != 0)).any() or (steps < least).any():
        return "the phase-1 pruning table disagrees with the move tables"
    return None


def _probe_phase2(t: dict[str, np.ndarray], rng: np.random.Generator) -> str | None:
    """The small phase-2 tables are exact; the big one is 0 at the goal only,
    and at random (corners, U/D edges) one more than its nearest neighbour
    under the phase-2 moves (or FAR, with no neighbour nearer than FAR - 1)."""
    sl24 = t["slice_sorted_move"][:24]
    if not _probe_exact(t["cornslice"], t["corners_move"], sl24, PHASE2_MOVES, rng) \
            or not _probe_exact(t["edgeslice"], t["ud_edges_move"], sl24, PHASE2_MOVES, rng):
        return "a small phase-2 table disagrees with the move tables"

    def dist(c: np.ndarray, e: np.ndarray) -> np.ndarray:
        idx = t["c_classidx"][c].astype(np.int64) * co.N_PERM8 + t["ud_edges_conj"][e, t["c_sym"][c]]
        return (t["phase2"][idx >> 1] >> ((idx & 1) << 2)) & 15

    c = np.concatenate([[0], rng.integers(0, co.N_PERM8, PROBES)])
    e = np.concatenate([[0], rng.integers(1, co.N_PERM8, PROBES)])
    d = dist(c, e).astype(np.int64)
    nc = t["corners_move"][c][:, PHASE2_MOVES].astype(np.int64)
    ne = t["ud_edges_move"][e][:, PHASE2_MOVES].astype(np.int64)
    near = dist(nc, ne).min(axis=1).astype(np.int64)
    far = d[1:] == FAR
    ok = d[0] == 0 and (d[1:] > 0).all() and (near[1:][~far] == d[1:][~far] - 1).all() \
        and (near[1:][far] >= FAR - 1).all()
    return None if ok else "the phase-2 pruning table disagrees with the move tables"


def probe(name: str, t: dict[str, np.ndarray], seed: int | None = None) -> str | None:
    """What is wrong with the tables of file ``name`` (with those of the
    files before it in ``t``), found at random entries; None if nothing.
    A hash says a file holds what was written; this says what was written
    is right, so a faulty build or a file edited under a fresh hash is
    caught before the search can give wrong answers. The same ``seed``
    checks the same entries."""
    rng = np.random.default_rng(seed)
    try:
        if name == "moves.tbl":
            return _probe_moves(t, rng)
        if name == "phase1.tbl":
            return _probe_phase1(t, rng)
        return _probe_phase2(t, rng)
    except (KeyError, IndexError, ValueError) as e:
        return f"tables that do not fit together ({type(e).__name__})"
    finally:
        # the pages the probe touched are mapped in again when the search
        # needs them (after LLVM's are released: see :mod:`residency`)
        for a in t.values():
            residency.drop(a)


def _probe_file(name: str, before: dict[str, np.ndarray], seed: int,
                arrays: dict[str, np.ndarray]) -> str | None:
    """:func:`probe` of file ``name``'s ``arrays`` after the files ``before``."""
    return probe(name, {**before, **arrays}, seed)


# the files, in the order they are built, and the steps of each one's build
_FILES = (("moves.tbl", 2), ("phase1.tbl", 2), ("phase2.tbl", 2))


def read_or_build(progress: Callable[[str], None] | None = None) -> dict[str, np.ndarray]:
    """All tables from the cache directory, building the files that are
    missing or damaged first, with messages to ``progress`` (see
    :class:`BuildProgress`); nothing is reported when they all load. A file
    is damaged when its hash does not match or a :func:`probe` fails."""
    where = cache_dir()
    found = {name: read_tables(where / name, VERSION) for name, _ in _FILES}
    steps = BuildProgress(progress, sum(n for name, n in _FILES if found[name] is None), where)
    builders: dict[str, Callable[[], dict[str, np.ndarray]]] = {
        "moves.tbl": lambda: build_moves(steps),
        "phase1.tbl": lambda: build_phase1(out, steps),
        "phase2.tbl": lambda: build_phase2(out, steps),
    }
    out: dict[str, np.ndarray] = {}
    seed = int(np.random.default_rng().integers(1 << 62))  # other entries in every process
    # one file per big table, so a build holds only one of them in memory
    for name, n in _FILES:
        tables = found[name]
        if tables is not None and probe(name, {**out, **tables}, seed) is not None:
            steps.total += n
            tables = None
        if tables is None:
            planned = steps.step + n
            tables = load_or_build(name, VERSION, builders[name], progress,
                                   functools.partial(_probe_file, name, out, seed))
            steps.skip_to(planned)  # another process may have built it meanwhile
        out.update(tables)
    steps.finish()
    return out


_TABLES: dict[str, np.ndarray] | None = None


def load(progress: Callable[[str], None] | None = None) -> dict[str, np.ndarray]:
    """All tables, from the cache directory (building them on first use,
    with messages to ``progress``); read once per process."""
    global _TABLES
    if _TABLES is None:
        _TABLES = read_or_build(progress)
    return _TABLES
