"""Bounds on every input of cuberobot, whichever face it comes through (the
`cuberobot` command, the web API, the engine), checked before any work
starts, so that no input runs for minutes, fills the memory or ends in a
traceback. Each refusal is a :class:`UserError` (exit 2) of one line that
names the option or file:line and says what to do.

The numbers, and why:

* moves: 10 000 for ``apply`` (a quarter of a second of work);
  1 000 for ``dry-run``, which turns motors (about four minutes on a real
  rig) and at most an hour of simulated time at the chosen ``--speed``;
  100 with ``--render`` (about half a minute of drawing);
* a cube argument: 54 symbols, so at most 256 characters of text;
* standard input and ``--batch`` files: 1 MiB, 10 000 lines of at most 1 000
  characters (and a batch at most an hour of search: cubes times
  ``--budget-ms``); RGB JSON files: 1 MiB, nested at most 16 deep, numbers of at
  most 40 characters, and no NaN or Infinity;
* numeric options: finite and in the range their ``--help`` states.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..rig.config import Config, decode_text, read_limited
from ..rig.errors import UserError

if TYPE_CHECKING:
    from ..rig.owner import Describe

MAX_APPLY_MOVES = 10_000
MAX_DRY_RUN_MOVES = 1_000
MAX_RENDER_MOVES = 100
MAX_DRY_RUN_HOURS = 1.0
MAX_SCRAMBLE_MOVES = 10_000
MAX_CUBE_CHARS = 256
STDIN_LIMIT = 1 << 20
MAX_JSON_BYTES = 1 << 20
MAX_JSON_DEPTH = 16
MAX_NUMBER_CHARS = 40
MAX_INPUT_FILES = 1_000
MAX_BATCH_BYTES = 1 << 20
MAX_BATCH_LINES = 10_000
MAX_BATCH_HOURS = 1.0
MAX_LINE_CHARS = 1_000
MAX_PATH_CHARS = 4_096
MAX_PATH_DEPTH = 128
MAX_TEXT_CHARS = 4_096
MAX_FIRMWARE_BYTES = 16 << 20
MAX_SEED = 2**32 - 1
MAX_JOG_TURNS = 8

_MOVE_TOKEN = re.compile(r"[^\s,]+")  # what the move parser calls a move



def check_dry_run_hours(seconds: float, pace: float | None, speed: str, where: str) -> None:
    """A dry run's one bound in time, for every kind of rig and every face:
    ``seconds`` of planned motion at ``pace`` times real time (None: as fast
    as the virtual rig goes) must take at most MAX_DRY_RUN_HOURS. ``speed``
    and ``where`` name the setting as the person gave it."""
    if pace is None:
        return
    hours = seconds / pace / 3600
    if hours > MAX_DRY_RUN_HOURS:
        raise UserError(f"{where} {speed}: these moves would take {hours:.1f} hours at that speed; at most "
                        f"{MAX_DRY_RUN_HOURS:g} hour: give a higher speed (or max)")


def shown(text: str, limit: int = 40) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


# ---------------------------------------------------------------- moves and cubes


def check_moves(moves: str, where: str, maximum: int, why: str = "") -> int:
    """The number of moves in ``moves``, refusing more than ``maximum`` before
    any is parsed. ``where`` names the argument in the message."""
    advice = f"; split the sequence{why}" if why else "; split the sequence"
    if len(moves) > 16 * maximum + 1024:
        raise UserError(f"{where}: {len(moves)} characters of moves; at most {maximum} moves{advice}")
    count = sum(1 for _ in itertools.islice(_MOVE_TOKEN.finditer(moves), maximum + 1))
    if count > maximum:
        raise UserError(f"{where}: more than {maximum} moves; at most {maximum}{advice}")
    return count


def check_cube_text(value: str, where: str) -> str:
    if len(value) > MAX_CUBE_CHARS:
        raise UserError(f"{where}: {len(value)} characters is not a cube: give 54 symbols in U R F D L B "
                        "face order, 'solved', or - for standard input")
    return value


# ---------------------------------------------------------------- reading files and stdin


def read_stdin(limit: int, what: str) -> bytes:
    """At most ``limit`` bytes of standard input; more is refused, not cut."""
    stream = sys.stdin
    if stream is None:
        raise UserError(f"{what}: there is no standard input")
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            data = buffer.read(limit + 1)
        else:
            data = stream.read(limit + 1).encode("utf-8", "surrogateescape")
    except UnicodeDecodeError as e:
        raise UserError(f"{what}: standard input is not UTF-8 text ({e.reason}); give UTF-8 text") from None
    except (OSError, ValueError) as e:
        raise UserError(f"{what}: cannot read standard input ({e})") from None
    if len(data) > limit:
        raise UserError(f"{what}: more than {limit} bytes on standard input (at most {limit})")
    return data


def read_input(name: str, what: str, limit: int, kind: str) -> str:
    """The UTF-8 text of file ``name`` (``-``: standard input), at most ``limit`` bytes."""
    label = f"{what} {name}" if name == "-" else name
    data = read_stdin(limit, what) if name == "-" else read_limited(name, label, limit, kind)
    return decode_text(data, "standard input" if name == "-" else name)


def check_json_shape(text: str, name: str) -> None:
    """Refuse JSON nested deeper than MAX_JSON_DEPTH before the parser
    recurses into it; a linear scan that skips strings."""
    depth, i, n = 0, 0, len(text)
    opener = re.compile(r'["\[\]{}]')
    while True:
        m = opener.search(text, i)
        if m is None:
            return
        c, i = m.group(), m.end()
        if c == '"':
            while True:
                q = text.find('"', i)
                if q < 0:
                    return  # an unterminated string: the parser says where
                k = q
                while k > 0 and text[k - 1] == "\\":
                    k -= 1
                i = q + 1
                if (q - k) % 2 == 0:
                    break
        elif c in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                line = text.count("\n", 0, m.start()) + 1
                raise UserError(f"{name}:{line}: JSON nested more than {MAX_JSON_DEPTH} deep; "
                                "is it the right file?")
        else:
            depth -= 1
        if i >= n:
            return


_JSON_KINDS = {dict: "an object", list: "an array", str: "a string", bool: "true or false", int: "a number",
               float: "a number", type(None): "null"}


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's own words (not Python's type names)."""
    return _JSON_KINDS.get(type(value), "a value")


