"""``python -m cuberobot``: the same as the ``cuberobot`` command."""

from robot.__main__ import run

if __name__ == "__main__":
    run()
