"""Power cuts on CUBOTino driven from the Pi's own pins (``gpio://`` on
gpiozero's mock pins, issue 49): a run killed with SIGKILL at a random
moment, then `cuberobot resume` in a new process.

Test tooling, not part of the installed package: tests/test_gpio_soak.py
runs a few, ``benchmarks/gpio_soak.py`` the full count. It is the Arduino
kinds' power-cut soak (tests/mechanism_soak.py) for a rig that lives inside
the process that drives its pins: there the rig outlived the killed
command; here it dies with it, its pins let go.

What the pins did is read off the pins themselves: each command runs with
gpiozero's mock pins recording every change of every pin to a file of its
own (appended as it happens, so a kill loses nothing already on the pins),
and the soak replays the servo pins' pulse widths through a virtual
CUBOTino (robot/sim/mechanisms.py) to get the layer turns they made.
Checked: the killed command's pins turned only the plan's layers, in order,
each once; resume never reports a state it cannot know (a rig on the pins
restarts with its command, so it says "state unknown: scan again") and its
pins move nothing; the journal then ends the job so that the next start
scans afresh.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mechanism_soak import planned_turns

from robot.rig.config import Config
from robot.rig.loading import load_config
from robot.rig.mechanisms.commands import servo_numbers
from robot.rig.mechanisms.journal import UNKNOWN, MechanismJournal
from robot.rig.protocol import ServoCommand
from robot.sim.mechanisms import Fault, virtual_mechanism

ROOT = Path(__file__).resolve().parents[1]
PI = ROOT / "config" / "examples" / "cubotino-pi.toml"

RECORDED = """\
import os, sys
from gpiozero import Device
from gpiozero.pins.mock import MockFactory
from robot.sim.gpio_pins import WatchedPin

fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

class RecordedPin(WatchedPin):
    # gpiozero's mock pin, each change written down at once (a logic analyser on the header)
    def _change_state(self, value):
        changed = super()._change_state(value)
        if changed:
            os.write(fd, f"{self.info.name} {float(value or 0)!r} {float(self.frequency or 0)!r}\\n".encode())
        return changed

