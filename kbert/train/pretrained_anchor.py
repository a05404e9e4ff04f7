"""Regularisation toward the pretrained weights: L2-SP and EWC.

Fine-tuning on a small task can drift far from the pretrained point and forget what pretraining
taught. L2-SP (Li et al. 2018) penalises the distance to the starting point,
`strength / 2 · Σ (w - w₀)²`, instead of the distance to zero that weight decay uses; EWC
(Kirkpatrick et al. 2017) weights each coordinate by its importance to the pretraining task, the
diagonal of the Fisher information, `strength / 2 · Σ F · (w - w₀)²`.

Both are per-variable Keras regularizers (`PretrainedAnchor`): `anchor_to_pretrained` snapshots
the current weights and sets each variable's `regularizer`. Keras adds
`variable.regularizer(variable)` to `model.losses` for every *trainable* weight, and
`Model.compute_loss` adds `model.losses` to the compiled loss, so `fit` (e.g.
`kbert.train.fine_tune_classifier`) minimises loss + penalty with no change to the model,
nested encoders included; frozen weights are skipped. `estimate_diagonal_fisher` gives EWC's
importances from the pretraining objective (`CausalLanguageModel`, `MaskedLanguageModel`,
`PretrainingModel`).

The anchors live on the variables, not in the model's config or weights: a `.keras` save of an
anchored model holds the model only, and a reloaded model trains without penalty until
`anchor_to_pretrained` is called on it again (with the pretrained weights loaded). Each anchor
keeps a float32 copy of its variable (and of its Fisher for EWC), so anchoring doubles (EWC:
triples) the memory of the anchored weights.
"""

import math

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from kbert.checks import check_int
from kbert.models.pretraining_model import PretrainingModel
from kbert.models.pretraining_objective import PretrainingObjective


def _check_strength(strength):
    if (
        isinstance(strength, bool)
        or not isinstance(strength, (int, float, np.floating, np.integer))
        or not math.isfinite(float(strength))
        or not strength > 0
    ):
        raise ValueError(f"strength must be a positive finite float; received {strength!r}")
    return float(strength)


def _non_trainable_copy(value, name):
    # A variable, not a constant: the traced train step reads it by handle, so a large anchor is
    # not embedded in the graph and re-anchoring needs no retrace.
    return keras.Variable(
        np.asarray(value, dtype="float32"), trainable=False, dtype="float32", name=name
    )


@keras.saving.register_keras_serializable(package="kbert")
class PretrainedAnchor(keras.regularizers.Regularizer):
    """Penalises a weight's distance to its pretrained value: `strength/2 · Σ F·(w - w₀)²`.

    With `importance=None` (F = 1) this is L2-SP (Li et al. 2018); with `importance` the
    diagonal Fisher of the pretraining loss it is EWC (Kirkpatrick et al. 2017). The anchor w₀
    and F are held as non-trainable float32 `keras.Variable`s (copies, made once), so the
    penalty traces once under `tf.function` whatever their values. Usually attached by
    `anchor_to_pretrained` rather than built by hand.

    Not serializable: `get_config` describes the anchor (strength, shape, kind) but does not
    hold its values, and `from_config` raises. Anchors set on variables are never written by
    `model.save`; re-attach them with `anchor_to_pretrained` after loading.

    Args:
        anchor: array-like or variable. The pretrained value w₀ (copied).
        strength: float > 0, default 1.0. The coefficient λ of `λ/2 · Σ F·(w - w₀)²`.
        importance: array-like of `anchor`'s shape, or None (default, L2-SP). Non-negative
            per-element weights F (copied).

    Returns (from `__call__(w)`):
        float32 scalar.

    Raises:
        ValueError: for a non-positive `strength`, an `importance` of another shape than
            `anchor`, or one with negative or non-finite entries.

    Example:
    >>> import numpy as np
    >>> anchor = PretrainedAnchor(np.zeros(3), strength=2.0, importance=[1.0, 0.0, 4.0])
    >>> float(anchor(np.array([1.0, 5.0, 1.0])))  # 2/2 · (1·1 + 0·25 + 4·1)
    5.0
    """

    def __init__(self, anchor, strength=1.0, importance=None):
        self.strength = _check_strength(strength)
        anchor_value = np.asarray(ops.convert_to_numpy(anchor), dtype="float32")
        self.anchor = _non_trainable_copy(anchor_value, "pretrained_anchor")
        self.importance = None
        if importance is not None:
            importance = np.asarray(ops.convert_to_numpy(importance), dtype="float32")
            if importance.shape != anchor_value.shape:
                raise ValueError(
                    f"importance must have the anchor's shape "
                    f"{anchor_value.shape}; received shape {importance.shape}"
                )
            if not np.all(np.isfinite(importance)) or np.any(importance < 0):
                raise ValueError(
                    "importance must be finite and non-negative (a diagonal "
                    "Fisher); received negative or non-finite entries"
                )
            self.importance = _non_trainable_copy(importance, "pretrained_importance")

    @property
    def kind(self):
        """ "l2_sp" without importances, "ewc" with them."""
        return "l2_sp" if self.importance is None else "ewc"

    def __call__(self, x):
        squared = ops.square(ops.cast(x, "float32") - self.anchor)  # w's shape
        if self.importance is not None:
            squared = self.importance * squared
        return ops.multiply(ops.cast(0.5 * self.strength, "float32"), ops.sum(squared))

    def get_config(self):
        # Describes the anchor without its values: a copy of every pretrained weight has no
        # place in a JSON config (see the class docstring).
        return {"strength": self.strength, "shape": list(self.anchor.shape), "kind": self.kind}

    @classmethod
    def from_config(cls, config):
        raise ValueError(
            "a PretrainedAnchor cannot be rebuilt from its config (it does not hold "
            "the pretrained values); expected anchors re-attached with "
            f"kbert.train.anchor_to_pretrained; received config {config}"
        )


