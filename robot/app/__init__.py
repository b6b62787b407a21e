"""The application: the press-start loop and the dry-run renderer, composing
vision, solver and the rig."""