def loads_json(text: str, name: str) -> Any:
    """JSON with bounded nesting and number sizes, and no NaN or Infinity."""
    check_json_shape(text, name)

    def num(kind: Callable[[str], Any]) -> Callable[[str], Any]:
        def parse(s: str) -> Any:
            if len(s) > MAX_NUMBER_CHARS:
                raise UserError(f"{name}: a number of {len(s)} characters ({s[:12]}...); "
                                f"at most {MAX_NUMBER_CHARS}")
            value = kind(s)
            if isinstance(value, float) and not math.isfinite(value):
                raise UserError(f"{name}: the number {s} is out of range")
            return value

        return parse

    def constant(s: str) -> Any:
        raise UserError(f"{name}: {s} is not a number JSON allows; give a finite number")

    try:
        return json.loads(text, parse_int=num(int), parse_float=num(float), parse_constant=constant)
    except json.JSONDecodeError as e:
        raise UserError(f"{name}:{e.lineno}: not JSON ({e.msg}, column {e.colno})") from None
    except RecursionError:
        raise UserError(f"{name}: JSON nested too deeply; is it the right file?") from None


# ---------------------------------------------------------------- files and folders named


def check_input_file(name: str, what: str, limit: int, kind: str) -> None:
    """A file that something else will read: it must exist, be a file and be
    at most ``limit`` bytes."""
    p = Path(name)
    try:
        st = p.stat()
    except OSError as e:
        raise UserError(f"{what} {name}: {e.strerror or e}; expected {kind}") from None
    if not p.is_file():
        raise UserError(f"{what} {name}: not a regular file; expected {kind}")
    if st.st_size > limit:
        raise UserError(f"{what} {name}: {st.st_size} bytes is too big for {kind} (at most {limit})")
    if not os.access(name, os.R_OK):
        raise UserError(f"{what} {name}: not readable; expected {kind}")


def check_output_dir(name: str, what: str) -> None:
    """A folder results will go to: created if missing, and writable."""
    p = Path(name)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UserError(f"{what} {name}: exists and is not a folder; give a folder") from None
    except OSError as e:
        raise UserError(f"{what} {name}: cannot create the folder ({e.strerror or e}); give another "
                        "one") from None
    if not p.is_dir():
        raise UserError(f"{what} {name}: not a folder; give a folder")
    if not os.access(p, os.W_OK | os.X_OK):
        raise UserError(f"{what} {name}: the folder is not writable; give another one")


def check_output_file(name: str, what: str) -> None:
    """A file that will be written at the end: its folder is created and the
    file must be creatable now, before the work."""
    p = Path(name)
    if p.is_dir():
        raise UserError(f"{what} {name}: is a folder; give a file name")
    if p.exists() and not p.is_file():
        raise UserError(f"{what} {name}: exists and is not a regular file (a device or a pipe); "
                        "give a file name")
    existed = p.exists()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("ab"):
            pass
    except OSError as e:
        raise UserError(f"{what} {name}: cannot write there ({e.strerror or e})") from None
    if not existed:
        p.unlink(missing_ok=True)


MAX_NAME_BYTES = 255
"""The longest name between two slashes a file or device can have (Linux's NAME_MAX)."""
MAX_PATH_BYTES = 4096
"""A path is shorter than this, its final NUL included (Linux's PATH_MAX)."""


