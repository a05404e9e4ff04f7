"""Whole Hugging Face pipelines (normalizer, pre-tokenizer, model, post-processor) loaded by
`BytePairTokenizer` and `UnigramTokenizer`: ids and offsets as `tokenizers` gives them, with
and without special tokens; the files round trip; the graph layers refuse what they lack."""

import pytest
import tensorflow as tf

from kbert.text import (
    BytePairTokenizer,
    GraphBytePairTokenizer,
    SentencePieceTokenizer,
    UnigramTokenizer,
)
from kbert.text.post_processors import check_post_processor, post_process
from tests.text.byte_pair_tokenizer_test import TEXTS

CHECKED = TEXTS + [
    "\nnew line first",
    " space first",
    "Café naïve résumé Ｆｕｌｌ－ｗｉｄｔｈ １２３ ﬁne",
    "e\u0301t\u00e9 😀👍🏽 ok\u200b",
    "  lead and trail  ",
    "ẞtraße İstanbul ΣΑΣ",
    "a``b'' 1234567 $5.00!",
]


def _configurations(tokenizers):
    n, p, processors, regex = (
        tokenizers.normalizers,
        tokenizers.pre_tokenizers,
        tokenizers.processors,
        tokenizers.Regex,
    )
    return {
        "roberta": (
            "BPE",
            None,
            p.ByteLevel(add_prefix_space=True),
            processors.RobertaProcessing(("</s>", 2), ("<s>", 0)),
        ),
        "bert-like": (
            "BPE",
            n.Sequence([n.NFD(), n.StripAccents(), n.Lowercase(), n.Strip()]),
            p.Sequence([p.WhitespaceSplit(), p.Punctuation(), p.Digits(individual_digits=True)]),
            processors.BertProcessing(("</s>", 2), ("<s>", 0)),
        ),
        "template": (
            "BPE",
            n.Sequence([n.NFKC(), n.Replace(regex(r"\s+"), " "), n.Prepend("_")]),
            p.Split(" ", "merged_with_next"),
            processors.TemplateProcessing(
                single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
            ),
        ),
        "t5-like": (
            "Unigram",
            n.Sequence([n.Nmt(), n.NFKC(), n.Replace(regex(" {2,}"), " ")]),
            p.Metaspace(prepend_scheme="always"),
            processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 2)]),
        ),
        "lowercase-first": (
            "Unigram",
            n.Sequence([n.NFC(), n.Lowercase()]),
            p.Sequence([p.WhitespaceSplit(), p.Metaspace(prepend_scheme="first")]),
            None,
        ),
    }


@pytest.mark.parametrize("name", ["roberta", "bert-like", "template", "t5-like", "lowercase-first"])
def test_a_pipeline_gives_the_reference_ids_and_offsets(name, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    kind, normalizer, pre_tokenizer, post_processor = _configurations(tokenizers)[name]
    specials = ["<s>", "<unk>", "</s>"]
    if kind == "BPE":
        reference = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>"))
        trainer = tokenizers.trainers.BpeTrainer(vocab_size=400, special_tokens=specials)
        loader = BytePairTokenizer
    else:
        reference = tokenizers.Tokenizer(tokenizers.models.Unigram())
        trainer = tokenizers.trainers.UnigramTrainer(
            vocab_size=150, special_tokens=specials, unk_token="<unk>"
        )
        loader = UnigramTokenizer
    reference.normalizer = normalizer
    reference.pre_tokenizer = pre_tokenizer
    reference.train_from_iterator(TEXTS, trainer)
    if post_processor is not None:
        reference.post_processor = post_processor
    reference.save(str(tmp_path / "tokenizer.json"))
    tokenizer = loader.from_huggingface(tmp_path / "tokenizer.json")
    tokenizer.save(tmp_path / "kbert.json")
    again = loader.load(tmp_path / "kbert.json")
    for text in CHECKED:
        for special in (False, True):
            encoding = reference.encode(text, add_special_tokens=special)
            for ours in (tokenizer, again):
                ids, starts, ends = ours.tokenize_with_offsets(text, add_special_tokens=special)
                assert ids == encoding.ids, (text, special)
                assert list(zip(starts, ends, strict=True)) == [
                    tuple(o) for o in encoding.offsets
                ], (text, special)
    if name == "roberta":  # the graph layer runs RoBERTa's ByteLevel and its trimming
        _assert_graph_agrees(reference, tokenizer)
        return
    if kind == "BPE":  # ids in the graph (tests/text/graph_pipelines_test.py checks more)
        expected = [reference.encode(t, add_special_tokens=False).ids for t in GRAPH_CHECKED]
        assert GraphBytePairTokenizer(tokenizer)(GRAPH_CHECKED).to_list() == expected
        return
    if name == "lowercase-first":  # "first" after a normalizer: the graph cannot tell
        with pytest.raises(ValueError, match="Metaspace with prepend_scheme 'first' after a"):
            SentencePieceTokenizer(tokenizer)
        return
    expected = [reference.encode(t, add_special_tokens=False).ids for t in CHECKED]
    assert SentencePieceTokenizer(tokenizer)(CHECKED).to_list() == expected


# Added tokens in the text: BPE matches them verbatim (Unigram pipelines treat them as control
# pieces, never read from text).
GRAPH_CHECKED = CHECKED + ["<s>leading special and a <s> inside"]


def _assert_graph_agrees(reference, tokenizer):
    """`GraphBytePairTokenizer(tokenizer)` gives the reference's ids and offsets (no special
    tokens: the graph layer adds none; `BertPreprocessor` packs)."""
    ids, starts, ends = (
        t.to_list() for t in GraphBytePairTokenizer(tokenizer).tokenize_with_offsets(GRAPH_CHECKED)
    )
    for text, mine, first, last in zip(GRAPH_CHECKED, ids, starts, ends, strict=True):
        encoding = reference.encode(text, add_special_tokens=False)
        assert mine == encoding.ids, text
        assert list(zip(first, last, strict=True)) == [tuple(o) for o in encoding.offsets], text


def test_offsets_are_trimmed_and_special_tokens_added_as_asked():
    tokens = [(5, "Ġhi", 0, 3), (6, "ĠthereĠ", 3, 10)]
    roberta = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0]}
    assert post_process(roberta, tokens, add_special_tokens=False) == [
        (5, "Ġhi", 0, 3),  # the prefix space the pre-tokenizer added stays on the first
        (6, "ĠthereĠ", 4, 9),
    ]
    assert [t[0] for t in post_process(roberta, tokens, add_special_tokens=True)] == [0, 5, 6, 2]
    with pytest.raises(ValueError, match="post-processor 'Wrapper' is not supported"):
        check_post_processor({"type": "Wrapper"})


