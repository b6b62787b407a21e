"""The command line builds only the parser of the command it runs: the map
from command to module that makes this possible must match what the
modules register, and the whole parser still serves help and typos."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import subprocess
import sys

from robot.cli import commands
from robot.cli.commands import Registry
from robot.cli.main import COMMAND_MODULES, HELP_ORDER, build_parser, common_options


def _registered(module_name: str) -> set[str]:
    parser = argparse.ArgumentParser()
    action = parser.add_subparsers(dest="command")
    importlib.import_module(f"{commands.__name__}.{module_name}").register(
        Registry(action, common_options(suppress=True)))
    return set(action.choices)


def test_the_command_map_matches_what_each_module_registers():
    found = {name: module for info in pkgutil.iter_modules(commands.__path__)
             for module in [info.name] for name in _registered(module)}
    assert found == COMMAND_MODULES


def test_a_named_command_builds_its_module_alone_and_anything_else_builds_all():
    def choices(argv):
        sub = next(a for a in build_parser(argv)._actions if isinstance(a, argparse._SubParsersAction))
        return set(sub.choices)

    assert choices(["-v", "solve", "solved"]) == {"solve"}
    assert choices(["check", "solved"]) == {"apply", "check", "scramble", "show"}
    everything = set(COMMAND_MODULES)
    assert choices([]) == choices(["--help"]) == choices(["slove", "x"]) == everything


def test_help_lists_the_commands_in_a_makers_order_with_every_module_placed():
    assert sorted(HELP_ORDER) == sorted(info.name for info in pkgutil.iter_modules(commands.__path__))
    sub = next(a for a in build_parser([])._actions if isinstance(a, argparse._SubParsersAction))
    listed = [action.dest for action in sub._choices_actions]
    assert listed[:3] == ["start", "serve", "resume"]
    assert listed.index("scan") < listed.index("calibrate") < listed.index("solve") < listed.index("check")
    assert sorted(listed) == sorted(COMMAND_MODULES)


def test_version_help_and_a_typo_still_answer():
    def run(*args):
        return subprocess.run([sys.executable, "-m", "robot", *args], capture_output=True, text=True,
                              timeout=60)

    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith("cuberobot "), r.stderr
    r = run("--help")
    assert r.returncode == 0 and "solve" in r.stdout and "calibrate" in r.stdout
    r = run("slove", "solved")
    assert r.returncode == 2 and "invalid choice" in r.stderr and "solve" in r.stderr


def test_the_quick_exit_after_the_solver_keeps_every_line_and_the_exit_code(tmp_path):
    """With numba loaded the command ends with os._exit (robot/__main__.py):
    what it printed still arrives whole, through a pipe and into a file, and
    the exit code is the command's."""
    from solver import random_cube

    cubes = [random_cube(k).to_facelets() for k in range(3)]
    batch = tmp_path / "cubes.txt"
    batch.write_text("\n".join(cubes) + "\n")
    r = subprocess.run([sys.executable, "-m", "robot", "solve", "--batch", str(batch)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and all(line.endswith("}") for line in lines)
    out = tmp_path / "out.txt"
    with open(out, "w") as f:
        r = subprocess.run([sys.executable, "-m", "robot", "solve", cubes[0], "--max-length", "5"], stdout=f,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 1 and "no solution of at most 5 moves" in r.stderr
