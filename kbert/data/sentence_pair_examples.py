"""Sentence-pair pretraining examples `[CLS] A [SEP] B [SEP]` for BERT's NSP and ALBERT's SOP.

Label convention: `next_sentence_labels` is 1 when B truly follows A (NSP) or the order is
right (SOP), and 0 otherwise. This is the reverse of Google's BERT and Hugging Face's
`BertForPreTraining`, where 0 means "is next"; flip the labels to use their pretrained NSP head.

How every pretraining pipeline is built (tokenized once, then cache, shuffle, batch, masking
hook, prefetch) is `kbert.data.pretraining_pipelines`.
"""

import numpy as np
import tensorflow as tf

from kbert.data.pretraining_pipelines import (
    PipelineOptions,
    check_at_least,
    check_documents,
    check_sequence_length,
    check_tokenizer,
    finish_pipeline,
    sentences_of_documents,
    tokenize_texts,
)
from kbert.data.sentence_splitter import split_sentences
from kbert.text.input_packer import InputPacker

TASKS = ("nsp", "sop")


def _pair_plan(sentence_lengths, document_sentences, task, max_tokens, short_probability, rng):
    """Chooses the sentences of every pair; returns a list of (first, second, label).

    `first` and `second` are lists of sentence indices. Follows BERT's
    `create_instances_from_document`: sentences gather into a chunk until it reaches a target
    length (`max_tokens`, or with `short_probability` a random length in [2, max_tokens]) and has
    two sentences; a random cut splits the chunk into A and B.
    """
    pairs = []
    sources = [index for index, sentences in enumerate(document_sentences) if sentences]
    source_position = {document: position for position, document in enumerate(sources)}
    for document, sentences in enumerate(document_sentences):
        position = 0
        while position < len(sentences):
            target = max_tokens
            if rng.random() < short_probability:
                target = int(rng.integers(2, max_tokens + 1))
            chunk, length = [], 0
            while position < len(sentences) and (length < target or len(chunk) < 2):
                chunk.append(sentences[position])
                length += sentence_lengths[sentences[position]]
                position += 1
            if len(chunk) < 2:
                break  # a document's lone last sentence has no partner
            cut = int(rng.integers(1, len(chunk)))
            first, second = chunk[:cut], chunk[cut:]
            if rng.random() < 0.5:
                pairs.append((first, second, 1))
            elif task == "sop":
                pairs.append((second, first, 0))
            else:
                # B from another document: a random run of its sentences, starting anywhere.
                pick = int(rng.integers(len(sources) - 1))
                # Uniform over the other documents: skip this one's own place in `sources`.
                other = sources[pick + 1 if pick >= source_position[document] else pick]
                others = document_sentences[other]
                start = int(rng.integers(len(others)))
                budget = max(1, target - sum(sentence_lengths[i] for i in first))
                random_second, random_length = [], 0
                for sentence in others[start:]:
                    if random_length >= budget:
                        break
                    random_second.append(sentence)
                    random_length += sentence_lengths[sentence]
                pairs.append((first, random_second, 0))
                # The true B was not used: it starts the next chunk, as in BERT.
                position -= len(second)
    return pairs


def _segment(sentences, ids, splits, word_ids, word_offset):
    """Concatenates sentences' ids (and word ids numbered on from `word_offset`)."""
    tokens = [ids[splits[s] : splits[s + 1]] for s in sentences]
    if word_ids is None:
        return np.concatenate(tokens), None, word_offset
    words = []
    for s in sentences:
        sentence_words = word_ids[splits[s] : splits[s + 1]]
        words.append(sentence_words + word_offset)
        word_offset += int(sentence_words[-1]) + 1
    return np.concatenate(tokens), np.concatenate(words), word_offset


