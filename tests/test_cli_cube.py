"""The cube commands, run as a user runs them: a subprocess per call."""

import json

import pytest
from incli import cuberobot

from solver import SOLVED, SOLVED_CUBE, parse_facelets

BAD_TWIST = "UUUUUUUUFURRRRRRRRFFRFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"


def run(*args, stdin=None):
    """`cuberobot ARGS` in this process (tests/incli.py)."""
    return cuberobot(*args, stdin=stdin)


def test_help_and_version():
    r = run("--help")
    assert r.returncode == 0 and "check" in r.stdout and "scramble" in r.stdout
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("cuberobot ")


def test_check_valid_and_invalid():
    assert run("check", SOLVED).stdout.strip() == "valid"
    r = run("check", BAD_TWIST)
    assert r.returncode == 2 and "twisted" in r.stderr and "Traceback" not in r.stderr


def test_check_json():
    assert json.loads(run("check", "--json", SOLVED).stdout) == {"valid": True}
    r = run("check", "--json", BAD_TWIST)
    out = json.loads(r.stdout)
    assert r.returncode == 2
    assert out["valid"] is False and out["error"]["kind"] == "corner-twist"
    assert out["error"]["positions"] == [8, 9, 20] and out["error"]["message"]


def test_scramble_pipes_into_show():
    scramble = run("scramble", "--seed", "1")
    facelets = scramble.stdout.split()[0]
    parse_facelets(facelets)
    shown = run("show", "-", stdin=scramble.stdout)
    assert shown.returncode == 0
    rows = shown.stdout.splitlines()
    assert len(rows) == 9 and "\x1b[" not in shown.stdout  # not a terminal: no colour
    assert rows[0].split() == list(facelets[0:3])
    assert rows[3].split()[:3] == list(facelets[36:39])  # L1 L2 L3 start the middle band


def test_scramble_moves_prints_state_then_moves():
    out = run("scramble", "--seed", "5", "--moves", "12").stdout.splitlines()
    assert len(out[1].split()) == 12
    assert SOLVED_CUBE.apply(out[1]).to_facelets() == out[0]


def test_apply():
    r = run("apply", "solved", "R U R' U'")
    assert parse_facelets(r.stdout.strip()) == SOLVED_CUBE.apply("R U R' U'")
    r = run("apply", "solved", "R", "U")
    assert r.stdout.strip() == SOLVED_CUBE.apply("R U").to_facelets()


@pytest.mark.parametrize("args, words", [
    (("apply", "solved", "R Q"), "'Q'"),
    (("apply", "UUU", "R"), "54 characters"),
    (("show", "UUU"), "54 characters"),
    (("scramble", "--moves", "-1"), "--moves"),
])
def test_user_errors_are_one_line_no_traceback(args, words):
    r = run(*args)
    assert r.returncode == 2
    assert words in r.stderr and "Traceback" not in r.stderr
