"""The flipper and two-gripper mechanisms as the default config builds them,
and a flipper built as CUBOTino is (its example config), shared by the
mechanism tests."""

from __future__ import annotations

from pathlib import Path

from robot.rig.config import Config, parse_config
from robot.rig.mechanisms import HeldCube, Mechanism, mechanism_for
from robot.rig.mechanisms.orientation import HOME, parse, rotate

KINDS = ("flipper", "two-gripper")
RIGS = ("flipper", "cubotino", "two-gripper")
"""The kinds, and a flipper built as CUBOTino is, whose cover flips the cube
(config/examples/cubotino.toml: no flipper servo, flips from either cover
position)."""
EXAMPLES = Path(__file__).resolve().parents[1] / "config" / "examples"


def rig_config(rig: str) -> Config:
    """The config of one of :data:`RIGS`: the default timing, or the example's."""
    if rig == "cubotino":
        return parse_config((EXAMPLES / "cubotino.toml").read_text())
    return parse_config(f'[rig]\nkind = "{rig}"\n')


def mech(rig: str) -> Mechanism:
    """A fresh mechanism of one of :data:`RIGS`."""
    m = mechanism_for(rig_config(rig))
    assert m is not None
    return m


MECHS = {k: mech(k) for k in RIGS}


def as_held(facelets: str, held) -> str:
    """A cube's stickers in the rig's frame when the rig holds it in
    ``held`` (an orientation or its name, ``FRDBLU``): turned whole from
    home by whole-cube turns found by search."""
    held = parse(held) if isinstance(held, str) else held
    paths = {HOME: []}
    todo = [HOME]
    while held not in paths:
        o = todo.pop(0)
        for slot in range(3):
            n = rotate(o, slot, 1)
            if n not in paths:
                paths[n] = [*paths[o], slot]
                todo.append(n)
    cube = HeldCube(facelets)
    for slot in paths[held]:
        cube.rotate(slot, 1)
    return cube.stickers


def interrupt_in_the_moves(cmd: list[str], state_dir, port: str, cfg) -> tuple[int, str, str, bool]:
    """Run ``cmd`` (a `cuberobot` command on the rig at ``port``), press
    Ctrl-C once its journal in ``state_dir`` has two robot moves done, and
    return its exit status, output, errors and whether the rig then says its
    emergency stop is latched."""
    import signal
    import subprocess
    import time
    from pathlib import Path

    from robot.rig.link import Link
    from robot.rig.mechanisms.journal import MechanismJournal

    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=Path(__file__).resolve().parents[1])
    try:
        deadline = time.monotonic() + 120
        while (job := MechanismJournal(state_dir).last()) is None or job.done < 2:
            assert time.monotonic() < deadline and p.poll() is None, "the command did not reach its moves"
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    with Link(cfg, port=port, kind=cfg.rig.kind) as link:
        link.connect()
        latched = link.status().estop
    return p.returncode, out, err, latched
