"""Table files: atomic, checked, rebuilt when damaged, safe with two processes."""

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import zlib
from pathlib import Path

import numpy as np
import pytest

import solver
from solver import api, random_cube
from solver import tables as tb
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
    assert [f.name for f in tmp_path.iterdir() if f.suffix != ".verified"] == ["t.tbl"]  # no temporary left
    # the hash was checked once; the stamp spares a later reader that while the file is untouched
    assert (tmp_path / "t.tbl.verified").is_file() and read_tables(p, 3) is not None


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
    if sys.platform.startswith("linux"):
        assert cache_dir() == tmp_path / "cuberobot"
        monkeypatch.delenv("XDG_CACHE_HOME")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        assert cache_dir() == tmp_path / "home" / ".cache" / "cuberobot"
    assert cache_dir().name in ("cuberobot", "Cache")
    monkeypatch.setenv("CUBEROBOT_CACHE", "~/elsewhere")  # the override wins over XDG_CACHE_HOME too
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == Path("~/elsewhere").expanduser()


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


def test_unusable_cache_directory_builds_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("CUBEROBOT_CACHE", str(blocker / "cuberobot"))
    got = load_or_build("t.tbl", 1, sample)
    assert np.array_equal(got["a"], sample()["a"])
    assert blocker.read_text().startswith("a file")


def test_waiting_for_another_build_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBEROBOT_CACHE", str(tmp_path))
    started, release = threading.Event(), threading.Event()

    def slow_build():
        started.set()
        release.wait(10)
        return sample()

    other = threading.Thread(target=load_or_build, args=("t.tbl", 1, slow_build))
    other.start()
    assert started.wait(10)
    heard = []

    def progress(line):
        heard.append(line)
        release.set()  # the other build finishes once this one is known to wait

    got = load_or_build("t.tbl", 1, lambda: heard.append("built again") or sample(), progress)
    other.join()
    assert heard == [f"waiting for another process to finish building {tmp_path / 't.tbl'}"]
    assert np.array_equal(got["b"], sample()["b"])


# CRC-32 of the pruning tables as built: a change to how they are built must
# leave them bit for bit the same (or come with a new tables.VERSION)
PRUNING_CRC = {"phase1": 0x6E50BDCB, "twist_slice": 0xCA20E26A, "flip_slice": 0xAA0A9801,
               "phase2": 0x7366E423, "cornslice": 0x0FCCDF29, "edgeslice": 0x21721C5F}


def test_prepare_reports_progress_of_a_build_and_nothing_after(tmp_path, monkeypatch):
    """The real tables, built into an empty cache through the public API,
    while a second process solves on that cache: it waits for them and
    solves with them rather than build them again (the same with small
    tables and three processes: test_two_processes_building_at_once_build_once).
    Then damaged files: a truncated move table is built again."""
    monkeypatch.setenv("CUBEROBOT_CACHE", str(tmp_path))
    monkeypatch.setattr(tb, "_TABLES", None)
    monkeypatch.setattr(api, "_ready", False)
    heard = []
    other = []

    def progress(line):
        heard.append(line)
        if not other and "phase-2" in line:  # the last file's build holds its lock: the others are written
            other.append(solve_in_subprocess(tmp_path, 1))

    solver.prepare(progress)
    assert other, heard
    r = result(other[0])
    assert r["ok"] and r["length"] <= 20
    assert sorted(f.name for f in tmp_path.iterdir() if f.suffix == ".tbl") == ["moves.tbl", "phase1.tbl",
                                                                               "phase2.tbl"]
    assert not [f for f in tmp_path.iterdir() if f.suffix == ".tmp"]
    assert heard, "a build said nothing"
    *steps, last = heard
    assert re.fullmatch(r"solver tables built in \d+ s", last)
    head = f"building the solver's tables (once; cached in {tmp_path}): step "
    numbers = []
    for line in steps:
        assert line.startswith(head), line
        m = re.match(r"(\d+) of (\d+), \S", line[len(head):])
        assert m, line
        numbers.append((int(m[1]), int(m[2])))
    total = numbers[0][1]
    assert total >= 4 and all(t == total for _, t in numbers)
    ks = [k for k, _ in numbers]
    assert ks == sorted(ks) and sorted(set(ks)) == list(range(1, total + 1))
    assert len(steps) > total  # the big tables report how far they are
    assert any(line.endswith("phase-1 pruning table: 100 %") for line in steps)
    assert any(line.endswith("phase-2 pruning table: 100 %") for line in steps)
    built = tb.load()
    for name, crc in PRUNING_CRC.items():
        assert zlib.crc32(np.ascontiguousarray(built[name])) == crc, name

    # a second process (here: a fresh start of this one) loads them silently
    monkeypatch.setattr(tb, "_TABLES", None)
    monkeypatch.setattr(api, "_ready", False)
    again = []
    solver.prepare(again.append)
    assert again == []
    cube = random_cube(5)
    assert cube.apply(solver.solve(cube, max_length=20).moves).is_solved()

    moves = tmp_path / "moves.tbl"
    moves.write_bytes(moves.read_bytes()[:1000])  # truncated
    r = result(solve_in_subprocess(tmp_path, 3))
    assert r["ok"] and r["length"] <= 20
    assert read_tables(moves, tb.VERSION) is not None


