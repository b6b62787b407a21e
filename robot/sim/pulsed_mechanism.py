"""A flipper or two-gripper rig on the real firmware in simavr: the parts
moved by what the firmware's pins do (issue 26).

The harness (firmware/sim/harness.c) logs every pin edge with its CPU
cycle. Here the log is read as it grows: a servo's pulse widths on its
pin (servo *i* on the DIR pin of motor *i* + 1, docs/protocol.md 7) give
its angle, a gripper stepper's STEP pulses (with its DIR level, while the
drivers are enabled) its steps. Each change goes to the virtual
mechanism's physics (robot/sim/mechanisms.py) as the command it amounts
to, in the order the pins made them, so the simulated camera sees the cube
as the firmware's outputs moved it, and a part the firmware drives wrong
is a fault there.

A servo's new angle is taken once a few pulses agree on a width that is
not the one held (a hobby servo follows the pulses, not one pulse): the
median of them, refined while later pulses keep that width. Steps are
handed over as one move per run of one motor's pulses, cut where a servo
moves or the other motor steps; at a look (``state``) only whole quarter
turns are handed over, so a turn under way is not half-seen.
"""

from __future__ import annotations

import json
import os
import select
import stat
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from ..rig.config import Config
from ..rig.protocol import NO_MOTOR, MoveCommand, ServoCommand
from .mechanisms import Fault, VirtualFlipper, VirtualTwoGripper, virtual_mechanism
from .pty_rig import write_view

CYCLES_PER_US = 16
AGREE_US = 40
"""Pulses within this many microseconds are one width (the firmware's are
within 36 us of the width asked, docs/protocol.md 7)."""
AGREE_PULSES = 3
"""Pulses that must agree on a new width before the servo counts as sent there."""
POLL_S = 0.05


