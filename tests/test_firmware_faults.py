"""Fault injection against the real firmware: solves through a line that drops
and corrupts bytes (1% each), with the board reset mid-solve in some of them.

The host recovers by itself (retransmission, duplicate replies, resume after
a reset, a rescan when a turn may have been cut); the emulated cube, turned
only by the step pulses the firmware really produced, must end solved, and
the journal must tell the truth about every turn it recorded.

The soak itself is tests/soak.py ``firmware_fault_soak``. The suite runs the
first SOLVES of its 100 seeded solves (two resets among them: one early, by
the clock, and one mid-job, where the firmware's count of its moves says);
``python benchmarks/firmware.py --fault-solves 100`` runs all 100, and
CUBEROBOT_SOAK_SCALE=1 runs them here.
"""

from __future__ import annotations

import soak
from fwtools import UNO_ELF, make, write_config

from robot.rig.loading import load_config

SOLVES = soak.sized(soak.FIRMWARE_SOLVES, suite=10, least=8)
"""10 in the suite: solve 2 is reset early, solve 7 mid-job."""


def test_100_solves_through_a_mangling_line_with_resets(tmp_path):
    make("all", "sim")
    cfg = load_config(write_config(tmp_path / "fast.toml", reply_timeout_s=0.01))
    r = soak.firmware_fault_soak(SOLVES, UNO_ELF, cfg, tmp_path)
    print(f"\n{SOLVES} faulty solves in {r['wall_s']:.1f} s: {r}")
    assert r["solves"] == SOLVES and r["resets"] >= 2 and r["mid_job_resets"] >= 1
    # The faults happened and were handled, every reset made a boot, and
    # the firmware latched no stop the host did not send (soak.firmware_fault_bar).
    assert soak.firmware_fault_bar(r) == []
