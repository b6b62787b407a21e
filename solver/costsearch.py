"""The two-phase search for the solution cheapest in a cost automaton.

A rig that must reorient the cube between turns (a flipper, two grippers)
pays for a solution not by its length but by how its faces follow each
other: bringing the front face down is one flip, the top face two, a side
face a spin and a flip, and which face is where depends on every move
before. The caller describes that as a *cost automaton*, numbers only:

* ``nxt[s, m, k]``: the k-th state the automaton may be in after solver
  move ``m`` (0..17, :attr:`Move.index`) from state ``s``, -1 past the last;
* ``cost[s, m, k]``: what that outcome costs;
* ``start``: the state before the first move.

The price of a solution is the least, over the paths through the
automaton that it allows, of the costs added up. The search carries, for
each prefix, the least cost of ending in every state (a vector, advanced a
move at a time), and does branch and bound on it: the phase-1 sequences of
each length in turn (as :mod:`solver.search`, with the same tables), each
completed by the phase-2 sequences from the shortest up to ``p2extra``
moves longer, any prefix dropped as soon as the least it can still cost
reaches the best price found. Unlike the length
search both orders of two opposite-face turns are tried (``U D`` and
``D U`` are the same cube but not the same price on a flipper).

What a prefix can still cost is bounded by tables worked out from the
automaton alone (:func:`togo_bounds`): the least that ``k`` more moves cost
from each state, no two in a row on one face. On a flipper that is about
four times the bare least move cost (a move after another face's turn
needs at least a flip as well as the turn), so most prefixes are dropped
far sooner than by counting the cheapest move ``k`` times.

The search is anytime: it starts from a price to beat (the caller's best
so far), runs until a time budget ends or nothing cheaper can exist, and
returns the cheapest it found. Nothing in here knows what the states are.
"""

from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np
from numba import njit

from . import coords as co
from .cubie import Cube
from .search import P2_MAX, Tables, _h1_mod3, phase1_distance, phase2_distance
from .symmetry import DIAGONAL_MOVE_MAPS, DIAGONAL_TURNS
from .tables import PHASE2_MOVES
from .workers import check_workers

INF = 1e300
MAXD = 30
PAUSED, EXHAUSTED = 0, 1
# st: depth, phase-1 length, nodes, best length
S_D, S_L1, S_NODES, S_LEN = range(4)
ENUM_CAP = 20000
"""Phase-2 nodes spent at most on one phase-1 sequence."""
IN_PHASE2 = np.zeros(18, dtype=np.bool_)
IN_PHASE2[PHASE2_MOVES] = True


@njit(cache=True, inline="always")
def _blocked(f, lf, llf):
    """The same face twice, or three turns on one axis (either order of two
    opposite faces is allowed: their prices differ)."""
    return f == lf or (f % 3 == lf % 3 and lf % 3 == llf % 3 and llf >= 0)


@njit(cache=True)
def _advance(src, dst, m, nxt, cost, left, beat, backward):
    """Forward, ``dst``: the least cost of ending in each state after move
    ``m`` from the costs ``src`` of ending in each before it, leaving out
    the states from which what is ``left`` (a bound per state, move ``m``
    included) brings the cost to ``beat`` or more; backward (a search of
    the inverse, which finds the solution from its end), ``m`` is put
    before the moves whose cost from each state to their end is ``src``.
    Its least entry."""
    ns = src.shape[0]
    if backward:
        for s in range(ns):
            b = INF
            for k in range(nxt.shape[2]):
                t = nxt[s, m, k]
                if t < 0:
                    break
                v = cost[s, m, k] + src[t]
                if v < b:
                    b = v
            dst[s] = b
    else:
        for s in range(ns):
            dst[s] = INF
        for s in range(ns):
            c = src[s]
            if c + left[s] >= beat:
                continue
            for k in range(nxt.shape[2]):
                t = nxt[s, m, k]
                if t < 0:
                    break
                v = c + cost[s, m, k]
                if v < dst[t]:
                    dst[t] = v
    lo = INF
    for s in range(ns):
        if dst[s] < lo:
            lo = dst[s]
    return lo


NOFACE = 6
"""The face column of a bound with no move before it."""


