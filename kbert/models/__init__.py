"""Encoders and their configuration."""

from kbert.models.causal_language_model import CausalLanguageModel
from kbert.models.electra_pretraining_model import ElectraPretrainingModel
from kbert.models.encoder import Encoder
from kbert.models.encoder_config import PRESETS, EncoderConfig
from kbert.models.masked_language_model import MaskedLanguageModel
from kbert.models.next_sentence_prediction import NextSentencePrediction
from kbert.models.perplexity import Perplexity
from kbert.models.pretraining_model import PretrainingModel
from kbert.models.pretraining_objective import PretrainingObjective
from kbert.models.span_boundary_objective import SpanBoundaryObjective
from kbert.models.tied_decoder import TiedDecoder

__all__ = ["PRESETS", "Encoder", "EncoderConfig"]
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
