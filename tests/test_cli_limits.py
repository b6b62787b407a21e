"""Every input of `cuberobot` is bounded and every mistake is one line
(issue #13): the cases an outside harness measured, each checked in-process
for its exit code, its one line on stderr, and that it is refused at once."""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path

import pytest

from robot.cli import main as cli
from robot.cli.main import one_line
from solver import SOLVED, format_moves, random_cube, random_scramble

ROOT = Path(__file__).resolve().parents[1]


def run(capsys: pytest.CaptureFixture, *argv: str, stdin: bytes = b"") -> tuple[int, str, str, float]:
    """(exit code, stdout, stderr, seconds) of `cuberobot ARGV` in this process."""
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    t0 = time.monotonic()
    try:
        code = cli.main(list(argv))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0
    finally:
        sys.stdin = saved
    elapsed = time.monotonic() - t0
    out, err = capsys.readouterr()
    return code, out, err, elapsed


def refused(capsys: pytest.CaptureFixture, *argv: str, stdin: bytes = b"", within: float = 2.0) -> str:
    """The one line with which ARGV is refused (exit 2, at once)."""
    code, out, err, elapsed = run(capsys, *argv, stdin=stdin)
    assert code == 2, (argv[:3], code, err[-500:])
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    assert elapsed < within, f"{elapsed:.1f} s to refuse {argv[:3]}"
    return err


# ---------------------------------------------------------------- what the harness measured


def test_classify_refuses_bad_json_files_by_name_and_line(tmp_path, capsys):
    cases = {
        "latin1.json": (b'{"rgb": "caf\xe9"}', "latin1.json:1: not UTF-8"),
        "deep.json": (b"\n" + b"[" * 100_000, "deep.json:2: JSON nested more than 16 deep"),
        "digits.json": (b'{"rgb": [' + b"1" * 5000 + b"]}", "a number of 5000 characters"),
        "nan.json": (b'{"rgb": [[NaN, 1, 1]]}', "NaN is not a number JSON allows"),
        "huge.json": (b'{"rgb": [[1e400, 1, 1]]}', "1e400 is out of range"),
    }
    for name, (content, message) in cases.items():
        (tmp_path / name).write_bytes(content)
        err = refused(capsys, "classify", "--rgb-json", str(tmp_path / name))
        assert message in err, err


def test_a_50_mb_rgb_file_is_refused_before_it_is_read(tmp_path, capsys):
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.write(json.dumps({"rgb": [[1, 2, 3]] * 54}).encode())
        f.truncate(50 << 20)
    err = refused(capsys, "classify", "--rgb-json", str(big), within=1.0)
    assert "big.json" in err and "too big" in err and "1048576" in err
    err = refused(capsys, "classify", "--rgb-json", "-", stdin=b" " * ((1 << 20) + 1))
    assert "standard input" in err
    assert "is a device" in refused(capsys, "classify", "--rgb-json", "/dev/zero")


def test_config_check_refuses_deep_toml_and_nan_or_inf_anywhere(tmp_path, capsys):
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert "deep.toml:1: a line of" in refused(capsys, "config", "check", str(deep))
    deep.write_text("a = [\n" * 5000 + "]\n" * 5000)
    assert "deep.toml:17: arrays or tables nested more than 16 deep" in refused(
        capsys, "config", "check", str(deep))
    base = (ROOT / "config" / "rig.toml").read_text()
    for old, new, where in (("[640.0, 100.0]", "[nan, 100.0]", "view[0].face[0].corners[0]"),
                            ("[882.5, 240.0]", "[inf, 240.0]", "view[0].face[0].corners[1]"),
                            ("max_speed = 3.0", "max_speed = inf", "motors.U.max_speed"),
                            ("reply_timeout_s = 0.04", "reply_timeout_s = nan", "rig.reply_timeout_s")):
        bad = tmp_path / "bad.toml"
        bad.write_text(base.replace(old, new, 1))
        err = refused(capsys, "config", "check", str(bad))
        assert f"bad.toml: {where}:" in err, err


def test_apply_and_dry_run_refuse_too_many_moves_at_once(capsys):
    many = "R " * 2_000_000
    err = refused(capsys, "apply", "solved", many, within=1.0)
    assert "MOVES:" in err and "at most 10000 moves" in err
    code, out, err, _ = run(capsys, "apply", "solved", format_moves(random_scramble(10_000, 1)))
    assert code == 0 and len(out.strip()) == 54
    assert "at most 1000" in refused(capsys, "dry-run", "R " * 1_000_000, within=1.0)
    assert "at most 1000" in refused(capsys, "dry-run", "R " * 1001)
    assert "at most 100" in refused(capsys, "dry-run", "R " * 101, "--render", "x.gif")


