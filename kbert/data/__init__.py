"""Dataset readers and the data-directory setting."""

from kbert.data.causal_lm_blocks import causal_lm_blocks
from kbert.data.classification_dataset import classification_dataset, default_bucket_lengths
from kbert.data.classification_tasks import (
    CLASSIFICATION_TASKS,
    ClassificationTask,
    Examples,
    classification_task_from_files,
    load_classification_task,
)
from kbert.data.conll2003 import (
    CONLL2003_ENTITY_TYPES,
    CONLL2003_TAGS,
    TaggedSentence,
    check_tags,
    read_conll2003,
    read_conll_file,
)
from kbert.data.curation import (
    CurationResult,
    MinHasher,
    QualityRules,
    exact_duplicates,
    near_duplicates,
    perplexity_filter,
    quality_filter,
)
from kbert.data.data_dir import data_dir, locate
from kbert.data.denoising_blocks import span_corruption_blocks, text_infilling_blocks
from kbert.data.full_sentences_blocks import full_sentences_blocks
from kbert.data.imdb import read_imdb
from kbert.data.label_vocabulary import LabelVocabulary
from kbert.data.length_bucketing import bucket_by_length
from kbert.data.mrpc import read_mrpc
from kbert.data.multitask_batches import (
    SAMPLING_MODES,
    joint_batches,
    multitask_dataset,
    task_sampling_probabilities,
    with_masked_language_model_inputs,
)
from kbert.data.personachat import (
    Dialog,
    ReplyExample,
    dialog_inputs,
    read_personachat,
    reply_examples,
    split_dialogs,
)
from kbert.data.pipeline_throughput import measure_pipeline_throughput
from kbert.data.pretraining_pipelines import PipelineOptions
from kbert.data.question_answering_features import question_answering_features
from kbert.data.rte import read_rte
from kbert.data.semcor import SEMCOR_PARTS, load_semcor, read_semcor, semcor_counts
from kbert.data.sentence_pair_examples import sentence_pair_examples
from kbert.data.sentence_splitter import split_sentences
from kbert.data.squad import SquadExample, load_squad, read_squad, squad_references
from kbert.data.sst2 import read_sst2
from kbert.data.text_corpus import (
    NAMED_CORPORA,
    read_named_corpus,
    read_pretraining_books,
    read_text_corpus,
)
from kbert.data.trec import read_trec
from kbert.data.wikitext import read_wikitext
from kbert.data.word_count import count_whitespace_words, word_level_perplexity

__all__ = [
    "span_corruption_blocks",
    "text_infilling_blocks",
    "Dialog",
    "ReplyExample",
    "dialog_inputs",
    "read_personachat",
    "reply_examples",
    "split_dialogs",
    "CurationResult",
    "MinHasher",
    "QualityRules",
    "exact_duplicates",
    "near_duplicates",
    "perplexity_filter",
    "quality_filter",
    "data_dir",
    "locate",
    "read_sst2",
    "read_trec",
]
__all__ += [
    "bucket_by_length",
    "PipelineOptions",
    "causal_lm_blocks",
    "count_whitespace_words",
    "full_sentences_blocks",
    "measure_pipeline_throughput",
    "NAMED_CORPORA",
    "read_named_corpus",
    "read_pretraining_books",
    "read_text_corpus",
    "read_wikitext",
    "sentence_pair_examples",
    "split_sentences",
    "word_level_perplexity",
]
__all__ += [
    "CLASSIFICATION_TASKS",
    "ClassificationTask",
    "Examples",
    "LabelVocabulary",
    "classification_task_from_files",
    "load_classification_task",
    "read_imdb",
    "read_mrpc",
    "read_rte",
]
__all__ += ["classification_dataset", "default_bucket_lengths"]
__all__ += [
    "CONLL2003_ENTITY_TYPES",
    "CONLL2003_TAGS",
    "SquadExample",
    "TaggedSentence",
    "check_tags",
    "load_squad",
    "read_conll2003",
    "read_conll_file",
    "read_squad",
    "squad_references",
]
__all__ += ["question_answering_features"]
__all__ += ["SEMCOR_PARTS", "load_semcor", "read_semcor", "semcor_counts"]
# Multi-task batches: per-step task sampling, auxiliary masked-LM inputs.
__all__ += [
    "SAMPLING_MODES",
    "joint_batches",
    "multitask_dataset",
    "task_sampling_probabilities",
    "with_masked_language_model_inputs",
]