@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_the_graph_layer_adds_the_prefix_space_and_trims_offsets(add_prefix_space, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.Tokenizer(tokenizers.models.BPE())
    reference.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    reference.train_from_iterator(
        TEXTS,
        tokenizers.trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=["<s>"],
            initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    reference.post_processor = tokenizers.processors.ByteLevel(trim_offsets=True)
    reference.save(str(tmp_path / "tokenizer.json"))
    tokenizer = BytePairTokenizer.from_huggingface(tmp_path / "tokenizer.json")
    # Without a prefix space the file loads as the named pattern, with one as the pipeline.
    assert (tokenizer.pre_tokenizer == "gpt2") is not add_prefix_space
    _assert_graph_agrees(reference, tokenizer)
    with pytest.raises(ValueError, match="pre-tokenizer Sequence\\[Whitespace, Digits\\]"):
        GraphBytePairTokenizer(
            {
                **tokenizer.get_config(),
                "pre_tokenizer": {
                    "type": "Sequence",
                    "pretokenizers": [{"type": "Whitespace"}, {"type": "Digits"}],
                },
            }
        )


def test_the_roberta_pipeline_runs_in_an_exported_graph(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.Tokenizer(tokenizers.models.BPE())
    reference.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=True)
    reference.train_from_iterator(
        TEXTS,
        tokenizers.trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=["<s>", "</s>"],
            initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    reference.post_processor = tokenizers.processors.RobertaProcessing(("</s>", 1), ("<s>", 0))
    reference.save(str(tmp_path / "tokenizer.json"))
    layer = GraphBytePairTokenizer(BytePairTokenizer.from_huggingface(tmp_path / "tokenizer.json"))
    module = tf.Module()
    module.layer = layer
    module.tokenize = tf.function(
        lambda texts: {
            name: tensor.to_tensor(-1)
            for name, tensor in zip(
                ("ids", "starts", "ends"), layer.tokenize_with_offsets(texts), strict=True
            )
        },
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    tf.saved_model.save(module, str(tmp_path / "exported"))
    restored = tf.saved_model.load(str(tmp_path / "exported"))
    out = restored.tokenize(tf.constant(GRAPH_CHECKED))
    for row, text in enumerate(GRAPH_CHECKED):
        encoding = reference.encode(text, add_special_tokens=False)
        ids = out["ids"][row].numpy().tolist()
        count = len(encoding.ids)
        assert ids[:count] == encoding.ids and set(ids[count:]) <= {-1}, text
        starts, ends = (out[key][row].numpy().tolist()[:count] for key in ("starts", "ends"))
        assert list(zip(starts, ends, strict=True)) == [tuple(o) for o in encoding.offsets], text