def test_a_dry_run_at_a_crawl_is_refused_with_the_time_it_would_take(tmp_path, capsys):
    err = refused(capsys, "dry-run", format_moves(random_scramble(1000, 2)), "--speed", "0.01",
                  "--state-dir", str(tmp_path))
    assert "--speed 0.01" in err and "hours" in err and "max" in err


# ---------------------------------------------------------------- numeric options


@pytest.mark.parametrize("argv, option", [
    (["solve", "solved", "--budget-ms", "nan"], "--budget-ms"),
    (["solve", "solved", "--budget-ms", "inf"], "--budget-ms"),
    (["solve", "solved", "--budget-ms", "1e400"], "--budget-ms"),
    (["solve", "solved", "--budget-ms", "-1"], "--budget-ms"),
    (["solve", "solved", "--budget-ms", "600001"], "--budget-ms"),
    (["solve", "solved", "--max-length", "-1"], "--max-length"),
    (["solve", "solved", "--max-length", "101"], "--max-length"),
    (["solve", "solved", "--max-length", "9" * 5000], "--max-length"),
    (["scramble", "--seed", "-1"], "--seed"),
    (["scramble", "--seed", str(2**32)], "--seed"),
    (["scramble", "--moves", "10001"], "--moves"),
    (["scramble", "--moves", "nan"], "--moves"),
    (["jog", "U", "9"], "TURNS"),
    (["jog", "U", "0"], "TURNS"),
    (["dry-run", "R", "--speed", "nan"], "--speed"),
    (["dry-run", "R", "--speed", "1e400"], "--speed"),
    (["sim-rig", "--speed", "-1"], "--speed"),
    # a rig behind a port 10 times slower than real time ended every job "a stalled motor"
    (["sim-rig", "--speed", "0.1"], "give 0.25 to 10000"),
    (["sim-rig", "--faults", "reset:inf"], "--faults"),
    (["sim-rig", "--scramble", "-5"], "--scramble"),
    # refused before the rig starts: it printed its port, then "internal error", and left a .tmp file
    (["sim-rig", "--sim-view", "/"], "--sim-view /: that is a folder"),
    (["sim-rig", "--sim-view", "/nonexistent-cuberobot/v"], "folder /nonexistent-cuberobot does not exist"),
    (["scan", "--seed", "1e3"], "--seed"),
    (["start", "--seed", "x"], "--seed"),
])
def test_numbers_are_finite_and_in_range_and_the_option_is_named(argv, option, capsys):
    err = refused(capsys, *argv)
    assert option in err, err


def test_help_states_the_limits(capsys):
    for argv, limits in ((["apply"], ["10000"]), (["dry-run"], ["1000", "100 with", "hour"]),
                         (["solve"], ["600000", "0 to 100", "10000 lines"]), (["jog"], ["-8 to 8"]),
                         (["scramble"], ["0 to 10000", "4294967295"]), (["classify"], ["1 MiB"])):
        code, out, _, _ = run(capsys, *argv, "--help")
        assert code == 0
        text = " ".join(out.split())
        for limit in limits:
            assert limit in text, (argv, limit)


# ---------------------------------------------------------------- files and standard input


def test_batch_files_are_bounded_and_named_by_line(tmp_path, capsys):
    f = tmp_path / "cubes.txt"
    f.write_text("#\n" * 10_001)
    assert "10001 lines; at most 10000" in refused(capsys, "solve", "--batch", str(f))
    f.write_text(SOLVED + "\n" + "x" * 1001 + "\n")
    assert "cubes.txt:2: a line of 1001 characters" in refused(capsys, "solve", "--batch", str(f))
    f.write_bytes(SOLVED.encode() + b"\n\xff\n")
    assert "cubes.txt:2: not UTF-8" in refused(capsys, "solve", "--batch", str(f))
    assert "is a directory" in refused(capsys, "solve", "--batch", str(tmp_path))
    f.write_text((random_cube(2).to_facelets() + "\n") * 7)
    err = refused(capsys, "solve", "--batch", str(f), "--budget-ms", "600000")
    assert "7 cubes at --budget-ms 600000 is 1.2 hours of search; at most 1" in err
    code, out, _, _ = run(capsys, "solve", "--batch", "-", "--budget-ms", "5",
                          stdin=(random_cube(1).to_facelets() + "\n" + SOLVED + "\n").encode())
    assert code == 0 and len(out.splitlines()) == 2


