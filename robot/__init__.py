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

from solver.cachedir import cache_dir

# numba's compiled code is kept with the solver's tables in the user's cache
# folder (numba would write it into the package's own __pycache__). Set before
# anything imports numba; a NUMBA_CACHE_DIR the user set wins.
os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_dir() / "numba"))
