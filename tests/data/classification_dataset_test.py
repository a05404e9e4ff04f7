import numpy as np
import pytest

from kbert.data import classification_dataset, default_bucket_lengths
from kbert.text import BertPreprocessor, WordPieceTokenizer

VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]
PREPROCESSOR = BertPreprocessor(WordPieceTokenizer(VOCABULARY), sequence_length=64)
TEXTS = ["a " * n for n in (1, 3, 20, 40, 5, 2, 70, 1)]


def test_bucket_lengths_end_at_the_sequence_length():
    assert default_bucket_lengths(64) == [16, 24, 32, 48, 64]
    assert default_bucket_lengths(512)[-3:] == [256, 384, 512]
    assert default_bucket_lengths(100) == [16, 24, 32, 48, 64, 96, 100]
    assert default_bucket_lengths(10) == [10]


def test_training_batches_hold_every_example_once_per_epoch_padded_to_a_bucket():
    dataset = classification_dataset(
        PREPROCESSOR, TEXTS, labels=np.arange(8), batch_size=2, training=True
    )
    epochs = [[(x, y.numpy().tolist()) for x, y in dataset] for _ in range(2)]
    for batches in epochs:
        assert sorted(label for _, labels in batches for label in labels) == list(range(8))
        for x, _ in batches:
            width = x["token_ids"].shape[1]
            assert width in (16, 24, 32, 48, 64)
            real = x["padding_mask"].numpy().sum(axis=1)
            # Each example sits in the smallest bucket that holds it.
            assert all(width == min(b for b in (16, 24, 32, 48, 64) if b >= r) for r in real)
    assert [y for _, y in epochs[0]] != [y for _, y in epochs[1]]  # reshuffled


def test_evaluation_keeps_order_and_cuts_each_batch_to_its_longest():
    dataset = classification_dataset(
        PREPROCESSOR, TEXTS, text_pairs=["b"] * 8, labels=[[1, 0, 1]] * 8, batch_size=3
    )
    batches = list(dataset)
    assert [tuple(x["token_ids"].shape) for x, _ in batches] == [(3, 24), (3, 48), (2, 64)]
    first = batches[0][0]
    # [CLS] a [SEP] b [SEP]: pairs keep their segment ids.
    assert first["token_ids"].numpy()[0, :5].tolist() == [2, 5, 3, 6, 3]
    assert first["segment_ids"].numpy()[0, :5].tolist() == [0, 0, 0, 1, 1]
    assert batches[0][1].numpy().tolist() == [[1, 0, 1]] * 3


def test_inputs_only_for_predict():
    (x,) = list(classification_dataset(PREPROCESSOR, ["a b"], batch_size=4))
    assert set(x) == {"token_ids", "segment_ids", "padding_mask"}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"texts": []}, "texts is empty"),
        ({"texts": "a b"}, "texts must be a list of str, not one str"),
        ({"texts": ["a", " "]}, "texts must be non-empty str; text 1"),
        ({"texts": ["a"], "text_pairs": ["b", "b"]}, "text_pairs has 2 texts but texts has 1"),
        ({"texts": ["a"], "text_pairs": [""]}, "text_pairs must be non-empty str; pair 0"),
        ({"texts": ["a"], "labels": [0, 1]}, "labels has 2 entries but texts has 1"),
        ({"texts": ["a"], "batch_size": 0}, "batch_size must be a positive int"),
        ({"texts": ["a"], "bucket_lengths": [16, 32]}, "last bucket length must be at least"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        classification_dataset(PREPROCESSOR, **kwargs)
