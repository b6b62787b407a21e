"""Power cuts on a flipper or two-gripper job, across processes (issue 26),
and `start` on a faulty line or cube after cube on one rig.

Test tooling, not part of the installed package: used by
tests/test_mechanism_link.py and tests/test_mechanism_link_faults.py, which
run a few, and by ``benchmarks/mechanisms.py --power-cut N``,
``--line-faults N`` and ``--one-rig N``, which run the full counts.
Each power-cut run starts a rig process (``cuberobot sim-rig`` on a pty, the
cube kept in a view file for the simulated camera), runs ``cuberobot start
--headless`` against it, kills that with SIGKILL, then runs ``cuberobot
resume`` in a new process. The kill comes either at a moment on the clock
(anywhere in a run: in the scan, the solve, the job or the confirmation)
or at a point of the job that the rig itself reports: once it has made a
given part of the job's layer turns (polled from its counts), so that the
kill falls inside the job by construction, on a quiet or a busy machine.
Checked against the rig's own record of its layer turns: never a layer
turned that the plan does not turn there (so never one twice), never a
state reported that the rig is not in: either the job finishes solved, or
resume says "state unknown: scan again" and the rig moves nothing.
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
    turns_at_kill: int | None = None
    """With ``kill_at``: the layer turns the rig reported made when the kill was sent."""
    plan_turns: int | None = None
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


LEFT_AFTER_KILL = 2
"""A kill at a part of the job comes at least this many layer turns before
its last one (each several robot moves away), however late the part."""


def turn_to_kill_at(part: float, planned: int) -> int:
    """The layer turn after which a kill at ``part`` (0 to 1) of a job of
    ``planned`` layer turns comes: at least the first, and at least
    LEFT_AFTER_KILL before the last."""
    return max(1, min(round(part * planned), planned - LEFT_AFTER_KILL))


def _kill_at_turn(p: subprocess.Popen, sim: SimRigProcess, kind: str, state: Path, part: float,
                  res: CutResult) -> bool:
    """Polls the rig's own count of the layer turns it has made; once the
    job (journalled before its first move) has its part made, kills
    ``p`` with SIGKILL. False: ``p`` ended first."""
    target = None
    while p.poll() is None:
        made = len(sim.counts().get("layer_turns") or [])
        if made and target is None:
            plan = planned_turns(kind, state)  # a layer has turned: the job is in the journal
            if plan is not None:
                res.plan_turns = len(plan)
                target = turn_to_kill_at(part, len(plan))
        if target is not None and made >= target:
            p.send_signal(signal.SIGKILL)
            p.wait(10)
            res.turns_at_kill = made
            return True
        time.sleep(0.01)
    return False


def power_cut_run(kind: str, k: int, state_dir: Path, *, kill_after_s: float | None = None,
                  kill_at: float | None = None, speed: str = "4", firmware: str | None = None) -> CutResult:
    """One run, killed ``kill_after_s`` seconds after `start` began (inf:
    let it finish, to time a run), or with ``kill_at`` (a part of the job,
    0 to 1) once the rig reports that part of the job's layer turns made
    (turn_to_kill_at)."""
    if (kill_after_s is None) == (kill_at is None):
        raise ValueError("give kill_after_s or kill_at")
    res = CutResult()
    cfg = ROOT / "config" / "examples" / f"{kind}.toml"
    state_dir.mkdir(parents=True, exist_ok=True)
    view = state_dir / "view"
    tag = (f"{kind} run {k} (kill after {kill_after_s:.2f} s)" if kill_after_s is not None
           else f"{kind} run {k} (kill at {kill_at:.2f} of the job)")
    with SimRigProcess("--config", str(cfg), "--scramble", str(k), "--speed", speed, "--sim-view", str(view),
                       firmware=firmware) as sim:
        p = subprocess.Popen([sys.executable, "-m", "robot", "start", "--headless", "--seed", str(k),
                              "--config", str(cfg), "--port", sim.port, "--sim-view", str(view),
                              "--state-dir", str(state_dir / "state")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        t0 = time.monotonic()
        if kill_at is not None:
            if not _kill_at_turn(p, sim, kind, state_dir / "state", kill_at, res):
                res.start_s = time.monotonic() - t0
        else:
            try:
                p.wait(None if kill_after_s == float("inf") else kill_after_s)
                res.start_s = time.monotonic() - t0
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait(10)
        if kill_at is not None:
            tag += f", {res.turns_at_kill} of {res.plan_turns} layer turns made at the kill"
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


# ---------------------------------------------------------------- a faulty line, and cube after cube

LINE_FAULTS = "drop:0.02,corrupt:0.02"
"""The line of the full soak (``benchmarks/mechanisms.py --line-faults 5``):
2 % of the bytes dropped and 2 % damaged, each way. A lost DONE costs the
host its wait for the move (1.5 x its planned time), so a run takes about
30 s on this line where it takes 5 s on a clean one."""
LINE_RUNS = 5
"""Runs a kind of the full soak on that line (seeds 5 to 9)."""
SUITE_LINE_FAULTS = "drop:0.005,corrupt:0.005"
"""The suite's line, a quarter as bad: still dozens of frames lost or
damaged in a run, scan, job and confirmation."""


def _rig(kind: str, seed: int, speed: str, faults: str, view: Path) -> SimRigProcess:
    cfg = ROOT / "config" / "examples" / f"{kind}.toml"
    return SimRigProcess("--config", str(cfg), "--scramble", str(seed), "--speed", speed, "--sim-view",
                         str(view), "--faults", faults, "--seed", str(seed))


def _cli(kind: str, sim: SimRigProcess, state: Path, *args: str) -> subprocess.CompletedProcess:
    cfg = ROOT / "config" / "examples" / f"{kind}.toml"
    return subprocess.run([sys.executable, "-m", "robot", *args, "--config", str(cfg), "--port", sim.port,
                           "--state-dir", str(state)], capture_output=True, text=True, cwd=ROOT, timeout=600)


def line_fault_run(kind: str, seed: int, state_dir: Path, faults: str = LINE_FAULTS) -> list[str]:
    """`cuberobot start --headless --seed SEED` against a sim-rig at full
    speed in its own process (its cube scrambled by SEED) whose line has
    ``faults``. What is wrong, in words (nothing: []): the run must end
    confirmed solved, with no traceback and no fault in the rig's parts,
    every layer the journal's plan turns turned once, in its order, the
    rig's cube solved and the job journalled done."""
    from robot.rig.mechanisms.journal import MechanismJournal

    view, state = state_dir / "view", state_dir / "state"
    state_dir.mkdir(parents=True, exist_ok=True)
    tag = f"{kind}, seed {seed}, {faults}"
    with _rig(kind, seed, "max", faults, view) as sim:
        r = _cli(kind, sim, state, "start", "--headless", "--seed", str(seed), "--sim-view", str(view))
        counts = sim.counts()
        truth = sim.state()
    failures = []
    if r.returncode != 0 or "confirmed solved" not in r.stdout:
        failures.append(f"{tag}: exit {r.returncode}: {r.stdout[-1500:]} {r.stderr[-2000:]}")
    if "Traceback" in r.stderr:
        failures.append(f"{tag}: a traceback: {r.stderr[-2000:]}")
    if counts["fault"] is not None:
        failures.append(f"{tag}: the rig's parts faulted: {counts}")
    made = [tuple(t) for t in counts["layer_turns"]]
    plan = planned_turns(kind, state)
    if made != plan:  # every layer the plan turns, once, in its order
        failures.append(f"{tag}: the rig turned {made}, the plan {plan}")
    if not HeldCube(truth).is_solved():
        failures.append(f"{tag}: the rig's cube is not solved: {truth}")
    job = MechanismJournal(state).last()
    if job is None or job.end != "done" or job.done != len(job.actions):
        failures.append(f"{tag}: the journal's job did not end done: {job}")
    return failures


