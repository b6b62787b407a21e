"""The guard a command camera's program runs under (vision/stream.py starts
it; it is not imported):

    python -I -S camera_guard.py PARENT_PID PROGRAM [ARGUMENTS...]

It is started in a session of its own, so it leads a process group of its
own; it starts PROGRAM in that group, and ends the whole group (the
program and whatever it started: ``sh -c "(prog) & sleep 3600"`` leaves a
shell, a subshell and a sleep) when

- it is told to: SIGTERM, SIGHUP or SIGINT (the command releasing the
  camera sends SIGTERM to the group, this guard included);
- the command that started it dies, however it dies, kill -9 included: on
  Linux the kernel sends it SIGTERM then (``PR_SET_PDEATHSIG``, set here
  with prctl through ctypes), elsewhere it looks at its parent's pid twice
  a second;
- the program ends by itself: what it left running is sent SIGTERM (the
  command's release sends the group SIGKILL after that).

Told, or with the command gone, it gives the program :data:`GRACE_S` to end
on SIGTERM (rpicam-vid stops its camera cleanly), then SIGKILLs the group,
this guard with it. Otherwise it ends with the program's exit status (a
signal N as 128 + N), which the command reports. The signals it waits for
are blocked from its first line and taken with sigwaitinfo, so none is
lost before the wait and no handler runs between two of its steps.

Why a process between the command and the program, rather than prctl in
a ``preexec_fn``: the command starts cameras from several threads at once
(one a camera, vision/scanning.py) and the panel runs beside its server's
threads, and a preexec_fn runs Python between fork and exec, which may
deadlock on a lock another thread held at the fork (Python's documentation
says it is not safe with threads). And PR_SET_PDEATHSIG reaches only the
process that set it: the program's own children (the shell's subshell and
sleep) would outlive a killed command. A guard that leads the group ends
them all, and costs one small interpreter (about 10 MB, 20 ms to start)
next to a camera program.

Note that Linux sends PR_SET_PDEATHSIG when the *thread* that started the
guard ends: vision/stream.py's cameras are opened and released by one
thread (vision/capture.py, vision/scanning.py), which outlives them.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

GRACE_S = 1.0
"""The program's time to end after SIGTERM before the group is SIGKILLed."""
PR_SET_PDEATHSIG = 1
"""From <linux/prctl.h>."""
TOLD = {signal.SIGTERM, signal.SIGHUP, signal.SIGINT}
WAITED = TOLD | {signal.SIGCHLD}
"""Blocked from the start and waited for (sigwaitinfo): no handler runs at
an awkward moment, and none is missed before the wait begins."""
RESTORED = WAITED | {signal.SIGPIPE, signal.SIGXFSZ}
"""Back to their defaults in the program (Python ignores SIGPIPE and
SIGXFSZ; a program expects them as a shell would leave them)."""


def _watch_parent(parent: int) -> bool:
    """Have this guard sent SIGTERM when ``parent`` dies; False when it
    already has (then nothing is started)."""
    asked = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            asked = libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0
        except (OSError, AttributeError):
            asked = False
    if not asked:
        def look() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=look, daemon=True).start()  # SIGTERM blocked in it too: the wait gets it
    return os.getppid() == parent  # it may have died before prctl: then no signal comes


def _wait(pid: int, seconds: float) -> int | None:
    """The program's exit status once it ends within ``seconds``, else None."""
    deadline = time.monotonic() + seconds
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def _group(sig: int) -> None:
    try:
        os.killpg(0, sig)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not argv[1].isdigit():
        print("usage: camera_guard.py PARENT_PID PROGRAM [ARGUMENTS...]", file=sys.stderr)
        return 2
    parent, program = int(argv[1]), argv[2:]
    signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
    if os.getpgrp() != os.getpid():  # started without a session of its own: the group it ends must be its own
        os.setpgid(0, 0)
    code: int | None = None
    if not _watch_parent(parent):
        _group(signal.SIGKILL)
        return 0
    try:
        child = os.posix_spawn(program[0], program, os.environ, setsigmask=(), setsigdef=tuple(RESTORED))
    except OSError as e:
        print(f"cannot start {program[0]}: {e.strerror or e}", file=sys.stderr)
        return 127
    told = False
    while code is None and not told:
        got = signal.sigwaitinfo(WAITED)
        if got.si_signo == signal.SIGCHLD:
            done, status = os.waitpid(child, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
        else:
            told = True
    _group(signal.SIGTERM)  # the program (when still running) and what it left behind; blocked here
    if code is None:
        code = _wait(child, GRACE_S)
    if told or code is None or os.getppid() != parent:
        _group(signal.SIGKILL)  # whatever is left, this guard with it
    return 0 if code is None else code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
