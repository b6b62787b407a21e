"""`make -C firmware` from scratch: both boards build, and fit the Uno with room to spare."""

from __future__ import annotations

import re
import subprocess

from fwtools import FIRMWARE

UNO_FLASH = 32256  # 32 KB less the 512-byte Optiboot bootloader
UNO_RAM = 2048


def test_both_boards_build_from_a_clean_tree_and_fit_with_margin(tmp_path):
    build = tmp_path / "build"
    proc = subprocess.run(["make", "-C", str(FIRMWARE), f"BUILD={build}"], capture_output=True, text=True)
    assert proc.returncode == 0, (
        "`make -C firmware` failed (gcc-avr, avr-libc and arduino-core-avr must be installed):\n"
        + proc.stdout[-3000:] + proc.stderr[-3000:]
    )
    sizes = {}
    for board, mcu in (("uno", "atmega328p"), ("mega", "atmega2560")):
        assert (build / board / "cuberobot.elf").is_file()
        hex_text = (build / board / "cuberobot.hex").read_text()
        assert hex_text.startswith(":") and hex_text.rstrip().endswith(":00000001FF")
        m = re.search(rf"== {board} \({mcu}\) ==\s*Program:\s*(\d+) bytes.*?\n\s*Data:\s*(\d+) bytes",
                      proc.stdout, re.S)
        assert m, f"no size report for {board} in:\n{proc.stdout[-2000:]}"
        sizes[board] = (int(m.group(1)), int(m.group(2)))
    flash, ram = sizes["uno"]
    print(f"\nUno: flash {flash} B ({100 * flash / UNO_FLASH:.1f}%), static RAM {ram} B "
          f"({100 * ram / UNO_RAM:.1f}%); Mega: flash {sizes['mega'][0]} B, RAM {sizes['mega'][1]} B")
    assert flash < 0.5 * UNO_FLASH
    assert ram < 0.5 * UNO_RAM  # the rest is stack: interrupts nest on top of the main loop


def test_the_sketch_folder_opens_in_the_arduino_ide():
    """The IDE wants the .ino in a folder of the same name and compiles every
    .cpp beside it: the AVR-only file must guard itself."""
    sketch = FIRMWARE / "cuberobot"
    assert (sketch / "cuberobot.ino").is_file()
    for cpp in sketch.glob("*.cpp"):
        text = cpp.read_text()
        assert "Arduino.h" not in text or "#ifdef __AVR__" in text, cpp.name
