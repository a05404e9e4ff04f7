"""Batches of pre-computed token features, each trimmed to its longest row.

Token and span tasks (NER, extractive QA) featurize once in Python: every example becomes rows
of fixed-length numpy arrays (token ids, labels, offsets). Training on rows padded to 384 tokens
when most need 150 wastes most of the compute, so the batches here keep the rows of similar
length together and cut every per-token array to the batch's longest row.
"""

import numpy as np
import tensorflow as tf

from kbert.checks import check_positive_int


def length_grouped_indices(lengths, batch_size, training, rng):
    """Row indices of each batch: in order for evaluation; for training, shuffled, grouped by
    length within windows of 50 batches, in shuffled batch order (`rng` a numpy Generator)."""
    order = np.arange(len(lengths))
    if not training:
        return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    order = rng.permutation(order)
    # Sort within windows of 50 batches: rows of similar length share a batch, while which rows
    # meet still changes every epoch.
    window = batch_size * 50
    batches = []
    for begin in range(0, len(order), window):
        chunk = order[begin : begin + window]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def feature_batches(
    features,
    label_keys=(),
    batch_size=32,
    training=False,
    seed=0,
    length_key="padding_mask",
    extra_length_keys=(),
    input_keys=None,
):
    """A `tf.data.Dataset` of `(inputs, labels)` batches from arrays of token features.

    Args:
        features: dict of str to numpy arrays with the same first dimension (rows). Arrays whose
            second dimension equals that of `features[length_key]` are per-token and get trimmed
            to the batch's longest row; others (e.g. per-row answer positions, or span lists of
            another length) pass whole.
        label_keys: sequence of str, default (). Keys that form the labels: one key gives a
            tensor, several a dict. A dict `{output_name: key}` gives a dict keyed by the model's
            output names (extractive QA: `{"start_logits": "start_positions", ...}`). The
            remaining keys form the inputs dict.
        batch_size: int, default 32.
        training: bool, default False. Shuffle (again each epoch, seeded) and group rows of
            similar length; otherwise keep the order, so predictions line up with the rows.
        seed: int, default 0.
        length_key: str, default "padding_mask". The 0/1 array whose row sums are the lengths.
        extra_length_keys: sequence of str, default (). Further 0/1 masks named `<prefix>_mask`
            (e.g. `span_mask` over candidate spans): the arrays whose names start with
            `<prefix>_` and that are as wide as the mask get trimmed by its longest row instead
            of by `length_key`.
        input_keys: sequence of str, default None (every key that is not a label). The keys
            that form the inputs dict (the model's input names).

    Returns:
        A `tf.data.Dataset`; without `label_keys`, of inputs dicts only.

    Example:
    >>> features = {"token_ids": np.array([[2, 5, 3, 0], [2, 3, 0, 0]]),
    ...             "padding_mask": np.array([[1, 1, 1, 0], [1, 1, 0, 0]])}
    >>> batch = next(iter(feature_batches(features, batch_size=2)))
    >>> batch["token_ids"].numpy().tolist()
    [[2, 5, 3], [2, 3, 0]]
    """
    batch_size = check_positive_int("batch_size", batch_size)
    if length_key not in features:
        raise ValueError(
            f"features need {length_key!r} to measure row lengths; received keys {sorted(features)}"
        )
    renamed = dict(label_keys) if isinstance(label_keys, dict) else None
    label_keys = tuple(renamed.values()) if renamed is not None else tuple(label_keys)
    missing = [key for key in label_keys if key not in features]
    if missing:
        raise ValueError(f"label keys {missing} are not in features {sorted(features)}")
    features = {key: np.asarray(value) for key, value in features.items()}
    rows = {key: len(value) for key, value in features.items()}
    if len(set(rows.values())) != 1:
        raise ValueError(f"every feature array needs the same number of rows; received {rows}")
    if not rows[length_key]:
        raise ValueError("features hold no rows")
    lengths = features[length_key].sum(axis=1)
    # Which mask trims each array: an extra mask claims the arrays of its prefix (a span list may
    # be as wide as the token axis by chance, so width alone cannot tell), then `length_key`
    # takes the other arrays as wide as it.
    trim_by = {}
    for mask_key in tuple(extra_length_keys) + (length_key,):
        if mask_key not in features:
            raise ValueError(f"length key {mask_key!r} is not in features {sorted(features)}")
        if mask_key != length_key and not mask_key.endswith("_mask"):
            raise ValueError(
                f"extra length keys must be named '<prefix>_mask'; received {mask_key!r}"
            )
        prefix = mask_key[: -len("mask")] if mask_key != length_key else ""
        width = features[mask_key].shape[1]
        for key, value in features.items():
            if (
                key not in trim_by
                and key.startswith(prefix)
                and value.ndim >= 2
                and value.shape[1] == width
            ):
                trim_by[key] = mask_key
    mask_lengths = {key: features[key].sum(axis=1) for key in set(trim_by.values())}
    if input_keys is None:
        input_keys = [key for key in features if key not in label_keys]
    unknown = [key for key in input_keys if key not in features]
    if unknown:
        raise ValueError(f"input keys {unknown} are not in features {sorted(features)}")
    state = {"epoch": 0}

    def cut(key, index):
        value = features[key][index]
        if key not in trim_by:
            return value
        return value[:, : max(int(mask_lengths[trim_by[key]][index].max()), 1)]

    def batches():
        rng = np.random.default_rng([seed, state["epoch"]])
        state["epoch"] += 1
        for index in length_grouped_indices(lengths, batch_size, training, rng):
            inputs = {key: cut(key, index) for key in input_keys}
            if not label_keys:
                yield inputs
                continue
            if renamed is not None:
                yield inputs, {name: cut(key, index) for name, key in renamed.items()}
            elif len(label_keys) == 1:
                yield inputs, cut(label_keys[0], index)
            else:
                yield inputs, {key: cut(key, index) for key in label_keys}

    def spec(key):
        value = features[key]
        shape = (None,) + ((None,) if key in trim_by else value.shape[1:2]) + value.shape[2:]
        return tf.TensorSpec(shape, tf.as_dtype(value.dtype))

    input_spec = {key: spec(key) for key in input_keys}
    if not label_keys:
        signature = input_spec
    elif renamed is not None:
        signature = (input_spec, {name: spec(key) for name, key in renamed.items()})
    elif len(label_keys) == 1:
        signature = (input_spec, spec(label_keys[0]))
    else:
        signature = (input_spec, {key: spec(key) for key in label_keys})
    dataset = tf.data.Dataset.from_generator(batches, output_signature=signature)
    batches_per_epoch = -(-len(lengths) // batch_size)
    return dataset.apply(tf.data.experimental.assert_cardinality(batches_per_epoch)).prefetch(2)
