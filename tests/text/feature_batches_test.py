import numpy as np
import pytest

from kbert.text.feature_batches import feature_batches


def _features(lengths, width=8, seed=0):
    """Rows of random token ids padded to `width`, with a per-row id and a per-token label."""
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths)
    mask = (np.arange(width)[None, :] < lengths[:, None]).astype("int32")
    return {
        "token_ids": rng.integers(5, 50, size=(len(lengths), width)).astype("int32") * mask,
        "padding_mask": mask,
        "labels": np.where(mask == 1, rng.integers(0, 3, size=mask.shape), -100).astype("int32"),
        "row": np.arange(len(lengths), dtype="int32"),
    }


def _epoch(dataset):
    return [batch["row"].numpy().tolist() for batch, _ in dataset]


def test_evaluation_batches_keep_the_order_and_trim_to_the_longest_row():
    features = _features([3, 5, 2, 4, 1])
    features["answer"] = np.array([[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]], "int32")  # other width
    dataset = feature_batches(features, label_keys=("labels",), batch_size=2)
    assert int(dataset.cardinality()) == 3
    batches = list(dataset)
    assert [inputs["row"].numpy().tolist() for inputs, _ in batches] == [[0, 1], [2, 3], [4]]
    for (inputs, labels), index, width in zip(
        batches, ([0, 1], [2, 3], [4]), (5, 4, 1), strict=True
    ):
        for key in ("token_ids", "padding_mask"):
            np.testing.assert_array_equal(inputs[key].numpy(), features[key][index, :width])
        np.testing.assert_array_equal(labels.numpy(), features["labels"][index, :width])
        np.testing.assert_array_equal(inputs["answer"].numpy(), features["answer"][index])
        assert "labels" not in inputs
    # Twice over the same dataset (two evaluations): the same order.
    assert _epoch(dataset) == _epoch(dataset) == [[0, 1], [2, 3], [4]]


def test_without_labels_the_dataset_holds_inputs_only():
    features = _features([2, 3])
    batch = next(iter(feature_batches(features, batch_size=2)))
    assert sorted(batch) == ["labels", "padding_mask", "row", "token_ids"]
    assert batch["token_ids"].shape == (2, 3)


def test_training_reshuffles_every_epoch_deterministically_for_a_seed():
    features = _features(np.random.default_rng(1).integers(1, 9, size=40))

    def two_epochs(seed):
        dataset = feature_batches(
            features, label_keys=("labels",), batch_size=4, training=True, seed=seed
        )
        return _epoch(dataset), _epoch(dataset)

    first, second = two_epochs(0)
    for epoch in (first, second):
        assert sorted(row for batch in epoch for row in batch) == list(range(40))
        assert all(len(batch) == 4 for batch in epoch)
    assert first != second
    assert two_epochs(0) == (first, second)  # a fresh dataset with the same seed
    assert two_epochs(1)[0] != first


def test_training_batches_group_rows_of_similar_length():
    lengths = np.random.default_rng(2).integers(1, 9, size=40)
    features = _features(lengths)
    dataset = feature_batches(features, label_keys=("labels",), batch_size=4, training=True)
    batches = list(dataset)
    ranges = sorted(
        (lengths[b["row"].numpy()].min(), lengths[b["row"].numpy()].max()) for b, _ in batches
    )
    # 40 rows fit one sorting window: the batches' length ranges do not interleave.
    for (_, high), (low, _) in zip(ranges, ranges[1:], strict=False):
        assert high <= low
    for inputs, labels in batches:
        width = lengths[inputs["row"].numpy()].max()
        assert inputs["token_ids"].shape[1] == labels.shape[1] == width
    # The point of grouping: fewer padded positions than batches of rows in their given order.
    grouped = sum(inputs["token_ids"].shape[1] for inputs, _ in batches)
    in_order = sum(lengths[i : i + 4].max() for i in range(0, 40, 4))
    assert grouped < in_order


def _span_features(span_width):
    """Two rows of 6 tokens, with candidate-span arrays `span_width` wide."""
    features = {
        "token_ids": np.array([[2, 5, 6, 7, 3, 0], [2, 5, 3, 0, 0, 0]], "int32"),
        "padding_mask": np.array([[1, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 0]], "int32"),
    }
    counts = np.array([2, 1])
    span_mask = (np.arange(span_width)[None, :] < counts[:, None]).astype("int32")
    features["span_mask"] = span_mask
    features["span_starts"] = np.array(
        [[1, 2] + [0] * (span_width - 2), [1] + [0] * (span_width - 1)], "int32"
    )
    features["span_labels"] = np.where(span_mask == 1, 1, -100).astype("int32")
    return features


