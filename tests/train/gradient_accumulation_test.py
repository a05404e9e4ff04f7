"""Gradient accumulation: N micro-batches of B give the update of one batch of N × B."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from kbert.data import Examples
from kbert.data.label_vocabulary import LabelVocabulary
from kbert.models import Encoder, SequenceClassifier
from kbert.text import BertPreprocessor, WordPieceTokenizer
from kbert.train import TrainingSettings, fine_tune_classifier
from kbert.train.discriminative_learning_rates import (
    DiscriminativeOptimizer,
    layerwise_schedules,
)
from kbert.train.fine_tuning import decoupled_adamw, fine_tuning_optimizer
from kbert.train.freezing import layer_groups
from kbert.train.schedules import LearningRateSchedule, warmup_linear_decay

EXAMPLES, BIG, MICRO = 64, 32, 8  # two updates either way


def _data():
    rng = np.random.default_rng(0)
    length = 10
    mask = np.ones((EXAMPLES, length), "int32")
    mask[:, 7:] = rng.integers(0, 2, (EXAMPLES, 1))  # some rows padded
    inputs = {
        "token_ids": rng.integers(1, 50, (EXAMPLES, length)).astype("int32") * mask,
        "segment_ids": np.zeros((EXAMPLES, length), "int32"),
        "padding_mask": mask,
    }
    return inputs, rng.integers(0, 3, (EXAMPLES,)).astype("int32")


def _classifier():
    keras.utils.set_random_seed(0)
    encoder = Encoder.from_preset("tiny", dropout=0.0, attention_dropout=0.0)
    return SequenceClassifier(encoder, num_classes=3, pooling="mean", dropout=0.0)


# Both runs make two updates; their rates (1e-2, then 5e-3) differ, so an update that used
# the other one's rate moves the weights by ~5e-3 more or less than the big batch's.
def _adamw(accumulation):
    return fine_tuning_optimizer(
        EXAMPLES // BIG * accumulation,  # batches in the run
        learning_rate=1e-2,
        warmup_fraction=0.0,
        gradient_accumulation_steps=accumulation,
    )


def _discriminative(model, accumulation, inner=None):
    schedules = layerwise_schedules(
        list(layer_groups(model)),
        "warmup_linear_decay",
        1e-2,
        factor=2.6,
        total_steps=EXAMPLES // BIG,
        warmup_steps=0,
        steps_per_update=accumulation,
    )
    return DiscriminativeOptimizer(
        model,
        inner or (lambda rate: keras.optimizers.AdamW(rate, weight_decay=0.01)),
        schedules,
        global_clipnorm=0.5,  # the accumulated gradient is clipped, as the big batch's is
        gradient_accumulation_steps=accumulation,
    )


def _train(make_optimizer, batch_size, accumulation):
    model = _classifier()
    model.compile(optimizer=make_optimizer(model, accumulation), loss=model.default_loss())
    before = [w.copy() for w in model.get_weights()]
    inputs, labels = _data()
    model.fit(inputs, labels, batch_size=batch_size, epochs=1, shuffle=False, verbose=0)
    assert int(model.optimizer.iterations) == EXAMPLES // BIG  # updates, not micro-batches
    return before, model.get_weights()


def _momentum(rate):
    return keras.optimizers.SGD(rate, momentum=0.9)


# float32: the mean of 4 means of 8 differs from the mean of 32 by rounding only (measured:
# at most 1.3e-7 here; weights move by ~2e-2).
@pytest.mark.parametrize(
    "make_optimizer, atol",
    [
        (lambda model, n: _adamw(n), 1e-6),
        (_discriminative, 1e-6),
        (lambda model, n: _discriminative(model, n, _momentum), 1e-6),
        (lambda model, n: _discriminative(model, n, keras.optimizers.SGD), 1e-6),
    ],
    ids=["adamw", "per_group_adamw", "per_group_momentum", "per_group_sgd"],
)
def test_four_micro_batches_of_8_update_as_one_batch_of_32(make_optimizer, atol):
    initial, big = _train(make_optimizer, BIG, 1)
    _, accumulated = _train(make_optimizer, MICRO, BIG // MICRO)
    moved = max(float(np.max(np.abs(a - b))) for a, b in zip(big, initial, strict=True))
    assert moved > 1e-3  # the runs trained
    for one, other in zip(big, accumulated, strict=True):
        np.testing.assert_allclose(other, one, rtol=0, atol=atol)


def test_with_loss_scaling_under_mixed_float16():
    """Keras wraps the optimizer in a LossScaleOptimizer; accumulation sits inside it."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        initial, big = _train(_discriminative, BIG, 1)
        model = _classifier()
        model.compile(optimizer=_discriminative(model, 4), loss=model.default_loss())
        assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
        inputs, labels = _data()
        model.fit(inputs, labels, batch_size=MICRO, epochs=1, shuffle=False, verbose=0)
        accumulated = model.get_weights()
    finally:
        keras.config.set_dtype_policy(previous)
    moved = max(float(np.max(np.abs(a - b))) for a, b in zip(big, initial, strict=True))
    assert moved > 1e-3
    # float16 activations: rounding differs between batch shapes, so the tolerance is wider
    # (an AdamW step moves a weight by up to ~lr = 1e-2).
    for one, other in zip(big, accumulated, strict=True):
        np.testing.assert_allclose(other, one, rtol=0, atol=2e-3)


