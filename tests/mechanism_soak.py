"""Power cuts on a flipper or two-gripper job, across processes (issue 26).

Test tooling, not part of the installed package: used by the slow test
(tests/test_mechanism_link.py) and ``benchmarks/mechanisms.py --power-cut``.
Each run starts a rig process (``cuberobot sim-rig`` on a pty, the cube kept
in a view file for the simulated camera), runs ``cuberobot start
--headless`` against it, kills that with SIGKILL at a random moment, then
runs ``cuberobot resume`` in a new process. Checked against the rig's own
record of its layer turns: never a layer turned that the plan does not
turn there (so never one twice), never a state reported that the rig is not
in: either the job finishes solved, or resume says "state unknown: scan
again" and the rig moves nothing.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from robot.rig.loading import load_config
from robot.rig.mechanisms import HeldCube, mechanism_for
from robot.rig.mechanisms.journal import UNKNOWN, MechanismJournal
from robot.sim.pty_rig import SimRigProcess

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class CutResult:
    outcome: str = ""
    """finished (resume made the rest), unknown (resume moved nothing), ended
    (the job had ended before the kill), not-begun (killed while scanning or
    solving: no job in the journal, no layer turned)."""
    done_at_kill: int = 0
    moves: int = 0
    start_s: float | None = None
    """How long `cuberobot start` ran when it ended before the kill (None: killed)."""
    failures: list[str] = field(default_factory=list)


def planned_turns(kind: str, state_dir: Path) -> list[tuple[int, int]] | None:
    """The layer turns of the journal's job, in order (None: no job)."""
    cfg = load_config(ROOT / "config" / "examples" / f"{kind}.toml")
    m = mechanism_for(cfg)
    assert m is not None
    j = MechanismJournal(state_dir)
    path = j.path
    if not path.exists():
        return None
    first = json.loads(path.read_text().splitlines()[0])
    from robot.rig.mechanisms.base import Action, state_from_json

    state = state_from_json(first["state"])
    turns = []
    for a in first["actions"]:
        out = m.apply(state, Action.parse(a))
        if out.turn is not None:
            turns.append(out.turn)
        state = out.after
    return turns


def _wait_idle(sim: SimRigProcess, quiet_s: float = 0.6, limit_s: float = 20.0) -> dict:
    """The rig's counts once they stop changing (its queue run out)."""
    last = sim.counts()
    since = time.monotonic()
    end = since + limit_s
    while time.monotonic() < end:
        time.sleep(0.1)
        now = sim.counts()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            break
    return last


def power_cut_run(kind: str, k: int, state_dir: Path, *, kill_after_s: float, speed: str = "4",
                  firmware: str | None = None) -> CutResult:
    """One run; ``kill_after_s`` = inf lets `start` finish (to time a run)."""
    res = CutResult()
    cfg = ROOT / "config" / "examples" / f"{kind}.toml"
    state_dir.mkdir(parents=True, exist_ok=True)
    view = state_dir / "view"
    tag = f"{kind} run {k} (kill after {kill_after_s:.2f} s)"
    with SimRigProcess("--config", str(cfg), "--scramble", str(k), "--speed", speed, "--sim-view", str(view),
                       firmware=firmware) as sim:
        p = subprocess.Popen([sys.executable, "-m", "robot", "start", "--headless", "--seed", str(k),
                              "--config", str(cfg), "--port", sim.port, "--sim-view", str(view),
                              "--state-dir", str(state_dir / "state")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        t0 = time.monotonic()
        try:
            p.wait(None if kill_after_s == float("inf") else kill_after_s)
            res.start_s = time.monotonic() - t0
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            p.wait(10)
        at_resume = _wait_idle(sim)
        journal = MechanismJournal(state_dir / "state").last()
        res.done_at_kill = journal.done if journal else 0
        r = subprocess.run([sys.executable, "-m", "robot", "resume", "--config", str(cfg), "--port", sim.port,
                            "--state-dir", str(state_dir / "state")],
                           capture_output=True, text=True, timeout=300, cwd=ROOT)
        after = _wait_idle(sim)
        truth = sim.state()
    plan = planned_turns(kind, state_dir / "state")
    made = [tuple(t) for t in after.get("layer_turns", [])]
    res.moves = after["moves"]
    if "Traceback" in r.stderr:
        res.failures.append(f"{tag}: traceback: {r.stderr.strip().splitlines()[-1]}")
    if after.get("fault"):
        res.failures.append(f"{tag}: the rig faulted: {after['fault']}")
    if plan is None:
        res.outcome = "not-begun"
        if made:
            res.failures.append(f"{tag}: layers turned {made} with no job in the journal")
    elif made != plan[:len(made)]:
        res.failures.append(f"{tag}: the rig turned {made}, the plan {plan}: a layer turned that the plan "
                            "does not turn there")
    if r.returncode == 0 and "nothing to resume" in r.stdout:
        if plan is not None:
            res.outcome = "ended"
            if made != plan or not HeldCube(truth).is_solved():
                res.failures.append(f"{tag}: the job had ended, but the rig made {len(made)} of {len(plan)} "
                                    "turns or is not solved")
    elif r.returncode == 0:
        res.outcome = "finished"
        if plan is None or made != plan:
            res.failures.append(f"{tag}: resume finished, the rig turned {made}, the plan {plan}")
        if not HeldCube(truth).is_solved():
            res.failures.append(f"{tag}: resume said done but the rig's cube is not solved: {truth}")
    else:
        res.outcome = "unknown"
        if UNKNOWN not in r.stderr or "Nothing was moved" not in r.stderr:
            res.failures.append(f"{tag}: resume failed without saying {UNKNOWN!r}: {r.stderr.strip()}")
        before = [tuple(t) for t in at_resume.get("layer_turns", [])]
        if after["moves"] != at_resume["moves"] or made != before:
            res.failures.append(f"{tag}: resume said {UNKNOWN!r} after moving the rig")
    return res
