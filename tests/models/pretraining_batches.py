"""Tiny hand-built batches and checks shared by the pretraining-objective tests."""

import os

import keras
import numpy as np

from kbert.models import Encoder

# Two rows; the first is padded. 4 = [MASK] in these batches, 0 = [PAD].
TOKEN_IDS = np.array([[2, 7, 4, 8, 3, 0, 0, 0], [2, 9, 4, 4, 11, 12, 13, 3]], "int32")
PADDING_MASK = (TOKEN_IDS != 0).astype("int32")
SEGMENT_IDS = np.array([[0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 1, 1, 1]], "int32")

# Masked positions: row 0 has one real selection and one padding selection (weight 0).
MASK_POSITIONS = np.array([[2, 0, 0], [2, 3, 5]], "int32")
MASK_IDS = np.array([[17, 0, 0], [21, 22, 23]], "int32")
MASK_WEIGHTS = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]], "float32")


def encoder_batch():
    """The encoder's three inputs."""
    return {"token_ids": TOKEN_IDS, "segment_ids": SEGMENT_IDS, "padding_mask": PADDING_MASK}


def masked_batch():
    """Encoder inputs plus MLM selections."""
    return {
        **encoder_batch(),
        "mask_positions": MASK_POSITIONS,
        "mask_ids": MASK_IDS,
        "mask_weights": MASK_WEIGHTS,
    }


def span_batch():
    """MLM selections plus span boundaries: row 1 masks the span [2, 3] and the token at 5."""
    return {
        **masked_batch(),
        "mask_left_boundary": np.array([[1, 0, 0], [1, 1, 4]], "int32"),
        "mask_right_boundary": np.array([[3, 0, 0], [4, 4, 6]], "int32"),
        "mask_relative_positions": np.array([[1, 0, 0], [1, 2, 1]], "int32"),
    }


def tiny_encoder(**changes):
    """The "tiny" preset without dropout, so outputs are deterministic."""
    return Encoder.from_preset("tiny", **{"dropout": 0.0, "attention_dropout": 0.0, **changes})


def as_numpy(x):
    return np.asarray(keras.ops.convert_to_numpy(x), dtype="float64")


def log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def head_weights(model, encoder):
    """The trainable weights the model owns beyond the encoder's."""
    encoder_ids = {id(w) for w in encoder.trainable_weights}
    return [w for w in model.trainable_weights if id(w) not in encoder_ids]


def fit_losses(model, x, epochs=3, learning_rate=1e-2, run_eagerly=False):
    """Compiles with Adam and fits on the same batch; returns the per-epoch history.

    `run_eagerly=True` skips tracing (five times faster on these shapes) for tests whose point
    is the objective, not the graph; each model family keeps at least one graph-mode fit.
    """
    model.compile(optimizer=keras.optimizers.Adam(learning_rate), run_eagerly=run_eagerly)
    history = model.fit(x, epochs=epochs, batch_size=len(x["token_ids"]), verbose=0)
    return history.history


def save_and_load(model, directory):
    """Round-trips a model through a `.keras` file."""
    path = os.path.join(directory, "model.keras")
    model.save(path)
    return keras.models.load_model(path)
