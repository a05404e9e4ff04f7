"""Exports kbert encoders and tokenizers as TF Hub SavedModels with the BERT interface.

The layout is the one TF Hub's BERT models have (tensorflow/models `export_tfhub`; see
https://www.tensorflow.org/hub/common_saved_model_apis/text#transformer-encoders), so code
written for TF Hub's BERT loads kbert's exports, and `kbert.hub` loads both:

- the **preprocessor**: `__call__(strings)` returns `input_word_ids`, `input_mask` and
  `input_type_ids` (int32, (batch, seq_length)); `.tokenize(strings)` returns an int32
  `tf.RaggedTensor` [batch, words, wordpieces]; `.bert_pack_inputs(segments, seq_length)`
  packs a list of one or two tokenized segments into the same dict, `seq_length` being a
  tensor argument so any length works after loading. `vocab.txt` travels as an asset.
- the **encoder**, a reusable SavedModel: `__call__(inputs, training=False)` from the
  preprocessor's dict to `pooled_output`, `sequence_output`, `encoder_outputs` (one tensor per
  block) and `default`, all float32, with dropout on for `training=True`; `variables`,
  `trainable_variables` and `regularization_losses`; optionally `.mlm`, which also takes
  `masked_lm_positions` and adds `mlm_logits`.

Why not a `tf.Module` holding the Keras model: Keras 3 models are not tf_keras models, and
`tf.saved_model.save` of a tracked Keras 3 model drags in Keras's own tracking. The exported
object is a bare `AutoTrackable` whose tf.functions call the encoder through a Python closure and
whose variable lists hold the Keras variables' underlying `tf.Variable`s (`variable.value`):
those are exactly the resources the traced functions read, so SavedModel saves them once and a
reloaded module's functions and variable lists refer to the same objects.

Writes are atomic: the SavedModel is written to a hidden sibling directory, loaded back once,
then renamed into place; an existing non-empty path is refused.
"""

import os
import tempfile

import tensorflow as tf

from kbert.files import new_directory
from kbert.keras_internals import trackable_object
from kbert.models.encoder import Encoder
from kbert.text.input_packer import TRUNCATION_STRATEGIES, kept_pair_lengths
from kbert.text.preprocessor import BertPreprocessor
from kbert.text.wordpiece_tokenizer import WordPieceTokenizer

HUB_INPUT_KEYS = ("input_word_ids", "input_mask", "input_type_ids")
# kbert's encoder input names, in the order of HUB_INPUT_KEYS.
KBERT_INPUT_KEYS = ("token_ids", "padding_mask", "segment_ids")


# ---------------------------------------------------------------------- writing