def sentence_pair_examples(
    documents,
    tokenizer,
    sequence_length,
    task="nsp",
    batch_size=32,
    max_sequence_length=None,
    short_sequence_probability=0.1,
    sentence_splitter=split_sentences,
    bucket_lengths=None,
    return_word_ids=False,
    truncation="longest_first",
    options=None,
    **option_overrides,
):
    """Sentence pairs `[CLS] A [SEP] B [SEP]` for BERT's NSP or ALBERT's SOP objective.

    Pairs follow BERT's `create_pretraining_data`: within each document, sentences gather into a
    chunk until it holds `sequence_length - 3` tokens (or, with `short_sequence_probability`, a
    random shorter target) and at least two sentences, and a random cut splits the chunk into A
    and B, so both segments are whole sentences. Then, with probability 1/2 each:

    - "nsp": B is kept (label 1), or replaced by a run of sentences starting at a random sentence
      of another, uniformly drawn document (label 0); the unused true B starts the next chunk.
    - "sop": the pair is kept (label 1), or the same two segments are swapped to `B, A` (label 0).

    Documents with fewer than two sentences give no pairs (a document's lone last sentence is
    skipped too); for NSP they still serve as sources of random B segments. A pair longer than
    `sequence_length` is cut by `InputPacker` (`truncation`). Pairs are drawn once, when the
    pipeline is built, from `seed`; the shuffle reorders them every epoch.

    Args:
        documents: list of documents, each a str or a list of str paragraphs.
        tokenizer: WordPiece, BPE or unigram tokenizer with [CLS], [SEP] and [PAD].
        sequence_length: int, at least 5. Longest packed pair, special tokens included.
        task: str, default "nsp". "nsp" (next sentence prediction) or "sop" (sentence order).
        batch_size: int, default 32. Pairs per batch.
        max_sequence_length: int or None, default None. The encoder's longest input;
            `sequence_length` above it raises.
        short_sequence_probability: float, default 0.1. Share of chunks with a random shorter
            target length (BERT's 10%), so the model also sees short inputs.
        sentence_splitter: callable, default `split_sentences`. Paragraph (str) to sentences.
        bucket_lengths: list of int or None, default None. None pads every batch to
            `sequence_length`; a list of increasing lengths pads each pair to the smallest
            bucket that holds it and batches pairs of one bucket together (`bucket_by_length`;
            `sequence_length` is added as the last bucket).
        return_word_ids: bool, default False. Also return `word_ids` for whole-word masking:
            one id per word, increasing through A then B (0 for A's first word; gaps where
            truncation cut words off), -1 at special tokens and padding.
        truncation: str, default "longest_first". How `InputPacker` cuts a long pair.
        options, **option_overrides: `PipelineOptions` (shuffle, seed, shuffle_buffer_size,
            cache, map_fn, drop_remainder), or those names as keywords; the
            seed also draws the pairs.

    Returns:
        A `tf.data.Dataset` of dicts: int32 (batch, seq) `token_ids`, `segment_ids` (0 for
        [CLS] A [SEP], 1 for B [SEP]), `padding_mask` (and `word_ids`), where seq is
        `sequence_length` or the bucket's length, and int32 (batch,) `next_sentence_labels`
        (1: B truly follows A / right order; 0: random B / swapped; see the module docstring).

    Example:
    >>> from kbert.text import WordPieceTokenizer
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "."]
    >>> pairs = sentence_pair_examples(["A a. B b.", "B a. A b."], WordPieceTokenizer(vocabulary),
    ...                                sequence_length=8, task="sop", seed=1, shuffle=False)
    >>> batch = next(iter(pairs))
    >>> batch["token_ids"].shape, batch["next_sentence_labels"].shape
    (TensorShape([2, 8]), TensorShape([2]))
    """
    options = PipelineOptions.resolve(options, option_overrides, "sentence_pair_examples")
    documents = check_documents(documents)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}; received {task!r}")
    check_tokenizer(tokenizer, ("cls_token", "sep_token", "pad_token"), "sentence_pair_examples")
    check_sequence_length(
        "sequence_length",
        sequence_length,
        5,
        " ([CLS] A [SEP] B [SEP] with a token in each segment)",
        max_sequence_length,
    )
    check_at_least("batch_size", batch_size)
    if not isinstance(short_sequence_probability, (int, float)) or not (
        0.0 <= short_sequence_probability <= 1.0
    ):
        raise ValueError(
            "short_sequence_probability must be a number in [0, 1]; received "
            f"{short_sequence_probability!r}"
        )
    if not callable(sentence_splitter):
        raise ValueError(f"sentence_splitter must be callable; received {sentence_splitter!r}")
    if bucket_lengths is None:
        buckets = [sequence_length]
    else:
        buckets = list(bucket_lengths) if isinstance(bucket_lengths, (list, tuple)) else []
        if not buckets or not all(
            isinstance(b, int) and 5 <= b <= sequence_length for b in buckets
        ):
            raise ValueError(
                f"bucket_lengths must be a non-empty list of ints in [5, sequence_length="
                f"{sequence_length}]; received {bucket_lengths!r}"
            )
        if buckets[-1] < sequence_length:
            buckets.append(sequence_length)
    packer = InputPacker(
        sequence_length,
        tokenizer.cls_token_id,
        tokenizer.sep_token_id,
        tokenizer.pad_token_id,
        truncation=truncation,
    )

    sentences, document_of = sentences_of_documents(documents, sentence_splitter)
    ids, splits, word_ids = tokenize_texts(tokenizer, sentences, with_word_ids=return_word_ids)
    if ids.size == 0:
        raise ValueError(
            f"documents hold no text: {len(documents)} documents give no tokens; expected a "
            "non-empty corpus"
        )
    sentence_lengths = np.diff(splits).tolist()
    document_sentences = [[] for _ in documents]
    for index, (document, length) in enumerate(
        zip(document_of.tolist(), sentence_lengths, strict=True)
    ):
        if length:  # a sentence of only whitespace or control characters has no tokens
            document_sentences[document].append(index)
    if not any(len(sentences) >= 2 for sentences in document_sentences):
        raise ValueError(
            f"documents must hold a document of at least two sentences to make {task.upper()} "
            f"pairs; received {len(documents)} documents of at most one sentence each "
            "(single-sentence documents give no pairs)"
        )
    if task == "nsp" and sum(bool(sentences) for sentences in document_sentences) < 2:
        raise ValueError(
            "NSP takes its negative B segments from another document: documents must hold at "
            f"least two documents with text; received {len(documents)} documents with only one "
            "that has text (use task='sop', which needs one document)"
        )
    rng = np.random.default_rng(options.seed)
    pairs = _pair_plan(
        sentence_lengths,
        document_sentences,
        task,
        sequence_length - 3,
        short_sequence_probability,
        rng,
    )

    columns = {"first": [], "second": [], "first_word_ids": [], "second_word_ids": []}
    for first, second, _ in pairs:
        first_ids, first_words, offset = _segment(first, ids, splits, word_ids, 0)
        second_ids, second_words, _ = _segment(second, ids, splits, word_ids, offset)
        columns["first"].append(first_ids)
        columns["second"].append(second_ids)
        columns["first_word_ids"].append(first_words)
        columns["second_word_ids"].append(second_words)
    keys = ["first", "second"] + (["first_word_ids", "second_word_ids"] if return_word_ids else [])
    source = {
        key: tf.RaggedTensor.from_row_lengths(
            np.concatenate(columns[key]).astype(np.int32),
            np.asarray([len(values) for values in columns[key]], np.int64),
        )
        for key in keys
    }
    source["next_sentence_labels"] = np.asarray([label for _, _, label in pairs], np.int32)

    def pack(example):
        alignments = None
        if return_word_ids:
            alignments = (
                {"word_ids": example["first_word_ids"]},
                {"word_ids": example["second_word_ids"]},
            )
        packed = packer((example["first"], example["second"]), alignments=alignments)
        # Cut the padding off: the cache keeps real tokens only, and batching pads each batch
        # to sequence_length or to its bucket's length.
        length = tf.reduce_sum(packed["padding_mask"])
        names = ["token_ids", "segment_ids"] + (["word_ids"] if return_word_ids else [])
        outputs = {name: packed[name][:length] for name in names}  # (length,) each
        outputs["next_sentence_labels"] = example["next_sentence_labels"]
        return outputs

    examples = tf.data.Dataset.from_tensor_slices(source).map(
        pack, num_parallel_calls=tf.data.AUTOTUNE
    )
    return finish_pipeline(
        examples,
        len(pairs),
        batch_size,
        tokenizer.pad_token_id,
        options,
        bucket_lengths=buckets,
    )
