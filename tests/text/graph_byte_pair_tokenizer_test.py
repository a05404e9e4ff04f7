"""BPE inside graphs: `GraphBytePairTokenizer` (core ops and tf-text's regex split) against the
Python `BytePairTokenizer`, for every option the Python tokenizer reads."""

import numpy as np
import pytest
import regex
import tensorflow as tf

from kbert.text import BertPreprocessor, BytePairTokenizer, GraphBytePairTokenizer
from kbert.text.byte_pair_tokenizer import PRE_TOKENIZERS
from kbert.text.byte_pair_trainer import learn_merges
from kbert.text.graph_byte_pair_tokenizer import GRAPH_WORD_PATTERNS

CORPUS = [
    "the cat sat on the mat",
    "hello world, hello cat",
    "a naive cafe sat there",
    "Lower the flag, said the newest sailor.",
    "don't stop me now, it's 42 o'clock",
] * 5
# GPT-2's whitespace rule (a run before a word gives up its last character), contractions after
# a space, other Unicode spaces, invalid-free but multi-byte text, special tokens in the text.
TEXTS = [
    "the cat sat",
    "hello, naive world!",
    "",
    " ",
    "  two  spaces ",
    "don't  stop\n\n\n me  now 's 'S",
    " \n x\t\ty\u00a0\u00a0z\u3000w",
    "Ünïcode 中文 and unseen letters: qxz 😀",
    "a [UNK] b[UNK]c [UNK]",
    "tabs\t\tx  \n",
    "42 o'clock, 3.14!!",
]


def _bpe(**options):
    vocabulary_size = 300 if options.get("byte_level") else 80
    return BytePairTokenizer.train(CORPUS, vocabulary_size, **options)


def _expected(bpe, texts):
    rows = [bpe.tokenize_with_offsets(text) for text in texts]
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def _graph(layer, texts):
    return tuple(t.to_list() for t in layer.tokenize_with_offsets(tf.constant(texts)))


SETTINGS = {
    "byte_level": dict(byte_level=True),
    "character": dict(),
    "attached_end_of_word": dict(end_of_word_attached=True),
    "whitespace_split": dict(pre_tokenizer="whitespace_split"),
    "no_unknown_token": dict(special_tokens=()),
}


@pytest.mark.parametrize("setting", SETTINGS)
def test_ids_and_offsets_equal_the_python_tokenizer(setting):
    bpe = _bpe(**SETTINGS[setting])
    layer = GraphBytePairTokenizer(bpe)
    assert _graph(layer, TEXTS) == _expected(bpe, TEXTS)


def test_eagerly_in_functions_in_tf_data_and_for_one_text():
    bpe = _bpe(byte_level=True).with_roles()
    layer = GraphBytePairTokenizer(bpe)
    expected = _expected(bpe, TEXTS)[0]
    assert layer(TEXTS).to_list() == expected
    assert layer(tf.constant(TEXTS[5])).numpy().tolist() == expected[5]  # a scalar: 1-D ids
    traced = tf.function(lambda texts: layer(texts).to_tensor(-1))
    assert (
        traced(tf.constant(TEXTS)).numpy().tolist() == layer(TEXTS).to_tensor(-1).numpy().tolist()
    )
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(3).map(layer)
    assert [row for batch in dataset for row in batch.to_list()] == expected


def test_the_chapters_worked_example():
    merges, vocabulary = learn_merges(
        {"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=10, reserved_tokens=["[UNK]"]
    )
    bpe = BytePairTokenizer(vocabulary, merges)
    layer = GraphBytePairTokenizer(bpe)
    ids, starts, ends = (t.numpy().tolist() for t in layer.tokenize_with_offsets("lowest newer z"))
    assert [bpe.id_to_token(i) for i in ids] == [
        "low", "est</w>", "n", "ew", "e", "r", "</w>", "[UNK]", "</w>"
    ]  # fmt: skip
    assert list(zip(starts, ends, strict=True))[-3:] == [(12, 12), (13, 14), (14, 14)]
    assert layer.detokenize(ids).numpy().decode() == bpe.detokenize(ids) == "lowest newer [UNK]"


@pytest.mark.parametrize("setting", ["byte_level", "character", "whitespace_split"])
def test_detokenizing_equals_the_python_tokenizer(setting):
    bpe = _bpe(**SETTINGS[setting]).with_roles()
    layer = GraphBytePairTokenizer(bpe)
    ids = _expected(bpe, TEXTS)[0]
    ids[0] = [bpe.cls_token_id] + ids[0] + [bpe.sep_token_id]  # roles are dropped
    assert [t.decode() for t in layer.detokenize(ids).numpy()] == [bpe.detokenize(i) for i in ids]
    assert layer.detokenize(ids[1]).numpy().decode() == bpe.detokenize(ids[1])


def test_a_byte_token_inside_a_character_spans_the_whole_character():
    bpe = _bpe(byte_level=True)
    ids, starts, ends = _graph(GraphBytePairTokenizer(bpe), ["中文😀"])
    assert len(ids[0]) > 3  # the unseen characters stay split into bytes
    assert (ids, starts, ends) == _expected(bpe, ["中文😀"])
    # Invalid UTF-8 is replaced by U+FFFD first, as WordPieceTokenizer does.
    replaced = _graph(GraphBytePairTokenizer(bpe), [b"ab\xffc"])
    assert replaced == _expected(bpe, ["ab\ufffdc"])


def _hugging_face(tmp_path, byte_level, **options):
    tokenizers = pytest.importorskip("tokenizers")
    models, pre_tokenizers, trainers = (
        tokenizers.models,
        tokenizers.pre_tokenizers,
        tokenizers.trainers,
    )
    if byte_level:
        reference = tokenizers.Tokenizer(models.BPE(**options))
        reference.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
    else:
        reference = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]", **options))
        reference.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(
            vocab_size=200,
            special_tokens=["[UNK]"],
            **{k: v for k, v in options.items() if k != "fuse_unk"},
        )
    reference.train_from_iterator(CORPUS, trainer)
    path = tmp_path / "tokenizer.json"
    reference.save(str(path))
    return reference, BytePairTokenizer.from_huggingface(path)