Device.pin_factory = MockFactory(pin_class=RecordedPin)
from robot.cli.main import main
sys.exit(main(sys.argv[2:]))
"""
"""A cuberobot command on mock pins that record themselves (argv: the record file, then the command)."""


@dataclass
class CutResult:
    outcome: str = ""
    """unknown (resume moved nothing, said so), ended (the job, or the whole
    command, ended before the kill), not-begun (killed before its job was
    journalled)."""
    done_at_kill: int = 0
    plan_turns: int | None = None
    made: list[tuple[int, int]] = field(default_factory=list)
    took_s: float = 0.0
    """How long the command ran, to its end or the kill."""
    failures: list[str] = field(default_factory=list)


def runtime_dir(folder: Path) -> Path:
    """A runtime folder (XDG_RUNTIME_DIR) of ``folder``'s own, for the pins'
    owner files: the locks and the estop socket. Under /tmp with a short
    name made from ``folder``: a Unix socket's path holds at most 107 bytes,
    and a parallel worker's tmp_path with the socket's own path after it
    can be longer (then `cuberobot estop` could not reach the pins)."""
    digest = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:12]
    run = Path(tempfile.gettempdir()) / f"cr-run-{digest}"
    if not run.exists():
        run.mkdir(mode=0o700)
        atexit.register(shutil.rmtree, run, ignore_errors=True)  # gone with the process that made it
    return run


def env_for(folder: Path) -> dict[str, str]:
    """Mock pins, and the pins' owner files (locks, the estop socket) in a folder of the run's own."""
    return {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "XDG_RUNTIME_DIR": str(runtime_dir(folder))}


def recorded(args: list[str], record: Path, folder: Path, **kw: object) -> subprocess.Popen:
    """``cuberobot ARGS`` in a new process on mock pins that record into ``record``."""
    return subprocess.Popen([sys.executable, "-c", RECORDED, str(record), *args], cwd=ROOT,
                            env=env_for(folder), **kw)  # type: ignore[call-overload]


def widths(cfg: Config, record: Path) -> list[tuple[int, float]]:
    """Every pulse width the servo pins took, ``(servo, us)``, in order (0: no pulses)."""
    numbers = servo_numbers(cfg.rig.kind)
    servo_of = {f"GPIO{sc.pin}": numbers[name] for name, sc in cfg.servos.items()}
    out = []
    for line in record.read_text().splitlines() if record.exists() else []:
        parts = line.split()
        if len(parts) != 3 or parts[0] not in servo_of:
            continue  # another pin (the start button, the light), or a line the kill cut short
        value, freq = float(parts[1]), float(parts[2])
        out.append((servo_of[parts[0]], value / freq * 1e6 if freq and value else 0.0))
    return out


def layer_turns(cfg: Config, record: Path) -> tuple[list[tuple[int, int]], str | None]:
    """The layer turns the recorded pulses made on a virtual CUBOTino (from
    its rest, as the command's own began), and the fault they drove it into."""
    mech = virtual_mechanism(cfg, "U" * 9 + "R" * 9 + "F" * 9 + "D" * 9 + "L" * 9 + "B" * 9)
    try:
        for servo, us in widths(cfg, record):
            if 300 <= us <= 3000:  # no pulses: the servo holds nothing, the part stays
                mech.execute(ServoCommand(0, servo, int(round(us)), 0))
    except Fault as e:
        return list(mech.turns), str(e)
    return list(mech.turns), None


def _sent(journal: Path) -> int:
    """How many robot moves the journal says were sent."""
    return journal.read_text().count('"type":"sent"') if journal.exists() else 0


def _kill(p: subprocess.Popen) -> bool:
    """SIGKILL, unless ``p`` has ended already (False)."""
    if p.poll() is not None:
        return False
    p.send_signal(signal.SIGKILL)
    p.wait(10)
    return True


def _kill_at_move(p: subprocess.Popen, journal: Path, at_move: int, delay_s: float, limit_s: float) -> bool:
    """Once the journal says robot move ``at_move`` (0: the job's first) was
    sent, waits ``delay_s`` more and kills ``p``. False: ``p`` ended first."""
    deadline = time.monotonic() + limit_s
    while _sent(journal) <= at_move:
        if p.poll() is not None:
            return False
        if time.monotonic() > deadline:
            p.kill()
            raise TimeoutError(f"the job's robot move {at_move + 1} was not sent within {limit_s:.0f} s")
        time.sleep(0.01)
    try:
        p.wait(delay_s)
        return False
    except subprocess.TimeoutExpired:
        return _kill(p)


def power_cut_run(k: int, folder: Path, command: list[str], *, kill_after_s: float | None = None,
                  at_move: int | None = None, delay_s: float = 0.0, limit_s: float = 300.0) -> CutResult:
    """One run of ``command`` (a cuberobot command line; the set-up, its
    state folder ``folder/state``, added) killed with SIGKILL ``kill_after_s``
    after it began (inf: let it end, to time it), or ``delay_s`` after the
    journal says its robot move ``at_move`` was sent; then `resume` in a
    new process, both on recording pins."""
    if (kill_after_s is None) == (at_move is None):
        raise ValueError("give kill_after_s or at_move")
    res = CutResult()
    t0 = time.monotonic()
    cfg = load_config(PI)
    state = folder / "state"
    tag = (f"run {k} (kill after {kill_after_s:.2f} s)" if kill_after_s is not None
           else f"run {k} (kill {delay_s:.2f} s after robot move {at_move} was sent)")
    run_record, resume_record = folder / "run.pins", folder / "resume.pins"
    p = recorded([*command, "--config", str(PI), "--state-dir", str(state)], run_record, folder,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if at_move is not None:
        killed = _kill_at_move(p, MechanismJournal(state).path, at_move, delay_s, limit_s)
    else:
        try:
            p.wait(None if kill_after_s == float("inf") else kill_after_s)
            killed = False
        except subprocess.TimeoutExpired:
            killed = _kill(p)
    res.took_s = time.monotonic() - t0
    j = MechanismJournal(state).last()
    res.done_at_kill = j.done if j else 0
    r = recorded(["resume", "--config", str(PI), "--state-dir", str(state)], resume_record, folder,
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = r.communicate(timeout=120)
    plan = planned_turns(PI.stem, state)  # the Arduino kinds' soak's reading of the journal's plan
    res.plan_turns = None if plan is None else len(plan)
    res.made, fault = layer_turns(cfg, run_record)
    if "Traceback" in err:
        res.failures.append(f"{tag}: traceback: {err.strip().splitlines()[-1]}")
    if fault is not None:
        res.failures.append(f"{tag}: the pins drove the rig into a fault: {fault}")
    moved = [w for _, w in widths(cfg, resume_record) if w]
    if moved:
        res.failures.append(f"{tag}: resume's pins pulsed {len(moved)} times")
    if plan is None:
        res.outcome = "not-begun"
        if res.made:
            res.failures.append(f"{tag}: the pins turned layers {res.made} with no job in the journal")
        if r.returncode != 0 or "nothing to resume" not in out:
            res.failures.append(f"{tag}: no job was journalled, and resume said: {out}{err}")
        return res
    if res.made != plan[:len(res.made)]:
        res.failures.append(f"{tag}: the pins turned {res.made}, the plan {plan}: a layer turned that the "
                            "plan does not turn there")
    if not killed and p.returncode != 0:
        res.failures.append(f"{tag}: the command failed with exit status {p.returncode} before the kill")
    if not killed or (j is not None and j.end is not None):  # the job had ended (the kill: in the last scan)
        res.outcome = "ended"
        if res.made != plan or r.returncode != 0 or "nothing to resume" not in out:
            res.failures.append(f"{tag}: the job ended before the kill with {len(res.made)} of "
                                f"{len(plan)} layer turns made, and resume said: {out}{err}")
        return res
    res.outcome = "unknown"
    if r.returncode == 0:
        res.failures.append(f"{tag}: resume said it carried on, on a rig that restarted: {out.strip()}")
    elif UNKNOWN not in err or "Nothing was moved" not in err:
        res.failures.append(f"{tag}: resume failed without saying {UNKNOWN!r}: {err.strip()}")
    last = MechanismJournal(state).last()
    if last is None or last.end != UNKNOWN:
        res.failures.append(f"{tag}: the journal does not end the job {UNKNOWN!r}")
    return res
