"""Real scans from another project's robots: the colour classifier on the
sticker colours that rubiks-color-resolver (github.com/dwalton76/
rubiks-color-resolver, MIT) keeps as its test data, each logged by a robot
that then solved the cube, so the answer it keeps beside each file is the
cube's true state.

Nothing here was tuned on these scans: they were first read on 2026-11-28,
after the classifier's last change, and the figures in docs/benchmarks.md
are that first reading. The files are not copied into this repository;
give a clone of that project (its whole history: scans were added and
replaced over the years, and every 3x3 scan that any version of its tests
names is read once, duplicates dropped):

    git clone https://github.com/dwalton76/rubiks-color-resolver /tmp/rcr
    python benchmarks/vision_scans.py /tmp/rcr [--verbose]

Each file is read through `cuberobot classify --rgb-json`'s own reader
(the square-numbered form) and named by `vision.classify`, as the command
does. Scores: right and sure, right but flagged (a person confirms; no
motor moves until then), wrong but flagged, and wrong and sure (the bar of
every scan: never).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robot.cli.commands.vision import rgb_from_json  # noqa: E402
from vision import classify  # noqa: E402

TEST_FILES = (("tests/test-cubes.py", "tests/"), ("test.py", ""), ("test/test.py", "test/"),
              ("test-cubes.py", ""))
CASE = re.compile(r"""\(\s*["']([^"']+)["'],\s*["']([^"']+)["'],\s*["']([URFDLB]{54})["']""")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True).stdout


def scans(repo: Path) -> list[tuple[str, str, str, dict]]:
    """(name, commit, answer, square-numbered colours) of every distinct 3x3
    scan the project's tests have named (not commented out), newest first."""
    found: dict[str, tuple[str, str, str, dict]] = {}
    for commit in _git(repo, "log", "--all", "--format=%H").split():
        for test_file, base in TEST_FILES:
            source = _git(repo, "show", f"{commit}:{test_file}")
            # a case commented out is one its author could not vouch for ("I don't yet know what the
            # valid cube string here should be")
            live = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))
            for name, path, answer in CASE.findall(live):
                text = _git(repo, "show", f"{commit}:{base}{path}") or _git(repo, "show", f"{commit}:{path}")
                try:
                    data = json.loads(text)
                except ValueError:
                    continue
                if isinstance(data, dict) and len(data) == 54:
                    found.setdefault(json.dumps(data, sort_keys=True), (name, commit[:8], answer, data))
    return list(found.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="a git clone of dwalton76/rubiks-color-resolver")
    ap.add_argument("--verbose", action="store_true", help="one line per scan")
    args = ap.parse_args()
    cases = scans(args.repo)
    if not cases:
        print(f"no scans found in {args.repo}: give a git clone of rubiks-color-resolver", file=sys.stderr)
        return 2
    counts = {"right and sure": 0, "right but flagged": 0, "wrong, flagged": 0, "wrong and sure": 0}
    for name, commit, answer, data in cases:
        result = classify(rgb_from_json(data, name))
        right = result.facelets == answer
        key = ("right" if right else "wrong") + (" and sure" if result.ok and right else
                                                   " but flagged" if right else
                                                   " and sure" if result.ok else ", flagged")
        counts[key] += 1
        if args.verbose:
            print(f"{name:20s} {commit}  {key:18s} {result.constraints:17s} in doubt: {len(result.suspects)}"
                  f"  clipped: {len(result.clipped)}")
    print(f"{len(cases)} real 3x3 scans from {args.repo}")
    for key, n in counts.items():
        print(f"  {key:18s} {n:3d}")
    right = counts["right and sure"] + counts["right but flagged"]
    print(f"  right (all 54 stickers) {right} / {len(cases)}; wrong and sure: {counts['wrong and sure']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
