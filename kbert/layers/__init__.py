"""Numeric building blocks of kbert's transformers."""

from kbert.layers.activations import get_activation
from kbert.layers.embeddings import Embeddings
from kbert.layers.feed_forward import FeedForward
from kbert.layers.masks import attention_bias
from kbert.layers.multi_head_attention import MultiHeadAttention
from kbert.layers.transformer_block import TransformerBlock

__all__ = [
    "Embeddings",
    "FeedForward",
    "MultiHeadAttention",
    "TransformerBlock",
    "attention_bias",
    "get_activation",
]
