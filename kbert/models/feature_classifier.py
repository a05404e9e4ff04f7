"""A classifier on a frozen encoder's cached per-layer features (feature extraction)."""

import keras
import numpy as np
from keras import ops

from kbert.checks import check_int, check_positive_int
from kbert.layers.dropout import Dropout
from kbert.layers.scalar_mix import ScalarMix
from kbert.models.layer_features import pool_hidden_states
from kbert.models.sequence_classifier import classification_loss

FEATURE_LAYERS = ("top", "last4", "scalar_mix")


@keras.saving.register_keras_serializable(package="kbert")
class FeatureClassifier(keras.Model):
    """Classifies cached encoder features: a layer selection or mix, then a small head.

    The feature-based approach (J&M §11.3; NAACL 2019 tutorial §4.2.A; ELMo): the pretrained
    encoder stays frozen and only this model trains, on the output of
    `kbert.models.extract_layer_features`, so the encoder runs once per example rather than
    once per epoch. Which layers it reads:
        "top": the last layer alone.
        "last4": the mean of the last four layers (the BERT paper's feature-based NER; J&M §11.3).
        "scalar_mix": ELMo's learned softmax-weighted sum of every layer times a scale
            (`kbert.layers.ScalarMix`, layer name "scalar_mix").
    Then `Dropout → [Dense → ReLU] per hidden_units → Dense(num_classes)`: `hidden_units=()` is
    a linear classifier (a probe), `(256,)` a one-hidden-layer MLP.

    Input: float `(batch, num_features_layers, hidden_dim)`, the cached features.
    Output: float32 logits `(batch, num_classes)`. Train with
    `SparseCategoricalCrossentropy(from_logits=True)`, or `BinaryCrossentropy(from_logits=True)`
    on 0/1 vectors when `multi_label` (see `default_loss()`).

    Args:
        num_features_layers: int. Layers in the features (an `Encoder`'s `num_layers + 1`).
        hidden_dim: int. Width of each layer's feature vector.
        num_classes: int >= 2 (or >= 1 when `multi_label`).
        layers: str, default "top". One of `FEATURE_LAYERS`. Kept as `self.feature_layers`
            (`self.layers` is Keras's list of sublayers).
        hidden_units: tuple of int, default (). Hidden ReLU layers of the head.
        dropout: float, default 0.1. On the selected or mixed features.
        multi_label: bool, default False. Independent sigmoid per class instead of a softmax.
        **kwargs: `name`, `trainable`.

    Example:
    >>> classifier = FeatureClassifier(7, 384, num_classes=6, layers="scalar_mix")
    >>> tuple(classifier(np.zeros((2, 7, 384), "float32")).shape)
    (2, 6)
    >>> [round(float(w), 3) for w in classifier.mixing_weights()]  # equal at the start
    [0.143, 0.143, 0.143, 0.143, 0.143, 0.143, 0.143]
    """

    def __init__(
        self,
        num_features_layers,
        hidden_dim,
        num_classes,
        layers="top",
        hidden_units=(),
        dropout=0.1,
        multi_label=False,
        **kwargs,
    ):
        if layers not in FEATURE_LAYERS:
            raise ValueError(f"layers must be one of {FEATURE_LAYERS}; received {layers!r}")
        num_features_layers = check_positive_int("num_features_layers", num_features_layers)
        hidden_dim = check_positive_int("hidden_dim", hidden_dim)
        if layers == "last4" and num_features_layers < 4:
            raise ValueError(
                f"layers='last4' needs num_features_layers >= 4; received {num_features_layers}"
            )
        minimum = 1 if multi_label else 2
        num_classes = check_int(
            "num_classes",
            num_classes,
            minimum=minimum,
            expected=f"an int >= {minimum}{' (multi-label)' if multi_label else ''}",
        )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1); received {dropout!r}")
        hidden_units = tuple(hidden_units)
        if not all(isinstance(u, int) and not isinstance(u, bool) and u > 0 for u in hidden_units):
            raise ValueError(f"hidden_units must be positive ints; received {hidden_units!r}")

        # === Functional model ===
        features = keras.Input(shape=(num_features_layers, hidden_dim), name="features")
        if layers == "top":
            x = features[:, -1, :]  # (batch, hidden)
        elif layers == "last4":
            x = ops.mean(features[:, -4:, :], axis=1)  # (batch, hidden)
        else:
            x = ScalarMix(num_features_layers, name="scalar_mix")(features)  # (batch, hidden)
        x = Dropout(dropout, name="dropout")(x)
        for index, units in enumerate(hidden_units):
            x = keras.layers.Dense(units, activation="relu", name=f"hidden_{index}")(x)
        logits = keras.layers.Dense(num_classes, name="logits")(x)
        super().__init__(inputs=features, outputs=logits, **kwargs)

        # === Config ===
        self.num_features_layers = num_features_layers
        self.hidden_dim = hidden_dim
        self.num_classes = num_classes
        self.feature_layers = layers
        self.hidden_units = hidden_units
        self.dropout = dropout
        self.multi_label = multi_label

    def default_loss(self):
        """The matching Keras loss (logits in, integer labels or 0/1 vectors for multi-label)."""
        return classification_loss(self.multi_label)

    def mixing_weights(self):
        """Returns how much each layer contributes, bottom (embeddings) first.

        Returns:
            float32 numpy array `(num_features_layers,)` summing to 1: one-hot on the top layer
            for "top", 0.25 on each of the last four for "last4", the learned softmax weights
            for "scalar_mix" (without its scale `gamma`).
        """
        if self.feature_layers == "scalar_mix":
            return self.get_layer("scalar_mix").mixing_weights()
        weights = np.zeros((self.num_features_layers,), "float32")
        if self.feature_layers == "top":
            weights[-1] = 1.0
        else:
            weights[-4:] = 0.25
        return weights

    def get_config(self):
        return {
            "num_features_layers": self.num_features_layers,
            "hidden_dim": self.hidden_dim,
            "num_classes": self.num_classes,
            "layers": self.feature_layers,
            "hidden_units": list(self.hidden_units),
            "dropout": self.dropout,
            "multi_label": self.multi_label,
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def frozen_encoder_classifier(
    encoder, num_classes, layers="top", pooling="cls", hidden_units=(), dropout=0.1
):
    """Builds the uncached equivalent: frozen encoder → pooled layers → `FeatureClassifier`.

    Built on `encoder.input` and `encoder.output` with `encoder.trainable = False` (set here, on
    the caller's encoder), so `fit` trains the head only, but runs the encoder on every batch of
    every epoch. The features are computed by the same code as `extract_layer_features`, and the
    head is a `FeatureClassifier` named "feature_classifier": copy weights between this model's
    head and one trained on cached features with `get_weights`/`set_weights`, and their logits
    agree.

    One difference while training: Keras passes `fit`'s `training=True` to every layer of the
    model, a frozen one included, so the encoder's dropout is active during `fit` here, whereas
    cached features are computed without it. Build the encoder with `dropout=0.0,
    attention_dropout=0.0` (e.g. `load_hf_bert(..., dropout=0.0, attention_dropout=0.0)`) for a
    model that trains exactly like the cached path. Inference (`predict`, `evaluate`) has no
    dropout either way.

    Args:
        encoder: `kbert.models.Encoder`. Frozen in place (`trainable = False`).
        num_classes: int. See `FeatureClassifier`.
        layers: str, default "top". One of `FEATURE_LAYERS`.
        pooling: str, default "cls". A `kbert.layers.SequencePooling` mode, applied to every
            layer's hidden state.
        hidden_units: tuple of int, default (). Hidden ReLU layers of the head.
        dropout: float, default 0.1. Head dropout.

    Returns:
        A functional `keras.Model` from the encoder's input dict to float32 logits
        `(batch, num_classes)`.

    Example:
    >>> from kbert.models import Encoder
    >>> model = frozen_encoder_classifier(Encoder.from_preset("tiny"), num_classes=3,
    ...                                   layers="scalar_mix", pooling="mean")
    >>> tuple(model.output.shape), len(model.trainable_weights)  # mix w, gamma, logits W, b
    ((None, 3), 4)
    """
    encoder.trainable = False
    inputs = encoder.input
    hidden_states = encoder.output["hidden_states"]
    features = pool_hidden_states(hidden_states, inputs["padding_mask"], pooling)
    features = ops.cast(features, "float32")  # (batch, layers, hidden)
    classifier = FeatureClassifier(
        len(hidden_states),
        int(features.shape[-1]),
        num_classes,
        layers=layers,
        hidden_units=hidden_units,
        dropout=dropout,
        name="feature_classifier",
    )
    return keras.Model(inputs, classifier(features), name="frozen_encoder_classifier")
