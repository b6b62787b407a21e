"""The robot: everything that knows there is a rig.

Folders by role, each importing only the ones listed after it:

* ``robot.cli``: the ``cuberobot`` command (parsing and printing only; nothing imports it);
* ``robot.app``: the press-start loop and the dry-run renderer, which compose vision, solver and rig;
* ``robot.sim``: the simulated rig (in-process ``sim://`` ports, the pty rig, the firmware in simavr),
  which plugs into the rig through the same interfaces real hardware uses;
* ``robot.rig``: what runs against real hardware: configuration, motion, timing, protocol, link,
  journal and job. It imports no simulator and no command-line code.
"""
