"""Tests of the pretraining pipelines on synthetic corpora whose tokens say where they come from.

Every word of the synthetic corpora is "w<n>" with n counting up through the corpus, and the
vocabulary holds each as one token (id = 5 + n), so a token id tells its document and position
and order can be checked exactly. The slow tier runs each pipeline once over real text.
"""

import numpy as np
import pytest
import tensorflow as tf

from kbert.data import (
    PipelineOptions,
    causal_lm_blocks,
    full_sentences_blocks,
    measure_pipeline_throughput,
    read_text_corpus,
    read_wikitext,
    sentence_pair_examples,
    span_corruption_blocks,
    text_infilling_blocks,
)
from kbert.text import WordPieceTokenizer
from tests.text.text_test_case import TINY_VOCABULARY

PAD, UNK, CLS, SEP, MASK = range(5)
NUM_WORDS = 6000
VOCABULARY = (
    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    + [f"w{n}" for n in range(NUM_WORDS)]
    + [".", "!", "un", "##aff", "##able"]
)
PERIOD = VOCABULARY.index(".")
ENCODER_KEYS = ["token_ids", "segment_ids", "padding_mask"]


@pytest.fixture(scope="module")
def tokenizer():
    return WordPieceTokenizer(VOCABULARY)


def word(token_id):
    """The corpus position of a word token, None for anything else."""
    return token_id - 5 if 5 <= token_id < 5 + NUM_WORDS else None


def make_corpus(sentence_lengths):
    """Documents of sentences "Wn wn+1 ... ." (capitalized so the splitter ends them).

    Args:
        sentence_lengths: list (one per document) of lists of words per sentence.

    Returns:
        (documents, document_of_word): documents as lists of one-sentence-per-paragraph text
        split into two paragraphs, and the document index of every word number.
    """
    documents, document_of_word, n = [], [], 0
    for index, lengths in enumerate(sentence_lengths):
        sentences = []
        for length in lengths:
            words = [f"w{n + i}" for i in range(length)]
            sentences.append(" ".join(words).capitalize() + ".")
            document_of_word += [index] * length
            n += length
        half = len(sentences) // 2
        documents.append([" ".join(sentences[:half]), " ".join(sentences[half:])])
    return documents, np.asarray(document_of_word)


def random_corpus(num_documents, sentences=(2, 9), words=(1, 7), seed=0):
    rng = np.random.default_rng(seed)
    return make_corpus(
        [
            [int(rng.integers(*words)) for _ in range(int(rng.integers(*sentences)))]
            for _ in range(num_documents)
        ]
    )


def stream_of(documents, tokenizer, separator=SEP):
    """The expected token stream, tokenizing each whole document in one call."""
    stream = []
    for index, document in enumerate(documents):
        if index and separator is not None:
            stream.append(separator)
        stream += tokenizer("\n".join(document)).numpy().tolist()
    return stream


def rows(dataset, key="token_ids"):
    return [row for batch in dataset for row in batch[key].numpy().tolist()]


def check_encoder_batch(batch, width):
    for key in ENCODER_KEYS:
        assert batch[key].dtype == tf.int32 and batch[key].shape[1] == width, key


# ------------------------------------------------------------------------------ causal LM


def test_causal_blocks_have_exact_lengths_and_cover_the_stream_in_order(tokenizer):
    documents, _ = random_corpus(12)
    stream = stream_of(documents, tokenizer)
    dataset = causal_lm_blocks(documents, tokenizer, block_length=7, batch_size=4, shuffle=False)
    blocks = rows(dataset)
    assert len(blocks) == len(stream) // 7
    assert [t for block in blocks for t in block] == stream[: len(blocks) * 7]
    for batch in dataset:
        check_encoder_batch(batch, 7)
        assert set(batch) == set(ENCODER_KEYS)
        assert np.all(batch["segment_ids"].numpy() == 0)
        assert np.all(batch["padding_mask"].numpy() == 1)