def _invalidate_compiled_functions(model):
    # The regularization terms are traced into Keras's train/test functions; a stale one would
    # keep (or keep missing) the penalty. `compile` also drops them.
    for attribute in ("train_function", "test_function"):
        if getattr(model, attribute, None) is not None:
            setattr(model, attribute, None)


def _unique(variables):
    seen = set()
    result = []
    for variable in variables:
        if id(variable) not in seen:
            seen.add(id(variable))
            result.append(variable)
    return result


def anchor_to_pretrained(model, strength, fisher=None, variables=None):
    """Anchors weights to their current (pretrained) values with L2-SP, or EWC given a Fisher.

    Snapshots each variable and sets its `regularizer` to a `PretrainedAnchor`; `fit` then
    minimises the compiled loss plus `strength/2 · Σ F·(w - w₀)²` over the anchored weights
    that are trainable at the time (frozen ones cost nothing). Call it on the pretrained
    encoder, before the task head is trained (pass `classifier.encoder`, or the encoder before
    building the head), so the head's fresh weights stay free. Anchoring a variable that
    already carries a `PretrainedAnchor` replaces that anchor with a new snapshot. Call it
    before `fit` (it drops `model`'s compiled train function, so the next `fit` re-traces);
    re-call it after loading a saved model, since anchors are not saved.

    Args:
        model: keras.Model or Layer (e.g. `classifier.encoder`). Its `trainable_weights` are
            anchored unless `variables` is given.
        strength: float > 0. λ, against a mean per-example loss. A normalised Fisher
            (`estimate_diagonal_fisher(..., normalize=True)`) puts EWC's λ on L2-SP's scale.
        fisher: dict `{variable.path: np.ndarray}` or None (default: L2-SP). The diagonal Fisher
            for EWC, as returned by `estimate_diagonal_fisher`; it must hold every anchored
            variable, with its shape (extra entries are ignored).
        variables: list of variables, default None (`model.trainable_weights`).

    Returns:
        list of the anchored variables.

    Raises:
        ValueError: for a non-positive `strength`; a variable missing from `fisher` or with a
            Fisher of another shape (the message names its path); a variable that already has
            a regularizer that is not a `PretrainedAnchor` (it is not replaced silently).
            Nothing is anchored when it raises.

    Example:
    >>> from kbert.models import Encoder, SequenceClassifier
    >>> encoder = Encoder.from_preset("tiny")
    >>> anchored = anchor_to_pretrained(encoder, strength=0.1)
    >>> classifier = SequenceClassifier(encoder, num_classes=3)
    >>> len(anchored) == len(encoder.trainable_weights), anchor_penalty(classifier)
    (True, 0.0)
    """
    strength = _check_strength(strength)
    variables = _unique(model.trainable_weights if variables is None else variables)
    if fisher is not None and not isinstance(fisher, dict):
        raise ValueError(
            f"fisher must be a dict {{variable.path: np.ndarray}} or None; "
            f"received {type(fisher).__name__}"
        )
    # Check everything first so a bad argument leaves no variable half-anchored.
    importances = []
    for variable in variables:
        current = variable.regularizer
        if current is not None and not isinstance(current, PretrainedAnchor):
            raise ValueError(
                f"variable {variable.path!r} already has a regularizer "
                f"({type(current).__name__}); expected none or a PretrainedAnchor "
                f"(remove it first, e.g. `variable.regularizer = None`)"
            )
        importance = None
        if fisher is not None:
            if variable.path not in fisher:
                raise ValueError(
                    f"fisher has no entry for variable {variable.path!r}; expected "
                    f"one per anchored variable (received keys such as "
                    f"{sorted(fisher)[:3]})"
                )
            importance = np.asarray(fisher[variable.path], dtype="float32")
            if importance.shape != tuple(variable.shape):
                raise ValueError(
                    f"fisher[{variable.path!r}] must have the variable's shape "
                    f"{tuple(variable.shape)}; received shape {importance.shape}"
                )
        importances.append(importance)
    for variable, importance in zip(variables, importances, strict=True):
        variable.regularizer = PretrainedAnchor(variable, strength, importance)
    _invalidate_compiled_functions(model)
    return variables


