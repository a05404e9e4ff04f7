"""Batches for multi-task fine-tuning: per-step task sampling and auxiliary-LM inputs.

`kbert.models.MultitaskModel` trains several heads on one encoder. It reads batches `(x, y)`:

- `x`: the encoder's inputs, int32 `(batch, seq)`: `token_ids`, `padding_mask` and
  `segment_ids`; plus, for a masked auxiliary LM, `x["language_model_inputs"]`, a dict of the
  masked encoder inputs with `mask_positions`, `mask_ids`, `mask_weights`
  (`with_masked_language_model_inputs` adds it).
- `y`: a dict from task name to int32 labels: `(batch,)` for a classification task,
  `(batch, seq)` (aligned with `token_ids`) for a tagging task. A label equal to
  `IGNORE_INDEX` (-100) is not scored. A task missing from `y`, or whose labels are all
  `IGNORE_INDEX`, is absent from the batch: it adds 0 to the loss and leaves its metrics alone.

`multitask_dataset` samples one task per step (the NAACL 2019 transfer-learning tutorial's
§4.3; Liu et al. 2019's MT-DNN) and writes every other task's labels as an all-`IGNORE_INDEX`
placeholder of the right rank, so that batches of different tasks share one structure and
`tf.data.Dataset.sample_from_datasets` can mix them. `joint_batches` is the single-task case
(every batch carries one task's labels, e.g. a classifier with an auxiliary LM loss).
"""

import math
import numbers

import tensorflow as tf

from kbert.data.token_classification_features import IGNORE_INDEX

SAMPLING_MODES = ("proportional", "uniform", "temperature")
ENCODER_KEYS = ("token_ids", "segment_ids", "padding_mask")
LANGUAGE_MODEL_INPUTS = "language_model_inputs"


def _check_datasets(datasets):
    if not isinstance(datasets, dict) or not datasets:
        raise ValueError(
            "datasets must be a non-empty dict from task name to a tf.data.Dataset "
            f"of (x, labels) batches; received {datasets!r}"
        )
    for task, dataset in datasets.items():
        if not isinstance(task, str) or not task:
            raise ValueError(f"task names must be non-empty strings; received {task!r}")
        if not isinstance(dataset, tf.data.Dataset):
            raise ValueError(
                f"datasets[{task!r}] must be a tf.data.Dataset; received {type(dataset).__name__}"
            )
        spec = dataset.element_spec
        if not (
            isinstance(spec, tuple)
            and len(spec) == 2
            and isinstance(spec[0], dict)
            and isinstance(spec[1], tf.TensorSpec)
        ):
            raise ValueError(
                f"datasets[{task!r}] must yield (x, labels) batches with x a dict "
                f"of tensors and labels one tensor; received element_spec {spec}"
            )
        if "token_ids" not in spec[0]:
            raise ValueError(
                f"datasets[{task!r}]: x needs 'token_ids'; received keys {sorted(spec[0])}"
            )
        rank = spec[1].shape.rank
        if rank not in (1, 2):
            raise ValueError(
                f"datasets[{task!r}]: labels must be batched with rank 1 "
                f"(batch,) or 2 (batch, seq); received shape {spec[1].shape}"
            )


def _dataset_size(task, dataset):
    size = int(dataset.cardinality())
    if size < 0:
        kind = "infinite" if size == int(tf.data.INFINITE_CARDINALITY) else "unknown"
        raise ValueError(
            f"datasets[{task!r}] has {kind} cardinality, so its size cannot set its sampling "
            "probability; expected a finite, known number of batches (apply "
            "tf.data.experimental.assert_cardinality) or explicit probabilities"
        )
    return size