def test_the_schedule_counts_updates():
    schedule = LearningRateSchedule(
        "warmup_linear_decay",
        peak_learning_rate=1.0,
        total_steps=4,
        warmup_steps=2,
        steps_per_update=3,
    )
    rates = [round(float(schedule(step)), 4) for step in range(12)]
    assert rates == [0.5] * 3 + [1.0] * 6 + [0.5] * 3  # updates 0-3: warmup, peak, decay
    config = schedule.get_config()
    assert config["steps_per_update"] == 3
    assert float(LearningRateSchedule(**config)(7)) == float(schedule(7))
    with pytest.raises(ValueError, match="steps_per_update must be an int >= 1; received 0"):
        LearningRateSchedule("warmup_linear_decay", peak_learning_rate=1.0, total_steps=4,
                             steps_per_update=0)  # fmt: skip


def test_the_fine_tuning_schedule_spans_the_updates_a_run_makes():
    # 10 batches at N = 4 make 2 updates (Keras never applies the last window of 2), so the
    # schedule has 2 steps; with ceil(10 / 4) = 3 the second update would run at 0.2, not 0.15,
    # and the decay would stop a third short of its end.
    layer = _kernel()
    optimizer = fine_tuning_optimizer(
        10, learning_rate=0.3, warmup_fraction=0.0, weight_decay=0.0, gradient_accumulation_steps=4
    )
    rates = []
    for _ in range(2):
        rates.append(round(float(optimizer.learning_rate), 6))  # the next update's rate
        for _ in range(4):
            optimizer.apply([np.ones((1, 1), "float32")], [layer.kernel])
    assert rates == [0.3, 0.15]
    with pytest.raises(ValueError, match=r"total_steps \(3\) must be at least"):
        fine_tuning_optimizer(3, gradient_accumulation_steps=4)


def test_bad_accumulation_is_named(tmp_path):
    for bad in (0, -1, 2.0, True, "4"):
        with pytest.raises(ValueError, match="gradient_accumulation_steps must be an int >= 1"):
            fine_tuning_optimizer(10, gradient_accumulation_steps=bad)
    model = _classifier()
    rates = {name: 1e-3 for name in layer_groups(model)}
    with pytest.raises(ValueError, match="gradient_accumulation_steps must be an int >= 1"):
        DiscriminativeOptimizer(model, keras.optimizers.Adam, rates, gradient_accumulation_steps=0)
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]))
    preprocessor = BertPreprocessor(WordPieceTokenizer(str(vocabulary)), sequence_length=8)
    train = Examples(
        ["a b", "b a"], None, np.array([0, 1], np.int32), LabelVocabulary(["x", "y", "z"]), "test"
    )
    with pytest.raises(ValueError, match="gradient_accumulation_steps=2 but the optimizer"):
        fine_tune_classifier(
            model,
            preprocessor,
            train,
            settings=TrainingSettings(
                epochs=1, batch_size=1, gradient_accumulation_steps=2, verbose=0
            ),
            optimizer=lambda steps: keras.optimizers.Adam(1e-3),
        )


