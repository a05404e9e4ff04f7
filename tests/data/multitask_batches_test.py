import numpy as np
import pytest
import tensorflow as tf

from kbert.data import (
    joint_batches,
    multitask_dataset,
    task_sampling_probabilities,
    with_masked_language_model_inputs,
)
from kbert.data.token_classification_features import IGNORE_INDEX
from kbert.text import MaskedLMMasker


def _x(rows, length, first_id):
    token_ids = np.arange(first_id, first_id + rows * length, dtype="int32").reshape(rows, length)
    return {"token_ids": token_ids, "padding_mask": np.ones_like(token_ids)}


def _classification(batches, batch_size=2, length=4, first_id=0):
    rows = batches * batch_size
    labels = np.arange(rows, dtype="int32") % 2
    return tf.data.Dataset.from_tensor_slices((_x(rows, length, first_id), labels)).batch(
        batch_size
    )


def _tagging(batches, batch_size=2, length=6, first_id=1000):
    rows = batches * batch_size
    labels = np.arange(rows * length, dtype="int32").reshape(rows, length) % 3
    return tf.data.Dataset.from_tensor_slices((_x(rows, length, first_id), labels)).batch(
        batch_size
    )


def test_probabilities_for_each_sampling_mode():
    datasets = {"a": _classification(9), "b": _tagging(1)}
    assert task_sampling_probabilities(datasets) == pytest.approx({"a": 0.9, "b": 0.1})
    assert task_sampling_probabilities(datasets, "uniform") == {"a": 0.5, "b": 0.5}
    # size^(1/T): 9^(1/2) = 3 against 1.
    assert task_sampling_probabilities(datasets, "temperature", temperature=2.0) == pytest.approx(
        {"a": 0.75, "b": 0.25}
    )
    assert task_sampling_probabilities(datasets, probabilities={"a": 1, "b": 3}) == pytest.approx(
        {"a": 0.25, "b": 0.75}
    )


def test_absent_tasks_get_ignore_placeholders_of_the_right_rank():
    mixed = multitask_dataset({"sentiment": _classification(2), "ner": _tagging(3)}, seed=1)
    assert set(mixed.element_spec[1]) == {"sentiment", "ner"}
    seen = {"sentiment": 0, "ner": 0}
    for x, y in mixed:
        token_ids = x["token_ids"].numpy()
        np.testing.assert_array_equal(x["segment_ids"].numpy(), np.zeros_like(token_ids))
        task = "sentiment" if token_ids[0, 0] < 1000 else "ner"
        other = "ner" if task == "sentiment" else "sentiment"
        seen[task] += 1
        assert y[task].shape == ((2,) if task == "sentiment" else token_ids.shape)
        assert not np.any(y[task].numpy() == IGNORE_INDEX)
        assert y[other].shape == ((2,) if other == "sentiment" else token_ids.shape)
        assert np.all(y[other].numpy() == IGNORE_INDEX)
    # num_steps=None: every batch of every task exactly once, and Keras knows the epoch length.
    assert seen == {"sentiment": 2, "ner": 3}
    assert int(mixed.cardinality()) == 5


def test_sampling_frequencies_match_the_probabilities():
    # 4000 draws: a frequency's standard deviation is at most 0.008; 0.03 is about 4 of them.
    datasets = {
        "a": _classification(9, batch_size=1),
        "b": _classification(1, batch_size=1),
        "c": _classification(4, batch_size=1, first_id=1000),
    }
    for kwargs in (
        {"sampling": "temperature", "temperature": 2.0},
        {"probabilities": {"a": 0.2, "b": 0.5, "c": 0.3}},
    ):
        expected = task_sampling_probabilities(datasets, **kwargs)
        mixed = multitask_dataset(datasets, num_steps=4000, seed=3, **kwargs)
        assert int(mixed.cardinality()) == 4000
        counts = {"a": 0, "b": 0, "c": 0}
        for _, y in mixed.map(lambda x, y: (x, {k: v[0] for k, v in y.items()})):
            present = [task for task, labels in y.items() if int(labels) != IGNORE_INDEX]
            assert len(present) == 1
            counts[present[0]] += 1
        for task in counts:
            assert abs(counts[task] / 4000 - expected[task]) < 0.03, (counts, expected)


