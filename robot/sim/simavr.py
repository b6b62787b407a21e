"""The real firmware as an emulated rig: drives firmware/sim's simavr harness.

`cuberobot sim-rig --firmware ELF` serves the binary exactly like the Python
virtual rig (first stdout line the pty path; line commands state, press,
set FACELETS, counts, quit), so the driver, dry-run, start and resume can all
run against the code that is flashed onto a board. The harness knows nothing
about cube notation: the facelet permutation of each face's quarter turn is
derived here from the solver's cube model and handed over on its command line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import solver

from ..rig.config import Config
from ..rig.errors import UserError
from .pulsed_mechanism import serve_firmware
from .virtual_rig import MAX_SPEED, MIN_SPEED, Mechanics

REPO = Path(__file__).resolve().parents[2]
FIRMWARE_DIR = REPO / "firmware"
HARNESS = FIRMWARE_DIR / "build" / "sim" / "cuberobot-sim"
FACES = "URFDLB"
DEFAULT_MECHANICS = Mechanics()


@lru_cache(maxsize=1)
def facelet_permutations() -> tuple[tuple[int, ...], ...]:
    """For each face, src[i]: where facelet i comes from after a clockwise quarter turn.

    Found by observing the solver's cube model on random states rather than by
    hand-written tables, so the harness turns faces exactly as the solver does.
    """
    samples = [solver.random_cube(seed) for seed in range(24)]
    before = [c.to_facelets() for c in samples]
    perms = []
    for face in FACES:
        after = [c.apply(face).to_facelets() for c in samples]
        src = []
        for i in range(54):
            candidates = [
                j for j in range(54) if all(a[i] == b[j] for a, b in zip(after, before))
            ]
            if len(candidates) != 1:
                raise RuntimeError(f"facelet {i} of a {face} turn is ambiguous: {candidates}")
            src.append(candidates[0])
        perms.append(tuple(src))
    return tuple(perms)


BUILD_HINT = "build it with `make -C firmware` (firmware/build/uno/cuberobot.elf)"
EM_AVR = 83
"""The ELF header's machine number of Atmel AVR."""


def check_firmware(elf: str | os.PathLike) -> Path:
    """``elf`` as a Path, after checking that it is an AVR ELF file; a clear
    UserError otherwise (before any process is started)."""
    path = Path(elf)
    hint = BUILD_HINT
    try:
        with path.open("rb") as f:
            header = f.read(20)
    except IsADirectoryError:
        raise UserError(f"--firmware {elf}: a directory, not a firmware file; {hint}") from None
    except FileNotFoundError:
        raise UserError(f"--firmware {elf}: firmware file not found; {hint}") from None
    except OSError as e:
        raise UserError(f"--firmware {elf}: cannot read it ({e.strerror}); {hint}") from None
    if header[:4] != b"\x7fELF":
        raise UserError(f"--firmware {elf}: not an ELF file (the .hex is for flashing a board; the "
                        f"emulator needs the .elf); {hint}")
    machine = int.from_bytes(header[18:20], "little" if header[5:6] == b"\x01" else "big")
    if len(header) < 20 or machine != EM_AVR:
        raise UserError(f"--firmware {elf}: an ELF file, but not for an AVR board; {hint}")
    return path


def build_harness() -> Path:
    """Builds the harness (make -C firmware sim) if needed; returns its path."""
    try:
        proc = subprocess.run(
            ["make", "-s", "-C", str(FIRMWARE_DIR), "sim"],
            capture_output=True,
            text=True,
        )
    except FileNotFoundError as exc:
        raise UserError("`make` is not installed: it builds the simavr harness") from exc
    if proc.returncode != 0:
        raise UserError(
            "could not build the simavr harness (needs libsimavr-dev, libelf-dev, pkg-config):\n"
            + proc.stderr.strip()
        )
    return HARNESS


def harness_command(
    elf: str | os.PathLike,
    mechanics: Mechanics = DEFAULT_MECHANICS,
    *,
    board: str = "uno",
    state: str | None = None,
    edge_log: str | os.PathLike | None = None,
    speed: float = 0.0,
) -> list[str]:
    """The harness's command line; ``speed`` paces simulated time (0: as fast as it runs)."""
    perms = ";".join(",".join(str(i) for i in p) for p in facelet_permutations())
    cmd = [
        str(HARNESS),
        "--elf", str(elf),
        "--board", board,
        "--steps", ",".join(str(s) for s in mechanics.steps_per_quarter),
        "--invert", ",".join("1" if s < 0 else "0" for s in mechanics.sign),
        "--faces", ",".join(str(f) for f in mechanics.face),
        "--perms", perms,
        "--speed", repr(float(speed)),
    ]
    if state is not None:
        cmd += ["--state", state]
    if edge_log is not None:
        cmd += ["--edge-log", str(edge_log)]
    return cmd


def serve(elf: str | os.PathLike, config: Config, *, state: str | None = None, speed: str = "1",
          faults: str = "", view: str | None = None) -> int:
    """`cuberobot sim-rig --firmware ELF`: the harness with the config's
    mechanics, in the foreground. A flipper or two-gripper config: the
    parts are moved by the firmware's servo and step pulses
    (robot/sim/pulsed_mechanism.py), and ``view`` keeps their cube in a file."""
    check_firmware(elf)
    if faults:
        raise UserError("--faults belongs to the Python virtual rig; with --firmware put a faulty "
                        "line between the driver and the pty instead")
    pace = _pace(speed)
    if not HARNESS.is_file():
        build_harness()
    if config.rig.kind != "six-motor":
        return serve_firmware(lambda log: harness_command(elf, Mechanics.from_config(config), edge_log=log,
                                                          speed=pace),
                              config, state or solver.SOLVED, view=view)
    if view is not None:
        raise UserError("--sim-view is for a flipper's or two-gripper's rig; this config is a six-motor one")
    cmd = harness_command(elf, Mechanics.from_config(config), state=state, speed=pace)
    sys.stdout.flush()
    return subprocess.run(cmd).returncode


def _pace(speed: str) -> float:
    """The harness's pace from a --speed argument: 0 for 'max', else a positive factor."""
    if speed == "max":
        return 0.0
    try:
        pace = float(speed)
    except ValueError:
        raise UserError(f"--speed must be a number or 'max', not {speed!r}") from None
    if not MIN_SPEED <= pace <= MAX_SPEED:
        raise UserError(f"--speed must be 'max' or a number from {MIN_SPEED:g} to {MAX_SPEED:g}, "
                        f"not {speed!r}")
    return pace