def task_sampling_probabilities(
    datasets, sampling="proportional", temperature=1.0, probabilities=None
):
    """The probability of drawing each task at a step of `multitask_dataset`.

    With sizes `n_t` (batches, from `cardinality()`): "proportional" is `n_t / Σ n`,
    "uniform" is `1 / T`, "temperature" is `n_t^(1/τ) / Σ n^(1/τ)` (multilingual BERT's and
    T5's mixing: τ=1 is proportional, τ→∞ uniform). Explicit `probabilities` override
    `sampling` and are normalized to sum to 1.

    Args:
        datasets: dict from task name to `tf.data.Dataset` (only sizes are read).
        sampling: str, default "proportional". One of `SAMPLING_MODES`.
        temperature: float > 0, default 1.0. Used by "temperature".
        probabilities: dict from task name to a non-negative float, default None.

    Returns:
        dict from task name to float, in the order of `datasets`, summing to 1.

    Example:
    >>> datasets = {"a": tf.data.Dataset.range(90), "b": tf.data.Dataset.range(10)}
    >>> task_sampling_probabilities(datasets)
    {'a': 0.9, 'b': 0.1}
    >>> {k: round(v, 2) for k, v in task_sampling_probabilities(
    ...     datasets, "temperature", temperature=2.0).items()}
    {'a': 0.75, 'b': 0.25}
    """
    tasks = list(datasets)
    if probabilities is not None:
        if not isinstance(probabilities, dict) or set(probabilities) != set(tasks):
            raise ValueError(
                f"probabilities must be a dict with one entry per task {tasks}; "
                f"received {probabilities!r}"
            )
        values = [probabilities[task] for task in tasks]
        if (
            any(
                isinstance(v, bool)
                or not isinstance(v, numbers.Real)
                or not math.isfinite(v)
                or v < 0
                for v in values
            )
            or sum(values) <= 0
        ):
            raise ValueError(
                "probabilities must be finite non-negative numbers with a positive "
                f"sum; received {probabilities!r}"
            )
    elif sampling == "uniform":
        values = [1.0] * len(tasks)
    elif sampling in ("proportional", "temperature"):
        if (
            isinstance(temperature, bool)
            or not isinstance(temperature, numbers.Real)
            or not temperature > 0
        ):
            raise ValueError(f"temperature must be a number > 0; received {temperature!r}")
        exponent = 1.0 if sampling == "proportional" else 1.0 / float(temperature)
        sizes = [_dataset_size(task, datasets[task]) for task in tasks]
        if sum(sizes) == 0:
            received = dict(zip(tasks, sizes, strict=True))
            raise ValueError(
                f"every dataset is empty; expected at least one batch; received sizes {received}"
            )
        values = [float(size) ** exponent if size > 0 else 0.0 for size in sizes]
    else:
        raise ValueError(f"sampling must be one of {SAMPLING_MODES}; received {sampling!r}")
    total = float(sum(values))
    return {task: float(value) / total for task, value in zip(tasks, values, strict=True)}


def _placeholder(rank, token_ids):
    # An absent task's labels: all IGNORE_INDEX, (batch,) or (batch, seq) like `token_ids`.
    shape = tf.shape(token_ids)[:rank]
    return tf.fill(shape, tf.constant(IGNORE_INDEX, tf.int32))


def _with_all_labels(task, ranks):
    def to_multitask(x, labels):
        x = dict(x)
        if "segment_ids" not in x:
            x["segment_ids"] = tf.zeros_like(x["token_ids"])
        for key in ENCODER_KEYS:
            x[key] = tf.cast(x[key], tf.int32)
        y = {
            name: tf.cast(labels, tf.int32) if name == task else _placeholder(rank, x["token_ids"])
            for name, rank in ranks.items()
        }
        return x, y

    return to_multitask


