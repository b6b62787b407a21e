"""Shared helpers of the firmware tests: building, the host shim, a small client.

The build is a test step in its own right: a missing avr-gcc, simavr or
libsimavr-dev makes these tests fail loudly, never skip.
"""

from __future__ import annotations

import fcntl
import subprocess
import time
from pathlib import Path

import pytest

from robot.rig import protocol as P

REPO = Path(__file__).resolve().parent.parent
FIRMWARE = REPO / "firmware"
BUILD = FIRMWARE / "build"
UNO_ELF = BUILD / "uno" / "cuberobot.elf"
HOST_SHIM = BUILD / "host" / "firmware-host"

_built: dict[str, str] = {}


def make(*targets: str) -> str:
    """Runs make in firmware/ (once per target set per test process); fails
    the test on error. The suite's parallel workers share firmware/build, so
    one make runs at a time (a lock file): two at once would each write the
    same files, and one could read the other's half-written ELF."""
    key = " ".join(targets)
    if key not in _built:
        BUILD.mkdir(parents=True, exist_ok=True)
        with open(BUILD / ".make.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            proc = subprocess.run(["make", "-C", str(FIRMWARE), *targets], capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.fail(
                f"`make -C firmware {key}` failed (are gcc-avr, avr-libc, arduino-core-avr, "
                f"libsimavr-dev, libelf-dev, pkg-config installed?):\n{proc.stdout[-3000:]}\n"
                f"{proc.stderr[-3000:]}"
            )
        _built[key] = proc.stdout
    return _built[key]


def host_estop_bytes() -> bytes:
    """Exactly what the host driver writes for an emergency stop
    (``robot.rig.link.Link.estop``), captured from the driver itself, so
    that the tests stop the rig the way the host does."""
    from robot.rig.link import Link
    from robot.rig.loading import load_config

    class Capture:
        def __init__(self) -> None:
            self.data = bytearray()

        def write(self, data: bytes) -> int:
            self.data += data
            return len(data)

        def flush(self) -> None:
            pass

    link = Link(load_config(), "capture://")
    link.ser = Capture()  # type: ignore[assignment]
    link.estop()
    assert link.ser.data, "Link.estop() wrote nothing"
    return bytes(link.ser.data)


def noise_burst(rng, n: int = 64) -> bytes:
    """``n`` random bytes with RT_ESTOP put in on purpose: lone ones and runs
    one byte shorter than the emergency stop, the worst noise that must still
    stop nothing. (Random bytes alone could, once in 2^24 places, make a full
    run: that would be a real stop, so such a run is cut short; and a burst
    neither starts nor ends with RT_ESTOP, so two bursts back to back make no
    longer run either.)"""
    burst = bytearray(rng.randrange(256) for _ in range(n))
    short = bytes((P.RT_ESTOP,)) * (P.ESTOP_RUN - 1)
    for _ in range(3):
        i = rng.randrange(n - len(short))
        burst[i : i + len(short)] = short
    for _ in range(3):
        burst[rng.randrange(n)] = P.RT_ESTOP
    for i in (0, n - 1):
        if burst[i] == P.RT_ESTOP:
            burst[i] = 0x00
    run = 0
    for i, b in enumerate(burst):
        run = run + 1 if b == P.RT_ESTOP else 0
        if run == P.ESTOP_RUN:
            burst[i] = rng.choice((P.FLAG, P.RT_STATUS, 0x00))
            run = 0
    return bytes(burst)


def longest_estop_run(data: bytes) -> int:
    best = run = 0
    for b in data:
        run = run + 1 if b == P.RT_ESTOP else 0
        best = max(best, run)
    return best


def noisy_writes(link, noise) -> None:
    """Every frame the link writes goes out as ``noise(k, frame)`` (k counts
    the frames from 0): line noise the host never sent, between its frames
    or in them. Other writes (the emergency stop) go out as they are."""
    real = link.ser.write
    count = 0

    def write(data):
        nonlocal count
        data = bytes(data)
        if data[:1] == bytes((P.FLAG,)):
            data = noise(count, data)
            count += 1
        return real(data)

    link.ser.write = write


