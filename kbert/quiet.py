"""Importing this module quiets TensorFlow's start-up lines (`kbert.startup.quiet_tensorflow`).

A lab or benchmark imports it before anything that loads TensorFlow, so every import stays at
the top of the file; ruff's isort keeps it there (its own section, after the standard library
and before third-party packages, in pyproject.toml):

    import argparse

    import kbert.quiet  # noqa: F401

    import keras
"""

from kbert.startup import quiet_tensorflow

quiet_tensorflow()
