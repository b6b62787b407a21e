"""Table files: atomic, checked, rebuilt when damaged, safe with two processes."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from solver import random_cube
from solver.cache import cache_dir, load_or_build, read_tables, write_tables


def sample():
    rng = np.random.default_rng(0)
    return {"a": rng.integers(0, 255, 10000, dtype=np.uint8),
            "b": rng.integers(0, 60000, (100, 18), dtype=np.uint16)}


def test_round_trip_is_memory_mapped(tmp_path):
    p = tmp_path / "t.tbl"
    write_tables(p, 3, sample())
    got = read_tables(p, 3)
    for k, v in sample().items():
        assert np.array_equal(got[k], v) and got[k].dtype == v.dtype
    assert isinstance(got["a"].base, np.memmap) or isinstance(got["a"], np.memmap) \
        or got["a"].base is not None
    assert not got["a"].flags.writeable
    assert [f.name for f in tmp_path.iterdir()] == ["t.tbl"]  # no temporary left behind


@pytest.mark.parametrize("damage", ["truncate", "flip", "version", "garbage", "empty", "header"])
def test_damaged_file_reads_as_missing(tmp_path, damage):
    p = tmp_path / "t.tbl"
    write_tables(p, 3, sample())
    raw = bytearray(p.read_bytes())
    version = 3
    if damage == "truncate":
        raw = raw[: len(raw) - 100]
    elif damage == "flip":
        raw[-5000] ^= 0x40
    elif damage == "version":
        version = 4
    elif damage == "garbage":
        raw = bytearray(os.urandom(len(raw)))
    elif damage == "empty":
        raw = bytearray()
    elif damage == "header":
        raw[20:30] = b"{{{{{{{{{{"
    p.write_bytes(bytes(raw))
    assert read_tables(p, version) is None
    assert read_tables(tmp_path / "missing.tbl", 3) is None


def test_load_or_build_rebuilds_damaged_file(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBEROBOT_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path
    builds = []

    def build():
        builds.append(1)
        return sample()

    load_or_build("t.tbl", 1, build)
    load_or_build("t.tbl", 1, build)
    assert len(builds) == 1
    p = tmp_path / "t.tbl"
    p.write_bytes(p.read_bytes()[:-1])
    got = load_or_build("t.tbl", 1, build)
    assert len(builds) == 2 and np.array_equal(got["b"], sample()["b"])
    load_or_build("t.tbl", 2, build)  # a newer table version replaces the old file
    assert len(builds) == 3 and read_tables(p, 2) is not None


def test_cache_dir_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("CUBEROBOT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "cuberobot"


def test_two_processes_building_at_once_build_once(tmp_path):
    script = textwrap.dedent("""
        import sys, time, numpy as np
        from solver.cache import load_or_build
        def build():
            with open(sys.argv[1] + "/builds", "a") as f:
                f.write("x")
            time.sleep(1.0)
            return {"a": np.arange(1000, dtype=np.uint16)}
        t = load_or_build("t.tbl", 1, build)
        assert (t["a"] == np.arange(1000)).all()
    """)
    env = {**os.environ, "CUBEROBOT_CACHE": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], env=env) for _ in range(3)]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    assert (tmp_path / "builds").read_text() == "x"


SOLVE = textwrap.dedent("""
    import json, sys
    import solver
    cube = solver.random_cube(int(sys.argv[1]))
    sol = solver.solve(cube, max_length=20)
    print(json.dumps({"ok": cube.apply(sol.moves).is_solved(), "length": sol.length}))
""")


def solve_in_subprocess(cache, seed):
    env = {**os.environ, "CUBEROBOT_CACHE": str(cache)}
    return subprocess.Popen([sys.executable, "-c", SOLVE, str(seed)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(p):
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    return json.loads(out)


def test_real_tables_cold_concurrent_then_corrupted(tmp_path):
    """The real tables: two processes on an empty cache, then damaged files."""
    a, b = solve_in_subprocess(tmp_path, 1), solve_in_subprocess(tmp_path, 2)
    for r in (result(a), result(b)):
        assert r["ok"] and r["length"] <= 20
    files = sorted(f.name for f in tmp_path.iterdir() if f.suffix == ".tbl")
    assert files == ["moves.tbl", "phase1.tbl", "phase2.tbl"]
    assert not [f for f in tmp_path.iterdir() if f.suffix == ".tmp"]

    prune = tmp_path / "phase1.tbl"
    raw = bytearray(prune.read_bytes())
    raw[len(raw) // 2: len(raw) // 2 + 64] = bytes(64)  # zero a stretch of the phase-1 table
    prune.write_bytes(bytes(raw))
    moves = tmp_path / "moves.tbl"
    moves.write_bytes(moves.read_bytes()[:1000])  # truncated
    r = result(solve_in_subprocess(tmp_path, 3))
    assert r["ok"] and r["length"] <= 20
    from solver.tables import VERSION
    assert read_tables(prune, VERSION) is not None and read_tables(moves, VERSION) is not None
    assert random_cube(3) is not None


def test_unusable_cache_directory_builds_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("CUBEROBOT_CACHE", str(blocker / "cuberobot"))
    got = load_or_build("t.tbl", 1, sample)
    assert np.array_equal(got["a"], sample()["a"])
    assert blocker.read_text().startswith("a file")
