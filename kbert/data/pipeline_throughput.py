"""How many examples per second an input pipeline delivers, to compare with the training step.

If the pipeline delivers fewer examples per second than the model trains on, the accelerator
waits for data; labs print this number next to the training step's to show it does not.
"""

import time

import tensorflow as tf


def measure_pipeline_throughput(dataset, steps, warmup_steps=1):
    """Reads `steps` batches from a dataset and returns the examples delivered per second.

    The first `warmup_steps` batches are read but not timed (they pay for tracing, opening
    files, the first epoch's cache fill up to them and filling the prefetch buffer). The dataset
    is repeated, so a short one still gives `steps` batches and epoch boundaries (reshuffling)
    are timed too. Examples are counted along the first dimension of the batch's first tensor.

    Args:
        dataset: `tf.data.Dataset` of batches (tensors or nested dicts of tensors).
        steps: int, at least 1. Batches timed.
        warmup_steps: int, default 1. Batches read before the clock starts.

    Returns:
        float, examples per second.

    Example:
    >>> batches = tf.data.Dataset.range(1000).batch(10)
    >>> measure_pipeline_throughput(batches, steps=20) > 0
    True
    """
    if not isinstance(dataset, tf.data.Dataset):
        raise ValueError(f"dataset must be a tf.data.Dataset; received {type(dataset).__name__}")
    for name, value, minimum in (("steps", steps, 1), ("warmup_steps", warmup_steps, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ValueError(f"{name} must be an int of at least {minimum}; received {value!r}")
    # repeat() of an empty dataset ends instead of looping forever.
    iterator = iter(dataset.repeat())
    for _ in range(warmup_steps):
        if next(iterator, None) is None:
            raise ValueError("dataset yields no batches; expected a non-empty dataset")
    examples = 0
    start = time.perf_counter()
    for _ in range(steps):
        batch = next(iterator, None)
        if batch is None:
            raise ValueError("dataset yields no batches; expected a non-empty dataset")
        first = tf.nest.flatten(batch)[0]
        examples += int(first.shape[0]) if first.shape.rank else 1
    return examples / (time.perf_counter() - start)