@pytest.mark.parametrize(
    "byte_level, options",
    [
        (True, {}),
        (True, {"ignore_merges": True}),
        (False, {"end_of_word_suffix": "</w>"}),
        (False, {"continuing_subword_prefix": "##"}),
        (False, {"fuse_unk": True}),
    ],
)
def test_hugging_face_files_give_the_references_ids_and_offsets(tmp_path, byte_level, options):
    reference, bpe = _hugging_face(tmp_path, byte_level, **options)
    layer = GraphBytePairTokenizer(bpe)
    texts = TEXTS + ["unseen wörds: Zürich 42 times!!", "xqzw qqq", "the cathedral"]
    ids, starts, ends = _graph(layer, texts)
    for row, text in enumerate(texts):
        encoding = reference.encode(text)
        assert ids[row] == encoding.ids, text
        assert list(zip(starts[row], ends[row], strict=True)) == [
            tuple(o) for o in encoding.offsets
        ], text
    assert [t.decode() for t in layer.detokenize(ids).numpy()] == [bpe.detokenize(i) for i in ids]


@pytest.mark.parametrize("name", sorted(PRE_TOKENIZERS))
def test_graph_pre_tokenizers_cut_words_as_the_regex_module_does(name):
    """Word boundaries alone, on text mixing scripts, digits, marks and Unicode spaces."""
    texts = [
        "I'm here 's 'll x'd  --  a_b ½ ² ٣ \u0301e e\u0301 Ⓐ ǅ \u200d",
        "  lead\u2003\u2003trail  ",
        "\n\n\nx\n \ty",
        "ab12cd 12.5% #tag @user",
    ]
    bpe = _bpe(byte_level=name == "gpt2", pre_tokenizer=name)
    words = GraphBytePairTokenizer(bpe)._words(tf.constant(texts))[0]
    pattern = regex.compile(PRE_TOKENIZERS[name])
    assert [[w.decode() for w in row] for row in words.to_list()] == [
        pattern.findall(text) for text in texts
    ]
    assert "(?!" not in GRAPH_WORD_PATTERNS[name]  # RE2 has no lookahead


def test_roles_vocabulary_config_and_packing():
    bpe = _bpe(byte_level=True).with_roles()
    layer = GraphBytePairTokenizer(bpe)
    assert layer.cls_token_id == bpe.cls_token_id and layer.pad_token_id == bpe.pad_token_id
    assert layer.get_vocabulary() == bpe.vocabulary
    assert layer.token_to_id("[SEP]") == bpe.sep_token_id
    with pytest.raises(ValueError, match="not in the vocabulary"):
        layer.token_to_id("no such token")
    rebuilt = GraphBytePairTokenizer.from_config(layer.get_config())
    assert rebuilt(TEXTS).to_list() == layer(TEXTS).to_list()
    packed = BertPreprocessor(layer, sequence_length=12)(tf.constant(["the cat", "sat"]))
    first = np.asarray(packed["token_ids"])[0]
    assert first[0] == bpe.cls_token_id
    assert first[1 : 1 + len(bpe.tokenize("the cat"))].tolist() == bpe.tokenize("the cat")
    with pytest.raises(ValueError, match="bpe must be a kbert.text.BytePairTokenizer"):
        GraphBytePairTokenizer("vocab.txt")
    with pytest.raises(ValueError, match="GraphBytePairTokenizer for BPE"):
        BertPreprocessor(bpe, sequence_length=12)
