"""Linear probes: what a frozen representation encodes, layer by layer.

The NAACL 2019 tutorial's §3 ("What is in a representation?"): train a linear classifier on
frozen vectors to predict a property (part of speech, entity tag); if it succeeds on held-out
words, the property is linearly decodable from that representation (Tenney et al. 2019; Liu et
al. 2019). Probing every layer shows where a property is easiest to read out. Two baselines keep
the numbers honest: the majority class (`majority_accuracy`), and the same architecture with
random weights (`random_encoder_like`), since even random contextual features plus a trained
probe decode a lot (Hewitt & Liang 2019 discuss what a probe's accuracy does and does not show).

The probe is softmax regression: `kbert.models.FeatureClassifier` with no hidden layer and no
dropout, trained on standardized cached features (features come from
`kbert.models.extract_layer_features` or from per-word vectors computed elsewhere).
"""

import math
import numbers
import random

import keras
import numpy as np
import tensorflow as tf

from kbert.analysis.anisotropy import ZScorer
from kbert.checks import check_int
from kbert.models.encoder import Encoder
from kbert.models.feature_classifier import FeatureClassifier
from kbert.train.build_before_tracing import BuildBeforeTracing

_STEPS_PER_EXECUTION = 32  # optimizer steps per traced call: Python overhead dominates otherwise
_MIN_STEPS = 1000  # default training length: enough Adam steps to converge (train_linear_probe)
_MIN_EPOCHS = 20


def _check_features(features, name, ndim, dim=None):
    array = np.asarray(features)
    shape = "(n, dim)" if ndim == 2 else "(n, num_layers + 1, dim)"
    if array.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array {shape}; received shape {array.shape}")
    if array.dtype == bool or not (
        np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)
    ):
        raise ValueError(f"{name} must hold real numbers; received dtype {array.dtype}")
    if len(array) == 0:
        raise ValueError(f"{name} must hold at least one example; received shape {array.shape}")
    if dim is not None and array.shape[-1] != dim:
        raise ValueError(
            f"{name} must have {dim} dimensions (last axis), as the probe was "
            f"trained on; received shape {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite; received NaN or infinite values")
    return array


def _check_labels(labels, name, length=None, num_classes=None):
    """Checks 1-D integer class ids (`length` of them when given, else at least one)."""
    array = np.asarray(labels)
    if array.ndim != 1 or (length is not None and len(array) != length):
        expected = "one label per example" + ("" if length is None else f" ({length})")
        raise ValueError(
            f"{name} must be a 1-D array with {expected}; received shape {array.shape}"
        )
    if len(array) == 0:
        raise ValueError(f"{name} must hold at least one label; received 0")
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integer class ids; received dtype {array.dtype}")
    if array.min() < 0:
        raise ValueError(f"{name} must hold class ids >= 0; received {array.min()}")
    if num_classes is not None and array.max() >= num_classes:
        raise ValueError(
            f"{name} must hold class ids in [0, {num_classes - 1}] "
            f"(num_classes={num_classes}); received {array.max()}"
        )
    return array.astype(np.int64)


