import keras
import numpy as np
import pytest

from kbert.models import Encoder, SequenceClassifier
from kbert.train.freezing import (
    format_trainable_report,
    freeze,
    freeze_all_but_top,
    freeze_embeddings,
    freeze_for_feature_extraction,
    layer_groups,
    trainable_report,
    unfreeze,
)


def _classifier(**encoder_changes):
    keras.utils.set_random_seed(0)
    return SequenceClassifier(Encoder.from_preset("tiny", **encoder_changes), num_classes=2)


def _data(batch=8, length=6):
    rng = np.random.default_rng(0)
    inputs = {
        "token_ids": rng.integers(1, 50, (batch, length)).astype("int32"),
        "segment_ids": np.zeros((batch, length), "int32"),
        "padding_mask": np.ones((batch, length), "int32"),
    }
    return inputs, rng.integers(0, 2, (batch,)).astype("int32")


def _snapshot(layers):
    return [np.array(w) for layer in layers for w in layer.weights]


def _changed(before, layers):
    weights = [w for layer in layers for w in layer.weights]
    return any(not np.array_equal(a, np.array(w)) for a, w in zip(before, weights, strict=True))


def test_groups_of_an_encoder_and_of_a_task_model():
    model = _classifier()
    assert list(layer_groups(model.encoder)) == ["embeddings", "block_0", "block_1", "pooler"]
    assert list(layer_groups(model)) == ["embeddings", "block_0", "block_1", "pooler", "head"]
    assert list(layer_groups(_classifier(norm_first=True)))[-3:] == ["final_norm", "pooler", "head"]


def test_unknown_group_names_raise_and_list_the_valid_ones():
    model = _classifier()
    with pytest.raises(ValueError, match=r"unknown layer group\(s\) \['block_7'\].*'embeddings'"):
        freeze(model, ["block_7"])
    with pytest.raises(ValueError, match="unknown"):
        unfreeze(model, "heads")
    with pytest.raises(ValueError, match="Encoder"):
        layer_groups(keras.Sequential([keras.layers.Dense(2)]))


def test_frozen_weights_are_unchanged_after_fit_and_the_others_change():
    model = _classifier()
    freeze(model, ["embeddings", "block_0"])
    groups = layer_groups(model)
    frozen, trained = groups["embeddings"] + groups["block_0"], groups["block_1"] + groups["head"]
    before_frozen, before_trained = _snapshot(frozen), _snapshot(trained)
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss=model.default_loss())
    model.fit(*_data(), epochs=1, batch_size=4, verbose=0)
    assert not _changed(before_frozen, frozen)
    assert _changed(before_trained, trained)


def test_freezing_after_a_fit_takes_effect_at_the_next_fit():
    model = _classifier()
    model.compile(optimizer=keras.optimizers.SGD(0.5), loss=model.default_loss())
    model.fit(*_data(), epochs=1, batch_size=8, verbose=0)
    freeze(model, ["block_1"])
    block = layer_groups(model)["block_1"]
    before = _snapshot(block)
    model.fit(*_data(), epochs=1, batch_size=8, verbose=0)
    assert not _changed(before, block)


def test_recipes():
    model = _classifier()
    freeze_for_feature_extraction(model)
    assert {w.path.split("/")[0] for w in model.trainable_weights} == {"logits"}
    freeze_all_but_top(model, 1)
    trainable = {w.path.split("/")[0] for w in model.trainable_weights}
    assert trainable == {"block_1", "pooler", "logits"}
    freeze_all_but_top(model, 0)
    assert {w.path.split("/")[0] for w in model.trainable_weights} == {"pooler", "logits"}
    unfreeze(model, list(layer_groups(model)))
    freeze_embeddings(model)
    assert "embeddings" not in {w.path.split("/")[0] for w in model.trainable_weights}
    assert len(model.trainable_weights) == len(model.weights) - 5
    for bad in (-1, 3, 1.0, True):
        with pytest.raises(ValueError, match=r"k must be an int in \[0, 2\]"):
            freeze_all_but_top(model, bad)
    with pytest.raises(ValueError, match="head"):
        freeze_for_feature_extraction(model.encoder)


def test_unfreezing_a_group_of_a_frozen_encoder_trains_only_that_group():
    model = _classifier()
    model.encoder.trainable = False
    unfreeze(model, ["block_1"])
    assert {w.path.split("/")[0] for w in model.trainable_weights} == {"block_1", "logits"}


def test_report_percentages_sum_to_100_and_totals_match_count_params():
    model = _classifier(norm_first=True)
    freeze(model, ["embeddings"])
    rows = trainable_report(model)
    groups = rows[:-1]
    assert [row["group"] for row in groups] == list(layer_groups(model))
    assert sum(row["percent"] for row in groups) == pytest.approx(100.0)
    assert rows[-1]["total"] == model.count_params()
    assert rows[-1]["trainable"] == sum(int(np.prod(w.shape)) for w in model.trainable_weights)
    assert groups[0]["trainable"] == 0 and groups[0]["total"] > 0
    table = format_trainable_report(rows)
    assert table.splitlines()[0].split() == ["group", "trainable", "total", "%", "of", "all"]
    assert table.splitlines()[-1].endswith("100.00")


def test_report_counts_a_shared_block_once():
    model = _classifier(share_layers=True)
    rows = {row["group"]: row for row in trainable_report(model)}
    assert rows["total"]["total"] == model.count_params()
    assert rows["block_1"]["total"] == 0 and rows["block_0"]["total"] > 0
    freeze(model, ["block_1"])  # the shared layer: every block freezes
    assert trainable_report(model)[1]["trainable"] == 0