def togo_bounds(nxt: np.ndarray, cost: np.ndarray, start: int, depth: int,
                backward: bool, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``exact[k, f, s]``: the least that ``k`` moves, no two in a row on one
    face, can cost next to automaton state ``s`` when the move beside them
    is on face ``f`` (NOFACE: none), and ``atleast[k, f, s]``: the same for
    ``k`` moves or more (up to ``depth``). Forward, the moves start in ``s``
    and follow a move on face ``f``; backward (a search from the solution's
    end), they lead from ``start`` to ``s`` and a move on face ``f`` follows
    them. Lower bounds on what a prefix still costs, knowing nothing of the
    cube. With ``allowed`` (a mask of the 18 moves) only those moves count:
    phase 2 turns only U and D and the half turns of the four sides, which
    on a six-motor rig costs about a third more a move than the cheapest
    18 allow (pairs of opposite quarter turns, nearly free after the first)."""
    ns, nm, nk = nxt.shape
    if allowed is None:
        allowed = np.ones(nm, dtype=np.bool_)
    exact = np.full((depth + 1, NOFACE + 1, ns), INF)
    if backward:
        exact[0, :, start] = 0.0
    else:
        exact[0] = 0.0
    for k in range(1, depth + 1):
        _bound_step(exact[k - 1], exact[k], nxt, cost, backward, allowed)
    atleast = exact.copy()
    if backward:  # more moves may end in a state fewer cannot reach
        for k in range(depth - 1, -1, -1):
            np.minimum(atleast[k], atleast[k + 1], out=atleast[k])
    return exact, atleast


@njit(cache=True)
def _bound_step(prev, out, nxt, cost, backward, allowed):
    """One more move for :func:`togo_bounds`: ``out`` from ``prev``."""
    ns, nm, nk = nxt.shape
    for s in range(ns):
        for m in range(nm):
            if not allowed[m]:
                continue
            g = m // 3
            for j in range(nk):
                t = nxt[s, m, j]
                if t < 0:
                    break
                if backward:  # k-1 moves end in s, then m to t
                    v = prev[g, s] + cost[s, m, j]
                    for f in range(NOFACE + 1):
                        if f != g and v < out[f, t]:
                            out[f, t] = v
                else:  # m from s to t, then k-1 more after it
                    v = cost[s, m, j] + prev[g, t]
                    for f in range(NOFACE + 1):
                        if f != g and v < out[f, s]:
                            out[f, s] = v


@njit(cache=True, inline="always")
def _least(v, row):
    """The least of ``v[s] + row[s]``: what a prefix whose costs of ending in
    each state are ``v`` costs at least, ``row`` bounding what is left."""
    lo = INF
    for s in range(v.shape[0]):
        x = v[s] + row[s]
        if x < lo:
            lo = x
    return lo


@njit(cache=True, nogil=True)
def _phase2(st, mvs, vend, cn, sp, e, tables, nxt, cost, togo, best, sol, lp, pv, p2extra, start,
            backward):
    """Cheapest phase-2 completions of the phase-1 sequence ``mvs[:L1]``,
    whose costs are ``vend``, that beat ``best[0]``: lengths from the
    shortest up to ``p2extra`` more (at most P2_MAX)."""
    t = Tables(*tables)
    corners_move, ud_edges_move, slice_sorted_move = t.corners_move, t.ud_edges_move, t.slice_sorted_move
    cornslice, edgeslice, p2 = t.cornslice, t.edgeslice, t.phase2
    c_classidx, c_sym, ud_edges_conj = t.c_classidx, t.c_sym, t.ud_edges_conj
    n1 = st[S_L1]
    h = max(cornslice[cn * 24 + sp], edgeslice[e * 24 + sp],
            phase2_distance(cn, e, c_classidx, c_sym, ud_edges_conj, p2))
    lo = INF
    for s in range(vend.shape[0]):
        if vend[s] < lo:
            lo = vend[s]
    lf = mvs[n1 - 1] // 3 if n1 > 0 else -9
    llf = mvs[n1 - 2] // 3 if n1 > 1 else -9
    n0 = st[S_NODES]
    for n2 in range(h, min(P2_MAX, h + p2extra) + 1):
        if _least(vend, togo[n2, lf if lf >= 0 else NOFACE]) >= best[0]:
            break
        if n2 == 0:
            final = vend[start] if backward else lo
            if final >= best[0]:
                break
            best[0] = final
            for i in range(n1):
                sol[i] = mvs[i]
            st[S_LEN] = n1
            break
        for s in range(vend.shape[0]):
            pv[0, s] = vend[s]
        k = 0
        lp[0, 0] = cn
        lp[0, 1] = e
        lp[0, 2] = sp
        lp[0, 3] = -1
        while True:
            p = lp[k, 3] + 1
            prev = PHASE2_MOVES[lp[k - 1, 3]] // 3 if k > 0 else lf
            pprev = (PHASE2_MOVES[lp[k - 2, 3]] // 3 if k > 1 else (lf if k == 1 else llf))
            while p < 10 and _blocked(PHASE2_MOVES[p] // 3, prev, pprev):
                p += 1
            if p >= 10:
                if k == 0:
                    break
                k -= 1
                continue
            if st[S_NODES] - n0 > ENUM_CAP:
                return
            lp[k, 3] = p
            mm = PHASE2_MOVES[p]
            st[S_NODES] += 1
            c1 = corners_move[lp[k, 0], mm]
            s1 = slice_sorted_move[lp[k, 2], mm]
            left = n2 - k - 1
            if cornslice[c1 * 24 + s1] > left:
                continue
            e1 = ud_edges_move[lp[k, 1], mm]
            if phase2_distance(c1, e1, c_classidx, c_sym, ud_edges_conj, p2) > left:
                continue
            lo1 = _advance(pv[k], pv[k + 1], mm, nxt, cost, togo[left + 1, prev if prev >= 0 else NOFACE],
                           best[0], backward)
            if _least(pv[k + 1], togo[left, mm // 3]) >= best[0]:
                continue
            if left == 0:
                final = pv[k + 1, start] if backward else lo1
                if final >= best[0]:
                    continue
                best[0] = final
                for i in range(n1):
                    sol[i] = mvs[i]
                for i in range(n2):
                    sol[n1 + i] = PHASE2_MOVES[lp[i, 3]]
                st[S_LEN] = n1 + n2
                continue
            k += 1
            lp[k, 0] = c1
            lp[k, 1] = e1
            lp[k, 2] = s1
            lp[k, 3] = -1


@njit(cache=True, nogil=True)
def _run(st, mvs, lv, cp, ep, vec, tables, nxt, cost, togo_p2, togo_min, best, sol, lp, pv, p2extra,
         node_limit, start, backward, kids, klo, kv, kn, ki, korder):
    """Phase-1 sequences of exactly ``st[S_L1]`` moves, depth first from where
    the last call stopped, each one that reaches the subgroup completed by
    :func:`_phase2`. PAUSED after ``node_limit`` nodes, EXHAUSTED when every
    sequence of this length was looked at.

    A node's children are worked out together when it is first reached
    (``ki[d]`` -1: not yet): those the phase-1 tables and the bound leave,
    with their coordinates (``kids``), costs (``kv``, least ``klo``), and
    tried cheapest first (``korder``), so that cheap solutions come early
    and the bound tightens sooner."""
    t = Tables(*tables)
    twist_move, flip_move, slice_move, fs_cs = t.twist_move, t.flip_move, t.slice_move, t.fs_cs
    twist_conj, p1, twist_slice, flip_slice = t.twist_conj, t.phase1, t.twist_slice, t.flip_slice
    cornslice, moves = t.cornslice, t.moves
    n1 = st[S_L1]
    stop = st[S_NODES] + node_limit
    while True:
        if st[S_NODES] >= stop:
            return PAUSED
        d = st[S_D]
        togo = n1 - d - 1
        if ki[d] < 0:
            lf = mvs[d - 1] // 3 if d > 0 else -9
            llf = mvs[d - 2] // 3 if d > 1 else -9
            left = togo_min[togo + 1, lf if lf >= 0 else NOFACE]
            n = 0
            for m in range(18):
                if _blocked(m // 3, lf, llf):
                    continue
                st[S_NODES] += 1
                tw = twist_move[lv[d, 0], m]
                fl = flip_move[lv[d, 1], m]
                ss = slice_move[lv[d, 2], m]
                if togo == 0:
                    if tw != 0 or fl != 0 or ss != 0:
                        continue
                    if m == 0 or m == 1 or m == 2 or m == 4 or m == 7 or m == 9 or m == 10 \
                            or m == 11 or m == 13 or m == 16:
                        continue  # a shorter phase 1 with this move in phase 2
                    h = 0
                else:
                    if twist_slice[tw * co.N_SLICE + ss] > togo or flip_slice[fl * co.N_SLICE + ss] > togo:
                        continue
                    v = _h1_mod3(tw, fl, ss, fs_cs, twist_conj, p1)
                    hp = lv[d, 3]
                    h = hp + (v - hp + 1) % 3 - 1
                    if h > togo:
                        continue
                _advance(vec[d], kv[d, n], m, nxt, cost, left, best[0], backward)
                lo = _least(kv[d, n], togo_min[togo, m // 3])
                if lo >= best[0]:
                    continue
                kids[d, n, 0] = m
                kids[d, n, 1] = tw
                kids[d, n, 2] = fl
                kids[d, n, 3] = ss
                kids[d, n, 4] = h
                klo[d, n] = lo
                # insertion into the order, cheapest first
                j = n
                while j > 0 and klo[d, korder[d, j - 1]] > lo:
                    korder[d, j] = korder[d, j - 1]
                    j -= 1
                korder[d, j] = n
                n += 1
            kn[d] = n
            ki[d] = 0
        i = ki[d]
        if i >= kn[d]:
            ki[d] = -1
            if d == 0:
                return EXHAUSTED
            st[S_D] = d - 1
            continue
        ki[d] = i + 1
        c = korder[d, i]
        if klo[d, c] >= best[0]:
            continue  # the best has improved since
        m = kids[d, c, 0]
        mvs[d] = m
        for s in range(vec.shape[1]):
            vec[d + 1, s] = kv[d, c, s]
        for j in range(8):
            cp[d + 1, j] = cp[d, moves[m, j]]
        for j in range(12):
            ep[d + 1, j] = ep[d, moves[m, 16 + j]]
        if togo == 0:
            cn = co.perm_rank(cp[d + 1], 8)
            sp = co.perm_rank(ep[d + 1, 8:12], 4)
            if cornslice[cn * 24 + sp] > P2_MAX:
                continue
            e = co.perm_rank(ep[d + 1, 0:8], 8)
            _phase2(st, mvs, vec[d + 1], cn, sp, e, tables, nxt, cost, togo_p2, best, sol, lp, pv,
                    p2extra, start, backward)
            continue
        lv[d + 1, 0] = kids[d, c, 1]
        lv[d + 1, 1] = kids[d, c, 2]
        lv[d + 1, 2] = kids[d, c, 3]
        lv[d + 1, 3] = kids[d, c, 4]
        ki[d + 1] = -1
        st[S_D] = d + 1


_CONJ = DIAGONAL_MOVE_MAPS
_TURN = DIAGONAL_TURNS


def _inverse_move(m: int) -> int:
    return 3 * (m // 3) + 2 - m % 3


class _View:
    """One of the six searches: the cube turned so that each of its three
    axes is phase 2's, and the inverse of each (searched from the
    solution's end). Its moves are the turned cube's; ``moves`` maps them to
    the cube's, which the automaton prices."""

    def __init__(self, cube: Cube, r: int, inverse: bool, nxt: np.ndarray, cost: np.ndarray, start: int,
                 bounds: tuple[np.ndarray, np.ndarray], tables: tuple, t: Tables):
        turned = _TURN[r] * cube * _TURN[r].inverse()
        if inverse:
            turned = turned.inverse()
        self.cmap = _CONJ[r]
        self.backward = inverse
        # the automaton as this view's moves see it
        own = [_inverse_move(self.cmap[m]) if inverse else self.cmap[m] for m in range(18)]
        self.nxt = np.ascontiguousarray(nxt[:, own, :])
        self.cost = np.ascontiguousarray(cost[:, own, :])
        self.start = start
        # the bounds (:func:`togo_bounds` of the cube's automaton, this
        # direction) with their face axis as this view's moves name the faces
        faces = [own[3 * f] // 3 for f in range(6)] + [NOFACE]
        self.togo_exact, self.togo_min = (np.ascontiguousarray(b[:, faces, :]) for b in bounds)
        # what phase 2 still costs: its own moves only (PHASE2_MOVES in this
        # view's naming), a bound a third tighter than any 18 moves'
        self.togo_p2 = togo_bounds(self.nxt, self.cost, start, P2_MAX + 1, inverse, IN_PHASE2)[0]
        self.tables = tables
        self.arr = co.to_array(turned)
        a = self.arr
        self.root = (co.get_twist(a), co.get_flip(a), co.get_slice_sorted(a) // 24)
        self.h0 = int(phase1_distance(*self.root, t.twist_move, t.flip_move, t.slice_move, t.fs_cs,
                                      t.twist_conj, t.phase1))
        ns = nxt.shape[0]
        self.st = np.zeros(4, dtype=np.int64)
        self.mvs = np.full(MAXD + 1, -1, dtype=np.int64)
        self.lv = np.zeros((MAXD + 1, 4), dtype=np.int64)
        self.cp = np.zeros((MAXD + 1, 8), dtype=np.int64)
        self.ep = np.zeros((MAXD + 1, 12), dtype=np.int64)
        self.vec = np.full((MAXD + 1, ns), INF)
        self.pv = np.full((P2_MAX + 2, ns), INF)
        self.lp = np.zeros((P2_MAX + 2, 4), dtype=np.int64)
        self.sol = np.zeros(MAXD + P2_MAX + 2, dtype=np.int64)
        self.kids = np.zeros((MAXD + 1, 18, 5), dtype=np.int64)
        self.klo = np.zeros((MAXD + 1, 18))
        self.kv = np.full((MAXD + 1, 18, ns), INF)
        self.kn = np.zeros(MAXD + 1, dtype=np.int64)
        self.ki = np.full(MAXD + 1, -1, dtype=np.int64)
        self.korder = np.zeros((MAXD + 1, 18), dtype=np.int64)
        self.level = self.h0 - 1

    def _first(self) -> None:
        self.vec[0, :] = 0.0 if self.backward else INF
        if not self.backward:
            self.vec[0, self.start] = 0.0

    def next_level(self) -> None:
        self.level += 1
        self.st[S_D] = 0
        self.st[S_L1] = self.level
        self.mvs[:] = -1
        self.ki[:] = -1
        self.lv[0] = (*self.root, self.h0)
        self.cp[0] = self.arr[0:8]
        self.ep[0] = self.arr[16:28]
        self._first()

    def step(self, best: np.ndarray, p2extra: int, nodes: int) -> tuple[bool, list[int] | None]:
        """Run a slice: (whether this level is still being searched, the
        cube's solution if a cheaper one was found)."""
        before = best[0]
        if self.level == 0:
            a = self.arr
            self._first()
            _phase2(self.st, self.mvs, self.vec[0], co.perm_rank(a[0:8], 8), co.perm_rank(a[24:28], 4),
                    co.perm_rank(a[16:24], 8), self.tables, self.nxt, self.cost, self.togo_p2,
                    best, self.sol, self.lp, self.pv, p2extra, self.start, self.backward)
            status = EXHAUSTED
        else:
            status = _run(self.st, self.mvs, self.lv, self.cp, self.ep, self.vec, self.tables, self.nxt,
                          self.cost, self.togo_p2, self.togo_min, best, self.sol, self.lp,
                          self.pv, p2extra, nodes, self.start, self.backward, self.kids, self.klo, self.kv,
                          self.kn, self.ki, self.korder)
        found = None
        if best[0] < before:
            own = [int(x) for x in self.sol[:self.st[S_LEN]]]
            if self.backward:
                found = [_inverse_move(self.cmap[m]) for m in reversed(own)]
            else:
                found = [self.cmap[m] for m in own]
        return status == PAUSED, found

    def least_beyond(self) -> float:
        """The least any solution with a longer phase 1 than this level's can
        cost."""
        row = self.togo_min[min(self.level + 1, self.togo_min.shape[0] - 1), NOFACE]
        return float(row.min() if self.backward else row[self.start])


class _Race:
    """The views' slices handed out to the threads, one view to one thread at
    a time, in turn; the best price and its solution, under one lock. A
    slice prunes by the best as it was when the slice began."""

    def __init__(self, views: list[_View], beat: float, deadline: float, extra: int, p2extra: int,
                 slice_nodes: int):
        self.waiting = deque(views)
        self.best = beat
        self.found: list[int] | None = None
        self.deadline = deadline
        self.extra, self.p2extra, self.slice_nodes = extra, p2extra, slice_nodes
        self.timed_out = False
        self.failed: list[BaseException] = []
        self.lock = threading.Lock()

    def _take(self) -> tuple[_View, np.ndarray] | None:
        """The next view to step and the best to prune by, or None when the
        time is up (once a solution is known) or no view is waiting."""
        with self.lock:
            if self.failed or self.timed_out:
                return None
            if self.best < INF and time.perf_counter() >= self.deadline:
                self.timed_out = True
                return None
            if not self.waiting:
                return None
            return self.waiting.popleft(), np.array([self.best], dtype=np.float64)

    def _give_back(self, v: _View, going: bool, got: list[int] | None, price: float) -> None:
        """A slice's outcome: a cheaper solution kept, the view queued again,
        moved on to its next phase-1 length, or dropped when no longer one
        can beat the best."""
        with self.lock:
            if got is not None and price < self.best:
                self.best, self.found = price, got
            if not going:
                if v.level + 1 > min(v.h0 + self.extra, MAXD) or v.least_beyond() >= self.best:
                    return
                v.next_level()
            self.waiting.append(v)

    def work(self) -> None:
        """Step views until the time is up or none is left for this thread."""
        try:
            while (taken := self._take()) is not None:
                v, best = taken
                going, got = v.step(best, self.p2extra, self.slice_nodes)
                self._give_back(v, going, got, float(best[0]))
        except BaseException as e:  # handed to the caller's thread
            with self.lock:
                self.failed.append(e)


def cheapest(cube: Cube, nxt: np.ndarray, cost: np.ndarray, start: int, tables: dict[str, np.ndarray], *,
             budget_s: float, beat: float = INF, extra: int = 6, p2extra: int = 1, views: int = 6,
             slice_nodes: int = 20000,
             workers: int | None = 1) -> tuple[list[int] | None, float, dict[str, float]]:
    """The cheapest solution of ``cube`` (move indices) in the automaton that
    the search finds within ``budget_s`` seconds, if cheaper than ``beat``,
    with its price (``beat`` when none was; with no ``beat`` it goes on to
    the first solution), and what the search did
    (``nodes``, ``seconds``, ``complete``: 1 if every phase-1 length that
    could still beat the best was looked at in full, each with its phase 2
    from the shortest up to ``p2extra`` more moves, capped at ENUM_CAP
    nodes). The ``views`` searches (1: the cube; 3: its three axes; 6: and
    their inverses) take slices of ``slice_nodes`` nodes in turn; each runs
    its phase-1 lengths from the cube's phase-1 distance up to ``extra``
    more, on ``workers`` threads (None: every core; the compiled search lets
    go of Python's lock; with one, the answer for a given amount of work does not depend
    on timing)."""
    t0 = time.perf_counter()
    nxt = np.ascontiguousarray(nxt, dtype=np.int64)
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    tabs = tuple(Tables.select(tables))
    tt = Tables.select(tables)
    if views not in (1, 2, 3, 6):
        raise ValueError(f"views must be 1, 2, 3 or 6, not {views!r}")
    workers = check_workers(workers)
    order = [(r, inv) for inv in (False, True) for r in range(3)][:views]
    if views == 2:
        order = [(0, False), (0, True)]
    bounds = {inv: togo_bounds(nxt, cost, start, MAXD + P2_MAX, inv) for inv in {inv for _, inv in order}}
    every = [_View(cube, r, inv, nxt, cost, start, bounds[inv], tabs, tt) for r, inv in order]
    for v in every:
        v.next_level()
    race = _Race(every, beat, t0 + budget_s, extra, p2extra, slice_nodes)
    threads = [threading.Thread(target=race.work, daemon=True) for _ in range(workers - 1)]
    for th in threads:
        th.start()
    race.work()
    for th in threads:
        th.join()
    if race.failed:
        raise race.failed[0]
    found, best, complete = race.found, race.best, 0.0 if race.timed_out else 1.0
    nodes = sum(float(v.st[S_NODES]) for v in every)
    stats = {"nodes": nodes, "seconds": time.perf_counter() - t0, "complete": complete}
    return found, float(best), stats