# Per-update rates. A kernel of shape (1, 1) whose gradient is always 1 moves by exactly the
# rate under SGD (and by the rate up to Adam's epsilon under Adam, whose normalized step is 1
# for a constant gradient), so each update's rate can be read off the weights.
UPDATES, PEAK = 4, 0.4


def _rates(factor=1.0):
    """The rates the schedule names for updates 0…3 (0.4, 0.3, 0.2, 0.1 over `factor`)."""
    rates = [
        float(warmup_linear_decay(k, PEAK / factor, total_steps=UPDATES)) for k in range(UPDATES)
    ]
    assert len(set(rates)) == UPDATES  # a run on another update's rate shows
    return rates


def _schedule(accumulation):
    return LearningRateSchedule(
        "warmup_linear_decay",
        peak_learning_rate=PEAK,
        total_steps=UPDATES,
        warmup_steps=0,
        steps_per_update=accumulation,
    )


def _kernel():
    layer = keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros")
    layer.build((None, 1))
    return layer


def _applied_rates(optimizer, layers, accumulation, joins=None):
    """Each update's step per layer (None while the layer is left out), batch by batch.

    `joins` maps a layer's index to the update it first trains in (a group frozen till then).
    """
    joins = joins or {}
    applied = [[] for _ in layers]
    for update in range(UPDATES):
        training = [i for i in range(len(layers)) if update >= joins.get(i, 0)]
        before = [float(layer.kernel.numpy()[0, 0]) for layer in layers]
        for _ in range(accumulation):
            optimizer.apply(
                [np.ones((1, 1), "float32") for _ in training],
                [layers[i].kernel for i in training],
            )
        for i, layer in enumerate(layers):
            step = before[i] - float(layer.kernel.numpy()[0, 0])
            applied[i].append(round(step, 5) if i in training else None)
            assert i in training or step == 0.0
    assert int(optimizer.iterations) == UPDATES
    return applied


def _one_group(inner):
    def make(layer, accumulation):
        return DiscriminativeOptimizer(
            {"head": [layer]},
            inner,
            {"head": _schedule(accumulation)},
            gradient_accumulation_steps=accumulation,
        )

    return make


def _plain_sgd(layer, accumulation):
    return keras.optimizers.SGD(
        _schedule(accumulation),
        gradient_accumulation_steps=accumulation if accumulation > 1 else None,
    )


def _fine_tuning_adamw(layer, accumulation):
    # The builder kbert's fine-tuning uses; `total_steps` counts batches.
    return fine_tuning_optimizer(
        UPDATES * accumulation,
        learning_rate=PEAK,
        warmup_fraction=0.0,
        weight_decay=0.0,
        gradient_accumulation_steps=accumulation,
    )


@pytest.mark.parametrize("accumulation", [1, 2, 4])
@pytest.mark.parametrize(
    "make_optimizer",
    [
        _plain_sgd,
        _fine_tuning_adamw,
        _one_group(keras.optimizers.SGD),
        _one_group(lambda rate: decoupled_adamw(rate, weight_decay=0.0)),
    ],
    ids=["sgd", "fine_tuning_adamw", "per_group_sgd", "per_group_adamw"],
)
def test_every_update_uses_the_rate_its_schedule_names(make_optimizer, accumulation):
    layer = _kernel()
    optimizer = make_optimizer(layer, accumulation)
    [applied] = _applied_rates(optimizer, [layer], accumulation)
    np.testing.assert_allclose(applied, _rates(), rtol=1e-5)


