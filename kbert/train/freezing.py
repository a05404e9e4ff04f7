"""Freezing and unfreezing named layer groups, and a report of what trains.

Everything here acts on the groups the encoder exposes (`Encoder.layer_groups()`: `embeddings`,
`block_0` … `block_{N-1}`, `final_norm` for pre-LN models, `pooler`) plus `head` (a task
model's `head_layers()`), never on layer-name string matching. A group is frozen by setting
`trainable=False` on its layers; Keras then leaves their weights out of `trainable_weights`,
so the optimizer never sees them.

After changing flags on a model that has already been trained, its train function must be
rebuilt (`freeze`/`unfreeze` drop `model.train_function` so the next `fit` rebuilds it; inside
a running `fit` use the callbacks of `kbert.train.unfreezing`). With a shared-layer (ALBERT)
encoder every `block_i` group holds the same layer: freezing any one of them freezes all.
"""

from kbert.checks import check_int
from kbert.keras_internals import mark_trainable, sublayers, variables_created_trainable

HEAD = "head"


def _encoder_of(model):
    """The encoder whose groups `model` exposes (the model itself for an encoder)."""
    if hasattr(model, "layer_groups") and callable(model.layer_groups):
        return model
    encoder = getattr(model, "encoder", None)
    if encoder is not None and callable(getattr(encoder, "layer_groups", None)):
        return encoder
    raise ValueError(
        "model must be a kbert Encoder or a task model holding one as `.encoder` "
        f"(with `head_layers()`); received {type(model).__name__}"
    )


def layer_groups(model):
    """Named layer groups of an encoder or a task model, bottom to top.

    Args:
        model: a `kbert.models.Encoder`, or a task model (`TaskModel`) with `.encoder` and
            `head_layers()`.

    Returns:
        dict (ordered bottom to top) of group name → list of layers: the encoder's groups
        (`embeddings`, `block_0` … `block_{N-1}`, [`final_norm`], `pooler`), then `head` for a
        task model.

    Raises:
        ValueError: if `model` neither is an encoder nor holds one.

    Example:
    >>> from kbert.models import Encoder
    >>> list(layer_groups(Encoder.from_preset("tiny")))
    ['embeddings', 'block_0', 'block_1', 'pooler']
    """
    encoder = _encoder_of(model)
    groups = {name: list(layers) for name, layers in encoder.layer_groups().items()}
    if encoder is not model:
        head = getattr(model, "head_layers", None)
        if head is None:
            raise ValueError(
                f"a task model must have `head_layers()`; {type(model).__name__} has none"
            )
        groups[HEAD] = list(head())
    return groups


def _check_names(model, names):
    """Validates group names against `model`'s groups and returns (groups, names)."""
    groups = layer_groups(model)
    if isinstance(names, str):
        names = [names]
    names = list(names)
    unknown = [name for name in names if name not in groups]
    if unknown:
        raise ValueError(f"unknown layer group(s) {unknown}; expected names among {list(groups)}")
    return groups, names


def _invalidate_train_function(model):
    # Keras traces `trainable_weights` into the train function; a stale one would keep
    # training (or not training) the old set. Only drop it between fits: inside `fit` the
    # loop calls `model.train_function` on every step (callbacks rebuild it with force=True).
    if getattr(model, "train_function", None) is not None:
        model.train_function = None


def set_trainable(model, names, trainable):
    """Sets `trainable` on every layer of the named groups.

    Unfreezing also marks the containers (`model`, its encoder) trainable without touching
    their other sublayers, so `encoder.trainable = False` followed by
    `unfreeze(model, ["block_1"])` trains exactly `block_1`.

    Args:
        model: an encoder or a task model (see `layer_groups`).
        names: str or iterable of str. Group names.
        trainable: bool.

    Raises:
        ValueError: for unknown group names (the message lists the valid ones).
    """
    groups, names = _check_names(model, names)
    for name in names:
        for layer in groups[name]:
            layer.trainable = bool(trainable)
    if trainable and names:
        for container in (model, _encoder_of(model)):
            # Not the `trainable` setter: it would cascade to every sublayer.
            mark_trainable(container)
    _invalidate_train_function(model)


def freeze(model, names):
    """Freezes the named layer groups (their weights stop training).

    Args:
        model: an encoder or a task model (see `layer_groups`).
        names: str or iterable of str, e.g. `["embeddings", "block_0"]`.

    Raises:
        ValueError: for unknown group names (the message lists the valid ones).

    Example:
    >>> from kbert.models import Encoder
    >>> encoder = Encoder.from_preset("tiny")
    >>> freeze(encoder, ["embeddings"])
    >>> encoder.embeddings.trainable
    False
    """
    set_trainable(model, names, False)


def unfreeze(model, names):
    """Unfreezes the named layer groups (see `set_trainable`).

    Args:
        model: an encoder or a task model (see `layer_groups`).
        names: str or iterable of str.

    Raises:
        ValueError: for unknown group names (the message lists the valid ones).

    Example:
    >>> from kbert.models import Encoder
    >>> encoder = Encoder.from_preset("tiny")
    >>> freeze(encoder, ["pooler"]); unfreeze(encoder, "pooler")
    >>> encoder.pooler.trainable
    True
    """
    set_trainable(model, names, True)


