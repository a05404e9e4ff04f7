"""Next-token prediction (GPT; the NAACL 2019 tutorial's pretraining objective)."""

import keras
from keras import ops

from kbert.models import pretraining_utils
from kbert.models.perplexity import Perplexity
from kbert.models.pretraining_objective import PretrainingObjective
from kbert.models.tied_decoder import TiedDecoder


@keras.saving.register_keras_serializable(package="kbert")
class CausalLanguageModel(PretrainingObjective):
    """A causal encoder trained to predict each next token, with output weights tied to its input.

    Logits at every position are `sequence_output @ token_table^T + bias` (Radford et al. 2018;
    Press & Wolf 2017): the output matrix is the encoder's token embedding table, so the head
    owns only the bias (and, for an ALBERT-factorized encoder whose `embedding_dim` is smaller
    than `hidden_dim`, a Dense `output_projection` from hidden_dim to embedding_dim first).

    The loss is the mean negative log-likelihood of token t+1 given tokens ≤ t, over the
    positions whose target is a real token (`padding_mask` is 1 at both t and t+1); the first
    token of each row is context only. Metrics: `clm_loss`, `clm_perplexity` (sub-word:
    exp of the token-weighted mean NLL over the epoch), `clm_accuracy` (next-token arg-max).
    For word-level perplexity, sum `negative_log_likelihood(x)` over a corpus and divide by
    its number of words.

    Input `x`: `token_ids`, `padding_mask`, optional `segment_ids` (zeros when absent), all
    int32 `(batch, seq)`.

    Args:
        encoder: `kbert.models.Encoder` with `config.causal=True`.
        metric_prefix: str, default "clm".
        dtype: dtype policy, default None (the encoder's).
        **kwargs: `name`, `trainable`.

    Returns (from `call`):
        dict with `logits` `(batch, seq, vocabulary_size)`: position t scores token t+1.

    Example:
    >>> from kbert.models import Encoder
    >>> model = CausalLanguageModel(Encoder.from_preset("tiny", causal=True))
    >>> x = {"token_ids": ops.array([[2, 7, 9, 3]]), "padding_mask": ops.ones((1, 4), "int32")}
    >>> tuple(model(x)["logits"].shape)
    (1, 4, 50)
    """

    default_metric_prefix = "clm"

    def __init__(self, encoder, metric_prefix=None, dtype=None, **kwargs):
        if not encoder.config.causal:
            raise ValueError(
                "CausalLanguageModel needs a causal encoder (config.causal=True), or each "
                "position would see the token it must predict; received an encoder with "
                "config.causal=False (build one with Encoder.from_preset(..., causal=True))"
            )
        super().__init__(encoder, metric_prefix=metric_prefix, dtype=dtype, **kwargs)
        config = encoder.config
        width = config.embedding_dim or config.hidden_dim
        self.output_projection = None
        if width != config.hidden_dim:
            self.output_projection = keras.layers.Dense(
                width,
                kernel_initializer=keras.initializers.TruncatedNormal(
                    stddev=config.initializer_range
                ),
                dtype=self.dtype_policy,
                name="output_projection",
            )
            self.output_projection.build((None, None, config.hidden_dim))
        self.decoder = TiedDecoder(config.vocabulary_size, dtype=self.dtype_policy, name="decoder")
        self.decoder.build((None, None, width), (config.vocabulary_size, width))
        self.perplexity_metric = Perplexity(name=f"{self.metric_prefix}_perplexity")
        self.accuracy_metric = keras.metrics.Mean(name=f"{self.metric_prefix}_accuracy")
        self.built = True

    @property
    def objective_metrics(self):
        return [self.loss_metric, self.perplexity_metric, self.accuracy_metric]

    def call_head(self, encoder_outputs, x, training=None):
        hidden = encoder_outputs["sequence_output"]  # (batch, seq, hidden_dim)
        if self.output_projection is not None:
            hidden = self.output_projection(hidden)  # (batch, seq, embedding_dim)
        table = self.encoder.embeddings.token_embedding.embeddings  # (vocab, width)
        return {"logits": self.decoder(hidden, embedding_table=table)}

    def token_negative_log_likelihood(self, x, logits):
        """Per-position NLL of the next token, and which positions count.

        Args:
            x: dict with `token_ids` and `padding_mask` `(batch, seq)`.
            logits: `(batch, seq, vocabulary_size)` from `call`.

        Returns:
            dict with float32 `(batch, seq)` tensors: `nll` (of token t+1 at position t),
            `weights` (1 where both t and t+1 are real tokens; 0 at the last position, which
            predicts nothing), `correct` (arg-max right).
        """
        # The targets are shifted rather than the logits sliced: the gradient of a slice of the
        # (batch, seq, vocabulary) logits writes a tensor that size again (a tenth of lab01's
        # mixed-bfloat16 step, `benchmarks/step_profile.py`); the last position scores a dummy
        # target at weight 0.
        token_ids = x["token_ids"]
        targets = ops.concatenate([token_ids[:, 1:], ops.zeros_like(token_ids[:, :1])], axis=1)
        mask = ops.cast(x["padding_mask"], "float32")
        following = ops.concatenate([mask[:, 1:], ops.zeros_like(mask[:, :1])], axis=1)
        weights = mask * following  # (batch, seq)
        return {
            "nll": pretraining_utils.sparse_cross_entropy(targets, logits),
            "weights": weights,
            "correct": pretraining_utils.predicted_correctly(targets, logits),
        }

    def objective_loss(self, x, y_pred):
        scored = self.token_negative_log_likelihood(x, y_pred["logits"])
        loss = pretraining_utils.weighted_mean(scored["nll"], scored["weights"])
        self.loss_metric.update_state(loss)
        self.perplexity_metric.update_state(scored["nll"], sample_weight=scored["weights"])
        self.accuracy_metric.update_state(scored["correct"], sample_weight=scored["weights"])
        return loss

    def negative_log_likelihood(self, x):
        """Per-sequence total NLL (natural log) and number of scored tokens, for perplexity.

        Runs in inference mode. Over a corpus, sub-word perplexity is
        `exp(sum(total_nll) / sum(token_count))` and word-level perplexity (the tutorial's
        measure, comparable across tokenizers) is `exp(sum(total_nll) / number_of_words)`.

        Args:
            x: dict with `token_ids`, `padding_mask` (and optional `segment_ids`).

        Returns:
            dict with float32 `(batch,)` tensors `total_nll` and `token_count` (real tokens
            after the first of each row: the ones that are predicted).
        """
        scored = self.token_negative_log_likelihood(x, self(x, training=False)["logits"])
        return {
            "total_nll": ops.sum(scored["nll"] * scored["weights"], axis=1),
            "token_count": ops.sum(scored["weights"], axis=1),
        }
