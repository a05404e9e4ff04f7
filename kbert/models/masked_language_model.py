"""BERT's masked language model: predict the original token at each masked position."""

import keras

from kbert.layers.activations import get_activation
from kbert.models import pretraining_utils
from kbert.models.perplexity import Perplexity
from kbert.models.pretraining_objective import PretrainingObjective
from kbert.models.tied_decoder import TiedDecoder


@keras.saving.register_keras_serializable(package="kbert")
class MaskedLanguageModel(PretrainingObjective):
    """BERT's MLM head on an encoder, scored only at the masked positions.

    The head (Devlin et al. 2019; J&M §11.2) gathers `sequence_output` at `mask_positions`
    first, then transforms (Dense → the encoder's activation → LayerNorm) and decodes with the
    encoder's token table (tied weights, plus a bias): gathering first means the vocabulary
    projection runs on about 15% of the tokens instead of all of them. For an ALBERT-factorized
    encoder the transform maps hidden_dim to embedding_dim, as ALBERT's head does.

    The loss is the `mask_weights`-weighted mean cross-entropy against `mask_ids` (weight 0
    marks padding rows of the selection tensors). Metrics: `mlm_loss`, `mlm_accuracy` (masked
    tokens predicted by arg-max), `mlm_perplexity`.

    Input `x`: the encoder inputs (`segment_ids` optional) and, from a masker,
    `mask_positions`, `mask_ids` (int32) and `mask_weights` (float32), all
    `(batch, max_selections)`.

    Args:
        encoder: `kbert.models.Encoder`.
        metric_prefix: str, default "mlm".
        dtype: dtype policy, default None (the encoder's).
        **kwargs: `name`, `trainable`.

    Returns (from `call`):
        dict with `logits` `(batch, max_selections, vocabulary_size)`.

    Example:
    >>> from keras import ops
    >>> from kbert.models import Encoder
    >>> model = MaskedLanguageModel(Encoder.from_preset("tiny"))
    >>> x = {"token_ids": ops.array([[2, 4, 9, 3]]), "padding_mask": ops.ones((1, 4), "int32"),
    ...      "mask_positions": ops.array([[1]]), "mask_ids": ops.array([[7]]),
    ...      "mask_weights": ops.array([[1.0]])}
    >>> tuple(model(x)["logits"].shape)
    (1, 1, 50)
    """

    default_metric_prefix = "mlm"
    selection_keys = ("mask_positions", "mask_ids", "mask_weights")

    def __init__(self, encoder, metric_prefix=None, dtype=None, **kwargs):
        super().__init__(encoder, metric_prefix=metric_prefix, dtype=dtype, **kwargs)
        config = encoder.config
        width = config.embedding_dim or config.hidden_dim
        policy = self.dtype_policy
        self.transform = keras.layers.Dense(
            width,
            activation=get_activation(config.activation),
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=config.initializer_range),
            dtype=policy,
            name="transform",
        )
        self.transform_norm = keras.layers.LayerNormalization(
            epsilon=config.layer_norm_epsilon, dtype=policy, name="transform_norm"
        )
        self.decoder = TiedDecoder(config.vocabulary_size, dtype=policy, name="decoder")
        self.transform.build((None, None, config.hidden_dim))
        self.transform_norm.build((None, None, width))
        self.decoder.build((None, None, width), (config.vocabulary_size, width))
        self.accuracy_metric = keras.metrics.Mean(name=f"{self.metric_prefix}_accuracy")
        self.perplexity_metric = Perplexity(name=f"{self.metric_prefix}_perplexity")
        self.built = True

    @property
    def objective_metrics(self):
        return [self.loss_metric, self.accuracy_metric, self.perplexity_metric]

    def call_head(self, encoder_outputs, x, training=None):
        selected = pretraining_utils.gather_positions(
            encoder_outputs["sequence_output"], x["mask_positions"]
        )  # (batch, sel, hidden)
        hidden = self.transform_norm(self.transform(selected))  # (batch, sel, width)
        table = self.encoder.embeddings.token_embedding.embeddings  # (vocab, width)
        return {"logits": self.decoder(hidden, embedding_table=table)}

    def objective_loss(self, x, y_pred):
        nll = pretraining_utils.sparse_cross_entropy(x["mask_ids"], y_pred["logits"])
        weights = x["mask_weights"]
        loss = pretraining_utils.weighted_mean(nll, weights)
        correct = pretraining_utils.predicted_correctly(x["mask_ids"], y_pred["logits"])
        self.loss_metric.update_state(loss)
        self.accuracy_metric.update_state(correct, sample_weight=weights)
        self.perplexity_metric.update_state(nll, sample_weight=weights)
        return loss