def test_seeded_sampling_is_reproducible():
    def order():
        mixed = multitask_dataset({"a": _classification(5), "b": _tagging(5)}, seed=7)
        return [int(x["token_ids"][0, 0]) for x, _ in mixed]

    assert order() == order()


def test_joint_batches_label_one_task():
    x, y = next(iter(joint_batches(_classification(1), "sst2")))
    assert list(y) == ["sst2"]
    np.testing.assert_array_equal(y["sst2"].numpy(), [0, 1])


def test_masked_language_model_inputs_leave_x_unmasked():
    masker = MaskedLMMasker(
        2000,
        mask_token_id=4,
        special_token_ids=[0],
        max_selections=4,
        selection_rate=1.0,
        mask_token_rate=1.0,
        random_token_rate=0.0,
        seed=0,
    )
    batches = with_masked_language_model_inputs(_classification(1, first_id=10), masker)
    x, y = next(iter(batches))
    np.testing.assert_array_equal(x["token_ids"].numpy(), [[10, 11, 12, 13], [14, 15, 16, 17]])
    lm = x["language_model_inputs"]
    np.testing.assert_array_equal(lm["token_ids"].numpy(), np.full((2, 4), 4))
    np.testing.assert_array_equal(lm["mask_ids"].numpy(), x["token_ids"].numpy())
    np.testing.assert_array_equal(lm["mask_weights"].numpy(), np.ones((2, 4)))
    np.testing.assert_array_equal(lm["segment_ids"].numpy(), np.zeros((2, 4)))
    np.testing.assert_array_equal(y.numpy(), [0, 1])


def test_bad_inputs_are_errors():
    unknown = _classification(2).filter(lambda x, y: True)
    with pytest.raises(ValueError, match=r"datasets\['a'\] has unknown cardinality"):
        task_sampling_probabilities({"a": unknown, "b": _tagging(1)})
    # Uniform and explicit probabilities need no sizes.
    assert task_sampling_probabilities({"a": unknown}, "uniform") == {"a": 1.0}
    with pytest.raises(ValueError, match=r"sampling must be one of .*received 'size'"):
        task_sampling_probabilities({"a": _tagging(1)}, "size")
    with pytest.raises(ValueError, match=r"temperature must be a number > 0; received 0"):
        task_sampling_probabilities({"a": _tagging(1)}, "temperature", temperature=0)
    with pytest.raises(ValueError, match=r"one entry per task \['a'\]; received \{'b': 1\}"):
        task_sampling_probabilities({"a": _tagging(1)}, probabilities={"b": 1})
    with pytest.raises(ValueError, match=r"non-negative numbers with a positive sum"):
        task_sampling_probabilities({"a": _tagging(1)}, probabilities={"a": -1})
    with pytest.raises(ValueError, match=r"non-empty dict"):
        multitask_dataset({})
    with pytest.raises(ValueError, match=r"labels must be batched with rank 1"):
        multitask_dataset({"a": _classification(2).unbatch()})
    with_types = _classification(2).map(lambda x, y: ({**x, "type_ids": x["token_ids"]}, y))
    with pytest.raises(ValueError, match=r"same keys to be mixed"):
        multitask_dataset({"a": _classification(2), "b": with_types})
    with pytest.raises(ValueError, match=r"num_steps must be an int >= 1 or None; received 0"):
        multitask_dataset({"a": _classification(2)}, num_steps=0)
    with pytest.raises(ValueError, match=r"masker must be callable"):
        with_masked_language_model_inputs(_classification(1), "masker")
