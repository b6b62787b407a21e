"""What runs against a real rig: configuration, motion planning and timing, the
serial protocol and link, the journal and the job that turns the faces.

Nothing here imports the simulation or the command line: a simulated rig is a
pyserial port like any other (see ``robot.sim``).
"""
