"""Exporting kbert models: SavedModel, TF Serving signatures and TF Hub."""

from kbert.export.saved_model_export import (
    TASKS,
    export_saved_model,
    infer_task,
    load_exported,
    next_version,
)

__all__ = ["TASKS", "export_saved_model", "infer_task", "load_exported", "next_version"]