def test_a_failing_probe_rebuilds_with_a_line_saying_why(tmp_path, monkeypatch):
    """A file whose hash matches but whose contents a probe rejects is built
    again, and the person hears why; a build the probe rejects is an error."""
    monkeypatch.setenv("CUBEROBOT_CACHE", str(tmp_path))
    bad = sample()
    bad["a"][:] = 0
    write_tables(tmp_path / "t.tbl", 1, bad)

    def probe(arrays):
        return "all zeros" if not arrays["a"].any() else None

    heard = []
    got = load_or_build("t.tbl", 1, sample, heard.append, probe)
    assert np.array_equal(got["a"], sample()["a"])
    path = tmp_path / "t.tbl"
    assert heard == [f"the solver's table file {path} is damaged (all zeros): building it again"]
    assert load_or_build("t.tbl", 1, lambda: pytest.fail("built again"), heard.append, probe) is not None
    with pytest.raises(RuntimeError, match="faulty tables"):
        load_or_build("u.tbl", 1, lambda: bad, None, probe)


@pytest.mark.parametrize("name", ["twist_move", "flip_move", "slice_move", "slice_sorted_move",
                                  "corners_move", "ud_edges_move", "phase1", "twist_slice", "flip_slice",
                                  "phase2",
                                  "cornslice", "edgeslice"])
@pytest.mark.parametrize("how", ["zero", "noise", "ones"])
def test_probes_catch_damaged_tables(name, how):
    """Each table zeroed, filled with noise or with all bits set: a probe of
    its file (or of a later file that reads it) says so; sound tables pass."""
    sound = tb.load()
    for file, _ in tb._FILES:
        assert tb.probe(file, sound) is None
    a = np.array(sound[name])
    rng = np.random.default_rng(1)
    a[:] = 0 if how == "zero" else a.max() if how == "ones" else rng.integers(0, a.max() + 1, a.shape)
    damaged = {**sound, name: a}
    found = [tb.probe(file, damaged, seed) for file, _ in tb._FILES for seed in range(3)]
    assert any(found), f"{name} damaged ({how}) passed every probe"


ZEROED_CLI = textwrap.dedent("""
    import sys
    from robot.cli.main import main
    sys.exit(main(["solve", sys.argv[1]]))
""")


def test_zeroed_pruning_tables_under_a_fresh_hash_are_rebuilt(tmp_path):
    """The issue's attack: the pruning tables zeroed and the file's checksum
    made to match again. `cuberobot solve` says the files are damaged,
    builds them again and prints a right solution; the files are sound
    after."""
    sound = tb.load()
    for name, _ in tb._FILES:
        arrays = read_tables(cache_dir() / name, tb.VERSION)
        assert arrays is not None
        arrays = {k: np.zeros_like(v) if k in ("phase1", "phase2") else np.array(v)
                  for k, v in arrays.items()}
        write_tables(tmp_path / name, tb.VERSION, arrays)  # the hash written anew
    assert read_tables(tmp_path / "phase1.tbl", tb.VERSION) is not None  # the hash alone passes it
    cube = random_cube(77)
    env = {**os.environ, "CUBEROBOT_CACHE": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", ZEROED_CLI, cube.to_facelets()], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "phase1.tbl is damaged (the phase-1 pruning table disagrees with the move tables)" in r.stderr
    assert "phase2.tbl is damaged (the phase-2 pruning table disagrees with the move tables)" in r.stderr
    moves = r.stdout.strip().splitlines()[0]
    assert cube.apply(moves).is_solved()
    for name in ("phase1.tbl", "phase2.tbl"):
        rebuilt = read_tables(tmp_path / name, tb.VERSION)
        assert rebuilt is not None and tb.probe(name, {**sound, **rebuilt}) is None
    for key in ("phase1", "phase2"):
        assert np.array_equal(read_tables(tmp_path / f"{key}.tbl", tb.VERSION)[key], sound[key])
