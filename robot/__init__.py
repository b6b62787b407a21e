"""The robot: everything that knows there is a rig.

Folders by role, each importing only the ones listed after it:

* ``robot.cli``: the ``cuberobot`` command (parsing and printing only; nothing imports it);
* ``robot.web``: the web panel and local API (``cuberobot serve``), the other face;
* ``robot.app``: the service layer both faces call: solving, limits, events, the press-start
  engine, dry runs, which compose vision, solver and rig;
* ``robot.sim``: the simulated rig (in-process ``sim://`` ports, the pty rig, the firmware in simavr),
  which plugs into the rig through the same interfaces real hardware uses;
* ``robot.rig``: what runs against real hardware: configuration, motion, timing, protocol, link,
  journal, job and ownership. It imports no simulator and no command-line code.
"""

import os
import sys


def _interrupted_while_starting(kind: type[BaseException], value: BaseException, tb: object) -> None:
    """Ctrl-C while the command is still loading (this package's imports, numpy's
    among them, run before robot.__main__ can catch it): the one line it prints
    at any later moment, not a traceback. Anything else is reported as usual."""
    if issubclass(kind, KeyboardInterrupt):
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C in the exit: no second line
        print("cuberobot: interrupted", file=sys.stderr)
        return
    sys.__excepthook__(kind, value, tb)  # type: ignore[arg-type]


# Only when this package is being started as the command (`cuberobot`, `python -m robot`), and only
# until robot.__main__.run takes over: a program that imports it as a library keeps its own hook.
if (sys.excepthook is sys.__excepthook__ and sys.argv
        and (sys.argv[0] == "-m" or os.path.basename(sys.argv[0]) == "cuberobot")):
    sys.excepthook = _interrupted_while_starting

from solver.cachedir import cache_dir  # noqa: E402 - after the hook: it loads numpy

# numba's compiled code is kept with the solver's tables in the user's cache
# folder (numba would write it into the package's own __pycache__). Set before
# anything imports numba; a NUMBA_CACHE_DIR the user set wins.
os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_dir() / "numba"))