def test_causal_last_block_padded_and_separator_configurable(tokenizer):
    documents, _ = random_corpus(5)
    stream = stream_of(documents, tokenizer, separator=VOCABULARY.index("!"))
    dataset = causal_lm_blocks(
        documents, tokenizer, 8, 3, document_separator="!", last_block="pad", shuffle=False
    )
    blocks, masks = np.asarray(rows(dataset)), np.asarray(rows(dataset, "padding_mask"))
    assert blocks.shape == (-(-len(stream) // 8), 8)
    assert blocks[masks == 1].tolist() == stream
    assert np.all(blocks[masks == 0] == PAD) and masks[:-1].all()
    unseparated = rows(
        causal_lm_blocks(documents, tokenizer, 8, 3, document_separator=None, shuffle=False)
    )
    assert SEP not in np.ravel(unseparated)


def test_blocks_shuffle_differently_each_epoch_and_reproducibly_with_a_seed(tokenizer):
    documents, _ = random_corpus(30)
    dataset = causal_lm_blocks(documents, tokenizer, 5, 8, seed=3)
    first, second = rows(dataset), rows(dataset)
    assert first != second and sorted(first) == sorted(second)
    again = causal_lm_blocks(documents, tokenizer, 5, 8, seed=3)
    assert rows(again) == first
    assert sorted(first) == sorted(
        rows(causal_lm_blocks(documents, tokenizer, 5, 8, shuffle=False))
    )


def test_cache_can_live_in_files(tokenizer, tmp_path):
    documents, _ = random_corpus(8)
    in_memory = rows(full_sentences_blocks(documents, tokenizer, 12, 4, shuffle=False))
    prefix = str(tmp_path / "blocks")
    cached = full_sentences_blocks(documents, tokenizer, 12, 4, shuffle=False, cache=prefix)
    assert rows(cached) == in_memory == rows(cached)
    assert list(tmp_path.glob("blocks*"))


def test_map_fn_runs_after_the_cache_so_masks_are_redrawn_every_epoch(tokenizer):
    documents, _ = random_corpus(10)
    # A stateful generator, as kbert's maskers use: stateless-op randomness in a map function
    # repeats per iterator once some earlier test has set the global seed.
    generator = tf.random.Generator.from_seed(0)

    def mask(batch):
        draw = generator.uniform(tf.shape(batch["token_ids"])) < 0.5
        return dict(batch, mask_positions=tf.cast(draw, tf.int32))

    dataset = causal_lm_blocks(documents, tokenizer, 16, 4, shuffle=False, map_fn=mask)
    assert rows(dataset) == rows(dataset)  # same blocks in the same order ...
    assert rows(dataset, "mask_positions") != rows(dataset, "mask_positions")  # ... new masks


# ------------------------------------------------------------------------------ FULL-SENTENCES


def test_full_sentences_pack_whole_sentences_across_documents(tokenizer):
    documents, document_of_word = random_corpus(15, words=(1, 9))
    dataset = full_sentences_blocks(documents, tokenizer, 16, batch_size=4, shuffle=False)
    contents, previous_document = [], None
    for batch in dataset:
        check_encoder_batch(batch, 16)
        for ids, mask, words in zip(
            batch["token_ids"].numpy(),
            batch["padding_mask"].numpy(),
            batch["word_ids"].numpy(),
            strict=True,
        ):
            length = int(mask.sum())
            assert mask.tolist() == [1] * length + [0] * (16 - length)
            assert ids[0] == CLS and ids[length - 1] == SEP and np.all(ids[length:] == PAD)
            inner = ids[1 : length - 1]
            assert inner[-1] == PERIOD  # blocks end at a sentence end
            # [SEP] inside a block sits exactly where the document changes.
            for position, token in enumerate(inner):
                if token == SEP:
                    before, after = word(inner[position - 2]), word(inner[position + 1])
                    assert document_of_word[after] == document_of_word[before] + 1
            # Word ids: -1 at specials, else 0, 1, 2, ... (every word here is one token).
            special = np.isin(ids, [CLS, SEP, PAD])
            assert np.all(words[special] == -1)
            assert words[~special].tolist() == list(range(int((~special).sum())))
            contents.append(inner[inner != SEP])
            first_document = document_of_word[word(inner[0])]
            if previous_document is not None:
                assert first_document >= previous_document
            previous_document = document_of_word[word(inner[inner != PERIOD][-1])]
    # In order, nothing lost: the blocks hold the whole corpus, without separators.
    assert np.concatenate(contents).tolist() == [
        t for t in stream_of(documents, tokenizer) if t != SEP
    ]


def test_full_sentences_are_greedy_and_cut_long_sentences(tokenizer):
    documents = ["W0 w1 w2. W3 w4.", "W5 unaffable w6 w7 w8 w9 w10 w11 w12 w13. W14."]
    dataset = full_sentences_blocks(documents, tokenizer, 8, batch_size=10, shuffle=False)
    batch = next(iter(dataset))
    w = [5 + n for n in range(15)]
    un, aff, able = (VOCABULARY.index(t) for t in ("un", "##aff", "##able"))
    assert batch["token_ids"].numpy().tolist() == [
        [CLS, w[0], w[1], w[2], PERIOD, SEP, PAD, PAD],  # w3 w4 . does not fit after it
        [CLS, w[3], w[4], PERIOD, SEP, PAD, PAD, PAD],  # nor [SEP] + the next sentence
        [CLS, w[5], un, aff, able, w[6], w[7], SEP],  # a long sentence in block-sized pieces
        [CLS, w[8], w[9], w[10], w[11], w[12], w[13], SEP],
        [CLS, PERIOD, w[14], PERIOD, SEP, PAD, PAD, PAD],
    ]
    assert batch["word_ids"].numpy().tolist()[2] == [-1, 0, 1, 1, 1, 2, 3, -1]


# ------------------------------------------------------------------------------ NSP / SOP

# Sentences of 3 words + "." are 4 tokens and sequence_length 19 leaves 16 for A and B: chunks
# fill exactly and nothing is truncated, so A and B can be checked word by word.
EVEN_LENGTHS = dict(sequence_length=19, short_sequence_probability=0.0)


def even_corpus(num_documents, sentences=(2, 12), seed=0):
    rng = np.random.default_rng(seed)
    return make_corpus([[3] * int(rng.integers(*sentences)) for _ in range(num_documents)])


def pair_rows(dataset):
    """Yields (first words, second words, label, token_ids, segment_ids, padding_mask)."""
    for batch in dataset:
        values = [batch[k].numpy() for k in ENCODER_KEYS + ["next_sentence_labels"]]
        for ids, segments, mask, label in zip(*values, strict=True):
            separators = np.flatnonzero(ids == SEP)
            first = [word(t) for t in ids[1 : separators[0]] if t != PERIOD]
            second = [word(t) for t in ids[separators[0] + 1 : separators[1]] if t != PERIOD]
            yield first, second, int(label), ids, segments, mask


def test_nsp_labels_are_balanced_and_negatives_come_from_another_document(tokenizer):
    documents, document_of_word = even_corpus(120, sentences=(2, 16))
    dataset = sentence_pair_examples(
        documents, tokenizer, task="nsp", batch_size=16, seed=1, **EVEN_LENGTHS
    )
    labels = []
    for first, second, label, ids, *_ in pair_rows(dataset):
        labels.append(label)
        assert len(ids) == 19 and ids[0] == CLS
        assert np.all(np.diff(first) == 1) and np.all(np.diff(second) == 1)  # whole runs
        assert len(first) % 3 == 0 and len(second) % 3 == 0  # whole sentences
        assert len(set(document_of_word[first])) == 1
        if label == 1:
            assert second[0] == first[-1] + 1  # the true next sentences
            assert document_of_word[second[0]] == document_of_word[first[0]]
        else:
            assert set(document_of_word[second]) == {document_of_word[second[0]]}
            assert document_of_word[second[0]] != document_of_word[first[0]]
    # 1/2 each way; over about 300 pairs 0.1 is more than 3 standard deviations.
    assert len(labels) > 200 and abs(np.mean(labels) - 0.5) < 0.1


def test_sop_negatives_are_the_swapped_pair(tokenizer):
    documents, document_of_word = even_corpus(40)
    dataset = sentence_pair_examples(documents, tokenizer, task="sop", seed=2, **EVEN_LENGTHS)
    labels = []
    for first, second, label, *_ in pair_rows(dataset):
        labels.append(label)
        assert len(set(document_of_word[first + second])) == 1
        if label == 1:
            assert second[0] == first[-1] + 1
        else:
            assert first[0] == second[-1] + 1  # B then A: the same two segments, swapped
    assert abs(np.mean(labels) - 0.5) < 0.12


def test_segment_ids_and_padding_of_pairs(tokenizer):
    documents, _ = random_corpus(20)
    dataset = sentence_pair_examples(documents, tokenizer, 24, batch_size=8, seed=0)
    for _, _, _, ids, segments, mask in pair_rows(dataset):
        length = int(mask.sum())
        first_sep, last_sep = np.flatnonzero(ids == SEP)
        assert last_sep == length - 1 and np.all(ids[length:] == PAD)
        expected = [0] * (first_sep + 1) + [1] * (length - first_sep - 1) + [0] * (24 - length)
        assert segments.tolist() == expected


def test_pairs_are_deterministic_with_a_seed_and_shuffled_per_epoch(tokenizer):
    documents, _ = random_corpus(30)

    def build(seed, shuffle=False):
        return sentence_pair_examples(documents, tokenizer, 20, seed=seed, shuffle=shuffle)

    in_order = rows(build(5))
    assert rows(build(5)) == in_order and rows(build(6)) != in_order
    shuffled = build(5, shuffle=True)
    first, second = rows(shuffled), rows(shuffled)
    assert first != second and sorted(first) == sorted(second) == sorted(in_order)


def test_single_sentence_documents_give_no_pairs_but_serve_as_nsp_negatives(tokenizer):
    lengths = [[3] * 6 if index % 3 == 0 else [3] for index in range(30)]
    documents, document_of_word = make_corpus(lengths)
    single = {index for index, sentences in enumerate(lengths) if len(sentences) == 1}
    dataset = sentence_pair_examples(documents, tokenizer, task="nsp", seed=0, **EVEN_LENGTHS)
    negatives_from_single = 0
    for first, second, label, *_ in pair_rows(dataset):
        assert document_of_word[first[0]] not in single
        negatives_from_single += label == 0 and document_of_word[second[0]] in single
    assert negatives_from_single > 0


def test_bucketed_pairs_go_to_the_smallest_bucket_that_holds_them(tokenizer):
    documents, _ = random_corpus(40)
    dataset = sentence_pair_examples(
        documents,
        tokenizer,
        32,
        batch_size=4,
        short_sequence_probability=0.5,
        bucket_lengths=[12, 20],
        return_word_ids=True,
        seed=0,
    )
    widths = set()
    for batch in dataset:
        width = batch["token_ids"].shape[1]
        widths.add(width)
        lengths = batch["padding_mask"].numpy().sum(axis=1)
        smaller = max([b for b in (0, 12, 20) if b < width])
        assert np.all((lengths > smaller) & (lengths <= width))
        assert np.all(batch["word_ids"].numpy()[batch["padding_mask"].numpy() == 0] == -1)
        assert batch["next_sentence_labels"].shape == (batch["token_ids"].shape[0],)
    assert widths == {12, 20, 32}


# ------------------------------------------------------------------------------ bad input


def test_empty_corpus_is_an_error_in_every_pipeline(tokenizer):
    for build in (
        lambda d: causal_lm_blocks(d, tokenizer, 4, 2),
        lambda d: full_sentences_blocks(d, tokenizer, 4, 2),
        lambda d: sentence_pair_examples(d, tokenizer, 8),
    ):
        with pytest.raises(ValueError, match="documents is empty"):
            build([])
        with pytest.raises(ValueError, match="documents hold no text: 2 documents give no"):
            build(["", ["  ", "\n"]])
        with pytest.raises(ValueError, match=r"documents\[1\] must be a str or a list of str"):
            build(["a", 3])


def test_corpus_shorter_than_one_block_is_an_error(tokenizer):
    with pytest.raises(
        ValueError, match="documents give 5 tokens .*fewer than one block of block_length=6"
    ):
        causal_lm_blocks(["W0 w1.", "W2"], tokenizer, 6, 2)
    with pytest.raises(ValueError, match="documents give 5 tokens .*block_length=8 \\(6 tokens"):
        full_sentences_blocks(["W0 w1.", "W2"], tokenizer, 8, 2)


def test_pairs_need_two_sentences_and_nsp_two_documents(tokenizer):
    with pytest.raises(
        ValueError,
        match="must hold a document of at least two sentences to "
        "make SOP pairs; received 3 documents",
    ):
        sentence_pair_examples(["W0 w1.", "W2.", "W3 w4 w5"], tokenizer, 16, task="sop")
    with pytest.raises(
        ValueError, match="at least two documents with text; received 2 documents with only one"
    ):
        sentence_pair_examples(["W0 w1. W2 w3.", ""], tokenizer, 16, task="nsp")
    # SOP needs a single document.
    assert len(rows(sentence_pair_examples(["W0 w1. W2 w3."], tokenizer, 16, task="sop"))) == 1


def test_lengths_above_the_encoder_maximum_are_errors(tokenizer):
    documents, _ = random_corpus(5)
    with pytest.raises(
        ValueError,
        match="block_length must be at most max_sequence_length=64 "
        "\\(the encoder's longest input\\); received "
        "block_length=65",
    ):
        causal_lm_blocks(documents, tokenizer, 65, 2, max_sequence_length=64)
    with pytest.raises(ValueError, match="block_length must be at most max_sequence_length=8"):
        full_sentences_blocks(documents, tokenizer, 9, 2, max_sequence_length=8)
    with pytest.raises(ValueError, match="sequence_length must be at most max_sequence_length"):
        sentence_pair_examples(documents, tokenizer, 513, max_sequence_length=512)
    with pytest.raises(ValueError, match="sequence_length must be an int of at least 5"):
        sentence_pair_examples(documents, tokenizer, 4)
    with pytest.raises(ValueError, match="block_length must be an int of at least 3"):
        full_sentences_blocks(documents, tokenizer, 2, 2)


def test_tokenizer_must_have_the_special_tokens_the_pipeline_inserts():
    no_cls = [t for t in TINY_VOCABULARY if t != "[CLS]"]
    specials = ["[PAD]", "[UNK]", "[SEP]", "[MASK]"]
    tokenizer = WordPieceTokenizer(no_cls, special_tokens=specials, cls_token=None)
    documents = ["Hello world. The cat sat.", "Hello cat. The world sat."]
    for build in (
        lambda: full_sentences_blocks(documents, tokenizer, 4, 2),
        lambda: sentence_pair_examples(documents, tokenizer, 8),
    ):
        with pytest.raises(
            ValueError,
            match=r"needs the tokenizer's cls_token, sep_token, "
            r"pad_token; the tokenizer has None for \['cls_token'",
        ):
            build()
    # Causal blocks insert no [CLS]: the same tokenizer works there.
    first_block = rows(causal_lm_blocks(documents, tokenizer, 4, 2, shuffle=False))[0]
    assert [tokenizer.id_to_token(i) for i in first_block] == ["hello", "world", ".", "the"]
    no_sep = WordPieceTokenizer(TINY_VOCABULARY, sep_token=None)
    with pytest.raises(ValueError, match=r"None for \['sep_token'\]"):
        sentence_pair_examples(documents, no_sep, 8)
    with pytest.raises(ValueError, match="tokenizer must be a kbert.text.WordPieceTokenizer"):
        causal_lm_blocks(documents, lambda text: text, 4, 2)


def test_other_bad_arguments_are_named(tokenizer):
    documents, _ = random_corpus(5)
    with pytest.raises(ValueError, match="task must be one of \\('nsp', 'sop'\\); received 'mlm'"):
        sentence_pair_examples(documents, tokenizer, 16, task="mlm")
    with pytest.raises(ValueError, match="last_block must be one of"):
        causal_lm_blocks(documents, tokenizer, 4, 2, last_block="keep")
    with pytest.raises(ValueError, match="document_separator must be a token of the tokenizer's"):
        causal_lm_blocks(documents, tokenizer, 4, 2, document_separator="<eos>")
    with pytest.raises(ValueError, match="document_separator must not be the padding token"):
        causal_lm_blocks(documents, tokenizer, 4, 2, document_separator="[PAD]")
    with pytest.raises(ValueError, match="cache must be True \\(memory\\), False, or a str"):
        causal_lm_blocks(documents, tokenizer, 4, 2, cache=None)
    with pytest.raises(ValueError, match="batch_size must be an int of at least 1; received 0"):
        causal_lm_blocks(documents, tokenizer, 4, 0)
    with pytest.raises(ValueError, match="bucket_lengths must be a non-empty list of ints in"):
        sentence_pair_examples(documents, tokenizer, 16, bucket_lengths=[32])
    with pytest.raises(ValueError, match="short_sequence_probability must be a number in"):
        sentence_pair_examples(documents, tokenizer, 16, short_sequence_probability=2)
    with pytest.raises(ValueError, match="map_fn must be callable or None"):
        full_sentences_blocks(documents, tokenizer, 8, 2, map_fn="mask")


# ------------------------------------------------------------------------------ real data


@pytest.fixture(scope="module")
def bert_tokenizer(minilm_dir):
    return WordPieceTokenizer(str(minilm_dir / "vocab.txt"))


@pytest.mark.slow
def test_one_pass_of_each_pipeline_over_real_text(data_root, bert_tokenizer):
    articles = read_wikitext("valid", data_dir=data_root)[:8]
    books = [book[:300] for book in read_text_corpus(data_root / "pretrain_corpus" / "valid.jsonl")]
    pipelines = {
        "causal_lm_blocks (WikiText-2 valid, 8 articles)": causal_lm_blocks(
            articles, bert_tokenizer, 128, 32, max_sequence_length=512, seed=0
        ),
        "full_sentences_blocks (WikiText-2 valid, 8 articles)": full_sentences_blocks(
            articles, bert_tokenizer, 128, 32, max_sequence_length=512, seed=0
        ),
        "sentence_pair_examples nsp (pretrain_corpus valid, 4 x 300 paragraphs)": (
            sentence_pair_examples(
                books,
                bert_tokenizer,
                128,
                batch_size=32,
                bucket_lengths=[32, 64],
                return_word_ids=True,
                seed=0,
            )
        ),
        "sentence_pair_examples sop (WikiText-2 valid, 8 articles)": sentence_pair_examples(
            articles, bert_tokenizer, 128, task="sop", batch_size=32, seed=0
        ),
    }
    for name, dataset in pipelines.items():
        count = 0
        for batch in dataset:
            count += int(batch["token_ids"].shape[0])
            assert batch["token_ids"].dtype == tf.int32 and batch["token_ids"].shape[1] <= 128
            assert np.all(batch["token_ids"].numpy()[:, 0] != bert_tokenizer.unknown_token_id)
        rate = measure_pipeline_throughput(dataset, steps=20)
        print(f"{name}: {count} examples per epoch, {rate:,.0f} examples/s")
        assert count > 50


# ------------------------------------------------------------------------------ span corruption

SENTINELS = [VOCABULARY.index(f"w{n}") for n in range(5990, 6000)]  # ids standing in


def restore(inputs, targets, sentinels):
    """The block back from T5's input and target: each sentinel replaced by what follows it."""
    spans, current = {}, None
    for token in targets:
        if token in sentinels:
            current = token
            spans[current] = []
        elif current is not None:
            spans[current].append(token)
    block = []
    for token in inputs:
        block += spans[token] if token in sentinels else [token]
    return block


def test_span_corruption_batches_restore_the_block_and_redraw_every_epoch(tokenizer):
    documents, _ = random_corpus(30, seed=3)
    stream = stream_of(documents, tokenizer, separator=None)
    batches = span_corruption_blocks(documents, tokenizer, 40, 4, SENTINELS, shuffle=False, seed=0)
    first, second = list(batches), list(batches)
    x, y = first[0]
    # 40 tokens: 6 noise tokens in 2 spans → inputs 40 - 6 + 2 + 1, targets 6 + 2 + 1.
    assert x["encoder_token_ids"].shape[1] == 37 and y.shape[1] == 9
    assert np.all(x["encoder_padding_mask"] == 1) and np.all(x["decoder_padding_mask"] == 1)
    np.testing.assert_array_equal(x["decoder_token_ids"][:, 0], 0)  # the start id
    np.testing.assert_array_equal(x["decoder_token_ids"][:, 1:], y[:, :-1])  # shifted right
    blocks = []
    for inputs, targets in zip(
        [r for x, _ in first for r in x["encoder_token_ids"].numpy().tolist()],
        [r for _, y in first for r in y.numpy().tolist()],
        strict=True,
    ):
        assert inputs[-1] == SEP and targets[-1] == SEP
        used = [t for t in targets if t in SENTINELS]
        assert used == SENTINELS[: len(used)]  # sentinels in order, one per span
        blocks += restore(inputs[:-1], targets[:-1], SENTINELS)
    assert blocks == stream[: len(blocks)] and len(blocks) == len(stream) // 40 * 40
    # A new corruption every epoch (same blocks, other spans).
    assert not np.array_equal(first[0][0]["encoder_token_ids"], second[0][0]["encoder_token_ids"])


def test_span_corruption_refuses_bad_sentinels(tokenizer):
    documents, _ = random_corpus(5)
    with pytest.raises(ValueError, match="sentinel_ids must be ids of the vocabulary"):
        span_corruption_blocks(documents, tokenizer, 20, 2, [0, 99999])
    with pytest.raises(ValueError, match="end_token must be a token"):
        span_corruption_blocks(documents, tokenizer, 20, 2, SENTINELS, end_token="</s>")


def test_text_infilling_batches_hide_spans_behind_one_mask_each_and_restore_the_block(tokenizer):
    documents, _ = random_corpus(30, seed=4)
    stream = stream_of(documents, tokenizer, separator=None)
    batches = list(text_infilling_blocks(documents, tokenizer, 40, 4, shuffle=False, seed=0))
    targets = [r for _, y in batches for r in y.numpy().tolist()]
    # The decoder writes the whole block, then the end id: all blocks in order.
    assert [t[:-1] for t in targets] == [
        stream[i : i + 40] for i in range(0, len(targets) * 40, 40)
    ]
    assert all(t[-1] == SEP for t in targets)
    masked = 0
    for x, y in batches:
        ids, padding = x["encoder_token_ids"].numpy(), x["encoder_padding_mask"].numpy()
        np.testing.assert_array_equal(padding, ids != 0)
        np.testing.assert_array_equal(x["decoder_token_ids"][:, 1:], y[:, :-1])
        for row, target in zip(ids, y.numpy(), strict=True):
            source = row[row != 0]
            assert source[-1] == SEP
            kept = source[source != MASK][:-1].tolist()
            # The kept tokens are the block with the spans cut out, in order.
            iterator = iter(target[:-1].tolist())
            assert all(token in iterator for token in kept)
            masked += 40 - len(kept)
    assert 0.2 < masked / (len(targets) * 40) < 0.4  # about 30% of the tokens hidden


# ------------------------------------------------------------------------------ BPE and unigram

SUBWORD_TEXTS = [
    "The lowest newer widest lower low. Newest of the wide roads!",
    "Lower the flag, said the newest sailor. The widest river runs low.",
    "A new river. The old road is lower than the new one.",
] * 4


def subword_tokenizers():
    """The three Python tokenizers, trained on SUBWORD_TEXTS, with BERT's roles added."""
    from kbert.text import BytePairTokenizer, UnigramTokenizer

    return {
        "bpe": BytePairTokenizer.train(SUBWORD_TEXTS, 80).with_roles(),
        "byte_level_bpe": BytePairTokenizer.train(SUBWORD_TEXTS, 300, byte_level=True).with_roles(),
        "unigram": UnigramTokenizer.train(SUBWORD_TEXTS, 60).with_roles(),
    }


@pytest.mark.parametrize("kind", ["bpe", "byte_level_bpe", "unigram"])
def test_causal_blocks_with_bpe_and_unigram_hold_the_tokenizers_own_ids(kind):
    subword = subword_tokenizers()[kind]
    documents = [[SUBWORD_TEXTS[0], SUBWORD_TEXTS[1]], [SUBWORD_TEXTS[2]]]
    dataset = causal_lm_blocks(documents, subword, 8, 2, shuffle=False, last_block="pad")
    stream = [t for row in rows(dataset) for t in row]
    expected = (
        subword.tokenize(SUBWORD_TEXTS[0])
        + subword.tokenize(SUBWORD_TEXTS[1])
        + [subword.sep_token_id]
        + subword.tokenize(SUBWORD_TEXTS[2])
    )
    assert stream[: len(expected)] == expected
    assert set(stream[len(expected) :]) <= {subword.pad_token_id}
    padding = [m for b in dataset for row in b["padding_mask"].numpy().tolist() for m in row]
    assert padding == [1] * len(expected) + [0] * (len(stream) - len(expected))


@pytest.mark.parametrize("kind", ["bpe", "byte_level_bpe", "unigram"])
def test_full_sentences_and_pairs_with_bpe_and_unigram(kind):
    subword = subword_tokenizers()[kind]
    cls, sep, pad = subword.cls_token_id, subword.sep_token_id, subword.pad_token_id
    documents = [SUBWORD_TEXTS[i : i + 3] for i in range(0, 12, 3)]
    blocks = full_sentences_blocks(documents, subword, 48, 4, shuffle=False)
    for batch in blocks:
        for ids, words in zip(batch["token_ids"].numpy(), batch["word_ids"].numpy(), strict=True):
            length = int(np.sum(ids != pad))
            assert ids[0] == cls and ids[length - 1] == sep and np.all(ids[length:] == pad)
            special = np.isin(ids, [cls, sep, pad])
            assert np.all(words[special] == -1)
            inner = words[~special]  # words count up from 0, each word's tokens together
            assert inner[0] == 0 and np.all(np.diff(inner) >= 0) and np.all(np.diff(inner) <= 1)
    pairs = sentence_pair_examples(documents, subword, 64, batch_size=4, seed=0)
    batch = next(iter(pairs))
    ids = batch["token_ids"].numpy()
    assert np.all(ids[:, 0] == cls) and np.all(np.sum(ids == sep, axis=1) == 2)


def test_bpe_without_role_tokens_is_refused_with_the_way_to_add_them():
    from kbert.text import BytePairTokenizer

    bare = BytePairTokenizer.train(SUBWORD_TEXTS, 80)
    with pytest.raises(ValueError, match=r"None for \['pad_token'\].*with_roles\(\) adds them"):
        causal_lm_blocks(SUBWORD_TEXTS, bare, 8, 2)
    with pytest.raises(ValueError, match="document_separator must be a token of the tokenizer's"):
        causal_lm_blocks(SUBWORD_TEXTS, bare.with_roles(), 8, 2, document_separator="<sep>")


def test_options_come_as_one_dataclass_or_as_keywords(tokenizer):
    documents, _ = random_corpus(6)
    options = PipelineOptions(seed=3)
    by_object = causal_lm_blocks(documents, tokenizer, 4, 2, options=options)
    by_keywords = causal_lm_blocks(documents, tokenizer, 4, 2, seed=3)
    for one, other in zip(by_object, by_keywords, strict=True):
        assert one["token_ids"].numpy().tolist() == other["token_ids"].numpy().tolist()
    # Keywords apply over the object; a name that is no option is refused as Python would.
    assert not PipelineOptions.resolve(options, {"cache": False}, "x").cache
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'shufle'"):
        causal_lm_blocks(documents, tokenizer, 4, 2, shufle=False)
    with pytest.raises(ValueError, match="shuffle_buffer_size must be an int of at least 1"):
        PipelineOptions(shuffle_buffer_size=0)
    with pytest.raises(ValueError, match="map_fn is not an option of the encoder-decoder"):
        span_corruption_blocks(documents, tokenizer, 8, 2, SENTINELS, map_fn=lambda batch: batch)
