"""Fast tests of InputPacker: exact packed rows for every truncation strategy."""

import itertools

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as text

from kbert.text import InputPacker
from tests.text.text_test_case import check_preprocessing_layer

CLS, SEP, PAD = 101, 102, 0


def ragged(rows):
    return tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1)


def numbered(first, count):
    return list(range(first, first + count))


def pack_lengths(length_a, length_b, sequence_length, truncation):
    """Packs segments of the given lengths; returns the kept tokens of A and of B."""
    packer = InputPacker(sequence_length, CLS, SEP, PAD, truncation=truncation)
    outputs = packer((ragged([numbered(1, length_a)]), ragged([numbered(1000, length_b)])))
    ids = outputs["token_ids"].numpy()[0].tolist()
    return [i for i in ids if 0 < i < 1000 and i not in (CLS, SEP)], [i for i in ids if i >= 1000]


def test_single_segment():
    packer = InputPacker(sequence_length=6, start_token_id=CLS, end_token_id=SEP)
    outputs = packer(ragged([[5, 6], [7, 8, 9, 10, 11, 12], []]))
    assert outputs["token_ids"].numpy().tolist() == [
        [CLS, 5, 6, SEP, PAD, PAD],
        [CLS, 7, 8, 9, 10, SEP],  # truncated to sequence_length - 2
        [CLS, SEP, PAD, PAD, PAD, PAD],
    ]
    assert outputs["segment_ids"].numpy().tolist() == [[0] * 6] * 3
    assert outputs["padding_mask"].numpy().tolist() == [
        [1, 1, 1, 1, 0, 0],
        [1, 1, 1, 1, 1, 1],
        [1, 1, 0, 0, 0, 0],
    ]
    for value in outputs.values():
        assert value.dtype == tf.int32 and value.shape == (3, 6)


def test_pair_layout_and_empty_side():
    packer = InputPacker(sequence_length=9, start_token_id=CLS, end_token_id=SEP)
    outputs = packer((ragged([[5, 6], [7]]), ragged([[8, 9, 10], []])))
    assert outputs["token_ids"].numpy().tolist() == [
        [CLS, 5, 6, SEP, 8, 9, 10, SEP, PAD],
        [CLS, 7, SEP, SEP, PAD, PAD, PAD, PAD, PAD],  # empty B: [CLS] A [SEP] [SEP]
    ]
    assert outputs["segment_ids"].numpy().tolist() == [
        [0, 0, 0, 0, 1, 1, 1, 1, 0],
        [0, 0, 0, 1, 0, 0, 0, 0, 0],
    ]
    assert outputs["padding_mask"].numpy().tolist() == [
        [1, 1, 1, 1, 1, 1, 1, 1, 0],
        [1, 1, 1, 1, 0, 0, 0, 0, 0],
    ]


@pytest.mark.parametrize(
    "truncation, length_a, length_b, kept_a, kept_b",
    [
        # budget 7 = sequence_length 10 - 3 special tokens
        ("longest_first", 2, 10, 2, 5),  # the short side fits in half: kept whole
        ("longest_first", 10, 10, 3, 4),  # halves; on a tie the second gets the odd token
        ("longest_first", 12, 10, 4, 3),  # halves; the longer gets the odd token
        ("longest_first", 10, 12, 3, 4),
        ("longest_first", 0, 20, 0, 7),
        ("round_robin", 2, 10, 2, 5),
        ("round_robin", 10, 10, 4, 3),  # A, B, A, B, ...: A gets the odd token
        ("round_robin", 10, 1, 6, 1),
        ("only_first", 10, 3, 4, 3),
        ("only_first", 1, 12, 0, 7),  # B alone is too long: cut too (Hugging Face raises)
        ("only_second", 3, 10, 3, 4),
        ("only_second", 12, 1, 7, 0),
        ("longest_first", 3, 4, 3, 4),  # fits: nothing is cut
    ],
)
def test_pair_truncation(truncation, length_a, length_b, kept_a, kept_b):
    a, b = pack_lengths(length_a, length_b, 10, truncation)
    assert a == numbered(1, kept_a)  # always the leading tokens
    assert b == numbered(1000, kept_b)


def test_round_robin_matches_tf_text_trimmer():
    # tf-text's RoundRobinTrimmer is the reference (tests may use it; the graph may not).
    lengths = list(itertools.product(range(0, 12), range(0, 12)))
    first = tf.ragged.constant([numbered(1, a) for a, _ in lengths], dtype=tf.int64)
    second = tf.ragged.constant([numbered(1000, b) for _, b in lengths], dtype=tf.int64)
    expected = text.RoundRobinTrimmer(max_seq_length=9).trim([first, second])
    packer = InputPacker(12, CLS, SEP, truncation="round_robin")
    kept = packer.kept_lengths([first.row_lengths(), second.row_lengths()])
    assert kept[0].numpy().tolist() == expected[0].row_lengths().numpy().tolist()
    assert kept[1].numpy().tolist() == expected[1].row_lengths().numpy().tolist()


