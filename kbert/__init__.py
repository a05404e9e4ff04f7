"""kbert: transfer learning in NLP with Keras 3 and TensorFlow.

What a lab or a script writes is importable from `kbert` itself (`kbert.Encoder`,
`kbert.load_pretrained`, `kbert.fine_tune_classifier`, …; the list is `kbert.__all__`). Each name
is imported from its module on first use, so `import kbert` stays light: the command line answers
`--help` without TensorFlow, and a lab's `quiet_tensorflow()` still runs before TensorFlow starts.

Modules for the whole package: `kbert.startup` (TensorFlow imported quietly),
`kbert.keras_internals` (the only reach-ins to Keras and TensorFlow internals), `kbert.checks`
(argument errors), `kbert.files` and `kbert.partial_directories` (atomic writes),
`kbert.arguments`, `kbert.runs` and `kbert.run_records` (run directories and records). The rest
is split by what a reader looks for:

- `kbert.text`: tokenizing and packing inputs, in tf.data and inside exported graphs.
- `kbert.layers`: numeric building blocks (embeddings, attention, transformer block, heads, CRF,
  adapters, LoRA, prefix and prompt tuning).
- `kbert.models`: the encoder and its configuration presets, task models, pretraining
  objectives, parameter-efficient adaptation, distillation, an encoder-decoder.
- `kbert.checkpoints`: importing pretrained weights (Hugging Face BERT format, no PyTorch),
  saving kbert checkpoints and adapter sets.
- `kbert.data`: dataset readers, tf.data pipelines and the data-directory setting.
- `kbert.train`: fine-tuning entry points, schedules, the fine-tuning optimizer, callbacks,
  distribution strategies, freezing and unfreezing, per-group learning rates.
- `kbert.tasks`: inference per task family (classification, NER, question answering).
- `kbert.metrics`: the scores in numpy (classification, CoNLL entities, SQuAD) and figures.
- `kbert.cli`: the `kbert` command line (fine-tune, evaluate, predict, export, pretrain).
- `kbert.analysis`: contextual-embedding studies (WSD, anisotropy, probes, figures).
- `kbert.export`: TF Serving SavedModels with the tokenizer inside (`export_saved_model`),
  `models.config` and batching files, the TF Hub BERT interface (`export_hub_encoder`,
  `export_hub_preprocessor`).
- `kbert.hub`: TF2 Hub-format SavedModels as fine-tunable Keras 3 layers (`HubLayer`,
  `HubPreprocessor`, `HubEncoder`, `hub_encoder_model`).
- `kbert.serving`: a TF Serving client: `RestClient` (REST predict API), `GrpcClient` (gRPC
  PredictRequest), and `classify`/`tag`/`answer`/`embed` for the exported signatures.
"""

import importlib

__version__ = "0.1.0"

# Each public name and the module it is imported from.
_HOMES = {
    # Encoders, their configuration and pretrained weights.
    "Encoder": "kbert.models",
    "EncoderConfig": "kbert.models",
    "load_pretrained": "kbert.checkpoints",
    "trained_pooling": "kbert.checkpoints",
    "save_pretrained": "kbert.checkpoints",
    "load_hf_bert": "kbert.checkpoints",
    # Text in, model inputs out.
    "BertPreprocessor": "kbert.text",
    "LongTextPreprocessor": "kbert.text",
    "WordPieceTokenizer": "kbert.text",
    # Task models.
    "SequenceClassifier": "kbert.models",
    "TokenClassifier": "kbert.models.token_classifier",
    "SpanClassifier": "kbert.models.span_classifier",
    "CRF": "kbert.layers",
    "QuestionAnswerer": "kbert.models",
    "FeatureClassifier": "kbert.models",
    "MultitaskModel": "kbert.models",
    "CausalLanguageModel": "kbert.models",
    "MaskedLanguageModel": "kbert.models",
    "EncoderDecoder": "kbert.models",
    "TextGenerator": "kbert.models.text_generator",
    "Distiller": "kbert.models",
    # Fine-tuning.
    "TrainingSettings": "kbert.train.training_settings",
    "fine_tune_classifier": "kbert.train.classifier_fine_tuning",
    "fine_tune_ner": "kbert.train.token_task_fine_tuning",
    "fine_tune_question_answerer": "kbert.train.token_task_fine_tuning",
    "fine_tune_on_features": "kbert.train.feature_fine_tuning",
    "build_ner_model": "kbert.tasks.ner",
    "fine_tuning_optimizer": "kbert.train",
    "LearningRateSchedule": "kbert.train",
    # Which weights train, and at what rate.
    "freeze": "kbert.train",
    "GradualUnfreezing": "kbert.train",
    "ChainThaw": "kbert.train",
    "DiscriminativeOptimizer": "kbert.train",
    # Parameter-efficient adaptation.
    "add_lora": "kbert.models",
    "merge_lora": "kbert.models",
    "add_adapters": "kbert.models",
    "add_prefix_tuning": "kbert.models",
    "prompt_tuned_encoder": "kbert.models",
    "save_adapters": "kbert.checkpoints",
    "load_adapters": "kbert.checkpoints",
    # Datasets.
    "load_classification_task": "kbert.data",
    "classification_dataset": "kbert.data",
    "read_conll2003": "kbert.data",
    "load_squad": "kbert.data",
    # Prediction and evaluation.
    "classifier_logits": "kbert.tasks",
    "evaluate_classifier": "kbert.tasks",
    "predict_entities": "kbert.tasks",
    "evaluate_ner": "kbert.tasks",
    "predict_answers": "kbert.tasks",
    "evaluate_question_answerer": "kbert.tasks",
    # Export.
    "export_saved_model": "kbert.export",
    "ExportSettings": "kbert.export",
    "load_exported": "kbert.export",
    "export_hub_encoder": "kbert.export.hub_export",
    "export_hub_preprocessor": "kbert.export.hub_export",
}

__all__ = sorted(_HOMES)


def __getattr__(name):
    """Imports a public name from its module the first time it is read (PEP 562)."""
    if name not in _HOMES:
        raise AttributeError(f"module 'kbert' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOMES))
