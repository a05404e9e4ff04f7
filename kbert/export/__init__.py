"""Exporting kbert models: SavedModel, TF Serving signatures and TF Hub.

- `saved_model_export`: `export_saved_model`, a TF Serving SavedModel with the tokenizer in the
  graph; what to export is an `ExportSettings` (`export_settings`), each task's signature is
  built under `signatures/`, in-graph input checks are in `graph_inputs`, and
  `saved_model_files` writes and loads the version directories (and reads the settings an
  export records, `read_export_settings`).
- `model_in_dtype`: the copy of a model that a bfloat16 export (`ExportSettings(dtype=...)`)
  runs, its weights unchanged.
- `warmup_requests`: TF Serving's warm-up file of an export with small batches through XLA
  (`ExportSettings(xla_rows=...)`), written by the export and read back by
  `read_warmup_requests` for a loader that is not TF Serving.
- `text_to_text_export`: the `generate` signature of an encoder-decoder.
- `dynamic_padding`, `graph_decoding`: batches cut to their longest row; BIO and answer
  decoding in the graph.
- `models_config`: TF Serving's `models.config` and batching files.
- `hub_export`: the TF Hub BERT interface (`export_hub_encoder`, `export_hub_preprocessor`).

The TF Serving client is `kbert.serving`; TF Hub modules as Keras 3 layers are `kbert.hub`.
"""

from kbert.export.export_settings import TASKS, ExportSettings, infer_task
from kbert.export.saved_model_export import export_saved_model
from kbert.export.saved_model_files import load_exported, next_version, read_export_settings
from kbert.export.warmup_requests import read_warmup_requests

__all__ = [
    "TASKS",
    "ExportSettings",
    "export_saved_model",
    "infer_task",
    "load_exported",
    "next_version",
    "read_export_settings",
    "read_warmup_requests",
]
