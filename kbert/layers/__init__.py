"""Numeric building blocks of kbert's transformers."""

from kbert.layers.activations import get_activation
from kbert.layers.adapter import AdaptedSublayer, Adapter
from kbert.layers.block_adaptation import ADAPTER_PLACEMENTS, BlockAdaptation
from kbert.layers.classification_head import ClassificationHead
from kbert.layers.crf import CRF, CRFLoss, bio_constraints
from kbert.layers.dropout import Dropout
from kbert.layers.embeddings import Embeddings
from kbert.layers.feed_forward import FeedForward
from kbert.layers.lora import LoRADense
from kbert.layers.masks import attention_bias
from kbert.layers.multi_head_attention import MultiHeadAttention
from kbert.layers.prefix_tuning import PrefixAttention
from kbert.layers.prompt_tuning import PromptTuning
from kbert.layers.relative_position_bias import (
    RelativePositionBias,
    relative_position_buckets,
)
from kbert.layers.rms_norm import RMSNorm
from kbert.layers.scalar_mix import ScalarMix
from kbert.layers.sequence_pooling import POOLING_MODES, SequencePooling
from kbert.layers.tagging_head import TaggingHead
from kbert.layers.transformer_block import TransformerBlock

__all__ = [
    "Dropout",
    "Embeddings",
    "FeedForward",
    "MultiHeadAttention",
    "POOLING_MODES",
    "SequencePooling",
    "TransformerBlock",
    "attention_bias",
    "get_activation",
]
__all__ += ["ScalarMix"]
__all__ += ["CRF", "CRFLoss", "bio_constraints"]
# Parameter-efficient adaptation: wrappers beside a block's sublayers (see kbert.models.peft).
__all__ += ["Adapter", "AdaptedSublayer", "LoRADense", "PrefixAttention", "PromptTuning"]
__all__ += ["ADAPTER_PLACEMENTS", "BlockAdaptation"]
# Heads that share one encoder pass (kbert.models.MultitaskModel).
__all__ += ["ClassificationHead", "TaggingHead"]
# T5's pieces (encoder-decoder models, #19).
__all__ += ["RMSNorm", "RelativePositionBias", "relative_position_buckets"]
