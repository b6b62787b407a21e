"""``sim://NAME?speed=X&seed=N&faults=SPEC&state=FACELETS&protocol=V``: the
virtual rig as a pyserial port, in this process (``protocol`` makes it speak
another protocol version, to test that mismatch).

The same URL opened again reaches the same rig (its cube, queue and clock
carry on), which is what a reconnect after a pulled cable needs, for as long
as somebody holds the rig: an open port, the application's handle on the
simulation (:func:`robot.sim.attach`), a test. The table of rigs holds them
weakly, so a rig nobody holds any more (a finished dry run's) is gone, and
a long-running server does not collect them. ``speed`` is a factor on real
time, or ``max`` to run event by event.
"""

from __future__ import annotations

import contextlib
import threading
import time
import urllib.parse
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

from serial.serialutil import PortNotOpenError, SerialException

from solver import Cube, CubeError, parse_facelets

from ..rig import protocol as P
from ..rig.inprocess_port import InProcessPort
from .virtual_rig import Disconnected, Faults, VirtualRig, make_clock

if TYPE_CHECKING:
    from ..rig.config import Config

_RIGS: weakref.WeakValueDictionary[str, VirtualRig] = weakref.WeakValueDictionary()
_RIGS_LOCK = threading.Lock()
"""Two threads opening one URL at once (a server's rig listener, a test
looking at the rig) must get one rig, not one each."""
_OPTIONS = ("speed", "seed", "faults", "state", "protocol")


MAX_SIM_SEED = 2**32 - 1
"""The largest ``seed=``, the same bound as the command line's ``--seed``."""
MAX_SIM_PROTOCOL = 255
"""``protocol=`` is the version byte HELLO carries."""


def parse_sim_url(url: str) -> tuple[str, dict[str, str]]:
    """``(key, options)``, every option checked here (a port is given in a
    set-up file or on the command line, and a bad option must be refused
    when it is read, in words, not when the rig is first opened); raises
    ValueError with a readable message. ``state=solved`` is the solved cube."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "sim":
        raise ValueError(f"not a sim:// URL: {url!r}")
    opts: dict[str, str] = {}
    for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if k not in _OPTIONS:
            raise ValueError(f"unknown sim:// option {k!r} (known: {', '.join(_OPTIONS)})")
        if k in opts:
            raise ValueError(f"sim:// option {k!r} is given twice: give it once")
        opts[k] = v
    _check_options(opts)
    return url, opts


def _whole(opts: dict[str, str], key: str, hi: int) -> int | None:
    text = opts.get(key)
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(hi)) or int(text) > hi:
        raise ValueError(f"sim:// option {key}={text!r}: expected a whole number from 0 to {hi}")
    return int(text)


def _check_options(opts: dict[str, str]) -> None:
    """Each option's value, as :func:`rig_for_url` will use it."""
    make_clock(opts.get("speed", "1"))
    _whole(opts, "seed", MAX_SIM_SEED)
    _whole(opts, "protocol", MAX_SIM_PROTOCOL)
    Faults.parse(opts.get("faults"))
    _start_cube(opts)


def _start_cube(opts: dict[str, str]) -> Cube:
    text = opts.get("state")
    if not text or text.strip().lower() == "solved":
        return Cube()
    try:
        return parse_facelets(text)
    except CubeError as e:
        raise ValueError(f"sim:// option state=: {e} (or state=solved)") from None


def sim_url(name: str, speed: str = "max", **opts: str) -> str:
    """A fresh in-process virtual rig's URL (tests, benchmarks, dry-runs)."""
    q = urllib.parse.urlencode({"speed": speed, **opts})
    return f"sim://{name}?{q}"


def rig_for_url(url: str) -> VirtualRig:
    """The rig behind ``url``, created on first use."""
    key, opts = parse_sim_url(url)
    with _RIGS_LOCK:
        rig = _RIGS.get(key)
        if rig is None:
            clock = make_clock(opts.get("speed", "1"))
            seed = _whole(opts, "seed", MAX_SIM_SEED) or 0
            cube = _start_cube(opts)
            version = _whole(opts, "protocol", MAX_SIM_PROTOCOL)
            version = P.PROTOCOL_VERSION if version is None else version
            rig = VirtualRig(clock=clock, faults=Faults.parse(opts.get("faults")), seed=seed, cube=cube,
                             protocol_version=version)
            _RIGS[key] = rig
            if _kept is not None:
                _kept.append(rig)
    return rig


_kept: list[VirtualRig] | None = None


@contextlib.contextmanager
def keeping_rigs() -> Iterator[None]:
    """Within the block, every rig made is held until the block ends, so a
    test (or a benchmark) can look at a rig after its last port has closed."""
    global _kept
    outer, _kept = _kept, []
    try:
        yield
    finally:
        _kept = outer


def live_rigs() -> int:
    """How many virtual rigs somebody still holds (for tests and leaks)."""
    return len(_RIGS)


def forget(url: str | None = None) -> None:
    """Drop one rig (or all): the next open starts a fresh one."""
    with _RIGS_LOCK:
        if url is None:
            _RIGS.clear()
        else:
            _RIGS.pop(url, None)


class Serial(InProcessPort):
    """A pyserial port whose other end is a :class:`VirtualRig`."""

    is_open: bool
    rig: VirtualRig

    def open(self) -> None:
        if self.is_open:
            raise SerialException("Port is already open.")
        try:
            self.rig = rig_for_url(self.port)
        except (ValueError, CubeError) as e:
            raise SerialException(f"could not open {self.port}: {e}") from None
        self.time_scale = self.rig.clock.speed
        self._conn = self.rig.connect()
        self.is_open = True

    def adopt_config(self, config: Config) -> None:
        """The driver's hook: the rig's mechanics follow the configuration
        the driver runs with, unless the rig already has them."""
        self.rig.adopt_config(config)

    def close(self) -> None:
        self.is_open = False
        super().close()

    def _reconfigure_port(self, *args: object) -> None:
        pass

    def _check(self) -> None:
        if not self.is_open:
            raise PortNotOpenError()
        if self._conn.broken:
            raise SerialException("sim: the cable was pulled (simulated disconnect)")

    @property
    def in_waiting(self) -> int:
        self._check()
        self.rig.advance()
        return len(self._conn.to_host)

    def read(self, size: int = 1) -> bytes:
        self._check()
        timeout = self._timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self.rig.advance()
            buf = self._conn.to_host
            if buf:
                with self.rig.lock:
                    data = bytes(buf[:size])
                    del buf[:size]
                return data
            self._check()
            if self.rig.held:  # a test holds the rig: this host waits with it (VirtualRig.hold_after)
                time.sleep(0.005)
                continue
            remaining = 1.0 if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                return b""
            self.rig.clock.wait(self.rig.next_event_time(), min(remaining, 0.05))

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self._check()
        try:
            self._conn.write(bytes(data))
        except Disconnected:
            raise SerialException("sim: the cable was pulled (simulated disconnect)") from None
        return len(data)

    def reset_input_buffer(self) -> None:
        self._check()
        self._conn.to_host.clear()