def check_port(port: str | None) -> None:
    """A --port given must not be blank, nor a path no device can have (a
    name between slashes longer than any file's: opening it would fail with
    "File name too long" deep inside a command)."""
    if port is None:
        return
    if not port.strip():
        raise UserError("--port is empty: give a device (/dev/ttyACM0, COM3), a pty path or a URL (sim://)")
    if "://" not in port:
        what = "give a device (/dev/ttyACM0, COM3), a pty path or a URL (sim://)"
        size = len(os.fsencode(port))
        if size >= MAX_PATH_BYTES:
            raise UserError(f"--port {shown(port)}: a path of {size} bytes, and no path is longer than "
                            f"{MAX_PATH_BYTES - 1}: {what}")
        longest = max(len(os.fsencode(part)) for part in port.split("/"))
        if longest > MAX_NAME_BYTES:
            raise UserError(f"--port {shown(port)}: a name of {longest} bytes between slashes, and no device "
                            f"or file name is longer than {MAX_NAME_BYTES}: {what}; `cuberobot doctor` lists "
                            "the serial ports here")


def check_port_and_folder(port: str | None, state_dir: str | None, *, default_folder: bool = True) -> None:
    """A command's --port not blank, and --state-dir (or the default one,
    where the command would use it) a folder that can be written, made if
    missing: checked before anything opens, the same for every kind of rig."""
    from ..rig import journal  # lazy: out of check's start-up

    check_port(port)
    if state_dir is not None:
        check_output_dir(state_dir, "--state-dir")
    elif default_folder:
        check_output_dir(str(journal.default_state_dir()), "--state-dir")


def check_firmware(firmware: str | None) -> None:
    """A --firmware ELF must be a readable AVR ELF file of at most 16 MiB;
    every refusal says how to build one."""
    if firmware is None:
        return
    from ..sim.simavr import BUILD_HINT  # lazy: the simulation plugs in when asked for
    from ..sim.simavr import check_firmware as check_elf  # lazy: the simulation plugs in when asked for

    # A missing file or a folder: check_elf says so; anything else must be a small regular file.
    if Path(firmware).exists() and not Path(firmware).is_dir():
        try:
            check_input_file(firmware, "--firmware", MAX_FIRMWARE_BYTES, "the firmware's ELF file")
        except UserError as e:
            raise UserError(f"{e}; {BUILD_HINT}") from None
    check_elf(firmware)


def check_faults(spec: str) -> None:
    """A virtual rig's --faults: what the rig accepts, with finite times."""
    from ..sim.virtual_rig import Faults  # lazy: the simulation plugs in when asked for

    if len(spec) > 1000:
        raise UserError(f"--faults: {len(spec)} characters; at most 1000")
    try:
        faults = Faults.parse(spec)
    except ValueError as e:
        raise UserError(f"--faults: {e}") from None
    if not all(math.isfinite(s) and s <= 1e6 for s in faults.resets):
        raise UserError("--faults: reset:S takes seconds from 0 to 1000000")


def check_views(cfg: Config) -> None:
    """Scanning needs at least one [[view]] in the set-up."""
    if not cfg.views:
        raise UserError(f"{cfg.path or 'the set-up'}: no [[view]], so no camera sees the cube: add the views "
                        "(and [[camera]] tables) as in config/rig.toml")


@contextlib.contextmanager
def rig_claims(rig_port: str | None, state_dir: str | None, *, folder: bool = True,
               url: str | None = None) -> Iterator[Describe]:
    """The rig on ``rig_port`` (None: a rig of this process's own, nothing to
    claim) and the state folder (``state_dir``, or the default one; none with
    ``folder=False``), held for a command's whole life (owner.py): a second
    command on either is refused in one line naming this one. A journal that
    cannot be one is named now, before anything is scanned or moved. Yields
    a function that adds to what the claims tell the next comer (`serve`'s
    address, known once it listens)."""
    from ..rig import journal  # lazy: out of check's start-up
    from ..rig.owner import holding  # lazy: out of check's start-up

    where = (Path(state_dir) if state_dir else journal.default_state_dir()) if folder else None
    with holding(rig_port, where, details={"url": url} if url else None) as describe:
        if where is not None:
            journal.check_file(where / journal.FILENAME)
        yield describe


def check_rig_options(cfg: Config, port: str | None, port_flag: str, firmware: str | None,
                      state_dir: str | None) -> None:
    """What `start` and `serve` check before they open a rig: the views, one
    of --firmware and the port flag, the port, the firmware file and a
    writable state folder."""
    from ..rig.journal import default_state_dir  # lazy: out of check's start-up

    check_views(cfg)
    if firmware and port:
        raise UserError(f"--firmware runs its own emulated rig: give --firmware or {port_flag}, not both")
    check_port(port)
    check_firmware(firmware)
    check_output_dir(state_dir or str(default_state_dir()), "--state-dir")