def multitask_dataset(
    datasets, sampling="proportional", temperature=1.0, probabilities=None, num_steps=None, seed=0
):
    """Mixes per-task datasets of batches into one, drawing one task per step.

    Each step draws a task with the probabilities of `task_sampling_probabilities` and yields
    that task's next batch as `(x, y)`, `y` holding every task's labels: the drawn task's own,
    the others as all-`IGNORE_INDEX` placeholders (`(batch,)` or `(batch, seq)`), which
    `kbert.models.MultitaskModel` treats as absent (loss 0, metrics untouched).

    When it ends (both ways give Keras a finite epoch):
        - `num_steps=None` (default): every batch of every task exactly once. A task whose
          batches run out leaves the draw and the others are renormalized; with
          "proportional" sampling the tasks run out together (in expectation), with other
          modes the last steps of the epoch hold only the larger tasks.
        - `num_steps=k`: each task's dataset repeats indefinitely and the mixture stops after
          `k` batches, so the configured probabilities hold at every step (T5's and
          multilingual temperature mixing, where small tasks are revisited).

    Args:
        datasets: dict from task name to a `tf.data.Dataset` of `(x, labels)` batches: `x` a
            dict with `token_ids`, `padding_mask` (and optionally `segment_ids`, zeros when
            absent; every task's `x` must have the same keys), labels int `(batch,)` or
            `(batch, seq)`.
        sampling: str, default "proportional". "proportional", "uniform" or "temperature".
        temperature: float > 0, default 1.0. For "temperature".
        probabilities: dict from task name to float, default None. Overrides `sampling`.
        num_steps: int >= 1 or None, default None. See above.
        seed: int or None, default 0. Seeds the task draws (new draws each epoch).

    Returns:
        A `tf.data.Dataset` of `(x, y)` with `y` a dict from every task name to int32 labels.

    Example:
    >>> x = {"token_ids": tf.ones((4, 3), tf.int32), "padding_mask": tf.ones((4, 3), tf.int32)}
    >>> sentiment = tf.data.Dataset.from_tensor_slices((x, tf.zeros((4,), tf.int32))).batch(2)
    >>> tags = tf.data.Dataset.from_tensor_slices((x, tf.zeros((4, 3), tf.int32))).batch(2)
    >>> mixed = multitask_dataset({"sentiment": sentiment, "tags": tags})
    >>> len(list(mixed))
    4
    >>> _, y = next(iter(mixed))
    >>> sorted(y)
    ['sentiment', 'tags']
    """
    _check_datasets(datasets)
    weights = task_sampling_probabilities(datasets, sampling, temperature, probabilities)
    if num_steps is not None and (
        isinstance(num_steps, bool) or not isinstance(num_steps, numbers.Integral) or num_steps < 1
    ):
        raise ValueError(f"num_steps must be an int >= 1 or None; received {num_steps!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise ValueError(f"seed must be an int or None; received {seed!r}")
    keys = {
        task: sorted(set(dataset.element_spec[0]) | {"segment_ids"})
        for task, dataset in datasets.items()
    }
    first = next(iter(keys))
    for task, task_keys in keys.items():
        if task_keys != keys[first]:
            raise ValueError(
                f"every task's x must have the same keys to be mixed; "
                f"datasets[{first!r}] has {keys[first]}, datasets[{task!r}] has "
                f"{task_keys}"
            )
    ranks = {task: dataset.element_spec[1].shape.rank for task, dataset in datasets.items()}
    tasks = [task for task in datasets if weights[task] > 0]
    mapped = [datasets[task].map(_with_all_labels(task, ranks)) for task in tasks]
    if num_steps is not None:
        mapped = [dataset.repeat() for dataset in mapped]
    mixed = tf.data.Dataset.sample_from_datasets(
        mapped,
        weights=[weights[task] for task in tasks],
        seed=seed,
        stop_on_empty_dataset=False,
        rerandomize_each_iteration=True,
    )
    if num_steps is not None:
        return mixed.take(int(num_steps))
    sizes = [int(datasets[task].cardinality()) for task in tasks]
    if all(size >= 0 for size in sizes):
        mixed = mixed.apply(tf.data.experimental.assert_cardinality(sum(sizes)))
    return mixed


def joint_batches(dataset, task):
    """Labels one task's `(x, labels)` batches for `MultitaskModel`: `(x, {task: labels})`.

    The single-task case: a classifier fine-tuned with an auxiliary LM loss computed from `x`
    (the tutorial's hands-on #6), where every batch carries `task`'s labels.

    Args:
        dataset: `tf.data.Dataset` of `(x, labels)` batches.
        task: str. The task name (a key of the model's `heads`).

    Returns:
        A `tf.data.Dataset` of `(x, {task: labels})`.

    Example:
    >>> x = {"token_ids": tf.ones((2, 3), tf.int32), "padding_mask": tf.ones((2, 3), tf.int32)}
    >>> batches = joint_batches(tf.data.Dataset.from_tensors((x, tf.constant([0, 1]))), "sst2")
    >>> next(iter(batches))[1]["sst2"].numpy().tolist()
    [0, 1]
    """
    if not isinstance(task, str) or not task:
        raise ValueError(f"task must be a non-empty string; received {task!r}")
    spec = dataset.element_spec
    if not (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], dict)):
        raise ValueError(
            f"dataset must yield (x, labels) batches with x a dict; received element_spec {spec}"
        )
    return dataset.map(lambda x, labels: (x, {task: labels}))


