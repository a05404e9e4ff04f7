"""SpanBERT's span boundary objective: predict each masked token from the span's boundaries."""

import keras
from keras import ops

from kbert.checks import check_positive_int
from kbert.layers.activations import get_activation
from kbert.layers.initializers import clone_initializer
from kbert.models import pretraining_utils
from kbert.models.pretraining_objective import PretrainingObjective
from kbert.models.tied_decoder import TiedDecoder


@keras.saving.register_keras_serializable(package="kbert")
class SpanBoundaryObjective(PretrainingObjective):
    """Predicts each token of a masked span from the two tokens around it (Joshi et al. 2020).

    For a masked token x_i in the span [s, e] (J&M eq. 11.17-11.20):

        h0 = [z_{s-1}; z_{e+1}; p_{i-s+1}]
        h1 = LayerNorm(GELU(W1 h0))
        y_i = LayerNorm(GELU(W2 h1))

    where z are the encoder's outputs at the boundary positions and p a learned relative
    position embedding; y_i is decoded by the encoder's token table (tied, plus this head's own
    bias). Only the boundaries carry information about the span's content, which pushes span
    summaries into them. The loss is the `mask_weights`-weighted mean cross-entropy against
    `mask_ids`. Metrics: `sbo_loss`, `sbo_accuracy`.

    SpanBERT trains MLM + SBO on one encoder pass (and no NSP)::

        PretrainingModel(encoder, [MaskedLanguageModel(encoder), SpanBoundaryObjective(encoder)])

    Input `x`: the encoder inputs and, from a span masker, `mask_left_boundary` (position s-1),
    `mask_right_boundary` (e+1), `mask_relative_positions` (1-based i-s+1), `mask_ids`
    (int32) and `mask_weights` (float32), all `(batch, max_selections)`. Relative positions
    above `max_span_length` share the last embedding row.

    Args:
        encoder: `kbert.models.Encoder`.
        max_span_length: int, default 10 (SpanBERT's cap). Rows of the position table.
        metric_prefix: str, default "sbo".
        dtype: dtype policy, default None (the encoder's).
        **kwargs: `name`, `trainable`.

    Returns (from `call`):
        dict with `logits` `(batch, max_selections, vocabulary_size)`.

    Example:
    >>> from kbert.models import Encoder
    >>> model = SpanBoundaryObjective(Encoder.from_preset("tiny"))
    >>> x = {"token_ids": ops.array([[2, 4, 4, 9, 3]]), "padding_mask": ops.ones((1, 5), "int32"),
    ...      "mask_left_boundary": ops.array([[0, 0]]), "mask_right_boundary": ops.array([[3, 3]]),
    ...      "mask_relative_positions": ops.array([[1, 2]]), "mask_ids": ops.array([[7, 8]]),
    ...      "mask_weights": ops.array([[1.0, 1.0]])}
    >>> tuple(model(x)["logits"].shape)
    (1, 2, 50)
    """

    default_metric_prefix = "sbo"
    selection_keys = (
        "mask_left_boundary",
        "mask_right_boundary",
        "mask_relative_positions",
        "mask_ids",
        "mask_weights",
    )

    def __init__(self, encoder, max_span_length=10, metric_prefix=None, dtype=None, **kwargs):
        max_span_length = check_positive_int("max_span_length", max_span_length)
        super().__init__(encoder, metric_prefix=metric_prefix, dtype=dtype, **kwargs)
        self.max_span_length = max_span_length
        config = encoder.config
        hidden, width = config.hidden_dim, config.embedding_dim or config.hidden_dim
        initializer = keras.initializers.TruncatedNormal(stddev=config.initializer_range)
        activation = get_activation(config.activation)
        policy = self.dtype_policy
        self.position_embedding = keras.layers.Embedding(
            max_span_length,
            hidden,
            embeddings_initializer=clone_initializer(initializer),
            dtype=policy,
            name="position_embedding",
        )
        self.dense_1 = keras.layers.Dense(
            hidden,
            activation=activation,
            kernel_initializer=clone_initializer(initializer),
            dtype=policy,
            name="dense_1",
        )
        self.norm_1 = keras.layers.LayerNormalization(
            epsilon=config.layer_norm_epsilon, dtype=policy, name="norm_1"
        )
        # The second layer ends at the table's width so the tied decoder can read it.
        self.dense_2 = keras.layers.Dense(
            width,
            activation=activation,
            kernel_initializer=clone_initializer(initializer),
            dtype=policy,
            name="dense_2",
        )
        self.norm_2 = keras.layers.LayerNormalization(
            epsilon=config.layer_norm_epsilon, dtype=policy, name="norm_2"
        )
        self.decoder = TiedDecoder(config.vocabulary_size, dtype=policy, name="decoder")
        self.position_embedding.build((None, None))
        self.dense_1.build((None, None, 3 * hidden))
        self.norm_1.build((None, None, hidden))
        self.dense_2.build((None, None, hidden))
        self.norm_2.build((None, None, width))
        self.decoder.build((None, None, width), (config.vocabulary_size, width))
        self.accuracy_metric = keras.metrics.Mean(name=f"{self.metric_prefix}_accuracy")
        self.built = True

    @property
    def objective_metrics(self):
        return [self.loss_metric, self.accuracy_metric]

    def call_head(self, encoder_outputs, x, training=None):
        sequence = encoder_outputs["sequence_output"]
        left = pretraining_utils.gather_positions(sequence, x["mask_left_boundary"])
        right = pretraining_utils.gather_positions(sequence, x["mask_right_boundary"])
        # 1-based offsets; padding selections carry 0, clipped to row 0 and weighted out.
        offsets = ops.clip(
            ops.cast(x["mask_relative_positions"], "int32") - 1, 0, self.max_span_length - 1
        )
        positions = self.position_embedding(offsets)  # (batch, sel, hidden)
        hidden = ops.concatenate([left, right, ops.cast(positions, left.dtype)], axis=-1)
        hidden = self.norm_1(self.dense_1(hidden))  # (batch, sel, hidden)
        hidden = self.norm_2(self.dense_2(hidden))  # (batch, sel, width)
        table = self.encoder.embeddings.token_embedding.embeddings  # (vocab, width)
        return {"logits": self.decoder(hidden, embedding_table=table)}

    def objective_loss(self, x, y_pred):
        nll = pretraining_utils.sparse_cross_entropy(x["mask_ids"], y_pred["logits"])
        loss = pretraining_utils.weighted_mean(nll, x["mask_weights"])
        self.loss_metric.update_state(loss)
        self.accuracy_metric.update_state(
            pretraining_utils.predicted_correctly(x["mask_ids"], y_pred["logits"]),
            sample_weight=x["mask_weights"],
        )
        return loss

    def get_config(self):
        return {**super().get_config(), "max_span_length": self.max_span_length}
