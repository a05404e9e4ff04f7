import keras
import numpy as np
import pytest

from kbert.models import Encoder, SequenceClassifier
from kbert.train.freezing import freeze, layer_groups
from kbert.train.unfreezing import ChainThaw, GradualUnfreezing


def _classifier():
    keras.utils.set_random_seed(0)
    # pooling="pooler" so that every group, the pooler included, gets a gradient.
    model = SequenceClassifier(
        Encoder.from_preset("tiny", dropout=0.0), num_classes=2, pooling="pooler", dropout=0.0
    )
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss=model.default_loss())
    return model


def _data(batch=8, length=6):
    rng = np.random.default_rng(0)
    inputs = {
        "token_ids": rng.integers(1, 50, (batch, length)).astype("int32"),
        "segment_ids": np.zeros((batch, length), "int32"),
        "padding_mask": np.ones((batch, length), "int32"),
    }
    return inputs, rng.integers(0, 2, (batch,)).astype("int32")


class _Recorder(keras.callbacks.Callback):
    """Which groups changed in each training step."""

    def on_train_begin(self, logs=None):
        self.groups = layer_groups(self.model)
        self.changed = []
        self._last = self._snapshot()

    def _snapshot(self):
        return {
            name: [np.array(w) for layer in layers for w in layer.weights]
            for name, layers in self.groups.items()
        }

    def on_train_batch_end(self, batch, logs=None):
        now = self._snapshot()
        self.changed.append(
            {
                name
                for name in now
                if any(
                    not np.array_equal(a, b)
                    for a, b in zip(self._last[name], now[name], strict=True)
                )
            }
        )
        self._last = now


def test_gradual_unfreezing_every_k_steps_unfreezes_one_group_at_a_time():
    model, recorder = _classifier(), _Recorder()
    callback = GradualUnfreezing(every=2)
    model.fit(*_data(), epochs=3, batch_size=2, verbose=0, callbacks=[callback, recorder])
    top_first = ["head", "pooler", "block_1", "block_0", "embeddings"]
    for step, changed in enumerate(recorder.changed):
        assert changed == set(top_first[: step // 2 + 1]), step
    assert [(entry["step"], entry["trainable"]) for entry in callback.history] == [
        (2 * stage, top_first[: stage + 1]) for stage in range(5)
    ]
    assert len(model.trainable_weights) == len(model.weights)


def test_gradual_unfreezing_every_epoch():
    model, recorder = _classifier(), _Recorder()
    callback = GradualUnfreezing(["head", "block_1", "block_0"], every="epoch")
    model.fit(*_data(), epochs=4, batch_size=4, verbose=0, callbacks=[callback, recorder])
    expected = [
        {"head"},
        {"head", "block_1"},
        {"head", "block_1", "block_0"},
        {"head", "block_1", "block_0"},
    ]
    # Groups not listed (embeddings, pooler) are left trainable.
    assert [changed - {"embeddings", "pooler"} for changed in recorder.changed[::2]] == expected
    assert [changed - {"embeddings", "pooler"} for changed in recorder.changed[1::2]] == expected
    assert [entry["epoch"] for entry in callback.history] == [0, 1, 2]


def test_chain_thaw_trains_each_group_alone_then_all():
    model, recorder = _classifier(), _Recorder()
    callback = ChainThaw(every=1)
    model.fit(*_data(), epochs=2, batch_size=2, verbose=0, callbacks=[callback, recorder])
    order = ["head", "embeddings", "block_0", "block_1", "pooler"]
    assert recorder.changed[:5] == [{name} for name in order]
    assert recorder.changed[5:] == [set(order)] * 3
    assert callback.history[-1]["trainable"] == order


def test_a_schedule_longer_than_training_is_an_error():
    with pytest.raises(ValueError, match="needs epochs >= 3"):
        GradualUnfreezing(["head", "pooler", "block_1"], epochs=2)
    with pytest.raises(ValueError, match=r"needs >= 10 training steps; training has 8"):
        ChainThaw(["head", "pooler", "block_1"], every=3, total_steps=8)
    model = _classifier()
    with pytest.raises(ValueError, match="needs epochs >= 5"):
        model.fit(*_data(), epochs=4, batch_size=8, verbose=0, callbacks=[GradualUnfreezing()])
    with pytest.raises(ValueError, match=r"needs >= 13 training steps; training has 8"):
        model.fit(
            *_data(), epochs=2, batch_size=2, verbose=0, callbacks=[GradualUnfreezing(every=3)]
        )


def test_a_schedule_longer_than_an_unknown_length_dataset_is_an_error():
    # Length-bucketed tf.data batches have unknown cardinality, so `fit` knows no step count:
    # the `total_steps` the caller declared is what the schedule is checked against.
    import tensorflow as tf

    x, y = _data()
    batches = tf.data.Dataset.from_tensor_slices((x, y)).batch(4).filter(lambda *_: True)
    assert int(batches.cardinality()) == int(tf.data.UNKNOWN_CARDINALITY)
    with pytest.raises(ValueError, match=r"needs >= 13 training steps; training has 8"):
        _classifier().fit(
            batches, epochs=2, verbose=0, callbacks=[GradualUnfreezing(every=3, total_steps=8)]
        )


def test_bad_arguments():
    for every in (0, "step", 1.5):
        with pytest.raises(ValueError, match="every must be"):
            GradualUnfreezing(every=every)
    with pytest.raises(ValueError, match="at least one"):
        ChainThaw([])
    model = _classifier()
    with pytest.raises(ValueError, match=r"unknown layer group\(s\) \['block_9'\]"):
        model.fit(*_data(), epochs=3, verbose=0, callbacks=[GradualUnfreezing(["head", "block_9"])])


def test_an_optimizer_built_without_a_group_is_reported():
    # Not built yet: the callback builds it on every group, frozen ones included.
    model = _classifier()
    freeze(model, ["block_0"])
    model.fit(*_data(), epochs=5, batch_size=8, verbose=0, callbacks=[GradualUnfreezing()])
    assert len(model.trainable_weights) == len(model.weights)

    model = _classifier()
    freeze(model, ["block_0"])
    model.optimizer.build(model.trainable_variables)
    with pytest.raises(ValueError, match=r"built while group\(s\) \['block_0'\] were frozen"):
        model.fit(*_data(), epochs=5, verbose=0, callbacks=[GradualUnfreezing()])


def test_plan_lists_the_stages_without_changing_the_model():
    model = _classifier()
    before = [v.trainable for v in model.weights]
    plan = GradualUnfreezing(["head", "block_1", "block_0"], every=5).plan(model)
    assert plan == [(0, ["head"]), (5, ["head", "block_1"]), (10, ["head", "block_1", "block_0"])]
    chain = ChainThaw(["head", "block_1"]).plan(model)
    assert chain == [(0, ["head"]), (1, ["block_1"]), (2, ["head", "block_1"])]
    assert [v.trainable for v in model.weights] == before