class LinearProbe:
    """A fitted softmax-regression probe: standardize with training statistics, then `x W + b`.

    Built by `train_linear_probe`; predicts in numpy, with no Keras model kept.

    Args:
        kernel: float array `(dim, num_classes)`.
        bias: float array `(num_classes,)`.
        scorer: `kbert.analysis.anisotropy.ZScorer` fitted on the training features
            (`dim` statistics).

    Attributes:
        kernel, bias, scorer: as given (`kernel` and `bias` as float32).
        dim: int, the feature width.
        num_classes: int.

    Example:
    >>> probe = LinearProbe(np.array([[1.0, -1.0]]), np.zeros(2),
    ...                     ZScorer().fit(np.array([[0.0], [2.0]])))
    >>> probe.predict(np.array([[3.0], [-1.0]])).tolist()
    [0, 1]
    """

    def __init__(self, kernel, bias, scorer):
        kernel = np.asarray(kernel, np.float32)
        bias = np.asarray(bias, np.float32)
        if kernel.ndim != 2 or bias.shape != kernel.shape[1:]:
            raise ValueError(
                "kernel must be (dim, num_classes) and bias (num_classes,); received "
                f"shapes {kernel.shape} and {bias.shape}"
            )
        if (
            not isinstance(scorer, ZScorer)
            or scorer.mean is None
            or len(scorer.mean) != kernel.shape[0]
        ):
            raise ValueError(
                f"scorer must be a ZScorer fitted on {kernel.shape[0]}-dimensional "
                f"features; received {scorer!r}"
            )
        self.kernel = kernel
        self.bias = bias
        self.scorer = scorer
        self.dim, self.num_classes = kernel.shape

    def logits(self, features):
        """Returns float32 logits `(n, num_classes)` for features `(n, dim)`.

        Raises:
            ValueError: `features` not 2-D, with another `dim`, or not finite.
        """
        features = _check_features(features, "features", 2, dim=self.dim)
        standardized = self.scorer.transform(features.astype(np.float32))  # (n, dim)
        return standardized @ self.kernel + self.bias

    def predict(self, features):
        """Returns int64 class ids `(n,)` for features `(n, dim)`."""
        return np.argmax(self.logits(features), axis=-1).astype(np.int64)

    def accuracy(self, features, labels):
        """Returns the fraction of `labels` (int `(n,)`) that `predict(features)` gets right.

        Raises:
            ValueError: bad `features` (see `logits`), or `labels` of another length, not
                integer, or outside [0, num_classes).
        """
        predictions = self.predict(features)
        labels = _check_labels(labels, "labels", len(predictions), self.num_classes)
        return float(np.mean(predictions == labels))


