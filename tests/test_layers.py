"""The house's layers, as the interpreter sees them: a running server's
modules import nothing of the command line, and the press-start engine
nothing of the simulation (docs/architecture.md)."""

from __future__ import annotations

import subprocess
import sys


def _imported(code: str) -> set[str]:
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[-1].strip() for line in lines}


def test_the_server_imports_nothing_of_the_command_line_and_the_engine_nothing_of_the_simulation():
    server = _imported("import robot.web.server, robot.web.api, robot.web.runs, robot.web.standing_rig, "
                       "robot.web.workshop")
    assert "robot.web.runs" in server and not {m for m in server if m.startswith("robot.cli")}
    engine = _imported("import robot.app.start, robot.app.solving, robot.app.events, robot.app.rigs")
    assert "robot.app.start" in engine
    assert not {m for m in engine if m.startswith(("robot.sim", "robot.cli", "robot.web"))}


def test_numbas_compiled_code_goes_to_the_users_cache_folder_not_the_package(tmp_path):
    import os

    env = dict(os.environ, CUBEROBOT_CACHE=str(tmp_path))
    env.pop("NUMBA_CACHE_DIR", None)
    r = subprocess.run([sys.executable, "-c", "import robot, numba; print(numba.config.CACHE_DIR)"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == str(tmp_path / "numba"), r.stderr


def _sim_imports(path) -> list[str]:
    """Every import of robot.sim in a file, lazy ones inside functions too."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            names = {a.name for a in node.names}
            if (node.level == 0 and mod.startswith("robot.sim")) or (node.level > 0 and (
                    mod == "sim" or mod.startswith("sim.") or (mod == "" and "sim" in names))):
                found.append(f"{path.name}:{node.lineno}")
        elif isinstance(node, ast.Import) and any(a.name.startswith("robot.sim") for a in node.names):
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_the_simulation_comes_in_through_one_door():
    """No file of the panel and no engine file imports robot.sim, not even
    inside a function: the simulation plugs in through app/rigs.py (and the
    dry runs, whose rig is a simulation by definition), as a serial device
    plugs in through its port (issue 45)."""
    from pathlib import Path

    robot = Path(__file__).resolve().parents[1] / "robot"
    engine = ["start.py", "run.py", "events.py", "solving.py", "service.py", "mechanism_start.py",
              "mechanism_events.py", "mechanism_scan.py", "jog.py", "doubt.py", "record.py"]
    files = sorted((robot / "web").glob("*.py")) + [robot / "app" / name for name in engine]
    assert all(f.exists() for f in files)
    assert [hit for f in files for hit in _sim_imports(f)] == []
    assert _sim_imports(robot / "app" / "rigs.py")  # the door itself: the check would see an import


def _kind_tests_and_twins(path) -> list[str]:
    """Where a file tests the rig's kind by name (a comparison with a kind's
    name, or of ``.rig.kind`` with anything) or defines a function whose name
    says it is one kind's twin (``*mechanism*``)."""
    import ast

    from robot.app.kinds import KINDS

    def names_a_kind(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in KINDS
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(names_a_kind(e) for e in node.elts)
        return False

    def is_rig_kind(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "kind" and (
            isinstance(node.value, ast.Attribute) and node.value.attr == "rig")

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(names_a_kind(s) or is_rig_kind(s) for s in sides):
                found.append(f"{path.name}:{node.lineno} tests the kind")
        elif isinstance(node, ast.MatchValue) and names_a_kind(node.value):
            found.append(f"{path.name}:{node.lineno} matches a kind's name")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "mechanism" in node.name.lower():
            found.append(f"{path.name}:{node.lineno} def {node.name}")
    return found


def test_the_faces_only_present():
    """The terminal and the panel ask the service what applies to the rig
    (robot/app/kinds.py as data, robot/app/kindwork.py for each request);
    they never test which kind it is, nor keep a twin of a path for the
    flipper and two-gripper (issue 45, part 5)."""
    from pathlib import Path

    robot = Path(__file__).resolve().parents[1] / "robot"
    files = sorted((robot / "cli").rglob("*.py")) + sorted((robot / "web").rglob("*.py"))
    assert len(files) > 20
    assert [hit for f in files for hit in _kind_tests_and_twins(f)] == []


def test_the_kind_check_would_see_a_kind_test(tmp_path):
    """The check above is no check that cannot fail: each way of naming a kind it looks for is seen."""
    sample = tmp_path / "face.py"
    sample.write_text(
        'def _start_mechanism(cfg):\n'
        '    if cfg.rig.kind != "six-motor":\n'
        '        return 1\n'
        '    if kind in ("flipper", "two-gripper"):\n'
        '        return 2\n'
        '    if cfg.rig.kind == other:\n'
        '        return 3\n'
        '    match kind:\n'
        '        case "flipper":\n'
        '            return 4\n')
    lines = [hit.split(":")[1].split()[0] for hit in _kind_tests_and_twins(sample)]
    assert lines == ["1", "2", "4", "6", "9"]


def test_every_kind_has_its_work():
    """The one table that picks each kind's work (robot/app/kindwork.py) knows
    every kind the set-up file accepts: a face asks it and is never left to
    tell a kind apart itself."""
    from robot.app.kinds import KINDS
    from robot.app.kindwork import WORK
    from robot.rig.config import RIG_KINDS

    assert set(WORK) == set(KINDS) == set(RIG_KINDS)


def _js_kind_tests(text: str) -> list[int]:
    """The lines of a page script that compare with a kind's name (``kind
    === "six-motor"``, ``"flipper" !== x``) or key a table by one (``{
    flipper: ...}``, ``"two-gripper": ...``)."""
    import re

    from robot.app.kinds import KINDS

    names = "|".join(re.escape(k) for k in KINDS)
    compare = re.compile(rf"""[!=]==?\s*["']({names})["']|["']({names})["']\s*[!=]==?""")
    keyed = re.compile(rf"""(?:^\s*|[{{,]\s*)(?:["']({names})["']|(flipper))\s*:""")
    return [n for n, line in enumerate(text.splitlines(), 1)
            if not line.lstrip().startswith("//") and (compare.search(line) or keyed.search(line))]


def test_the_page_only_presents():
    """The panel's scripts read what applies to the rig from the rig's own
    description (``does``: app/kinds.py) and never compare with a kind's
    name (issue 45, part 5: the page is a face too)."""
    from pathlib import Path

    static = Path(__file__).resolve().parents[1] / "robot" / "web" / "static"
    scripts = sorted(static.glob("*.js"))
    assert len(scripts) > 5
    assert {s.name: hits for s in scripts if (hits := _js_kind_tests(s.read_text()))} == {}
    # the check sees each way a script would name a kind
    sample = ('if (kind === "six-motor") return;\nconst x = "two-gripper" !== k;\n'
              'const HOW = { flipper: "a",\n  "two-gripper": "b" };\n// a "flipper" === comment\nok();\n')
    assert _js_kind_tests(sample) == [1, 2, 3, 4]