def with_masked_language_model_inputs(dataset, masker):
    """Adds `x["language_model_inputs"]`, a masked copy of the encoder inputs, to each batch.

    `MultitaskModel` with a masked auxiliary LM runs a second encoder pass on these inputs for
    the LM loss, so the task heads read the unmasked `x`. The masker draws new masks every
    epoch (see `kbert.text.MaskedLMMasker`).

    Args:
        dataset: `tf.data.Dataset` of batches `x` or `(x, y)`, `x` a dict with `token_ids`
            and `padding_mask` (and optionally `segment_ids`) `(batch, seq)`.
        masker: a `kbert.text.MaskedLMMasker` (or any callable
            `masker(token_ids, padding_mask=...)` returning `token_ids`, `mask_positions`,
            `mask_ids`, `mask_weights`). Create it outside `map`: it owns its RNG state.

    Returns:
        A `tf.data.Dataset` with the same elements plus `x["language_model_inputs"]`: a dict
        with the masked `token_ids`, the original `segment_ids` and `padding_mask`, and
        `mask_positions`, `mask_ids`, `mask_weights`.

    Example:
    >>> from kbert.text import MaskedLMMasker
    >>> masker = MaskedLMMasker(50, mask_token_id=4, special_token_ids=[0, 2, 3],
    ...                         max_selections=2, seed=0)
    >>> x = {"token_ids": tf.constant([[2, 9, 8, 3]]), "padding_mask": tf.ones((1, 4), tf.int32)}
    >>> batches = with_masked_language_model_inputs(tf.data.Dataset.from_tensors(x), masker)
    >>> sorted(next(iter(batches))["language_model_inputs"])
    ['mask_ids', 'mask_positions', 'mask_weights', 'padding_mask', 'segment_ids', 'token_ids']
    """
    if not callable(masker):
        raise ValueError(
            f"masker must be callable like kbert.text.MaskedLMMasker; received "
            f"{type(masker).__name__}"
        )
    spec = dataset.element_spec
    paired = isinstance(spec, tuple)
    x_spec = spec[0] if paired else spec
    if not isinstance(x_spec, dict) or "token_ids" not in x_spec or "padding_mask" not in x_spec:
        raise ValueError(
            "dataset must yield x dicts (or (x, y) pairs) with 'token_ids' and "
            f"'padding_mask'; received element_spec {spec}"
        )

    def add(x):
        x = dict(x)
        masked = masker(x["token_ids"], padding_mask=x["padding_mask"])
        segment_ids = x.get("segment_ids")
        if segment_ids is None:
            segment_ids = tf.zeros_like(x["token_ids"])
        x[LANGUAGE_MODEL_INPUTS] = {
            "token_ids": tf.cast(masked["token_ids"], tf.int32),
            "segment_ids": tf.cast(segment_ids, tf.int32),
            "padding_mask": tf.cast(x["padding_mask"], tf.int32),
            "mask_positions": tf.cast(masked["mask_positions"], tf.int32),
            "mask_ids": tf.cast(masked["mask_ids"], tf.int32),
            "mask_weights": tf.cast(masked["mask_weights"], tf.float32),
        }
        return x

    if paired:
        return dataset.map(lambda x, *rest: (add(x), *rest))
    return dataset.map(add)
