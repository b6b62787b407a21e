"""The application: configuration, motion, the rig link, and the `cuberobot` command."""
