"""`ServingGraph`: what every signature of one export shares (model, tokenizers, asset tables).

Small batches through XLA (`SignatureSettings.xla_rows`): a one-text request runs a few hundred
small ops (per layer: projections, reshapes and transposes of the heads, masking, softmax,
layer norms, GELU), and on a CPU each op's fixed cost is a large part of the call. XLA compiles
the model into a few fused kernels per input shape. `run_model` (and `run_encoder` in an "embed"
export) branch on the batch's rows: 1 to `xla_rows` rows take a `jit_compile` copy of the
model's call, more rows (or none) take TensorFlow's own kernels, which measured faster on large
batches. Both branches read the
same variables, so the outputs agree up to float rounding.
"""

import os

import keras
import tensorflow as tf

from kbert.export.assets import line_table, write_lines
from kbert.export.dynamic_padding import trim_padding
from kbert.export.graph_inputs import clean_texts
from kbert.text import BertPreprocessor, LongTextPreprocessor

ENCODER_INPUTS = ("token_ids", "segment_ids", "padding_mask")


class ServingGraph:
    """The model, its in-graph preprocessors and asset tables, tracked by one export archive.

    The signature builders (`kbert.export.signatures.classification`, `tagging`,
    `question_answering`, `embedding`, `token_ids`) read what they need from here.

    Args:
        model: the model to export (an `Encoder` for the "embed" task).
        tokenizer: a graph tokenizer (`kbert.text.graph_tokenizers.GRAPH_TOKENIZERS`).
        settings: `kbert.export.export_settings.SignatureSettings`.
        asset_dir: str, a directory for `vocab.txt` and `labels.txt` while the graph is built;
            the archive copies them into `<version>/assets/`.
    """

    def __init__(self, model, tokenizer, settings, asset_dir):
        self.model = model
        self.settings = settings
        self.encoder = model if settings.task == "embed" else model.encoder
        self.archive = keras.export.ExportArchive()
        self.archive.track(model)
        self.preprocessor = BertPreprocessor(
            tokenizer, sequence_length=settings.sequence_length, truncation=settings.truncation
        )
        # Single-text classification reads long texts by the run's strategy (head by default).
        self.long_text = LongTextPreprocessor(
            tokenizer, sequence_length=settings.sequence_length, **(settings.long_inputs or {})
        )
        self.archive.track(tokenizer)
        self.aligned = _aligned_preprocessor(tokenizer, settings)
        self._add_tables(tokenizer, asset_dir)
        self._compiled = {}  # id(layer) -> its call as a `jit_compile` tf.function

    def _add_tables(self, tokenizer, asset_dir):
        vocab_path = os.path.join(asset_dir, "vocab.txt")
        write_lines(vocab_path, tokenizer.get_vocabulary(), "vocabulary tokens")
        self.vocabulary_size = len(tokenizer.get_vocabulary())
        # Tracked tables carry their text file into `<version>/assets/` (the vocabulary for
        # clients that tokenize themselves; the labels also serve the `labels` outputs).
        self.vocab_table = line_table(vocab_path, key_is_line_number=False)
        self.archive.track(self.vocab_table)
        self.labels_table = None
        if self.settings.label_names is not None:
            labels_path = os.path.join(asset_dir, "labels.txt")
            write_lines(labels_path, self.settings.label_names, "label_names")
            self.labels_table = line_table(labels_path, key_is_line_number=True)
            self.archive.track(self.labels_table)

    def clean(self, texts):
        """`texts` made valid UTF-8 and cut to `max_input_chars` characters."""
        return clean_texts(texts, self.settings.max_input_chars)

    def trimmed(self, packed):
        """`packed` cut to the batch's longest real row (see `kbert.export.dynamic_padding`)."""
        if self.settings.padding == "fixed":
            return packed
        return trim_padding(packed, self.settings.sequence_length)

    def run_model(self, packed):
        """The model on a packed batch (its encoder inputs only), in inference mode."""
        return self._run(self.model, encoder_inputs(packed))

    def run_encoder(self, packed):
        """The encoder on a packed batch, in inference mode (its dict of outputs); through XLA
        only in an "embed" export, whose own signature the warm-up requests cover."""
        if self.settings.task != "embed":
            return self.encoder(encoder_inputs(packed), training=False)
        return self._run(self.encoder, encoder_inputs(packed))

    def _run(self, layer, inputs):
        """`layer(inputs)`, through XLA when the batch has 1 to `xla_rows` rows (an empty batch
        stays off XLA: no warm-up request has its shape)."""
        limit = self.settings.xla_rows
        if not limit:
            return layer(inputs, training=False)
        if id(layer) not in self._compiled:
            self._compiled[id(layer)] = tf.function(
                lambda x: layer(x, training=False), jit_compile=True
            )
        compiled = self._compiled[id(layer)]
        rows = tf.shape(inputs["token_ids"])[0]
        return tf.cond(
            (rows > 0) & (rows <= limit),
            lambda: compiled(inputs),
            lambda: layer(inputs, training=False),
        )

    def label_strings(self, ids):
        """The label names of class or tag ids; the ids as strings without label names."""
        if self.labels_table is None:
            return tf.strings.as_string(ids)
        return self.labels_table.lookup(tf.cast(ids, tf.int64))


def encoder_inputs(packed):
    """The encoder's three inputs of a packed batch (which may hold offsets and word ids too)."""
    return {key: packed[key] for key in ENCODER_INPUTS}


def _aligned_preprocessor(tokenizer, settings):
    """A preprocessor that also returns word ids and character offsets, for "tag" and "answer"."""
    if settings.task == "tag":
        return BertPreprocessor(
            tokenizer, sequence_length=settings.sequence_length, return_alignment=True
        )
    if settings.task == "answer":
        # Question = segment A, kept whole; the context (segment B) is cut to fit.
        return BertPreprocessor(
            tokenizer,
            sequence_length=settings.sequence_length,
            truncation="only_second",
            return_alignment=True,
        )
    return None
