"""One module per group of `cuberobot` subcommands.

Each module defines ``register(subparsers)``, which adds its subcommands and
sets ``func`` (taking the parsed arguments, returning an exit code) on each.
The CLI discovers the modules here, so adding a command touches no other file.
"""
