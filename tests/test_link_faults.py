"""Fault injection: 100 solves through a link that corrupts and drops bytes,
with pulled cables and firmware resets in some of them (issue 5's bar)."""

import dataclasses

import soak

from robot.rig.loading import load_config


def faults_for(k: int) -> str:
    spec = "drop:0.01,corrupt:0.01"
    if k % 10 == 3:
        spec += f",disconnect:{300 + 29 * k}"
    if k % 10 == 7:
        spec += f",reset:{0.5 + 0.02 * k:.2f}"  # within a 12-move job (about 1.5 s of turning)
    if k % 25 == 11:
        spec += f",disconnect:{500 + k},reset:{1.5 + 0.01 * k:.2f}"
    return spec


def test_100_faulty_solves_end_solved_with_a_truthful_journal(tmp_path):
    cfg = load_config()
    cfg = dataclasses.replace(cfg, rig=dataclasses.replace(cfg.rig, reply_timeout_s=0.004))
    result = soak.soak(100, cfg, tmp_path, faults_for=faults_for, scramble_len=12)
    assert result.failures == []
    assert result.solves == 100
    # The faults really happened and were really handled.
    assert result.retransmissions > 100
    assert result.resumes >= 5
    assert result.rescans >= 5