def train_linear_probe(
    features, labels, num_classes, epochs=None, batch_size=512, learning_rate=3e-2, l2=1e-3, seed=0
):
    """Trains softmax regression on frozen features and returns it as a `LinearProbe`.

    Features are standardized with their own mean and standard deviation (`ZScorer`), so one
    learning rate and one `l2` suit every layer whatever its scale (upper layers and rogue
    dimensions have much larger values). The model is `kbert.models.FeatureClassifier` with
    `hidden_units=()` and `dropout=0.0`, started at zero weights (the objective is convex, so
    no random start is needed), trained with Adam whose learning rate decays from
    `learning_rate` to 0 along a cosine over all steps, on mini-batches in an order drawn from
    `seed`. The loss is the mean cross-entropy plus `l2 * sum(kernel ** 2)`.

    The defaults are chosen for n ≈ 30,000, dim = 384, 45 classes (POS probing on one layer):
    20 epochs of 59 batches, a few seconds per probe on 2 CPU cores, with the regularized
    objective close to what much longer training reaches. `l2=1e-3` converges fast and, on synthetic
    data of that size, held out as well as or better than 1e-4 (a weaker penalty is slower to
    converge and fits noise). What converges is the number of optimizer steps, so by default
    small sets get more epochs (300 examples: 1000 epochs of one batch each, about a second).

    Args:
        features: float array `(n, dim)`, one frozen vector per example, n >= 2.
        labels: int array `(n,)` of class ids in [0, num_classes).
        num_classes: int >= 2.
        epochs: int, default None. Passes over the data; None: at least 20, and enough for
            1000 optimizer steps (`ceil(1000 / ceil(n / batch_size))`).
        batch_size: int, default 512.
        learning_rate: float, default 3e-2. Adam's initial learning rate.
        l2: float, default 1e-3. Weight of the squared-L2 penalty on the kernel (not the bias).
        seed: int, default 0. Seed of the batch order; a seed gives the same probe every time.

    Returns:
        A fitted `LinearProbe`.

    Raises:
        ValueError: `features` not 2-D, with fewer than 2 rows or not finite; `labels` of
            another length, not integer, or outside [0, num_classes); `num_classes < 2`;
            non-positive `epochs`, `batch_size` or `learning_rate`; negative `l2`.

    Example:
    >>> rng = np.random.default_rng(0)
    >>> labels = rng.integers(0, 3, size=300)
    >>> features = np.eye(3)[labels] + 0.1 * rng.normal(size=(300, 3))
    >>> probe = train_linear_probe(features, labels, num_classes=3)
    >>> probe.accuracy(features, labels)
    1.0
    """
    num_classes = check_int("num_classes", num_classes, 2)
    features = _check_features(features, "features", 2)
    labels = _check_labels(labels, "labels", len(features), num_classes)
    batch_size = check_int("batch_size", batch_size, 1)
    steps_per_epoch = math.ceil(len(features) / batch_size)
    if epochs is None:
        epochs = max(_MIN_EPOCHS, math.ceil(_MIN_STEPS / steps_per_epoch))
    epochs = check_int("epochs", epochs, 1)
    if not isinstance(learning_rate, numbers.Real) or not learning_rate > 0:
        raise ValueError(f"learning_rate must be a positive number; received {learning_rate!r}")
    if not isinstance(l2, numbers.Real) or not l2 >= 0:
        raise ValueError(f"l2 must be a number >= 0; received {l2!r}")

    if len(features) < 2:
        raise ValueError(
            f"features must hold at least 2 examples to standardize; received {len(features)}"
        )
    scorer = ZScorer().fit(features)
    standardized = tf.constant(scorer.transform(features.astype(np.float32)))  # (n, dim)
    label_tensor = tf.constant(labels.astype(np.int32))  # (n,)
    n, dim = features.shape

    # One batch order per epoch, drawn here so that the seed alone fixes the run.
    rng = np.random.default_rng(seed)
    orders = np.stack([rng.permutation(n) for _ in range(epochs)]).astype(np.int32)
    batches = (
        tf.data.Dataset.from_tensor_slices(orders)
        .flat_map(lambda order: tf.data.Dataset.from_tensor_slices(order).batch(batch_size))
        .map(
            lambda rows: (
                tf.gather(standardized, rows)[:, None, :],  # (batch, 1, dim)
                tf.gather(label_tensor, rows),
            )
        )
        .apply(tf.data.experimental.assert_cardinality(epochs * steps_per_epoch))
        .prefetch(tf.data.AUTOTUNE)
    )

    model = FeatureClassifier(
        1, dim, num_classes, layers="top", hidden_units=(), dropout=0.0, name="linear_probe"
    )
    kernel = model.get_layer("logits").kernel
    kernel.assign(np.zeros((dim, num_classes), np.float32))
    if l2 > 0:
        kernel.regularizer = keras.regularizers.L2(float(l2))
    schedule = keras.optimizers.schedules.CosineDecay(
        float(learning_rate), decay_steps=epochs * steps_per_epoch
    )
    model.compile(
        optimizer=keras.optimizers.Adam(schedule),
        loss=model.default_loss(),
        steps_per_execution=min(_STEPS_PER_EXECUTION, epochs * steps_per_epoch),
    )
    model.fit(batches, epochs=1, shuffle=False, verbose=0, callbacks=[BuildBeforeTracing(batches)])
    kernel_value, bias_value = model.get_layer("logits").get_weights()
    return LinearProbe(kernel_value, bias_value, scorer)


