"""Fast tests of train_wordpiece_vocabulary on a small in-memory corpus."""

import pytest
import tensorflow as tf

from kbert.text import (
    WordPieceTokenizer,
    corpus_tokenizer,
    train_wordpiece_vocabulary,
    write_vocabulary,
)
from kbert.text.vocabulary_trainer import count_words

CORPUS = [
    "The cat sat on the mat.",
    "A hat, a bat and a cat!",
    "Cafés serve naïve coffee; ΟΔΟΣ is a road.",
    "中文 text, don't panic",
    "unbelievable unbelievably believable believe",
]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_words_are_counted_as_the_tokenizer_sees_them():
    counts = count_words(tf.data.Dataset.from_tensor_slices(CORPUS))
    assert counts["a"] == 4 and counts["cat"] == 2
    assert counts["cafes"] == 1 and counts["naive"] == 1  # lowercased, accents stripped
    assert counts["οδοσ"] == 1  # character-wise lowercase, as in the tokenizer
    assert counts["中"] == 1 and counts["'"] == 1 and counts["don"] == 1


def test_trained_vocabulary_tokenizes_its_corpus_without_unknowns():
    vocabulary = train_wordpiece_vocabulary(
        tf.data.Dataset.from_tensor_slices(CORPUS), vocabulary_size=100
    )
    assert vocabulary[:5] == SPECIALS
    assert len(vocabulary) <= 100 and len(set(vocabulary)) == len(vocabulary)
    assert "cat" in vocabulary and "##a" in vocabulary
    tokenizer = WordPieceTokenizer(vocabulary)
    ids = tokenizer(CORPUS)
    assert tokenizer.unknown_token_id not in ids.flat_values.numpy().tolist()
    assert tokenizer.detokenize(ids).numpy()[0] == b"the cat sat on the mat ."


def test_files_and_batched_datasets_give_the_same_vocabulary(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("\n".join(CORPUS[:2]) + "\n", encoding="utf-8")
    second.write_text("\n".join(CORPUS[2:]) + "\n", encoding="utf-8")
    from_files = train_wordpiece_vocabulary([str(first), second], vocabulary_size=80)
    batched = tf.data.Dataset.from_tensor_slices(CORPUS).batch(2)
    assert train_wordpiece_vocabulary(batched, vocabulary_size=80) == from_files


def test_small_vocabulary_keeps_the_alphabet():
    vocabulary = train_wordpiece_vocabulary(
        tf.data.Dataset.from_tensor_slices(CORPUS), vocabulary_size=72
    )
    assert len(vocabulary) <= 72
    tokenizer = WordPieceTokenizer(vocabulary)
    assert tokenizer.unknown_token_id not in tokenizer(CORPUS).flat_values.numpy().tolist()


def test_errors(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(ValueError, match="no words"):
        train_wordpiece_vocabulary([str(empty)], vocabulary_size=100)
    with pytest.raises(ValueError, match="no words"):
        train_wordpiece_vocabulary(tf.data.Dataset.from_tensor_slices([""]), 100)
    with pytest.raises(ValueError, match="empty list"):
        train_wordpiece_vocabulary([], vocabulary_size=100)
    with pytest.raises(ValueError, match="do not exist"):
        train_wordpiece_vocabulary([str(tmp_path / "missing.txt")], vocabulary_size=100)
    with pytest.raises(ValueError, match="string tensors"):
        train_wordpiece_vocabulary(tf.data.Dataset.range(3), vocabulary_size=100)
    with pytest.raises(
        ValueError, match=r"at least 11: 5 special tokens plus an alphabet of 6.*received 10"
    ):
        train_wordpiece_vocabulary(tf.data.Dataset.from_tensor_slices(["abc cab"]), 10)


def test_write_vocabulary_round_trip(tmp_path):
    vocabulary = train_wordpiece_vocabulary(tf.data.Dataset.from_tensor_slices(CORPUS), 100)
    path = write_vocabulary(vocabulary, tmp_path / "vocab.txt")
    assert WordPieceTokenizer(path).get_vocabulary() == vocabulary
    with pytest.raises(ValueError, match="line breaks"):
        write_vocabulary(SPECIALS + ["a\nb"], tmp_path / "bad.txt")


def test_corpus_tokenizer_trains_once_and_appends_the_extra_tokens(tmp_path):
    documents = ["the cat sat\non the mat", ["the dog sat", "", "on the log"]]
    path = tmp_path / "vocab.txt"
    tokenizer = corpus_tokenizer(documents, 40, path, extra_tokens=["<extra_id_0>", "<extra_id_1>"])
    vocabulary = path.read_text().splitlines()
    assert vocabulary[-2:] == ["<extra_id_0>", "<extra_id_1>"]
    assert tokenizer.token_to_id("<extra_id_1>") == len(vocabulary) - 1
    assert {"the", "sat", "cat", "log"} <= set(vocabulary)
    # Kept: a second call on other text reads the file instead of training again.
    again = corpus_tokenizer(["zebra quagga"], 40, path)
    assert path.read_text().splitlines() == vocabulary
    assert again.vocabulary_size() == tokenizer.vocabulary_size()