def test_longest_first_matches_hugging_face():
    tokenizers = pytest.importorskip("tokenizers")
    vocabulary = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}
    vocabulary.update({f"t{i}": i + 3 for i in range(20)})
    reference = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocabulary, unk_token="[UNK]"))
    reference.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    reference.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )
    pairs = list(itertools.product(range(0, 9), range(0, 9)))
    words_a = [[f"t{i}" for i in range(length_a)] for length_a, _ in pairs]
    words_b = [[f"t{10 + i}" for i in range(length_b)] for _, length_b in pairs]
    ids_a = ragged([[vocabulary[w] for w in words] for words in words_a])
    ids_b = ragged([[vocabulary[w] for w in words] for words in words_b])
    for sequence_length in (3, 4, 7, 10):
        reference.enable_truncation(max_length=sequence_length, strategy="longest_first")
        outputs = InputPacker(sequence_length, start_token_id=1, end_token_id=2)((ids_a, ids_b))
        lengths = outputs["padding_mask"].numpy().sum(axis=1)
        for row, (a, b) in enumerate(zip(words_a, words_b, strict=True)):
            expected = reference.encode(a, b, is_pretokenized=True)
            length = lengths[row]
            assert outputs["token_ids"].numpy()[row, :length].tolist() == expected.ids
            assert outputs["segment_ids"].numpy()[row, :length].tolist() == expected.type_ids


def test_alignments_are_packed_alike():
    packer = InputPacker(sequence_length=7, start_token_id=CLS, end_token_id=SEP)
    ids = (ragged([[5, 6, 7]]), ragged([[8, 9, 10]]))
    alignments = (
        {"word_ids": ragged([[0, 0, 1]]), "start_offsets": ragged([[0, 2, 4]])},
        {"word_ids": ragged([[0, 1, 2]]), "start_offsets": ragged([[0, 3, 6]])},
    )
    outputs = packer(ids, alignments=alignments)
    assert outputs["token_ids"].numpy().tolist() == [[CLS, 5, 6, SEP, 8, 9, SEP]]
    assert outputs["word_ids"].numpy().tolist() == [[-1, 0, 0, -1, 0, 1, -1]]
    assert outputs["start_offsets"].numpy().tolist() == [[-1, 0, 2, -1, 0, 3, -1]]
    single = InputPacker(sequence_length=6, start_token_id=CLS, end_token_id=SEP)
    outputs = single(ragged([[5]]), alignments={"word_ids": ragged([[0]])})
    assert outputs["word_ids"].numpy().tolist() == [[-1, 0, -1, -1, -1, -1]]


def test_unbatched_and_dense_inputs():
    packer = InputPacker(sequence_length=6, start_token_id=CLS, end_token_id=SEP)
    outputs = packer((tf.constant([5, 6]), tf.constant([7])))
    assert outputs["token_ids"].numpy().tolist() == [CLS, 5, 6, SEP, 7, SEP]
    assert outputs["segment_ids"].numpy().tolist() == [0, 0, 0, 0, 1, 1]
    dense = packer(tf.constant([[5, 6], [7, 8]], tf.int64))
    assert dense["token_ids"].numpy().tolist() == [[CLS, 5, 6, SEP, 0, 0], [CLS, 7, 8, SEP, 0, 0]]
    assert packer([5, 6])["token_ids"].numpy().tolist() == [CLS, 5, 6, SEP, 0, 0]


def test_kept_lengths_for_windowing():
    packer = InputPacker(sequence_length=10, start_token_id=CLS, end_token_id=SEP)
    kept = packer.kept_lengths([tf.constant([12, 2]), tf.constant([10, 3])])
    assert [k.numpy().tolist() for k in kept] == [[4, 2], [3, 3]]
    assert packer.kept_lengths([tf.constant([100])])[0].numpy().tolist() == [8]


def test_argument_errors():
    with pytest.raises(ValueError, match="at least 2.*received 1"):
        InputPacker(sequence_length=1, start_token_id=CLS, end_token_id=SEP)
    with pytest.raises(ValueError, match="truncation must be one of.*received 'middle'"):
        InputPacker(8, CLS, SEP, truncation="middle")
    short = InputPacker(sequence_length=2, start_token_id=CLS, end_token_id=SEP)
    assert short(ragged([[5]]))["token_ids"].numpy().tolist() == [[CLS, SEP]]
    with pytest.raises(ValueError, match="at least 3 to pack a pair.*received sequence_length=2"):
        short((ragged([[5]]), ragged([[6]])))
    packer = InputPacker(8, CLS, SEP)
    with pytest.raises(ValueError, match="same batch size; received 2 and 1"):
        packer((ragged([[5], [6]]), ragged([[7]])))
    with pytest.raises(ValueError, match="received 3 segments"):
        packer((ragged([[5]]), ragged([[6]]), ragged([[7]])))
    with pytest.raises(ValueError, match="integer ids"):
        packer(tf.constant([[1.0]]))
    with pytest.raises(ValueError, match="one dict per segment"):
        packer((ragged([[5]]), ragged([[6]])), alignments={"word_ids": ragged([[0]])})


def test_layer_end_to_end():
    packer = InputPacker(sequence_length=7, start_token_id=CLS, end_token_id=SEP, pad_token_id=9)
    inputs = (ragged([[5, 6, 7, 8], [1]]), ragged([[10, 11, 12], []]))
    outputs = check_preprocessing_layer(packer, inputs)
    assert outputs["token_ids"] == [[CLS, 5, 6, SEP, 10, 11, SEP], [CLS, 1, SEP, SEP, 9, 9, 9]]
    per_example = tf.data.Dataset.from_tensor_slices(
        (tf.constant([[5, 6, 7], [8, 9, 10]]), tf.constant([[1], [2]]))
    ).map(lambda a, b: packer((a, b)))
    rows = [np.asarray(x["token_ids"]).tolist() for x in per_example.as_numpy_iterator()]
    assert rows == [[CLS, 5, 6, 7, SEP, 1, SEP], [CLS, 8, 9, 10, SEP, 2, SEP]]
