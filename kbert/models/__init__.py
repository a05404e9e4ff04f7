"""Models built on the encoder: the encoder and its configuration presets, task models
(sequence classifier, question answerer, feature classifiers, multitask heads), pretraining
objectives (BERT, GPT, ALBERT, SpanBERT, ELECTRA), parameter-efficient adaptation (adapters,
LoRA, prefix and prompt tuning), distillation and ensembles, an encoder-decoder and a dialog model.
"""

from kbert.models.answer_decoding import decode_answers
from kbert.models.causal_language_model import CausalLanguageModel
from kbert.models.classifier_ensemble import ENSEMBLE_METHODS, ClassifierEnsemble
from kbert.models.dialog_model import DialogModel
from kbert.models.distiller import Distiller
from kbert.models.electra_pretraining_model import ElectraPretrainingModel
from kbert.models.encoder import Encoder
from kbert.models.encoder_config import PRESETS, EncoderConfig
from kbert.models.encoder_decoder import EncoderDecoder
from kbert.models.feature_classifier import (
    FEATURE_LAYERS,
    FeatureClassifier,
    frozen_encoder_classifier,
)
from kbert.models.layer_features import extract_layer_features, pool_hidden_states
from kbert.models.masked_language_model import MaskedLanguageModel
from kbert.models.multitask_model import MultitaskModel
from kbert.models.next_sentence_prediction import NextSentencePrediction
from kbert.models.peft import (
    ADAPTER_PLACEMENTS,
    adapter_trainable_setup,
    add_adapters,
    add_lora,
    add_prefix_tuning,
    merge_lora,
    prompt_tuned_encoder,
    remove_adapters,
    remove_prefix_tuning,
    set_active_adapter,
)
from kbert.models.perplexity import Perplexity
from kbert.models.pretraining_model import PretrainingModel
from kbert.models.pretraining_objective import PretrainingObjective
from kbert.models.question_answerer import QuestionAnswerer
from kbert.models.sequence_classifier import CLASSIFIER_POOLING, SequenceClassifier
from kbert.models.slice_aware_classifier import SliceAwareClassifier
from kbert.models.slice_aware_loss import SliceAwareLoss
from kbert.models.span_boundary_objective import SpanBoundaryObjective
from kbert.models.student_initialization import (
    default_student_layers,
    student_encoder,
)
from kbert.models.tied_decoder import TiedDecoder
from kbert.models.vocabulary_growth import add_segment_embeddings, grow_vocabulary

__all__ = ["PRESETS", "Encoder", "EncoderConfig"]
# Task models.
__all__ += [
    "CLASSIFIER_POOLING",
    "SequenceClassifier",
    "SliceAwareClassifier",
    "SliceAwareLoss",
    "add_segment_embeddings",
    "grow_vocabulary",
]
# Pretraining objectives (BERT, GPT, ALBERT, SpanBERT, ELECTRA) and their parts.
__all__ += [
    "CausalLanguageModel",
    "ElectraPretrainingModel",
    "MaskedLanguageModel",
    "NextSentencePrediction",
    "Perplexity",
    "PretrainingModel",
    "PretrainingObjective",
    "SpanBoundaryObjective",
    "TiedDecoder",
]
# Feature extraction: a frozen encoder's cached per-layer features and classifiers on them.
__all__ += [
    "FEATURE_LAYERS",
    "FeatureClassifier",
    "extract_layer_features",
    "frozen_encoder_classifier",
    "pool_hidden_states",
]
# Extractive question answering: the span head and decoding spans back to text.
__all__ += ["QuestionAnswerer", "decode_answers"]
# Adapters, LoRA, prefix and prompt tuning inserted into an encoder.
__all__ += [
    "ADAPTER_PLACEMENTS",
    "adapter_trainable_setup",
    "add_adapters",
    "add_lora",
    "add_prefix_tuning",
    "merge_lora",
    "prompt_tuned_encoder",
    "remove_adapters",
    "remove_prefix_tuning",
    "set_active_adapter",
]
# Distillation into a smaller student, and ensembles of fine-tuned classifiers.
__all__ += [
    "ENSEMBLE_METHODS",
    "ClassifierEnsemble",
    "DialogModel",
    "Distiller",
    "EncoderDecoder",
    "default_student_layers",
    "student_encoder",
]
# Multi-task fine-tuning: several heads on one encoder, an optional auxiliary LM loss.
__all__ += ["MultitaskModel"]
