"""The names `import kbert` offers (`kbert.__all__`): exactly these, each the object its module
defines, imported only when first read."""

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kbert

ROOT = Path(__file__).resolve().parents[1]

# Each public name and the module that defines it (`kbert.export` for the SavedModel export,
# whose module may change while the package keeps the name).
EXPECTED = {
    "BertPreprocessor": "kbert.text.preprocessor",
    "CRF": "kbert.layers.crf",
    "CausalLanguageModel": "kbert.models.causal_language_model",
    "ChainThaw": "kbert.train.unfreezing",
    "DiscriminativeOptimizer": "kbert.train.discriminative_learning_rates",
    "Distiller": "kbert.models.distiller",
    "Encoder": "kbert.models.encoder",
    "EncoderConfig": "kbert.models.encoder_config",
    "EncoderDecoder": "kbert.models.encoder_decoder",
    "FeatureClassifier": "kbert.models.feature_classifier",
    "GradualUnfreezing": "kbert.train.unfreezing",
    "LearningRateSchedule": "kbert.train.schedules",
    "LongTextPreprocessor": "kbert.text.long_text",
    "MaskedLanguageModel": "kbert.models.masked_language_model",
    "MultitaskModel": "kbert.models.multitask_model",
    "QuestionAnswerer": "kbert.models.question_answerer",
    "SequenceClassifier": "kbert.models.sequence_classifier",
    "SpanClassifier": "kbert.models.span_classifier",
    "TextGenerator": "kbert.models.text_generator",
    "TokenClassifier": "kbert.models.token_classifier",
    "WordPieceTokenizer": "kbert.text.wordpiece_tokenizer",
    "add_adapters": "kbert.models.peft",
    "add_lora": "kbert.models.peft",
    "add_prefix_tuning": "kbert.models.peft",
    "build_ner_model": "kbert.tasks.ner",
    "classification_dataset": "kbert.data.classification_dataset",
    "classifier_logits": "kbert.tasks.classification",
    "evaluate_classifier": "kbert.tasks.classification",
    "evaluate_ner": "kbert.tasks.ner",
    "evaluate_question_answerer": "kbert.tasks.question_answering",
    "export_hub_encoder": "kbert.export.hub_export",
    "export_hub_preprocessor": "kbert.export.hub_export",
    "export_saved_model": "kbert.export",
    "ExportSettings": "kbert.export",
    "TrainingSettings": "kbert.train.training_settings",
    "fine_tune_classifier": "kbert.train.classifier_fine_tuning",
    "fine_tune_ner": "kbert.train.token_task_fine_tuning",
    "fine_tune_on_features": "kbert.train.feature_fine_tuning",
    "fine_tune_question_answerer": "kbert.train.token_task_fine_tuning",
    "fine_tuning_optimizer": "kbert.train.fine_tuning",
    "freeze": "kbert.train.freezing",
    "load_adapters": "kbert.checkpoints.adapter_files",
    "load_classification_task": "kbert.data.classification_tasks",
    "load_exported": "kbert.export",
    "load_hf_bert": "kbert.checkpoints.hf_bert",
    "load_pretrained": "kbert.checkpoints.pretrained",
    "trained_pooling": "kbert.checkpoints.trained_pooling",
    "load_squad": "kbert.data.squad",
    "merge_lora": "kbert.models.peft",
    "predict_answers": "kbert.tasks.question_answering",
    "predict_entities": "kbert.tasks.ner",
    "prompt_tuned_encoder": "kbert.models.peft",
    "read_conll2003": "kbert.data.conll2003",
    "save_adapters": "kbert.checkpoints.adapter_files",
    "save_pretrained": "kbert.checkpoints.pretrained",
}


def test_the_public_names_are_exactly_these():
    assert kbert.__all__ == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_public_name_is_the_object_its_module_defines(name):
    assert getattr(kbert, name) is getattr(importlib.import_module(EXPECTED[name]), name)
    assert name in dir(kbert)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Encoderr'"):
        kbert.Encoderr  # noqa: B018 (the read is the test)


def test_star_import_gives_every_public_name():
    namespace = {}
    exec("from kbert import *", namespace)
    assert sorted(set(namespace) - {"__builtins__"}) == sorted(EXPECTED)


def test_import_kbert_imports_no_tensorflow():
    # The command line answers --help without TensorFlow, and quiet_tensorflow() must run first.
    code = "import sys, kbert; print([m for m in ('tensorflow', 'keras') if m in sys.modules])"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


def test_the_package_docstring_lists_every_subpackage_each_of_which_exists():
    subpackages = {f"kbert.{m.name}" for m in pkgutil.iter_modules(kbert.__path__) if m.ispkg}
    listed = set(re.findall(r"^- `(kbert\.\w+)`", kbert.__doc__, re.MULTILINE))
    assert subpackages <= listed, sorted(subpackages - listed)
    for name in listed:
        importlib.import_module(name)
