"""kill -9 on CUBOTino driven from the Pi's own pins, then resume in a new
process (issue 49), on gpiozero's mock pins that record every change
(tests/gpio_soak.py): never a layer turned that the plan does not turn
there (so never one twice), never a state reported that the rig is not in.

Each kill falls where the journal says a random robot move of the job was
sent, a random moment later (mid-move or just after it), with several of
the job's moves still to come; ``python benchmarks/gpio_soak.py`` kills
`start --headless` runs at random moments of a whole run, at full count."""

import random

import gpio_soak
import soak

MOVES = "R U R' U'"
"""A dry run of 11 robot moves: at speed 2 about 3 s of the job, ending 4 moves after the last kill point."""


def test_kill_9_at_random_moments_of_a_job_on_the_pins_then_resume(tmp_path):
    rng = random.Random(49)
    n = soak.sized(20, suite=3)
    for k in range(1, n + 1):
        at_move, delay_s = rng.randrange(0, 7), rng.uniform(0.0, 0.3)
        r = gpio_soak.power_cut_run(k, tmp_path / str(k), ["dry-run", MOVES, "--port", "gpio://?speed=2"],
                                    at_move=at_move, delay_s=delay_s, limit_s=120)
        assert not r.failures, r.failures
        # killed inside the job: resume said "state unknown", its pins took no pulse, and the killed
        # command's pins had made the plan's first layer turns and no other
        assert r.outcome == "unknown" and r.plan_turns == 4 and r.done_at_kill >= at_move, r