def freeze_for_feature_extraction(model):
    """Freezes every group but the head: the encoder becomes a fixed feature extractor.

    Args:
        model: a task model (an encoder alone has no head to train).

    Raises:
        ValueError: if `model` has no `head` group.

    Example:
    >>> from kbert.models import Encoder, SequenceClassifier
    >>> classifier = SequenceClassifier(Encoder.from_preset("tiny"), num_classes=2)
    >>> freeze_for_feature_extraction(classifier)
    >>> [w.path for w in classifier.trainable_weights]
    ['logits/kernel', 'logits/bias']
    """
    groups = layer_groups(model)
    if HEAD not in groups:
        raise ValueError(
            "feature extraction needs a task model with a head; received an "
            f"encoder with groups {list(groups)}"
        )
    freeze(model, [name for name in groups if name != HEAD])
    unfreeze(model, [HEAD])


def freeze_all_but_top(model, k):
    """Trains only the top `k` blocks plus `final_norm`, `pooler` and `head`.

    Args:
        model: an encoder or a task model.
        k: int in [0, num_blocks]. 0 trains no block; num_blocks trains every block (the
            embeddings stay frozen either way).

    Raises:
        ValueError: if `k` is not an int in [0, num_blocks].

    Example:
    >>> from kbert.models import Encoder
    >>> encoder = Encoder.from_preset("tiny")
    >>> freeze_all_but_top(encoder, 1)
    >>> [encoder.blocks[0].trainable, encoder.blocks[1].trainable]
    [False, True]
    """
    groups = layer_groups(model)
    blocks = [name for name in groups if name.startswith("block_")]
    k = check_int(
        "k",
        k,
        minimum=0,
        maximum=len(blocks),
        expected=f"an int in [0, {len(blocks)}] (the number of blocks)",
    )
    top = blocks[len(blocks) - k :] if k else []
    freeze(model, ["embeddings"] + blocks[: len(blocks) - k])
    # Unfreeze after freezing: with shared (ALBERT) blocks the shared layer ends up trainable
    # as soon as any of its block groups is among the top k.
    unfreeze(model, top + [name for name in groups if name not in blocks and name != "embeddings"])


def freeze_embeddings(model):
    """Freezes the embedding group only (a common guard against overfitting small data).

    Args:
        model: an encoder or a task model.

    Example:
    >>> from kbert.models import Encoder
    >>> encoder = Encoder.from_preset("tiny")
    >>> freeze_embeddings(encoder)
    >>> encoder.embeddings.trainable
    False
    """
    freeze(model, ["embeddings"])


def _variables_by_group(model):
    """group → its weights, each variable in the first (lowest) group that holds it."""
    seen = set()
    result = {}
    for name, layers in layer_groups(model).items():
        result[name] = []
        for layer in layers:
            for variable in layer.weights:
                if id(variable) not in seen:
                    seen.add(id(variable))
                    result[name].append(variable)
    return result


def _size(variable):
    size = 1
    for dim in variable.shape:
        size *= int(dim)
    return size


def trainable_report(model):
    """Counts trainable and total parameters per layer group.

    A shared layer (ALBERT) is counted once, in the lowest group holding it; weights in no
    group land in an `other` row (only when there are some).

    Args:
        model: an encoder or a task model (built).

    Returns:
        list of dict rows `{"group", "trainable", "total", "percent"}`, bottom to top, then a
        `total` row; `percent` is the group's share of all the model's parameters, so the group
        rows sum to 100 and the total row's `total` equals `model.count_params()`.

    Example:
    >>> from kbert.models import Encoder
    >>> rows = trainable_report(Encoder.from_preset("tiny"))
    >>> rows[-1]["group"], rows[-1]["percent"]
    ('total', 100.0)
    """
    trainable_ids = {id(variable) for variable in model.trainable_weights}
    by_group = _variables_by_group(model)
    grouped = {id(v) for variables in by_group.values() for v in variables}
    other = [v for v in model.weights if id(v) not in grouped]
    if other:
        by_group["other"] = other
    everything = sum(_size(v) for v in model.weights) or 1
    rows = []
    for name, variables in by_group.items():
        total = sum(_size(v) for v in variables)
        rows.append(
            {
                "group": name,
                "trainable": sum(_size(v) for v in variables if id(v) in trainable_ids),
                "total": total,
                "percent": 100.0 * total / everything,
            }
        )
    rows.append(
        {
            "group": "total",
            "trainable": sum(row["trainable"] for row in rows),
            "total": sum(row["total"] for row in rows),
            "percent": 100.0,
        }
    )
    return rows


def format_trainable_report(rows):
    """Formats `trainable_report` rows as a plain-text table.

    Args:
        rows: list of dict, as returned by `trainable_report`.

    Returns:
        str, one line per row under a header: group, trainable, total, % of all.

    Example:
    >>> print(format_trainable_report([{"group": "total", "trainable": 0, "total": 10,
    ...                                 "percent": 100.0}]))
    group         trainable      total  % of all
    total                 0         10    100.00
    """
    lines = [f"{'group':<12}{'trainable':>11}{'total':>11}{'% of all':>10}"]
    for row in rows:
        lines.append(
            f"{row['group']:<12}{row['trainable']:>11,}{row['total']:>11,}{row['percent']:>10.2f}"
        )
    return "\n".join(lines)


def group_variables(layers):
    """Every variable the layers would train when unfrozen, whatever their flags are now.

    `layer.trainable_weights` is empty for a frozen layer, so optimizers that must know a
    group's weights before it is unfrozen (gradual unfreezing, per-group learning rates) ask
    for these instead. Non-trainable state (BatchNorm statistics) is left out.

    Args:
        layers: iterable of `keras.layers.Layer`.

    Returns:
        list of variables, each once, in layer order.
    """
    seen = set()
    result = []
    for layer in layers:
        for sublayer in sublayers(layer):
            for variable in variables_created_trainable(sublayer):
                if id(variable) not in seen:
                    seen.add(id(variable))
                    result.append(variable)
    return result
