"""BERT's next-sentence prediction, and ALBERT's sentence-order prediction with the same head."""

import keras
from keras import ops

from kbert.models import pretraining_utils
from kbert.models.pretraining_objective import PretrainingObjective


@keras.saving.register_keras_serializable(package="kbert")
class NextSentencePrediction(PretrainingObjective):
    """A two-way classifier on `pooled_output` ([CLS]) that scores a sentence pair.

    For NSP (BERT) the pair is a real continuation (label 1) or a random sentence (label 0);
    for SOP (ALBERT) it is two consecutive segments in order (1) or swapped (0). The head and
    loss are the same, only the data differ, so pass `metric_prefix="sop"` to have the logs
    say which one ran. Class index k is label k, so `logits[:, 1]` scores "is next / in
    order" (original BERT checkpoints put IsNext at index 0: swap the rows when loading them).

    The loss is the mean cross-entropy over the batch. Metrics: `nsp_loss`, `nsp_accuracy`.

    Input `x`: the encoder inputs and `next_sentence_labels` int32 `(batch,)`.

    Args:
        encoder: `kbert.models.Encoder`.
        metric_prefix: str, default "nsp".
        dtype: dtype policy, default None (the encoder's).
        **kwargs: `name`, `trainable`.

    Returns (from `call`):
        dict with `logits` `(batch, 2)`.

    Example:
    >>> from kbert.models import Encoder
    >>> model = NextSentencePrediction(Encoder.from_preset("tiny"), metric_prefix="sop")
    >>> x = {"token_ids": ops.array([[2, 4, 3, 9, 3]]), "padding_mask": ops.ones((1, 5), "int32"),
    ...      "segment_ids": ops.array([[0, 0, 0, 1, 1]]), "next_sentence_labels": ops.array([1])}
    >>> tuple(model(x)["logits"].shape)
    (1, 2)
    """

    default_metric_prefix = "nsp"
    extra_keys = ("next_sentence_labels",)

    def __init__(self, encoder, metric_prefix=None, dtype=None, **kwargs):
        super().__init__(encoder, metric_prefix=metric_prefix, dtype=dtype, **kwargs)
        config = encoder.config
        self.classifier = keras.layers.Dense(
            2,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=config.initializer_range),
            dtype=self.dtype_policy,
            name="classifier",
        )
        self.classifier.build((None, config.hidden_dim))
        self.accuracy_metric = keras.metrics.Mean(name=f"{self.metric_prefix}_accuracy")
        self.built = True

    @property
    def objective_metrics(self):
        return [self.loss_metric, self.accuracy_metric]

    def validate_inputs(self, x):
        super().validate_inputs(x)
        shape = tuple(x["next_sentence_labels"].shape)
        batch = x["token_ids"].shape[0]
        if len(shape) != 1 or (None not in (shape[0], batch) and shape[0] != batch):
            raise ValueError(
                f"NextSentencePrediction: x['next_sentence_labels'] must have shape "
                f"(batch,) = ({batch},); received {shape}"
            )

    def call_head(self, encoder_outputs, x, training=None):
        return {"logits": self.classifier(encoder_outputs["pooled_output"])}  # (batch, 2)

    def objective_loss(self, x, y_pred):
        labels = x["next_sentence_labels"]
        loss = ops.mean(pretraining_utils.sparse_cross_entropy(labels, y_pred["logits"]))
        self.loss_metric.update_state(loss)
        self.accuracy_metric.update_state(
            pretraining_utils.predicted_correctly(labels, y_pred["logits"])
        )
        return loss
