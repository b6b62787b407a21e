"""The ``cuberobot`` command: argument parsing and printing only."""
