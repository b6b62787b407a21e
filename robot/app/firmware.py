"""`cuberobot firmware build|flash`: the Arduino sketch built with avr-gcc
against Debian's Arduino core, flashed with avrdude, then checked by its
handshake.

The sketch's sources ship inside the package (robot/app/sketch, a link to
firmware/cuberobot in the source tree), so an installed cuberobot builds
the firmware of its own protocol version. The flags are firmware/Makefile's;
a test checks that both builds give the same .hex.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..rig.config import RigConfig
from ..rig.errors import RigError, UserError
from .doctor import handshake

SKETCH_DIR = Path(__file__).resolve().parent / "sketch"
SKETCH = "cuberobot"
ARDUINO_DIR = Path("/usr/share/arduino/hardware/arduino/avr")
COMPILE_TIMEOUT_S = 300.0
FLASH_TIMEOUT_S = 180.0
AFTER_FLASH_WAIT_S = 2.0
"""The board restarts after avrdude: bootloader, then the sketch."""


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    mcu: str
    variant: str
    programmer: tuple[str, ...]
    board_id: int


BOARDS = {
    "uno": Board("uno", "Arduino Uno", "atmega328p", "standard", ("-c", "arduino", "-b", "115200"), 1),
    "mega": Board("mega", "Arduino Mega 2560", "atmega2560", "mega",
                  ("-c", "wiring", "-b", "115200", "-D"), 2),
}

# firmware/Makefile's flags
COMMON = ["-Os", "-flto", "-ffunction-sections", "-fdata-sections", "-DF_CPU=16000000L", "-DARDUINO=10819",
          "-DARDUINO_ARCH_AVR", "-DDECIMAL_DIG=__DECIMAL_DIG__", "-Wall"]
CFLAGS = [*COMMON, "-std=gnu11"]
CXXFLAGS = [*COMMON, "-std=gnu++11", "-fno-exceptions", "-fno-threadsafe-statics", "-fpermissive"]
SKETCH_FLAGS = ["-Wextra", "-Werror", "-Wno-unused-parameter"]

TOOLS = {"avr-gcc": "gcc-avr", "avr-g++": "gcc-avr", "avr-gcc-ar": "gcc-avr", "avr-objcopy": "binutils-avr",
         "avr-size": "binutils-avr", "avrdude": "avrdude"}


def sketch_version(sketch: Path = SKETCH_DIR) -> str:
    """The firmware's version, as its constants.h says (CR_FW_MAJOR ...)."""
    text = (sketch / "constants.h").read_text()
    parts = [re.search(rf"#define CR_FW_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise UserError(f"{sketch / 'constants.h'}: no CR_FW_MAJOR/MINOR/PATCH")
    return ".".join(p.group(1) for p in parts if p)


def need_tool(name: str) -> str:
    """The path of a tool, or a one-line error naming the Debian package that has it."""
    found = shutil.which(name)
    if found is None:
        raise UserError(f"{name} is not installed: sudo apt install {TOOLS.get(name, name)}"
                        + (" avr-libc arduino-core-avr" if TOOLS.get(name) == "gcc-avr" else ""))
    return found


def arduino_dir(given: str | None = None) -> Path:
    d = Path(given or os.environ.get("ARDUINO_DIR") or ARDUINO_DIR)
    if not (d / "cores" / "arduino" / "Arduino.h").is_file():
        raise UserError(f"no Arduino AVR core in {d} (cores/arduino/Arduino.h): sudo apt install "
                        "arduino-core-avr, or give --arduino-dir DIR (the folder holding cores/ and "
                        "variants/)")
    return d


def default_build_dir() -> Path:
    from solver.cache import cache_dir  # lazy: loads numpy

    return Path(cache_dir()) / "firmware"


@dataclass
class Built:
    board: Board
    elf: Path
    hex: Path
    version: str
    flash_bytes: int | None
    ram_bytes: int | None
    reused: bool


def _run(argv: list[str], what: str, timeout: float = COMPILE_TIMEOUT_S) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UserError(f"{what}: {argv[0]} took more than {timeout:g} s") from None
    except OSError as e:
        raise UserError(f"{what}: cannot run {argv[0]}: {e.strerror or e}") from None
    if p.returncode != 0:
        said = [line for line in (p.stderr or p.stdout).splitlines() if line.strip()]
        first = next((line for line in said if "error" in line.lower()), said[0] if said else "no message")
        tool = os.path.basename(argv[0])
        raise UserError(f"{what}: {tool} failed (status {p.returncode}): {first.strip()}")
    return p.stdout


def _stamp(board: Board, sketch: Path, core: Path, files: list[Path]) -> str:
    h = hashlib.sha256()
    h.update(repr((board, COMMON, CFLAGS, CXXFLAGS, SKETCH_FLAGS)).encode())
    for f in sorted(sketch.iterdir()):
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    for f in files:
        st = f.stat()
        h.update(f"{f}:{st.st_size}:{st.st_mtime_ns}".encode())
    h.update(_run([need_tool("avr-gcc"), "--version"], "avr-gcc").encode())
    return h.hexdigest()


def build(board_name: str, out: Path | None = None, *, sketch: Path = SKETCH_DIR, arduino: str | None = None,
          progress: Callable[[str], None] = lambda line: None, jobs: int | None = None) -> Built:
    """Build ``board_name``'s firmware into ``out``/<board>/ (default: the
    user's cache folder); reused when nothing it depends on has changed."""
    board = BOARDS[board_name]
    tools = {t: need_tool(t) for t in ("avr-gcc", "avr-g++", "avr-gcc-ar", "avr-objcopy", "avr-size")}
    ard = arduino_dir(arduino)
    core = ard / "cores" / "arduino"
    if not (sketch / f"{SKETCH}.ino").is_file():
        raise UserError(f"no sketch in {sketch} ({SKETCH}.ino): the package is incomplete; "
                        "reinstall cuberobot")
    # in the Makefile's order (C, C++, assembler), which the archive and so the linked code keep
    core_files = [p for kind in (".c", ".cpp", ".S") for p in sorted(core.glob(f"*{kind}"))]
    sketch_cpp = sorted(sketch.glob("*.cpp"))
    where = (out or default_build_dir()) / board.name
    elf, hexfile = where / f"{SKETCH}.elf", where / f"{SKETCH}.hex"
    stamp = _stamp(board, sketch, core, core_files)
    version = sketch_version(sketch)
    stamp_file = where / "build.sha256"
    if hexfile.is_file() and elf.is_file() and stamp_file.is_file() and stamp_file.read_text() == stamp:
        kept = Built(board, elf, hexfile, version, *_sizes(tools["avr-size"], board, elf), reused=True)
        if _whole(kept):
            progress(f"{board.title}: up to date")
            return kept
        progress(f"{board.title}: {hexfile} is damaged; building it again")
    stamp_file.unlink(missing_ok=True)
    (where / "core").mkdir(parents=True, exist_ok=True)
    (where / "sketch").mkdir(parents=True, exist_ok=True)
    flags = [f"-mmcu={board.mcu}", f"-I{core}", f"-I{ard / 'variants' / board.variant}"]
    jobs_core = []
    for f in core_files:
        obj = where / "core" / f"{f.name}.o"
        if f.suffix == ".c":
            jobs_core.append([tools["avr-gcc"], *CFLAGS, *flags, "-c", str(f), "-o", str(obj)])
        elif f.suffix == ".cpp":
            jobs_core.append([tools["avr-g++"], *CXXFLAGS, *flags, "-c", str(f), "-o", str(obj)])
        else:
            jobs_core.append([tools["avr-gcc"], "-x", "assembler-with-cpp", *CFLAGS, *flags, "-c", str(f),
                              "-o", str(obj)])
    sketch_objs = [where / "sketch" / f"{f.stem}.o" for f in sketch_cpp]
    sketch_objs.append(where / "sketch" / f"{SKETCH}.ino.o")
    jobs_sketch = [[tools["avr-g++"], *CXXFLAGS, *SKETCH_FLAGS, *flags, "-c", str(f), "-o", str(o)]
                   for f, o in zip(sketch_cpp, sketch_objs)]
    jobs_sketch.append([tools["avr-g++"], *CXXFLAGS, *SKETCH_FLAGS, *flags, f"-I{sketch}", "-include",
                        "Arduino.h", "-x", "c++", "-c", str(sketch / f"{SKETCH}.ino"), "-o",
                        str(sketch_objs[-1])])
    progress(f"{board.title}: compiling the Arduino core ({len(jobs_core)} files) and the sketch "
             f"({len(jobs_sketch)} files) with avr-gcc")
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        list(pool.map(lambda argv: _run(argv, f"building for the {board.title}"), jobs_core + jobs_sketch))
    core_a = where / "core.a"
    core_a.unlink(missing_ok=True)
    _run([tools["avr-gcc-ar"], "rcs", str(core_a),
          *(str(where / "core" / f"{f.name}.o") for f in core_files)], "archiving the core")
    progress(f"{board.title}: linking")
    _run([tools["avr-gcc"], *COMMON, f"-mmcu={board.mcu}", "-Wl,--gc-sections", "-o", str(elf),
          *map(str, sketch_objs), str(core_a), "-lm"], "linking")
    _run([tools["avr-objcopy"], "-O", "ihex", "-R", ".eeprom", str(elf), str(hexfile)], "making the .hex")
    stamp_file.write_text(stamp)
    return Built(board, elf, hexfile, version, *_sizes(tools["avr-size"], board, elf), reused=False)


def _sizes(avr_size: str, board: Board, elf: Path) -> tuple[int | None, int | None]:
    text = _run([avr_size, "-C", f"--mcu={board.mcu}", str(elf)], "measuring the firmware")
    flash = re.search(r"Program:\s*(\d+)", text)
    ram = re.search(r"Data:\s*(\d+)", text)
    return (int(flash.group(1)) if flash else None, int(ram.group(1)) if ram else None)


def check_hex(path: Path) -> int:
    """The bytes of program an Intel HEX file holds; a UserError when a
    record is malformed or its checksum wrong."""
    total, ended = 0, False
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        if not re.fullmatch(r":[0-9A-Fa-f]{10,}", line) or len(line) % 2 == 0:
            raise UserError(f"{path}:{n}: not an Intel HEX record")
        data = bytes.fromhex(line[1:])
        if len(data) != data[0] + 5 or sum(data) & 0xFF:
            raise UserError(f"{path}:{n}: bad length or checksum")
        if data[3] == 0:
            total += data[0]
        elif data[3] == 1:
            ended = True
    if not ended:
        raise UserError(f"{path}: no end-of-file record (cut short?)")
    return total


def _whole(built: Built) -> bool:
    """The .hex is whole and holds the program the .elf has."""
    try:
        return check_hex(built.hex) == built.flash_bytes or not built.flash_bytes
    except (UserError, OSError, UnicodeDecodeError):
        return False


def avrdude_command(board: Board, port: str, hexfile: Path) -> list[str]:
    return [need_tool("avrdude"), "-p", board.mcu, *board.programmer, "-P", port, "-U",
            f"flash:w:{hexfile}:i"]


def flash(built: Built, port: str, *, progress: Callable[[str], None] = lambda line: None) -> None:
    """Write the .hex to the board on ``port`` with avrdude, after checking
    that it is whole and holds the program built (a cached .hex cut short on
    a full disk must not reach the board)."""
    size = check_hex(built.hex)
    if built.flash_bytes and size != built.flash_bytes:
        raise UserError(f"{built.hex} holds {size} bytes of program, the build made {built.flash_bytes}: "
                        "run `cuberobot firmware build` again")
    argv = avrdude_command(built.board, port, built.hex)
    progress(f"flashing {built.hex} to the {built.board.title} on {port}: {' '.join(argv[1:])}")
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=FLASH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RigError(f"avrdude did not finish within {FLASH_TIMEOUT_S:g} s on {port}") from None
    if p.returncode != 0:
        lines = [line.strip() for line in (p.stderr + p.stdout).splitlines() if line.strip()]
        said = next((line for line in reversed(lines) if "error" in line.lower() or "not" in line.lower()),
                    lines[-1] if lines else "no message")
        hint = ""
        if "permission denied" in said.lower():
            hint = " (sudo usermod -aG dialout $USER, then log out and in again)"
        elif "not in sync" in said.lower() or "not responding" in said.lower():
            hint = f" (is it a {built.board.title}? is --board right? is another program using {port}?)"
        raise RigError(f"avrdude failed on {port} (status {p.returncode}): {said}{hint}")


def wait_and_check(built: Built, port: str, boot_wait_s: float) -> str:
    """The handshake on ``port`` after flashing: the firmware answers, with
    the version and board just built. Returns the line to print."""
    time.sleep(max(0.0, boot_wait_s))
    f = handshake(port, RigConfig(port=port), 0.0, claim=False)  # the caller holds the port
    if f.level != "ok":
        raise RigError(f"flashed, but {f.text}")
    if f.data.get("firmware") != built.version:
        raise RigError(f"flashed {built.version}, but the board answers as firmware "
                       f"{f.data.get('firmware')}: did avrdude write to another board?")
    if f.data.get("board") != "an " + built.board.title:
        raise RigError(f"flashed the {built.board.title} build, but the board says it is "
                       f"{f.data.get('board')}")
    return f.text
