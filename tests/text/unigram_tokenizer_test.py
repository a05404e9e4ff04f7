"""`UnigramTokenizer` and `learn_unigram`: Viterbi against brute force, EM against enumeration,
and parity with Hugging Face `tokenizers` and the `sentencepiece` package on models they
trained."""

import itertools
import math
import random

import pytest

from kbert.text.unigram_tokenizer import UnigramTokenizer
from kbert.text.unigram_trainer import (
    _expected_counts,
    learn_unigram,
    sentencepiece_words,
)

TEXTS = [
    "How far is it from Denver to Aspen ?",
    "What county is Modesto , California in ?",
    "Who was Galileo?",
    "What is an atom ?",
    "When did Hawaii become a state ?",
    "the lowest newer widest newest low lower",
    "Ünïcödé façade naïve café — 東京 done.",
] * 3


def _segmentations(word, pieces):
    """Every way to write `word` as pieces (brute force)."""
    if not word:
        yield []
        return
    for end in range(1, len(word) + 1):
        if word[:end] in pieces:
            for rest in _segmentations(word[end:], pieces):
                yield [word[:end], *rest]


def test_words_are_written_the_sentencepiece_way():
    assert sentencepiece_words("How far") == [("▁How", [0, 0, 1, 2]), ("▁far", [3, 4, 5, 6])]
    assert sentencepiece_words(" a  b ", collapse_whitespace=True) == [
        ("▁a", [1, 1]),
        ("▁b", [2, 4]),  # the first space of a run stays
    ]
    # Text that already opens with a space gets no second "▁" (as Hugging Face's Metaspace).
    assert [w for w, _ in sentencepiece_words(" x")] == ["▁x"]
    assert sentencepiece_words("") == []


@pytest.mark.parametrize("seed", range(5))
def test_viterbi_finds_the_most_probable_segmentation(seed):
    rng = random.Random(seed)
    letters = "▁abc"
    pieces = {"".join(p) for n in (1, 2, 3) for p in itertools.product(letters, repeat=n)}
    pieces = sorted(p for p in pieces if "▁" not in p[1:] and (len(p) == 1 or rng.random() < 0.4))
    scores = [("<unk>", 0.0)] + [(p, -rng.uniform(1, 8)) for p in pieces]
    tokenizer = UnigramTokenizer(scores)
    log_prob = dict(scores)
    for _ in range(20):
        word = "▁" + "".join(rng.choice("abc") for _ in range(rng.randint(1, 7)))
        best = max(_segmentations(word, set(pieces)), key=lambda s: sum(log_prob[p] for p in s))
        found = [tokenizer.id_to_token(i) for i in tokenizer.tokenize(word[1:])]
        assert sum(log_prob[p] for p in found) == pytest.approx(sum(log_prob[p] for p in best))


def test_expected_counts_equal_enumeration():
    log_probs = {"▁": -2.0, "a": -1.5, "b": -2.5, "▁a": -2.2, "ab": -1.9, "▁ab": -3.0}
    word = "▁abab"
    expected, likelihood = _expected_counts([(word, 3)], log_probs, 3)
    paths = list(_segmentations(word, log_probs))
    weights = [math.exp(sum(log_probs[p] for p in path)) for path in paths]
    total = sum(weights)
    assert likelihood == pytest.approx(3 * math.log(total))
    for piece in log_probs:
        brute = sum(w * path.count(piece) for w, path in zip(weights, paths, strict=True))
        assert expected[piece] == pytest.approx(3 * brute / total)


def test_unknown_characters_fuse_and_keep_their_offsets():
    tokenizer = UnigramTokenizer([("<unk>", 0.0), ("▁", -1.0), ("a", -1.0), ("▁a", -1.5)])
    ids, starts, ends = tokenizer.tokenize_with_offsets("a xyz a")
    assert [tokenizer.id_to_token(i) for i in ids] == ["▁a", "▁", "<unk>", "▁a"]
    assert list(zip(starts, ends, strict=True)) == [(0, 1), (1, 2), (2, 5), (5, 7)]


def test_training_keeps_every_character_and_the_size():
    tokenizer = UnigramTokenizer.train(TEXTS, 120)
    assert tokenizer.vocabulary_size() <= 120 and tokenizer.id_to_token(0) == "<unk>"
    for text in TEXTS:
        ids = tokenizer.tokenize(text)
        assert 0 not in ids  # every character of the training text is a piece
        assert tokenizer.detokenize(ids) == text
    scores = [score for _, score in tokenizer.pieces[1:]]
    assert scores == sorted(scores, reverse=True) and max(scores) < 0


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"vocabulary_size": 3}, "must hold the 1 reserved tokens and the"),
        ({"vocabulary_size": 50, "shrinking_factor": 1.0}, r"shrinking_factor must be in \(0, 1\)"),
        ({"vocabulary_size": 50, "em_iterations": 0}, "em_iterations must be an integer >= 1"),
    ],
)
def test_bad_training_settings_are_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        learn_unigram({"▁low": 5, "▁lower": 2}, **arguments)


def test_the_configuration_round_trips_through_a_file(tmp_path):
    tokenizer = UnigramTokenizer.train(TEXTS, 120)
    tokenizer.save(tmp_path / "unigram.json")
    again = UnigramTokenizer.load(tmp_path / "unigram.json")
    assert again.get_config() == tokenizer.get_config()
    with pytest.raises(ValueError, match="pieces must not repeat"):
        UnigramTokenizer([("<unk>", 0.0), ("a", -1.0), ("a", -2.0)])
    with pytest.raises(ValueError, match="unknown_id must index the 2 pieces"):
        UnigramTokenizer([("<unk>", 0.0), ("a", -1.0)], unknown_id=5)


CHECKED = TEXTS + ["unseen wörds: Zürich 42 times!!", "  spaced   out  ", " = Title = "]


def test_a_hugging_face_unigram_gives_the_same_ids_and_offsets(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.Tokenizer(tokenizers.models.Unigram())
    reference.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace()
    reference.train_from_iterator(
        TEXTS,
        tokenizers.trainers.UnigramTrainer(
            vocab_size=150, special_tokens=["<unk>"], unk_token="<unk>"
        ),
    )
    reference.save(str(tmp_path / "tokenizer.json"))
    tokenizer = UnigramTokenizer.from_huggingface(tmp_path / "tokenizer.json")
    for text in CHECKED:
        encoding = reference.encode(text)
        ids, starts, ends = tokenizer.tokenize_with_offsets(text)
        assert ids == encoding.ids, text
        assert list(zip(starts, ends, strict=True)) == [tuple(o) for o in encoding.offsets], text


def test_a_sentencepiece_model_gives_the_same_ids(tmp_path):
    sentencepiece = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXTS), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(tmp_path / "sp"),
        vocab_size=60,
        model_type="unigram",
        normalization_rule_name="identity",
        minloglevel=2,
    )
    reference = sentencepiece.SentencePieceProcessor(model_file=str(tmp_path / "sp.model"))
    tokenizer = UnigramTokenizer.from_sentencepiece(tmp_path / "sp.model")
    assert tokenizer.vocabulary_size() == reference.get_piece_size()
    assert tokenizer.control_ids == [1, 2]  # <s>, </s>
    for text in CHECKED:
        ids = tokenizer.tokenize(text)
        assert ids == reference.encode(text), text
        if tokenizer.unknown_id not in ids:  # sentencepiece writes an unknown piece as " ⁇ "
            assert tokenizer.detokenize(ids) == reference.decode(ids)
