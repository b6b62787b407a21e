"""The flipper and two-gripper mechanisms as the example-free default config
builds them, shared by the mechanism tests."""

from __future__ import annotations

from robot.rig.config import parse_config
from robot.rig.mechanisms import Mechanism, mechanism_for

KINDS = ("flipper", "two-gripper")


def mech(kind: str) -> Mechanism:
    """A fresh mechanism of ``kind`` with the default timing."""
    m = mechanism_for(parse_config(f'[rig]\nkind = "{kind}"\n'))
    assert m is not None
    return m


MECHS = {k: mech(k) for k in KINDS}