@pytest.mark.parametrize("accumulation", [1, 2, 4])
def test_each_group_follows_its_own_schedule_on_one_clock(accumulation):
    """Two groups, the lower at half the rate and frozen for the first two updates."""
    low, head = _kernel(), _kernel()
    schedules = layerwise_schedules(
        ["low", "head"],
        "warmup_linear_decay",
        PEAK,
        factor=2.0,
        total_steps=UPDATES,
        steps_per_update=accumulation,
    )
    optimizer = DiscriminativeOptimizer(
        {"low": [low], "head": [head]},
        keras.optimizers.SGD,
        schedules,
        gradient_accumulation_steps=accumulation,
    )
    applied_low, applied_head = _applied_rates(optimizer, [low, head], accumulation, joins={0: 2})
    np.testing.assert_allclose(applied_head, _rates(), rtol=1e-5)
    # Unfrozen at update 2, the group takes the rate of update 2, not of its own first.
    assert applied_low[:2] == [None, None]
    np.testing.assert_allclose(applied_low[2:], _rates(factor=2.0)[2:], rtol=1e-5)


def _two_group_model():
    keras.utils.set_random_seed(1)
    inputs = keras.Input((4,))
    low = keras.layers.Dense(8, activation="tanh", name="low")
    head = keras.layers.Dense(3, name="head")
    model = keras.Model(inputs, head(low(inputs)))
    return model, {"low": [low], "head": [head]}


