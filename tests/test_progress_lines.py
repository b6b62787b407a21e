"""The first run's progress on a terminal and in a log (robot/cli/progress.py):
a terminal keeps its one live line, moved by every message; a log (a pipe,
a service's journal) gets a few lines, not one per percent and per
"still working" repeat.

The messages are made by the solver's own BuildProgress, in the order and
at the moments (on a clock the test turns) a real cold build on this
machine made them (29 messages in 39 s, which a log used to take whole),
with the phase-2 table's last stretch drawn out to 10 s of silence, as on
a slower board."""

from __future__ import annotations

import io
import os
from pathlib import Path

from robot.cli.progress import HEARTBEAT_S, ProgressLine
from solver.tables import BuildProgress
from solver.talk import STILL

# (seconds, what happened) in a real cold build: a step began, a step got this far, or the ticker
# repeated the work under way after a silence ("still", seconds since it was said)
BUILD = [(0.7, "start", "move tables"), (2.7, "still", 2), (4.8, "still", 4),
         (6.0, "start", "symmetries of the coordinates"), (8.0, "still", 2), (10.0, "still", 4),
         (12.2, "still", 6), (13.4, "start", "phase-1 pruning table"), (15.4, "still", 2),
         (17.4, "still", 4), (17.7, "part", 0.06), (19.8, "still", 2), (20.7, "part", 0.43),
         (22.8, "still", 2), (24.8, "still", 4), (25.5, "part", 0.97), (25.9, "part", 0.99),
         (26.1, "part", 1.0), (26.1, "start", "small phase-1 tables"),
         (27.4, "start", "small phase-2 tables"),
         (27.6, "start", "phase-2 pruning table"), (29.8, "still", 2), (31.3, "part", 0.02),
         (32.5, "part", 0.08), (34.6, "part", 0.24), (36.6, "still", 2), (38.5, "part", 0.53),
         (40.6, "still", 2), (42.6, "still", 4), (44.6, "still", 6), (46.6, "still", 8),
         (48.6, "still", 10), (49.1, "part", 1.0), (49.5, "finish", None)]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def replay(stream) -> int:
    """Feed BUILD through a ProgressLine on ``stream``, as the solver's ticker would; how many messages."""
    clock = Clock()
    line = ProgressLine(stream, clock=clock)
    said = []

    def report(message):  # as solver/talk.py's Ticker passes a message on and keeps it to repeat
        said.append(message)
        line(message)

    steps = BuildProgress(report, 6, Path("/home/me/.cache/cuberobot"))
    for at, what, arg in BUILD:
        clock.now = at
        if what == "start":
            steps.start(arg)
        elif what == "part":
            steps.part(arg)
        elif what == "still":
            line(f"{said[-1]}{STILL}{arg} s)")
        else:
            steps.finish()
    line.end()
    return len(said) + sum(1 for _, what, _ in BUILD if what == "still")


def test_a_log_gets_each_table_its_quarters_and_a_sign_of_life_not_every_message():
    out = io.StringIO()
    messages = replay(out)
    lines = out.getvalue().splitlines()
    assert messages >= 30 and len(lines) <= 14, "\n".join(lines)
    head = "building the solver's tables (once; cached in /home/me/.cache/cuberobot): "
    starts = [x[len(head):] for x in lines if x.startswith(head) and ":" not in x[len(head):]]
    assert starts == ["step 1 of 6, move tables", "step 2 of 6, symmetries of the coordinates",
                      "step 3 of 6, phase-1 pruning table", "step 4 of 6, small phase-1 tables",
                      "step 5 of 6, small phase-2 tables", "step 6 of 6, phase-2 pruning table"]
    percents = [x.rsplit(": ", 1)[1] for x in lines if x.endswith(" %")]
    assert percents == ["43 %", "97 %", "100 %", "53 %", "100 %"]  # each quarter passed, once
    assert lines[-1].startswith("solver tables built in ")
    # the phase-2 table's long silence after 53 % is still broken in the log, once
    repeats = [x for x in lines if STILL in x]
    assert repeats == [f"{head}step 6 of 6, phase-2 pruning table: 53 %{STILL}10 s)"], repeats
    assert HEARTBEAT_S == 10.0  # the repeat above is the first 10 s after the 53 % line


def test_a_status_said_only_by_its_first_repeat_is_kept_and_a_new_message_always_is():
    """A quiet status (numba compiling: said first as a repeat) is news; so is any other line."""
    out = io.StringIO()
    clock = Clock()
    line = ProgressLine(out, clock=clock)
    line("solver tables built in 39 s")
    clock.now = 1.0
    line(f"compiling the solver's search{STILL}2 s)")
    for t in range(4, 13, 2):
        clock.now = t - 1.0
        line(f"compiling the solver's search{STILL}{t} s)")
    line("waiting for another process to finish building /x/t.tbl")
    assert out.getvalue().splitlines() == [
        "solver tables built in 39 s", f"compiling the solver's search{STILL}2 s)",
        f"compiling the solver's search{STILL}12 s)",
        "waiting for another process to finish building /x/t.tbl"]


def test_a_terminal_keeps_its_live_line_moved_by_every_message():
    """On a real pseudo-terminal (raw: the bytes as written), read as written by a thread of its own."""
    import threading
    import tty as termios_tty

    main, other = os.openpty()
    termios_tty.setraw(other)
    got = bytearray()

    def read():
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the pty's other end is closed: all is read
                return
            if not chunk:
                return
            got.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        with open(other, "w", encoding="utf-8", closefd=False) as tty:
            assert tty.isatty()
            messages = replay(tty)
    finally:
        os.close(other)
        reader.join(timeout=10)
        os.close(main)
    assert not reader.is_alive()
    text = got.decode()
    assert text.count("\r") == messages and text.count("\x1b[K") == messages
    assert text.count("\n") == 1 and text.endswith("\n")  # one line, moved in place, closed at the end
    assert "phase-2 pruning table: 24 %" in text and "(still working: 6 s)" in text