def _check_target(path):
    """Returns the absolute target path; raises when it exists and is not an empty directory."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must be a str or os.PathLike; received {type(path).__name__}")
    path = os.path.abspath(os.fspath(path))
    if os.path.isfile(path):
        raise ValueError(f"path {path!r} is an existing file; expected a new directory")
    if os.path.isdir(path) and os.listdir(path):
        raise ValueError(
            f"path {path!r} exists and is not empty; expected a new or empty directory "
            "(exports never overwrite)"
        )
    return path


def _write_atomically(path, save, verify):
    """Runs `save(temporary_dir)`, `verify(temporary_dir)`, then renames it to `path`."""
    try:
        # An empty target directory is replaced, as the docstrings promise.
        with new_directory(path, replace_empty=True) as temporary:
            save(temporary)
            verify(temporary)
    except FileExistsError:
        raise ValueError(f"path {path!r} appeared during the export; expected a new path") from None
    return path


def _tracked_resources(root):
    """Every `TrackableResource` (lookup table) reachable from `root`, for the export to own."""
    resources = []
    for trackable in tf.train.TrackableView(root).descendants():
        if isinstance(trackable, tf.saved_model.experimental.TrackableResource):
            resources.append(trackable)
    return resources


# ---------------------------------------------------------------------- preprocessor


def _pack_segments(segments, seq_length, start_id, end_id, pad_id, truncation):
    """Packs 1-2 ragged segments like `InputPacker`, with `seq_length` a scalar tensor.

    `InputPacker` needs a Python int length; TF Hub's `bert_pack_inputs` takes the length at call
    time, so the truncation (`kept_pair_lengths`, shared with `InputPacker`) and the gather are
    redone here with a tensor length. Outputs have static shape (batch, None).
    """
    segments = [s.merge_dims(1, -1) if s.ragged_rank > 1 else s for s in segments]
    segments = [s.with_row_splits_dtype(tf.int64) for s in segments]  # (batch, tokens) each
    length = tf.cast(seq_length, tf.int64)
    budget = length - 1 - len(segments)
    checks = [
        tf.debugging.assert_non_negative(
            budget,
            message=f"seq_length is too short for {len(segments)} segment(s) and their "
            "special tokens",
        )
    ]
    lengths = [s.row_lengths() for s in segments]  # (batch,) each
    with tf.control_dependencies(checks):
        if len(segments) == 1:
            kept = [tf.minimum(lengths[0], budget)]
        else:
            kept = list(kept_pair_lengths(lengths[0], lengths[1], budget, truncation))
    kept = [keep[:, tf.newaxis] for keep in kept]  # (batch, 1) each

    # As in InputPacker.call: every position says which segment token it holds.
    position = tf.range(length, dtype=tf.int64)[tf.newaxis, :]  # (1, length)
    starts, inside = [], []
    used = tf.ones_like(kept[0])  # (batch, 1) the start token
    for keep in kept:
        starts.append(used)
        inside.append((position >= used) & (position < used + keep))  # (batch, length)
        used = used + keep + 1
    real = position < used  # (batch, length)

    token_ids = tf.where(real, tf.constant(end_id, tf.int32), tf.constant(pad_id, tf.int32))
    for index, values in enumerate(segments):
        flat = tf.concat([tf.cast(values.flat_values, tf.int32), tf.zeros([1], tf.int32)], 0)
        source = values.row_starts()[:, tf.newaxis] + position - starts[index]
        source = tf.where(inside[index], source, tf.size(flat, out_type=tf.int64) - 1)
        token_ids = tf.where(inside[index], tf.gather(flat, source), token_ids)
    token_ids = tf.where(position == 0, tf.constant(start_id, tf.int32), token_ids)
    second = real & (position >= starts[1]) if len(segments) == 2 else tf.zeros_like(real)
    return {
        "input_word_ids": token_ids,  # (batch, length)
        "input_mask": tf.cast(real, tf.int32),
        "input_type_ids": tf.cast(second, tf.int32),
    }


def _hub_names(packed):
    """kbert's packed dict under TF Hub's names."""
    return {hub: packed[kbert] for hub, kbert in zip(HUB_INPUT_KEYS, KBERT_INPUT_KEYS, strict=True)}


def _write_vocabulary(path, tokens):
    with open(path, "w", encoding="utf-8", newline="\n") as file:
        for token in tokens:
            file.write(token + "\n")


def _build_preprocessor_module(tokenizer, seq_length, truncation, vocab_path):
    module = trackable_object()
    preprocessor = BertPreprocessor(tokenizer, sequence_length=seq_length, truncation=truncation)
    # The traced functions read the tokenizer's lookup tables; the module must own them.
    module._tables = _tracked_resources(tokenizer)
    module.vocab_file = tf.saved_model.Asset(vocab_path)
    module.do_lower_case = tf.Variable(tokenizer.lowercase, trainable=False)
    start_id, end_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    pad_id = tokenizer.pad_token_id

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def call(strings):
        return _hub_names(preprocessor(strings))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def tokenize(strings):
        return tokenizer.tokenize_words(strings)

    @tf.function(autograph=False)
    def bert_pack_inputs(segments, seq_length=seq_length):
        if not isinstance(segments, (list, tuple)) or len(segments) not in (1, 2):
            raise ValueError(
                "segments must be a list of one or two RaggedTensors; received "
                f"{type(segments).__name__}"
            )
        return _pack_segments(list(segments), seq_length, start_id, end_id, pad_id, truncation)

    length_spec = tf.TensorSpec([], tf.int32, name="seq_length")
    for ragged_rank in (2, 1):  # [batch, words, pieces] as from .tokenize, or [batch, tokens]
        spec = tf.RaggedTensorSpec(
            [None] * (ragged_rank + 1),
            tf.int32,
            ragged_rank=ragged_rank,
            row_splits_dtype=tf.int64,
        )
        for count in (1, 2):
            bert_pack_inputs.get_concrete_function([spec] * count, length_spec)
    module.__call__ = call
    module.tokenize = tokenize
    module.bert_pack_inputs = bert_pack_inputs
    return module


def _verify_preprocessor(path):
    loaded = tf.saved_model.load(path)
    texts = tf.constant(["hello"])
    packed = loaded(texts)
    if sorted(packed) != sorted(HUB_INPUT_KEYS):
        raise ValueError(f"the exported preprocessor returned keys {sorted(packed)}")
    loaded.bert_pack_inputs([loaded.tokenize(texts)], seq_length=8)


def export_hub_preprocessor(tokenizer, path, seq_length=128, truncation="longest_first"):
    """Writes a TF Hub BERT preprocessor SavedModel for a kbert tokenizer.

    Args:
        tokenizer: `kbert.text.WordPieceTokenizer` with `cls_token`, `sep_token`, `pad_token`.
        path: str or os.PathLike. A new (or empty) directory.
        seq_length: int, default 128. The length `__call__` packs to and the default of
            `bert_pack_inputs`.
        truncation: str, default "longest_first" (Hugging Face's, as `BertPreprocessor`).
            How `bert_pack_inputs` cuts a pair; see `kbert.text.InputPacker`. TF Hub's own
            preprocessors use "round_robin".

    Returns:
        str, the absolute path written.

    Raises:
        ValueError: `tokenizer` is not a `WordPieceTokenizer` or lacks a special token,
            `seq_length` is not an int of at least 3, `truncation` is unknown, or `path` exists
            and is not an empty directory.

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world"]
    >>> path = export_hub_preprocessor(WordPieceTokenizer(vocabulary), "/tmp/pre", seq_length=6)
    >>> preprocessor = tf.saved_model.load(path)  # or tensorflow_hub.load(path)
    >>> preprocessor(tf.constant(["hello world"]))["input_word_ids"].numpy().tolist()
    [[2, 5, 6, 3, 0, 0]]
    >>> tokens = preprocessor.tokenize(tf.constant(["hello world"]))  # [batch, words, pieces]
    >>> preprocessor.bert_pack_inputs([tokens, tokens], seq_length=4)["input_word_ids"].numpy()
    array([[2, 5, 3, 3]], dtype=int32)
    """
    if not isinstance(tokenizer, WordPieceTokenizer):
        raise ValueError(
            "tokenizer must be a kbert.text.WordPieceTokenizer; received "
            f"{type(tokenizer).__name__}"
        )
    if isinstance(seq_length, bool) or not isinstance(seq_length, int) or seq_length < 3:
        raise ValueError(
            "seq_length must be an int of at least 3 ([CLS] A [SEP] B [SEP] needs 3); received "
            f"{seq_length!r}"
        )
    if truncation not in TRUNCATION_STRATEGIES:
        raise ValueError(
            f"truncation must be one of {TRUNCATION_STRATEGIES}; received {truncation!r}"
        )
    path = _check_target(path)

    def save(directory):
        with tempfile.TemporaryDirectory(prefix="kbert-hub-assets-") as assets:
            vocab_path = os.path.join(assets, "vocab.txt")
            _write_vocabulary(vocab_path, tokenizer.get_vocabulary())
            module = _build_preprocessor_module(tokenizer, seq_length, truncation, vocab_path)
            tf.saved_model.save(module, directory)

    return _write_atomically(path, save, _verify_preprocessor)


# ---------------------------------------------------------------------- encoder


def _check_encoder(encoder):
    if not isinstance(encoder, Encoder):
        raise ValueError(
            "encoder must be a kbert.models.Encoder (dict inputs token_ids, segment_ids, "
            f"padding_mask); received {type(encoder).__name__}"
        )


def _kbert_inputs(inputs):
    missing = [key for key in HUB_INPUT_KEYS if key not in inputs]
    if missing:
        raise ValueError(f"inputs must have the keys {list(HUB_INPUT_KEYS)}; missing {missing}")
    return {
        kbert: tf.cast(inputs[hub], tf.int32)
        for hub, kbert in zip(HUB_INPUT_KEYS, KBERT_INPUT_KEYS, strict=True)
    }


def _hub_outputs(outputs):
    pooled = tf.cast(outputs["pooled_output"], tf.float32)  # (batch, hidden)
    return {
        "pooled_output": pooled,
        "sequence_output": tf.cast(outputs["sequence_output"], tf.float32),  # (batch, seq, hidden)
        "encoder_outputs": [tf.cast(h, tf.float32) for h in outputs["hidden_states"][1:]],
        "default": pooled,
    }


def _variable_lists(module, model):
    # The Keras variables' tf.Variables: what the traced functions read (see module docstring).
    module.variables = [v.value for v in model.variables]
    module.trainable_variables = [v.value for v in model.trainable_variables]
    module.regularization_losses = []  # kbert puts no weight regularizers in its encoders


def _trace_both(function, spec):
    for training in (False, True):
        function.get_concrete_function(spec, training=training)


def _input_spec(extra=()):
    return {key: tf.TensorSpec([None, None], tf.int32, name=key) for key in HUB_INPUT_KEYS + extra}


def _build_encoder_module(encoder, mlm_model):
    module = trackable_object()
    _variable_lists(module, encoder)

    @tf.function(autograph=False)
    def call(inputs, training=False):
        return _hub_outputs(encoder(_kbert_inputs(inputs), training=training))

    _trace_both(call, _input_spec())
    module.__call__ = call

    @tf.function(input_signature=[_input_spec()], autograph=False)
    def serve(inputs):
        outputs = call(inputs, training=False)
        return {key: outputs[key] for key in ("pooled_output", "sequence_output", "default")}

    signatures = {"serving_default": serve.get_concrete_function()}

    if mlm_model is not None:
        mlm = trackable_object()
        _variable_lists(mlm, mlm_model)

        @tf.function(autograph=False)
        def call_mlm(inputs, training=False):
            outputs = encoder(_kbert_inputs(inputs), training=training)
            positions = tf.cast(inputs["masked_lm_positions"], tf.int32)
            head = mlm_model.call_head(outputs, {"mask_positions": positions}, training=training)
            result = _hub_outputs(outputs)
            result["mlm_logits"] = tf.cast(head["logits"], tf.float32)  # (batch, preds, vocab)
            return result

        _trace_both(call_mlm, _input_spec(("masked_lm_positions",)))
        mlm.__call__ = call_mlm
        module.mlm = mlm
    return module, signatures


def _verify_encoder(path, with_mlm):
    loaded = tf.saved_model.load(path)
    ones = tf.ones([1, 3], tf.int32)
    inputs = {"input_word_ids": ones, "input_mask": ones, "input_type_ids": 0 * ones}
    outputs = loaded(inputs, training=False)
    if "pooled_output" not in outputs or not loaded.variables:
        raise ValueError("the exported encoder did not load back with outputs and variables")
    if with_mlm:
        loaded.mlm(dict(inputs, masked_lm_positions=tf.zeros([1, 1], tf.int32)), training=False)


def export_hub_encoder(encoder, path, mlm_model=None):
    """Writes a kbert encoder as a reusable TF Hub BERT encoder SavedModel.

    Args:
        encoder: `kbert.models.Encoder`.
        path: str or os.PathLike. A new (or empty) directory.
        mlm_model: `kbert.models.MaskedLanguageModel` on the same encoder, default None. When
            given, the export has an `.mlm` sub-object: `mlm(dict(input_word_ids, input_mask,
            input_type_ids, masked_lm_positions), training=False)` returns the encoder outputs
            plus `mlm_logits` (batch, num_predictions, vocabulary_size).

    Returns:
        str, the absolute path written.

    Raises:
        ValueError: `encoder` is not a kbert `Encoder`, `mlm_model` is not a masked language
            model on that same encoder, or `path` exists and is not an empty directory.

    Example:
    >>> from kbert.models import Encoder
    >>> path = export_hub_encoder(Encoder.from_preset("tiny", vocabulary_size=50), "/tmp/enc")
    >>> encoder = tf.saved_model.load(path)  # or tensorflow_hub.load(path)
    >>> ids = tf.constant([[2, 7, 3]])
    >>> outputs = encoder({"input_word_ids": ids, "input_mask": tf.ones_like(ids),
    ...                    "input_type_ids": tf.zeros_like(ids)}, training=False)
    >>> outputs["pooled_output"].shape, len(outputs["encoder_outputs"])
    (TensorShape([1, 16]), 2)
    """
    _check_encoder(encoder)
    if mlm_model is not None:
        if (
            not callable(getattr(mlm_model, "call_head", None))
            or getattr(mlm_model, "encoder", None) is not encoder
        ):
            raise ValueError(
                "mlm_model must be a kbert.models.MaskedLanguageModel built on the exported "
                f"encoder; received {type(mlm_model).__name__}"
                + (
                    ""
                    if getattr(mlm_model, "encoder", None) is encoder
                    else " (on a different encoder)"
                )
            )
    path = _check_target(path)

    def save(directory):
        module, signatures = _build_encoder_module(encoder, mlm_model)
        tf.saved_model.save(module, directory, signatures=signatures)

    return _write_atomically(
        path, save, lambda directory: _verify_encoder(directory, mlm_model is not None)
    )