def release_anchor(model_or_variables):
    """Removes the `PretrainedAnchor` regularizers (other regularizers are left alone).

    Args:
        model_or_variables: keras.Model or Layer (all its weights, frozen ones included), or an
            iterable of variables.

    Returns:
        list of the variables whose anchor was removed.

    Example:
    >>> from kbert.models import Encoder
    >>> encoder = Encoder.from_preset("tiny")
    >>> anchored = anchor_to_pretrained(encoder, strength=0.1)
    >>> len(release_anchor(encoder)) == len(anchored), encoder.losses
    (True, [])
    """
    is_layer = isinstance(model_or_variables, keras.layers.Layer)
    variables = model_or_variables.weights if is_layer else model_or_variables
    released = []
    for variable in _unique(variables):
        if isinstance(variable.regularizer, PretrainedAnchor):
            variable.regularizer = None
            released.append(variable)
    if is_layer:
        _invalidate_compiled_functions(model_or_variables)
    return released


def anchor_penalty(model):
    """The total anchor penalty `fit` adds to the loss right now, as a float.

    Sums `PretrainedAnchor(w)` over `model.trainable_weights` that carry one: frozen weights
    are left out, as Keras leaves them out of `model.losses`.

    Args:
        model: keras.Model or Layer.

    Returns:
        float (0.0 when nothing is anchored, or at the pretrained weights).

    Example:
    >>> from kbert.models import Encoder
    >>> encoder = Encoder.from_preset("tiny")
    >>> _ = anchor_to_pretrained(encoder, strength=0.1)
    >>> anchor_penalty(encoder)
    0.0
    """
    total = 0.0
    for variable in model.trainable_weights:
        if isinstance(variable.regularizer, PretrainedAnchor):
            total += float(ops.convert_to_numpy(variable.regularizer(variable)))
    return total


def _pretraining_loss(objective):
    """The unregularised pretraining loss `(x, y_pred) → scalar` of `objective`."""
    if not isinstance(objective, (PretrainingObjective, PretrainingModel)):
        raise ValueError(
            f"objective must be a kbert PretrainingObjective or PretrainingModel; "
            f"received {type(objective).__name__}"
        )
    return lambda x, y_pred: ops.cast(objective.objective_loss(x, y_pred), "float32")


def _metric_variables(objective):
    metrics = list(objective.metrics)
    for head in getattr(objective, "objectives", ()):
        metrics.extend(head.objective_metrics)
    return _unique(v for metric in metrics for v in metric.variables)


def _input_dict(batch, index):
    x = batch[0] if isinstance(batch, (tuple, list)) else batch
    if not isinstance(x, dict):
        raise ValueError(
            f"batches must yield input dicts `x` (or `(x, ...)` tuples); batch "
            f"{index} is a {type(x).__name__}"
        )
    return {key: tf.convert_to_tensor(value) for key, value in x.items()}