class HostShim:
    """The firmware's logic compiled for the host (firmware/test_host), one line per command."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [str(HOST_SHIM)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.decoder = P.FrameDecoder()
        self.seq = 0
        self.other: list[P.Message] = []

    def cmd(self, line: str) -> str:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline().strip()
        assert not out.startswith("error"), out
        return out

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=5)

    # --- protocol helpers
    def rx(self, data: bytes) -> None:
        if data:
            self.cmd("rx " + data.hex())

    def replies(self) -> list[tuple[int, P.Message]]:
        """Frames the firmware sent since the last call, decoded."""
        self.cmd("loop")
        raw = bytes.fromhex(self.cmd("tx"))
        return [P.decode(c) for c in self.decoder.feed(raw)]

    def send(self, msg: P.Message, seq: int | None = None) -> list[tuple[int, P.Message]]:
        if seq is None:
            self.seq = P.next_seq(self.seq)
            seq = self.seq
        self.rx(P.encode(msg, seq))
        return self.replies()

    def request(self, msg: P.Message, seq: int | None = None) -> P.Message:
        """Sends msg; returns the reply carrying its seq (other frames are kept in self.other)."""
        if seq is None:
            self.seq = P.next_seq(self.seq)
            seq = self.seq
        got = self.send(msg, seq)
        answers = [m for s, m in got if s == seq and m.TYPE in (0x80, 0x81, 0x82, 0x85)]
        assert len(answers) == 1, got
        self.other += [m for s, m in got if m is not answers[0]]
        return answers[0]

    def ticks(self, n: int) -> None:
        self.cmd(f"tick {n}")

    def steps(self) -> list[tuple[int, int, int]]:
        v = [int(x) for x in self.cmd("steps").split()]
        return [tuple(v[3 * m : 3 * m + 3]) for m in range(6)]

    def step_times(self, motor: int) -> list[int]:
        return [int(x) for x in self.cmd(f"steptimes {motor}").split()]

    def state(self) -> dict[str, int]:
        t, drivers, led, ignored, double, dirglitch = (int(x) for x in self.cmd("state").split())
        return {"ticks": t, "drivers": drivers, "led": led, "ignored": ignored,
                "double_pulse": double, "dir_during_pulse": dirglitch}


class SerialClient:
    """A minimal stop-and-wait client on robot.rig.protocol, for tests of the
    harness itself (the bars run through robot.rig.link)."""

    def __init__(self, port: str) -> None:
        import serial

        self.ser = serial.serial_for_url(port, baudrate=115200, timeout=0.02)
        self.decoder = P.FrameDecoder()
        self.seq = 0
        self.inbox: list[tuple[int, P.Message]] = []

    def close(self) -> None:
        self.ser.close()

    def pump(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while True:
            data = self.ser.read(256)
            for c in self.decoder.feed(data):
                self.inbox.append(P.decode(c))
            if time.monotonic() >= end:
                return

    def request(self, msg: P.Message, timeout: float = 2.0) -> P.Message:
        self.seq = P.next_seq(self.seq)
        seq = self.seq
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.ser.write(P.encode(msg, seq))
            end = time.monotonic() + 0.2
            while time.monotonic() < end:
                self.pump(0.0)
                for i, (s, m) in enumerate(self.inbox):
                    if s == seq and m.TYPE in (0x80, 0x81, 0x82, 0x85):
                        del self.inbox[i]
                        return m
        raise AssertionError(f"no reply to {msg}")

    def wait_for(self, pred, timeout: float = 5.0) -> P.Message:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, (_, m) in enumerate(self.inbox):
                if pred(m):
                    del self.inbox[i]
                    return m
            self.pump(0.01)
        raise AssertionError("timed out waiting for a frame")


FACE_MOTORS = {"U": 0, "R": 1, "F": 5, "D": 3, "L": 4, "B": 2}
"""A motor numbering that differs from face order, with two inverted motors:
the harness must map motors to faces exactly like the host does."""
INVERTED = {"R", "L"}


def write_config(path: Path, *, microsteps: int = 1, max_speed: float = 20.0, acceleration: float = 400.0,
                 start_speed: float = 2.0, settle_ms: int = 3, reply_timeout_s: float = 0.04,
                 overlap_deg: float = 0.0) -> Path:
    """A rig config for the emulated firmware (200 full steps per face turn)."""
    lines = ["[rig]", 'port = "/dev/null"', f"reply_timeout_s = {reply_timeout_s}", "idle_ms = 2000",
             f"overlap_deg = {overlap_deg}", ""]
    for face, motor in FACE_MOTORS.items():
        lines += [f"[motors.{face}]", f"motor = {motor}", "steps_per_rev = 200",
                  f"microsteps = {microsteps}", f"invert = {'true' if face in INVERTED else 'false'}",
                  f"max_speed = {max_speed}", f"acceleration = {acceleration}",
                  f"start_speed = {start_speed}", f"settle_ms = {settle_ms}", ""]
    path.write_text("\n".join(lines))
    return path


def expected_counts(steps) -> tuple[list[int], list[int]]:
    """Steps in + and - direction per motor for planned MotorSteps."""
    plus, minus = [0] * 6, [0] * 6
    for s in steps:
        for m, n in s.parts:
            if n > 0:
                plus[m] += n
            else:
                minus[m] -= n
    return plus, minus


def read_edges(path: Path) -> list[tuple[int, str, int]]:
    out = []
    for line in Path(path).read_text().splitlines():
        c, name, v = line.split()
        out.append((int(c), name, int(v)))
    return out
