"""Perplexity as a streaming metric: exp of the token-weighted mean negative log-likelihood."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kbert")
class Perplexity(keras.metrics.Mean):
    """exp(Σ w·nll / Σ w) over everything seen since the last reset.

    Fed per-token negative log-likelihoods (natural log) and per-token weights (1 for a scored
    token, 0 for padding), it gives the corpus-level perplexity of the tokens it has seen, not
    the mean of per-batch perplexities (which would over-weight short batches and, by Jensen's
    inequality, come out higher).

    Args:
        name: str, default "perplexity".
        dtype: default None (float32).

    Example:
    >>> metric = Perplexity()
    >>> metric.update_state(keras.ops.array([0.0, 2.0]), sample_weight=keras.ops.array([1.0, 1.0]))
    >>> round(float(metric.result()), 4)
    2.7183
    """

    def __init__(self, name="perplexity", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def result(self):
        return ops.exp(super().result())