def estimate_diagonal_fisher(
    objective, batches, variables=None, max_batches=None, per_example=True, normalize=False
):
    """The diagonal empirical Fisher `E[g²]` of a pretraining loss, for EWC.

    g is the gradient of the objective's own loss (`objective_loss`, or `PretrainingModel`'s
    weighted sum, without regularization terms) with respect to each variable, evaluated at the
    current (pretrained) weights in inference mode (no dropout). With `per_example=True`
    (default) every example of every batch gets its own gradient (a loop over the batch inside
    one compiled `tf.function`, one forward and backward pass per example), and F is the mean
    of their squares over all examples: the per-example empirical Fisher. With
    `per_example=False` each batch gets one gradient of its mean loss and F is the mean of those
    squares over batches: cheaper by about the batch size, but the square of a mean gradient,
    a smaller estimate that shrinks as batches grow (identical with batch size 1). An
    objective's metrics are restored afterwards, so estimating does not show up in its logs.

    Args:
        objective: a kbert `PretrainingObjective` (`CausalLanguageModel(encoder)`,
            `MaskedLanguageModel(encoder)`, ...) or `PretrainingModel`, holding `.encoder`.
        batches: iterable (e.g. a `tf.data.Dataset`) of input dicts `x` as the objective reads
            them, or of `(x, ...)` tuples.
        variables: list of variables, default None (`objective.encoder.trainable_weights`).
        max_batches: int > 0 or None (default, every batch).
        per_example: bool, default True. Per-example squared gradients (see above).
        normalize: bool, default False. Divide every entry by the mean over all entries of all
            variables, so the mean importance is 1 and `anchor_to_pretrained`'s `strength`
            has the scale it has for L2-SP (only the relative importances then matter).

    Returns:
        dict `{variable.path: np.ndarray float32}` with each variable's shape, entries >= 0;
        zero for a variable the loss does not depend on (e.g. the pooler under a language
        model). Pass it as `fisher` to `anchor_to_pretrained`.

    Raises:
        ValueError: for an objective without an encoder or that is not a pretraining objective,
            a `max_batches` that is not a positive int, batches that are not dicts, no batch
            at all, or `normalize` with an all-zero Fisher.

    Example:
    >>> from keras import ops
    >>> from kbert.models import CausalLanguageModel, Encoder
    >>> model = CausalLanguageModel(Encoder.from_preset("tiny", causal=True))
    >>> x = {"token_ids": ops.array([[2, 7, 9, 3]]), "padding_mask": ops.ones((1, 4), "int32")}
    >>> fisher = estimate_diagonal_fisher(model, [x])
    >>> float(fisher["pooler/kernel"].max())  # the pooler does not affect a CLM's loss
    0.0
    """
    if getattr(objective, "encoder", None) is None:
        raise ValueError(
            f"objective must hold the encoder being anchored as `.encoder` (a kbert "
            f"PretrainingObjective or PretrainingModel); received "
            f"{type(objective).__name__} without one"
        )
    loss_fn = _pretraining_loss(objective)
    if max_batches is not None:
        max_batches = check_int(
            "max_batches", max_batches, minimum=1, expected="a positive int or None"
        )
    variables = _unique(objective.encoder.trainable_weights if variables is None else variables)
    if not variables:
        raise ValueError(
            "no variables to estimate a Fisher for; expected trainable weights "
            "(is the encoder frozen?) or an explicit `variables` list"
        )

    def squared_gradients(x):
        with tf.GradientTape() as tape:
            loss = loss_fn(x, objective(x, training=False))
        gradients = tape.gradient(loss, variables)
        # A variable the loss does not reach gets None: its Fisher is 0. Embedding gradients
        # arrive as IndexedSlices and are densified here.
        return [
            tf.zeros(v.shape, "float32")
            if g is None
            else tf.square(tf.cast(tf.convert_to_tensor(g), "float32"))
            for v, g in zip(variables, gradients, strict=True)
        ]

    @tf.function(reduce_retracing=True, autograph=False)
    def batch_sum(x):
        """Σ over the batch's examples of their squared gradients, and the number of examples."""
        first = x["token_ids"] if "token_ids" in x else next(iter(x.values()))
        size = tf.shape(first)[0]

        def body(index, sums):
            example = {
                key: tf.gather(value, tf.reshape(index, [1]))  # (1, ...)
                for key, value in x.items()
            }
            return index + 1, [s + g for s, g in zip(sums, squared_gradients(example), strict=True)]

        zeros = [tf.zeros(v.shape, "float32") for v in variables]
        _, sums = tf.while_loop(lambda index, _: index < size, body, (tf.constant(0), zeros))
        return sums, size

    @tf.function(reduce_retracing=True, autograph=False)
    def batch_square(x):
        return squared_gradients(x), tf.constant(1)

    step = batch_sum if per_example else batch_square
    metric_state = [(v, ops.convert_to_numpy(v)) for v in _metric_variables(objective)]
    totals = [np.zeros(v.shape, "float64") for v in variables]
    count = 0
    try:
        for index, batch in enumerate(batches):
            if max_batches is not None and index >= max_batches:
                break
            sums, n = step(_input_dict(batch, index))
            for total, value in zip(totals, sums, strict=True):
                total += value.numpy()
            count += int(n)
    finally:
        for variable, value in metric_state:
            variable.assign(value)
    if count == 0:
        raise ValueError("batches yielded no examples; expected at least one input dict")
    fisher = {
        v.path: (total / count).astype("float32")
        for v, total in zip(variables, totals, strict=True)
    }
    if normalize:
        mean = sum(float(a.sum()) for a in fisher.values()) / sum(a.size for a in fisher.values())
        if not mean > 0:
            raise ValueError(
                "cannot normalize an all-zero Fisher (the loss does not depend on "
                "these variables); expected some non-zero squared gradient"
            )
        fisher = {path: (value / mean).astype("float32") for path, value in fisher.items()}
    return fisher