def layerwise_probe_accuracy(
    train_features, train_labels, test_features, test_labels, num_classes, **probe_args
):
    """Trains one linear probe per layer and returns each one's held-out accuracy.

    Args:
        train_features: float array `(n, num_layers + 1, dim)`, e.g. from
            `kbert.models.extract_layer_features` or per-word vectors of every layer.
        train_labels: int array `(n,)` of class ids in [0, num_classes).
        test_features: float array `(m, num_layers + 1, dim)`, the same layers and `dim`.
        test_labels: int array `(m,)` of class ids in [0, num_classes).
        num_classes: int >= 2.
        **probe_args: passed to `train_linear_probe` (`epochs`, `batch_size`,
            `learning_rate`, `l2`, `seed`).

    Returns:
        list of float, the test accuracy of each layer's probe, bottom (embeddings) first.

    Raises:
        ValueError: features not 3-D, or train and test with different layers or `dim`; labels
            of the wrong length, not integer, or outside [0, num_classes); `num_classes < 2`;
            bad `probe_args` (see `train_linear_probe`).

    Example:
    >>> rng = np.random.default_rng(0)
    >>> labels = rng.integers(0, 2, size=400)
    >>> layers = rng.normal(size=(400, 2, 4))
    >>> layers[:, 1, 0] += 4 * labels  # only layer 1 knows the label
    >>> accuracy = layerwise_probe_accuracy(layers[:300], labels[:300], layers[300:],
    ...                                     labels[300:], num_classes=2)
    >>> accuracy[0] < 0.7 < 0.9 < accuracy[1]
    True
    """
    num_classes = check_int("num_classes", num_classes, 2)
    train_features = _check_features(train_features, "train_features", 3)
    test_features = _check_features(test_features, "test_features", 3)
    if train_features.shape[1:] != test_features.shape[1:]:
        raise ValueError(
            "test_features must have the layers and dim of train_features "
            f"{train_features.shape[1:]}; received {test_features.shape[1:]}"
        )
    train_labels = _check_labels(train_labels, "train_labels", len(train_features), num_classes)
    test_labels = _check_labels(test_labels, "test_labels", len(test_features), num_classes)
    accuracies = []
    for layer in range(train_features.shape[1]):
        probe = train_linear_probe(
            train_features[:, layer], train_labels, num_classes, **probe_args
        )
        accuracies.append(probe.accuracy(test_features[:, layer], test_labels))
    return accuracies


def majority_accuracy(train_labels, test_labels):
    """Returns the test accuracy of always predicting the most frequent training label.

    The floor every probe must clear (ties go to the smallest class id).

    Args:
        train_labels: int array `(n,)` of class ids >= 0.
        test_labels: int array `(m,)` of class ids >= 0.

    Returns:
        float in [0, 1].

    Raises:
        ValueError: empty, non-1-D, non-integer or negative labels.

    Example:
    >>> majority_accuracy([0, 1, 1], [1, 1, 2, 0])
    0.5
    """
    train_labels = _check_labels(train_labels, "train_labels")
    test_labels = _check_labels(test_labels, "test_labels")
    majority = np.argmax(np.bincount(train_labels))
    return float(np.mean(test_labels == majority))


def random_encoder_like(encoder, seed=0):
    """Builds the random-weight control: an encoder of the same configuration, freshly initialized.

    A probe on a randomly initialized encoder of the same architecture measures what the
    architecture and the probe find without any pretraining (the tutorial's §3 control; Conneau
    et al. 2018 and Hewitt & Liang 2019 report strong random-encoder baselines). The copy is
    `Encoder.from_config(encoder.get_config())`, initialized with Python's `random` seeded with
    `seed` (Keras draws unseeded initializers' seeds from it), whose state is restored
    afterwards. Every weight that the fresh encoder draws at random (embeddings, kernels) is
    checked to differ from the original's; constant-initialized ones (biases, LayerNorm) may
    match a fresh original.

    Args:
        encoder: `kbert.models.Encoder`. Not modified.
        seed: int, default 0. The same seed gives the same weights.

    Returns:
        A new `kbert.models.Encoder` with `get_config()` equal to `encoder.get_config()`.

    Raises:
        ValueError: `encoder` not an `Encoder`, a non-int `seed`, or a random weight equal to
            the original's (the original was itself built with this seed: pass another).

    Example:
    >>> pretrained = Encoder.from_preset("tiny")  # stands in for load_hf_bert(...)
    >>> control = random_encoder_like(pretrained, seed=1)
    >>> control.get_config() == pretrained.get_config()
    True
    """
    if not isinstance(encoder, Encoder):
        raise ValueError(
            f"encoder must be a kbert.models.Encoder; received {type(encoder).__name__}"
        )
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an int; received {seed!r}")
    state = random.getstate()
    try:
        random.seed(int(seed))
        control = Encoder.from_config(encoder.get_config())
    finally:
        random.setstate(state)
    for original, fresh in zip(encoder.weights, control.weights, strict=True):
        values = fresh.numpy()
        if np.ptp(values) > 0 and np.array_equal(values, original.numpy()):
            raise ValueError(
                f"seed={seed} drew the original encoder's own random weights "
                f"({fresh.path}): the original was built with this seed; pass "
                "another seed"
            )
    return control
