"""The string choices the `kbert` command line offers, importable without TensorFlow.

`kbert --help` and argument errors must answer in well under two seconds, so building the parser may not
import TensorFlow (which `kbert.data`, `kbert.models` and `kbert.train` do). The library's own
constants stay the source of truth: `tests/cli/choices_test.py` fails when one of these drifts
from the constant it copies.
"""

# kbert.data.CLASSIFICATION_TASKS (keys).
CLASSIFICATION_TASK_NAMES = ("imdb", "mrpc", "rte", "sst2", "trec", "trec-fine")
# User TSV files (`--task files`).
FILES_TASK = "files"
# Token and span tasks, fine-tuned by kbert.cli.token_tasks.
TOKEN_TASKS = ("conll2003", "squad")
# kbert.models.CLASSIFIER_POOLING.
CLASSIFIER_POOLING = ("pooler", "cls", "mean", "max", "last", "concat")
# kbert.tasks.ner.NER_METHODS.
NER_METHODS = ("softmax", "crf", "span")
# kbert.text.LONG_INPUT_STRATEGIES.
LONG_INPUT_STRATEGIES = ("head", "head_tail", "window_mean", "window_max")
# kbert.models.pretraining_models.OBJECTIVES.
PRETRAINING_OBJECTIVES = ("causal", "masked", "electra", "span_corruption")
# kbert.models.pretraining_models.RECIPE: `kbert pretrain`'s defaults.
PRETRAINING_RECIPE = {
    "layer_norm": "pre",
    "dropout": 0.0,
    "fine_tuning_dropout": 0.1,
    "masked_mask_rate": 0.4,
    "electra_mask_rate": 0.15,
    "schedule": "linear",
    "block_length": 128,
    "generator_width_factor": 4,
    "discriminator_weight": 50.0,
    "tie_embeddings": True,
}
# kbert.train.pretraining_optimizer.SCHEDULES (keys).
PRETRAINING_SCHEDULES = ("cosine", "linear")
# kbert.text.corpus_tokenizers.TOKENIZER_KINDS.
TOKENIZER_KINDS = ("wordpiece", "bpe", "byte_level_bpe", "unigram")
# kbert.data.text_corpus.NAMED_CORPORA.
NAMED_CORPORA = ("pretrain_corpus", "wikitext2", "wikitext103")
# kbert.data.text_corpus.FORMATS and DOCUMENT_SEPARATORS.
CORPUS_FORMATS = ("auto", "text", "jsonl")
DOCUMENT_SEPARATORS = ("blank_line", "line")
# kbert.models.encoder_config.PRESETS (keys) and kbert.models.encoder_decoder.PRESETS (keys).
ENCODER_PRESETS = ("albert_base", "bert_base", "minilm_l6", "tiny", "tutorial_50m")
ENCODER_DECODER_PRESETS = ("t5_small", "tiny")
# kbert.train.precision.DTYPES and kbert.train.distribute.STRATEGIES.
PRETRAINING_DTYPES = ("auto", "float32", "mixed_bfloat16")
STRATEGIES = ("default", "mirrored", "multi_worker")
# kbert.export.export_settings.DTYPES.
EXPORT_DTYPES = ("float32", "bfloat16", "auto")