def test_extra_length_keys_trim_span_arrays_by_their_own_mask():
    features = _span_features(span_width=9)
    inputs, labels = next(
        iter(
            feature_batches(
                features,
                label_keys=("span_labels",),
                batch_size=2,
                extra_length_keys=("span_mask",),
            )
        )
    )
    assert inputs["token_ids"].shape == inputs["padding_mask"].shape == (2, 5)
    assert inputs["span_starts"].numpy().tolist() == [[1, 2], [1, 0]]
    assert inputs["span_mask"].numpy().tolist() == [[1, 1], [1, 0]]
    assert labels.numpy().tolist() == [[1, 1], [1, -100]]


def test_extra_length_keys_trim_span_arrays_by_their_own_mask_at_the_token_width():
    features = _span_features(span_width=6)  # as wide as the token axis, by chance
    inputs, labels = next(
        iter(
            feature_batches(
                features,
                label_keys=("span_labels",),
                batch_size=2,
                extra_length_keys=("span_mask",),
            )
        )
    )
    assert inputs["span_starts"].numpy().tolist() == [[1, 2], [1, 0]]
    assert labels.numpy().tolist() == [[1, 1], [1, -100]]
    assert inputs["token_ids"].numpy().tolist() == [[2, 5, 6, 7, 3], [2, 5, 3, 0, 0]]


def test_label_keys_give_a_tensor_a_dict_or_a_renamed_dict():
    features = _features([2, 3])
    features["start_positions"] = np.array([1, 2], "int32")
    one = next(iter(feature_batches(features, label_keys=("labels",), batch_size=2)))[1]
    assert one.numpy().tolist() == features["labels"][:, :3].tolist()
    inputs, several = next(
        iter(feature_batches(features, label_keys=("labels", "start_positions"), batch_size=2))
    )
    assert sorted(several) == ["labels", "start_positions"]
    assert sorted(inputs) == ["padding_mask", "row", "token_ids"]
    inputs, renamed = next(
        iter(
            feature_batches(
                features,
                label_keys={"start_logits": "start_positions", "tags": "labels"},
                batch_size=2,
            )
        )
    )
    assert sorted(renamed) == ["start_logits", "tags"]
    assert renamed["start_logits"].numpy().tolist() == [1, 2]
    assert renamed["tags"].shape == (2, 3)
    assert sorted(inputs) == ["padding_mask", "row", "token_ids"]


def test_input_keys_pick_the_inputs():
    features = _features([2, 3])
    inputs, _ = next(
        iter(
            feature_batches(
                features,
                label_keys=("labels",),
                batch_size=2,
                input_keys=["token_ids", "padding_mask"],
            )
        )
    )
    assert sorted(inputs) == ["padding_mask", "token_ids"]


@pytest.mark.parametrize(
    "change, kwargs, message",
    [
        (None, {"batch_size": 0}, "batch_size must be a positive int; received 0"),
        (None, {"batch_size": 2.0}, "batch_size must be a positive int; received 2.0"),
        (None, {"length_key": "mask"}, "features need 'mask' to measure row lengths"),
        (None, {"label_keys": ("tags",)}, r"label keys \['tags'\] are not in features"),
        (None, {"label_keys": {"out": "tags"}}, r"label keys \['tags'\] are not in features"),
        (None, {"extra_length_keys": ("span_mask",)}, "length key 'span_mask' is not in features"),
        (
            None,
            {"input_keys": ["token_ids", "segment_ids"]},
            r"input keys \['segment_ids'\] are not in features",
        ),
        ("unequal", {}, "every feature array needs the same number of rows"),
        ("empty", {}, "features hold no rows"),
    ],
)
def test_bad_arguments_are_named(change, kwargs, message):
    features = _features([2, 3])
    if change == "unequal":
        features["row"] = np.arange(3)
    if change == "empty":
        features = {key: value[:0] for key, value in features.items()}
    with pytest.raises(ValueError, match=message):
        feature_batches(features, **kwargs)
