"""The generated blocks of the docs and the goals they claim, from the committed results."""