@pytest.mark.parametrize("accumulation", [2, 4])
@pytest.mark.parametrize("per_group", [False, True], ids=["sgd", "per_group_sgd"])
def test_n_batches_of_b_make_the_updates_of_one_batch_of_n_times_b(accumulation, per_group):
    """Four SGD updates, each at its own rate: the weights match up to float rounding."""
    rng = np.random.default_rng(0)
    big = 16
    inputs = rng.normal(size=(UPDATES * big, 4)).astype("float32")
    labels = rng.integers(0, 3, (UPDATES * big,)).astype("int32")

    def train(batch_size, n):
        model, groups = _two_group_model()
        if per_group:
            schedules = layerwise_schedules(
                list(groups), "warmup_linear_decay", PEAK, factor=2.0,
                total_steps=UPDATES, steps_per_update=n,
            )  # fmt: skip
            optimizer = DiscriminativeOptimizer(
                groups, keras.optimizers.SGD, schedules, gradient_accumulation_steps=n
            )
        else:
            optimizer = _plain_sgd(None, n)
        model.compile(optimizer, keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        before = [w.copy() for w in model.get_weights()]
        model.fit(inputs, labels, batch_size=batch_size, shuffle=False, verbose=0)
        assert int(model.optimizer.iterations) == UPDATES
        return before, model.get_weights()

    initial, one_batch = train(big, 1)
    _, accumulated = train(big // accumulation, accumulation)
    assert max(float(np.max(np.abs(a - b))) for a, b in zip(one_batch, initial, strict=True)) > 1e-2
    for one, other in zip(one_batch, accumulated, strict=True):
        np.testing.assert_allclose(other, one, rtol=0, atol=1e-6)


def _logged(log_dir, tag):
    """{step: value} of a scalar `keras.callbacks.TensorBoard` wrote under `log_dir`."""
    values = {}
    for path in sorted((log_dir / "train").glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag == tag:
                    values[event.step] = float(tf.make_ndarray(value.tensor))
    return values


def test_the_logged_learning_rate_is_the_rate_the_run_applies(tmp_path):
    """A short `fit` with accumulation and TensorBoard: the per-epoch learning rate it logs is
    the schedule its config names, and it is the rate the next update applies."""
    accumulation, epochs, batches = 2, 3, 4  # two updates an epoch, six in all
    config = {"name": "warmup_linear_decay", "peak_learning_rate": 0.6, "total_steps": 6}
    named = [float(warmup_linear_decay(k, 0.6, total_steps=6)) for k in range(7)]
    assert len(set(named)) == 7

    # y = low(x) + head(x) with x = 1 and loss mean(y): each kernel's gradient is 1, so SGD
    # moves it by exactly its rate.
    inputs = keras.Input((1,))
    low, head = _kernel(), _kernel()
    model = keras.Model(inputs, low(inputs) + head(inputs))
    schedules = layerwise_schedules(
        ["low", "head"], config["name"], config["peak_learning_rate"], factor=2.0,
        total_steps=config["total_steps"], steps_per_update=accumulation,
    )  # fmt: skip
    optimizer = DiscriminativeOptimizer(
        {"low": [low], "head": [head]},
        keras.optimizers.SGD,
        schedules,
        gradient_accumulation_steps=accumulation,
    )
    model.compile(optimizer, loss=lambda y_true, y_pred: keras.ops.mean(y_pred))
    kernels = [[0.0, 0.0]]
    record = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: kernels.append(
            [float(layer.kernel.numpy()[0, 0]) for layer in (low, head)]
        )
    )
    model.fit(
        np.ones((batches * epochs, 1), "float32"),
        np.zeros((batches * epochs, 1), "float32"),
        batch_size=1,
        epochs=epochs,
        steps_per_epoch=batches,
        shuffle=False,
        verbose=0,
        callbacks=[record, keras.callbacks.TensorBoard(str(tmp_path), write_graph=False)],
    )
    ends = np.array(kernels)[::accumulation]  # the kernels after each update
    applied_low, applied_head = (ends[:-1] - ends[1:]).T
    np.testing.assert_allclose(applied_head, named[:6], rtol=1e-5)
    np.testing.assert_allclose(applied_low, np.array(named[:6]) / 2.0, rtol=1e-5)

    logged = _logged(tmp_path, "epoch_learning_rate")  # the top (head) group's rate
    assert sorted(logged) == list(range(epochs))
    updates_per_epoch = batches // accumulation
    for epoch, rate in logged.items():
        # After epoch e the run has made (e + 1) × 2 updates: the logged rate is the next one's.
        after = (epoch + 1) * updates_per_epoch
        np.testing.assert_allclose(rate, named[after], rtol=1e-5)
        if after < len(applied_head):
            np.testing.assert_allclose(rate, applied_head[after], rtol=1e-5)


def test_fine_tuning_logs_the_schedule_its_settings_name(tmp_path):
    """`fine_tune_classifier` as `kbert finetune` runs it: TensorBoard's learning rate after
    each epoch is the rate the settings name for the next update."""
    vocabulary = tmp_path / "vocab.txt"
    vocabulary.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]))
    preprocessor = BertPreprocessor(WordPieceTokenizer(str(vocabulary)), sequence_length=8)
    train = Examples(
        ["a b", "b a"] * 4, None, np.array([0, 1] * 4, np.int32), LabelVocabulary(["x", "y"]), "t"
    )
    epochs, batch_size, accumulation, peak = 3, 2, 2, 0.1  # 4 batches, 2 updates an epoch
    fine_tune_classifier(
        _classifier(),
        preprocessor,
        train,
        settings=TrainingSettings(
            epochs=epochs,
            batch_size=batch_size,
            learning_rate=peak,
            warmup_fraction=0.0,
            gradient_accumulation_steps=accumulation,
            callbacks=[keras.callbacks.TensorBoard(str(tmp_path / "logs"), write_graph=False)],
            verbose=0,
        ),
    )
    per_epoch = len(train.texts) // batch_size // accumulation  # updates
    logged = _logged(tmp_path / "logs", "epoch_learning_rate")
    named = {
        epoch: float(warmup_linear_decay((epoch + 1) * per_epoch, peak, per_epoch * epochs))
        for epoch in range(epochs)
    }
    assert len(set(named.values())) == epochs
    assert logged.keys() == named.keys()
    np.testing.assert_allclose(list(logged.values()), list(named.values()), rtol=1e-5)