def test_a_cube_on_standard_input_is_bounded_and_must_be_text(capsys):
    assert "standard input:1: not UTF-8" in refused(capsys, "check", "-", stdin=b"\xff" * 54)
    assert "more than 1048576 bytes" in refused(capsys, "check", "-", stdin=b" " * (1 << 20) + b"solved")
    code, out, _, _ = run(capsys, "check", "-", stdin=b"  solved\n")
    assert (code, out) == (0, "valid\n")
    assert "256 characters" not in refused(capsys, "check", "x" * 256)  # a cube string's own message
    assert "257 characters is not a cube" in refused(capsys, "check", "x" * 257)


def test_output_paths_are_checked_before_the_run(tmp_path, capsys):
    fifo = tmp_path / "pipe.gif"
    os.mkfifo(fifo)
    assert "not a regular file" in refused(capsys, "dry-run", "R", "--render", str(fifo))
    assert "not a regular file" in refused(capsys, "calibrate", "--geometry", "--output", str(fifo))
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert "--save-debug" in refused(capsys, "scan", "--save-debug", str(a_file))
    assert "--state-dir" in refused(capsys, "start", "--state-dir", str(a_file))
    assert "--state-dir" in refused(capsys, "jog", "U", "--state-dir", str(a_file / "below"))
    assert "folders deep" in refused(capsys, "calibrate", "--geometry", "--output", "x/" * 300 + "g.toml")
    assert not any(tmp_path.glob("x"))


def test_a_set_up_without_views_is_refused_before_any_camera_opens(tmp_path, capsys):
    empty = tmp_path / "rig.toml"
    empty.write_text("[rig]\nport = 'sim://'\n")
    for argv in (["scan"], ["calibrate", "--dir", str(tmp_path)], ["start", "--no-wait", "--headless"]):
        assert "rig.toml: no [[view]]" in refused(capsys, *argv, "--config", str(empty))


def test_file_names_that_no_file_can_have_are_usage_mistakes(capsys):
    for name in ("", "a\x00b", "n" * 5000):
        assert "--config" in refused(capsys, "dry-run", "R", "--config", name)
    assert "--port" in refused(capsys, "estop", "--port", "/dev/tty\x1b[31m")


def test_a_port_no_device_can_be_named_and_a_build_folder_that_is_a_file_are_one_line(tmp_path, capsys):
    """Issue 46 P8: `doctor --port <300 characters>` and `firmware build
    --out /dev/null` (or a regular file) were internal errors: "File name
    too long" from deep in the doctor, "Not a directory" from the build."""
    long = "a" * 300
    for argv in (["doctor", "--port", long], ["doctor", "--port", f"/dev/{long}/x"],
                 ["jog", "U", "--port", long], ["estop", "--port", long],
                 ["firmware", "flash", "--port", long]):
        err = refused(capsys, *argv)
        assert "--port '" in err and "a name of 300 bytes between slashes" in err and "give a device" in err
    assert "a path of 6000 bytes" in refused(capsys, "doctor", "--port", "é/" * 2000)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for out in ("/dev/null", str(a_file)):
        for argv in (["build"], ["flash", "--port", "/dev/ttyACM0"]):
            err = refused(capsys, "firmware", *argv, "--out", out)
            assert err == f"cuberobot firmware: --out {out}: exists and is not a folder; give a folder\n", err
    err = refused(capsys, "firmware", "build", "--out", str(a_file / "below"))
    assert "cannot create the folder (Not a directory); give another one" in err
    assert a_file.read_text() == "x"


# ---------------------------------------------------------------- one line, always


def test_usage_mistakes_are_one_line_that_points_at_help(capsys):
    for argv in (["check"], ["bogus"], ["solve", "--metric", "fast"], ["config", "nope"]):
        err = refused(capsys, *argv)
        assert "--help)" in err


def test_messages_are_escaped_and_cut():
    assert one_line("a\nb\x1b[31m\udcff") == "a\\nb\\x1b[31m\\udcff"
    long = one_line("x" * 5000)
    assert len(long) <= 1000 and long.endswith("(5000 characters)")


def test_an_unexpected_error_is_one_line_and_its_traceback_goes_to_the_log(monkeypatch, capsys, caplog):
    from robot.cli.commands import cube

    caplog.set_level("DEBUG")
    def broken(args):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(cube, "_check", broken)
    code, out, err, _ = run(capsys, "-v", "check", "solved")
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("cuberobot check: internal error") and "RecursionError" in err
    assert any(r.exc_info for r in caplog.records)
