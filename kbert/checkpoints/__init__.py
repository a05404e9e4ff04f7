"""Importing pretrained weights, saving kbert checkpoints, and adapter sets as files."""

from kbert.checkpoints.adapter_files import load_adapters, save_adapters
from kbert.checkpoints.hf_bert import (
    load_hf_bert,
    load_hf_bert_encoder,
    load_hf_bert_tokenizer,
    minilm_l6_dir,
    resolve_checkpoint,
)
from kbert.checkpoints.pretrained import load_pretrained, save_pretrained
from kbert.checkpoints.trained_pooling import trained_pooling

__all__ = [
    "load_hf_bert",
    "load_hf_bert_encoder",
    "load_hf_bert_tokenizer",
    "minilm_l6_dir",
    "resolve_checkpoint",
    "load_adapters",
    "load_pretrained",
    "save_adapters",
    "save_pretrained",
    "trained_pooling",
]
