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
does. Then the same scans made worse, as issue 14 measured them: uneven
stickers (Gaussian noise of sigma 8 on each channel of each sticker, as
glare, vignetting and dirt do; `--draws` noisy copies of each scan, seeded),
over-exposed (x1.5, clipped at 255) and under-exposed (x0.5, rounded).
Scores: right and sure, right but flagged (a person confirms; no motor
moves until then), wrong but flagged, and wrong and sure (the bar of every
scan: never).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

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


def score(cubes: list[tuple[str, np.ndarray, str]], verbose: bool) -> dict[str, int]:
    """How each (name, colours, answer) reads: right or wrong, sure or flagged."""
    counts = {"right and sure": 0, "right but flagged": 0, "wrong, flagged": 0, "wrong and sure": 0}
    for name, rgb, answer in cubes:
        result = classify(rgb)
        right = result.facelets == answer
        key = (("right and sure" if result.ok else "right but flagged") if right
               else ("wrong and sure" if result.ok else "wrong, flagged"))
        counts[key] += 1
        if verbose:
            print(f"  {name:28s} {key:18s} {result.constraints:17s} in doubt: {len(result.suspects):2d}"
                  f"  clipped: {len(result.clipped)}")
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path, help="a git clone of dwalton76/rubiks-color-resolver")
    ap.add_argument("--draws", type=int, default=50, help="noisy copies of each scan (default 50: 1000)")
    ap.add_argument("--verbose", action="store_true", help="one line per scan")
    args = ap.parse_args()
    cases = scans(args.repo)
    if not cases:
        print(f"no scans found in {args.repo}: give a git clone of rubiks-color-resolver", file=sys.stderr)
        return 2
    plain = [(f"{name} {commit}", rgb_from_json(data, name), answer) for name, commit, answer, data in cases]
    rng = np.random.default_rng(14)
    conditions = {
        "as scanned": plain,
        "sigma 8 sticker noise": [(f"{name} #{k}", np.clip(rgb + rng.normal(0, 8, rgb.shape), 0, 255), answer)
                                  for name, rgb, answer in plain for k in range(args.draws)],
        "over-exposed x1.5": [(name, np.clip(rgb * 1.5, 0, 255), answer) for name, rgb, answer in plain],
        "under-exposed x0.5": [(name, np.round(rgb * 0.5), answer) for name, rgb, answer in plain],
    }
    print(f"{len(cases)} real 3x3 scans from {args.repo}")
    for label, cubes in conditions.items():
        if args.verbose:
            print(label)
        counts = score(cubes, args.verbose)
        right = counts["right and sure"] + counts["right but flagged"]
        print(f"{label:22s} {len(cubes):4d} cubes: right {right} (sure {counts['right and sure']}, flagged"
              f" {counts['right but flagged']}); wrong {counts['wrong, flagged'] + counts['wrong and sure']}"
              f" (flagged {counts['wrong, flagged']}, sure {counts['wrong and sure']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