class PulseReader:
    """Pin edges (``cycle name value``) in, the virtual mechanism's commands out."""

    def __init__(self, config: Config, mech: VirtualFlipper | VirtualTwoGripper):
        self.config = config
        self.mech = mech
        self.servo_pin = {f"dir{i + 1}": i for i in mech.names}
        motors = {config.motors[g].motor for g in ("D", "L")} if config.rig.kind == "two-gripper" else set()
        self.step_pin = {f"step{m}": m for m in motors}
        self.dir_pin = {f"dir{m}": m for m in motors}
        self.dir_level = {m: 0 for m in motors}
        self.enabled = False
        self.rise: dict[int, int] = {}
        self.held: dict[int, list[float]] = {}  # the widths of the pulses of the width held
        self.fresh: dict[int, list[float]] = {}  # pulses of a width not (yet) held
        self.steps: dict[int, int] = {}  # steps not yet handed over, by motor
        self.tail = b""
        self.offset = 0

    # -- the log -----------------------------------------------------------
    def read(self, path: Path) -> None:
        """Take the edges added to the log since the last read."""
        with open(path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        data = self.tail + data
        lines = data.split(b"\n")
        self.tail = lines.pop()
        for line in lines:
            parts = line.split()
            if len(parts) == 3:
                try:
                    self.edge(int(parts[0]), parts[1].decode(), int(parts[2]))
                except ValueError:
                    continue

    def edge(self, cycle: int, name: str, value: int) -> None:
        if self.mech.fault is not None:
            return
        try:
            if name in self.servo_pin:
                self._servo_edge(self.servo_pin[name], cycle, value)
            elif name in self.step_pin and value == 1 and self.enabled:
                m = self.step_pin[name]
                if any(n for other, n in self.steps.items() if other != m):
                    self.flush()
                self.steps[m] = self.steps.get(m, 0) + (1 if self.dir_level[m] else -1)
            elif name in self.dir_pin:
                self.dir_level[self.dir_pin[name]] = value
            elif name == "en":
                self.enabled = bool(value)
        except Fault:
            pass  # latched in the mechanism: it stops there, as a jammed rig does

    def _servo_edge(self, servo: int, cycle: int, value: int) -> None:
        if value:
            self.rise[servo] = cycle
            return
        rise = self.rise.pop(servo, None)
        if rise is None:
            return
        width = (cycle - rise) / CYCLES_PER_US
        if not 300 <= width <= 3000:
            return  # not a servo pulse
        held = self.held.get(servo)
        if held and abs(width - statistics.median(held)) <= AGREE_US:
            held.append(width)
            del held[:-15]
            self._set_angle(servo, statistics.median(held))  # refined, no move
            self.fresh[servo] = []
            return
        fresh = [w for w in self.fresh.get(servo, []) if abs(w - width) <= AGREE_US] + [width]
        self.fresh[servo] = fresh
        if len(fresh) >= AGREE_PULSES:
            self.flush()  # a gripper's steps came before this servo moved
            self.held[servo], self.fresh[servo] = fresh, []
            self._command(servo, statistics.median(fresh))

    def _clamped(self, servo: int, width: float) -> int:
        lo, hi = self.mech.limits[self.mech.names[servo]]
        return int(round(min(hi, max(lo, width))))

    def _command(self, servo: int, width: float) -> None:
        self.mech.execute(ServoCommand(0, servo, self._clamped(servo, width), 0))

    def _set_angle(self, servo: int, width: float) -> None:
        name = self.mech.names[servo]
        sc = self.config.servos[name]
        pulse = self._clamped(servo, width)
        self.mech.settle(name, (pulse - sc.min_us) / (sc.max_us - sc.min_us) * sc.range_deg)

    def flush(self, whole_only: bool = False) -> None:
        """Hand the steps over as moves (``whole_only``: only whole quarter turns)."""
        for m, n in list(self.steps.items()):
            if not n:
                continue
            if whole_only:
                spq = self.config.motor_for_index(m).steps_per_quarter
                if n % spq:
                    continue
            self.steps[m] = 0
            try:
                self.mech.execute(MoveCommand(0, m, n, NO_MOTOR, 0, 0))
            except Fault:
                return


def serve(cmd: list[str], config: Config, facelets: str, log: Path, *, view: str | None = None,
          out: TextIO | None = None) -> int:
    """The harness ``cmd`` (started with ``--edge-log log``) behind the
    line interface of a simulated rig (state, press, set, counts, quit;
    robot/sim/pty_rig.py), the cube held by the parts its pins move."""
    out = out if out is not None else sys.stdout
    mech = virtual_mechanism(config, facelets)
    reader = PulseReader(config, mech)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    harness_in, harness_out = proc.stdin, proc.stdout

    def ask(line: str) -> str:
        harness_in.write(line + "\n")
        harness_in.flush()
        return harness_out.readline().strip()

    def look() -> None:
        ask("state")  # any command flushes the harness's edge log
        reader.read(log)
        reader.flush(whole_only=True)

    print(harness_out.readline().strip(), file=out, flush=True)  # the pty's path
    shown = None
    stdin = sys.stdin.fileno()
    listening = True
    pending = b""
    try:
        while proc.poll() is None:
            ready = select.select([stdin] if listening else [], [], [], POLL_S)[0]
            look()
            if view is not None and mech.cube.stickers != shown:
                shown = mech.cube.stickers
                write_view(view, shown)
            if ready:
                chunk = os.read(stdin, 4096)
                if not chunk:
                    if stat.S_ISFIFO(os.fstat(stdin).st_mode):
                        break  # the process driving us through a pipe is gone
                    listening = False  # /dev/null or a file: serve until killed
                pending += chunk
            if b"\n" not in pending:
                continue
            raw, pending = pending.split(b"\n", 1)
            line = raw.decode("utf-8", "replace")
            word, _, arg = line.strip().partition(" ")
            if word == "state":
                answer = mech.cube.stickers
            elif word == "set":
                arg = arg.strip()
                if len(arg) != 54 or set(arg) - set("URFDLB"):
                    answer = "error: expected 54 facelets of URFDLB"
                else:
                    mech.cube.stickers = arg
                    answer = "ok"
            elif word == "counts":
                counts = json.loads(ask("counts"))
                counts["layer_turns"] = [list(t) for t in mech.turns]
                counts["fault"] = mech.fault
                counts["angles"] = {n: round(a, 1) for n, a in mech.angle.items()}  # from the pulses
                answer = json.dumps(counts)
            elif word == "quit":
                break
            else:
                answer = ask(line.strip())
            print(answer, file=out, flush=True)
        return 0
    finally:
        if proc.poll() is None:
            try:
                ask("quit")
                proc.wait(timeout=5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()


def serve_firmware(cmd_for: object, config: Config, facelets: str, *, view: str | None = None) -> int:
    """:func:`serve` with the edge log in a folder of its own, removed at the end."""
    assert callable(cmd_for)
    with tempfile.TemporaryDirectory(prefix="cuberobot-pins-") as d:
        log = Path(d) / "edges.log"
        return serve(cmd_for(log), config, facelets, log, view=view)
