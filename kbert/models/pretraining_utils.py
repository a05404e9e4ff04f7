"""Helpers shared by the pretraining objectives: input checks, gathering, weighted losses.

The objectives read everything they need from the input dict `x` (a masker or a sentence-pair
sampler wrote it), so `model.fit(dataset_of_x_dicts)` needs no separate labels. These functions
check that dict and compute the weighted losses the objectives have in common.
"""

import keras
from keras import ops

ENCODER_KEYS = ("token_ids", "segment_ids", "padding_mask")


def symbolic_encoder_inputs(extra=()):
    """Fresh symbolic int32 inputs `(batch, seq)` by name: the encoder's three, then `extra`.

    Every functional model on an `Encoder` (the encoder itself, task heads, prompt tuning)
    starts from these, so the input names, dtypes and order are written once.
    """
    return {
        name: keras.Input(shape=(None,), dtype="int32", name=name)
        for name in ENCODER_KEYS + tuple(extra)
    }


# The encoder cannot run without these; `segment_ids` defaults to zeros (one-segment text).
REQUIRED_ENCODER_KEYS = ("token_ids", "padding_mask")


# Labels equal to this are not scored (the models' losses; kbert.data uses the same value).
IGNORE_INDEX = -100


def encoder_dtype_policy(encoder):
    """The dtype policy the encoder's layers compute in, for the heads built on it.

    Read from the embedding layer rather than `encoder.dtype_policy`: a functional model does not
    keep the `dtype` it was built with, so an encoder built with `dtype="mixed_float16"` reports
    float32 there while every layer in it runs in float16. An encoder without kbert's
    `embeddings` layer (a TF Hub module wrapped by `kbert.hub.hub_encoder_model`) computes in its
    own policy.
    """
    embeddings = getattr(encoder, "embeddings", None)
    return (embeddings if embeddings is not None else encoder).dtype_policy


def require_inputs(x, keys, owner):
    """Raises a ValueError naming the first of `keys` that the input dict `x` lacks.

    Args:
        x: dict of tensors. The model input.
        keys: sequence of str. The keys `owner` reads.
        owner: str. The model's class name, for the message.
    """
    if not isinstance(x, dict):
        raise ValueError(
            f"{owner} expects a dict of tensors with keys {list(keys)}; received {type(x).__name__}"
        )
    for key in keys:
        if key not in x:
            raise ValueError(
                f"{owner} needs x[{key!r}], which is missing: expected keys "
                f"{list(keys)}; received keys {sorted(x)}"
            )


def check_same_shape(x, keys, owner, rank=2):
    """Raises a ValueError when the tensors `x[key]` differ in rank or in a known dimension.

    Only static shapes are compared: under `tf.function` a dimension left unknown (usually the
    batch) is checked by the ops that use it.

    Args:
        x: dict of tensors.
        keys: sequence of str. Keys whose tensors must share one shape, e.g. the mask tensors
            `(batch, max_selections)`.
        owner: str. The model's class name, for the message.
        rank: int, default 2. The rank every tensor must have.
    """
    reference_key, reference = None, None
    for key in keys:
        shape = tuple(x[key].shape)
        if len(shape) != rank:
            raise ValueError(f"{owner}: x[{key!r}] must have rank {rank}; received shape {shape}")
        if reference is None:
            reference_key, reference = key, shape
            continue
        for expected, received in zip(reference, shape, strict=True):
            if expected is not None and received is not None and expected != received:
                raise ValueError(
                    f"{owner}: x[{key!r}] has shape {shape}, expected the shape of "
                    f"x[{reference_key!r}], {reference}"
                )


def encoder_inputs(x):
    """Returns the encoder's three inputs from `x`, with all-zero `segment_ids` when absent."""
    segment_ids = x.get("segment_ids")
    if segment_ids is None:
        segment_ids = ops.zeros_like(x["token_ids"])
    return {
        "token_ids": x["token_ids"],
        "segment_ids": segment_ids,
        "padding_mask": x["padding_mask"],
    }


def gather_positions(sequence, positions):
    """Picks vectors at given positions of each sequence.

    Args:
        sequence: tensor `(batch, seq, width)`.
        positions: int tensor `(batch, selections)`.

    Returns:
        Tensor `(batch, selections, width)`.
    """
    positions = ops.cast(positions, "int32")
    return ops.take_along_axis(sequence, positions[:, :, None], axis=1)


def weighted_mean(values, weights):
    """Sum of `values * weights` over the sum of `weights`; 0 when every weight is 0."""
    weights = ops.cast(weights, values.dtype)
    return ops.divide_no_nan(ops.sum(values * weights), ops.sum(weights))


def sparse_cross_entropy(targets, logits):
    """Per-position negative log-likelihood of integer targets, computed in float32.

    Mixed-precision heads emit float16/bfloat16 logits; a log-softmax over a large vocabulary
    loses too much there, so the logits are cast first.

    Args:
        targets: int tensor of any shape `S`.
        logits: float tensor `S + (classes,)`.

    Returns:
        Float32 tensor of shape `S`.
    """
    return keras.losses.sparse_categorical_crossentropy(
        ops.cast(targets, "int32"), ops.cast(logits, "float32"), from_logits=True
    )


def predicted_correctly(targets, logits):
    """1.0 where the arg-max of `logits` equals `targets`, else 0.0 (float32, shape of targets)."""
    predictions = ops.argmax(logits, axis=-1)
    return ops.cast(
        ops.equal(ops.cast(predictions, "int32"), ops.cast(targets, "int32")), "float32"
    )


def total_loss(model, objective_loss, y):
    """Adds the model's regularization losses to its objective and rejects separate targets.

    Args:
        model: keras.Model. The pretraining model (its `losses` hold regularization terms).
        objective_loss: float32 scalar.
        y: the targets `fit` unpacked from the data; must be None.

    Returns:
        Float32 scalar.
    """
    if y is not None:
        raise ValueError(
            f"{type(model).__name__} reads its targets from the input dict; fit it on a dataset "
            f"of x dicts only; received targets y of type {type(y).__name__}"
        )
    return with_regularization(model, objective_loss)


def with_regularization(model, loss):
    """`loss` plus the model's regularization losses (`model.losses`), in float32."""
    for regularization in model.losses:
        loss = loss + ops.cast(regularization, "float32")
    return loss


def serialize_objective(objective):
    """A pretraining objective's Keras config without its encoder, which the model holding it
    (sharing one encoder among several heads) stores once."""
    spec = keras.saving.serialize_keras_object(objective)
    spec["config"] = {key: value for key, value in spec["config"].items() if key != "encoder"}
    return spec


def deserialize_objective(spec, encoder):
    """Rebuilds an objective saved by `serialize_objective` on the shared `encoder`."""
    objective_class = keras.saving.get_registered_object(spec["registered_name"])
    if objective_class is None:
        raise ValueError(
            f"objective class {spec['registered_name']!r} is not registered; expected "
            f"a class decorated with keras.saving.register_keras_serializable"
        )
    return objective_class.from_config({**spec["config"], "encoder": encoder})
