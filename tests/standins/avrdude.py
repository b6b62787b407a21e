"""A stand-in for avrdude: checks that it was called as cuberobot must call
it for an Uno or a Mega and that the file it is given is a whole Intel HEX
image, appends its arguments to AVRDUDE_STANDIN_LOG (a JSON line), and
says what a real avrdude says when it is done. AVRDUDE_STANDIN_FAIL makes
it print that text and end with status 1, as avrdude does when the board
does not answer."""

from __future__ import annotations

import json
import os
import sys

PROGRAMMERS = {"atmega328p": ["-c", "arduino", "-b", "115200"],
               "atmega2560": ["-c", "wiring", "-b", "115200", "-D"]}


def fail(why: str) -> int:
    print(f"avrdude stand-in: {why}", file=sys.stderr)
    return 3


def main(argv: list[str]) -> int:
    log = os.environ.get("AVRDUDE_STANDIN_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps(argv) + "\n")
    if os.environ.get("AVRDUDE_STANDIN_FAIL"):
        print(os.environ["AVRDUDE_STANDIN_FAIL"], file=sys.stderr)
        return 1
    if len(argv) < 2 or argv[0] != "-p" or argv[1] not in PROGRAMMERS:
        return fail(f"expected -p atmega328p or -p atmega2560 first, got {argv[:2]}")
    mcu = argv[1]
    prog = PROGRAMMERS[mcu]
    if argv[2:2 + len(prog)] != prog:
        return fail(f"expected {prog} for {mcu}, got {argv[2:2 + len(prog)]}")
    rest = argv[2 + len(prog):]
    if len(rest) != 4 or rest[0] != "-P" or rest[2] != "-U":
        return fail(f"expected -P PORT -U flash:w:FILE:i, got {rest}")
    if not os.path.exists(rest[1]):
        return fail(f"no port {rest[1]}")
    op = rest[3]
    if not (op.startswith("flash:w:") and op.endswith(":i")):
        return fail(f"expected flash:w:FILE:i, got {op}")
    path = op[len("flash:w:"):-2]
    size, ended = 0, False
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            data = bytes.fromhex(line[1:])
            if not line.startswith(":") or len(data) != data[0] + 5 or sum(data) & 0xFF:
                return fail(f"{path}:{n}: a bad Intel HEX record")
            size += data[0] if data[3] == 0 else 0
            ended = ended or data[3] == 1
    if not ended or size < 1000:
        return fail(f"{path}: {size} bytes and {'an' if ended else 'no'} end record: not a whole firmware")
    print(f"avrdude: {size} bytes of flash written\navrdude: {size} bytes of flash verified\n\n"
          "avrdude done.  Thank you.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