def one_rig_runs(kind: str, seeds: list[int], state_dir: Path) -> list[str]:
    """A maker's evening: `cuberobot start` on one rig (a sim-rig at full
    speed, its cube scrambled by the first seed), then for each further
    seed that seed's cube put in as it comes and `start` again. Each run
    must end confirmed solved with no fault in the parts (a run that left
    a two-gripper's jaws across made the next one jam). What is wrong, in
    words (nothing: [])."""
    from solver import random_cube

    view, state = state_dir / "view", state_dir / "state"
    state_dir.mkdir(parents=True, exist_ok=True)
    failures = []
    with _rig(kind, seeds[0], "max", "", view) as sim:
        for k, seed in enumerate(seeds):
            if k:
                sim.set_state(random_cube(seed).to_facelets())  # the next cube, put in as it comes
            r = _cli(kind, sim, state, "start", "--headless", "--seed", str(seed), "--sim-view", str(view))
            if r.returncode != 0 or "confirmed solved" not in r.stdout:
                failures.append(f"{kind} run {k} (seed {seed}): exit {r.returncode}: {r.stdout[-1500:]} "
                                f"{r.stderr[-1500:]}")
                break
            if sim.counts()["fault"] is not None or not HeldCube(sim.state()).is_solved():
                failures.append(f"{kind} run {k} (seed {seed}): {sim.counts()}, cube {sim.state()}")
                break
    return failures
