"""Rigs that move the cube, not only its faces: the flipper-and-turntable and
the two-gripper kinds (``[rig] kind``), their rules and timing, and the
planner that turns a face-turn solution into their moves.

The six-motor rig is planned in robot/rig/motion.py; nothing here changes it.
"""

from .base import Action, ImpossibleMove, Mechanism, Outcome, State
from .orientation import HOME, HeldCube, Orientation, all_orientations
from .planner import MechanismPlan, apply_to_cube, cheapest, mechanism_for, park, parking, plan, replay

__all__ = ["Action", "HOME", "HeldCube", "ImpossibleMove", "Mechanism", "MechanismPlan", "Orientation",
           "Outcome", "State", "all_orientations", "apply_to_cube", "cheapest", "mechanism_for", "park",
           "parking", "plan", "replay"]
