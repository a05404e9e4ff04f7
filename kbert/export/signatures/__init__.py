"""The serving signatures of `kbert.export.export_saved_model`, one builder per task.

- `serving_graph`: `ServingGraph`, what every signature of one export shares (the model, its
  in-graph preprocessors, the `vocab.txt` / `labels.txt` tables, the export archive).
- `classification`: `classify` (texts or text pairs → labels, probabilities).
- `tagging`: `tag` (texts → a tag per word, entity spans).
- `question_answering`: `answer` (question, context → answer span).
- `embedding`: `embed` (texts → [CLS] and mean embeddings), registered for every model.
- `token_ids`: `token_ids` (packed ids → raw model outputs), registered for every model.

Each builder is a function of the `ServingGraph` and the signature's input tensors.
"""
