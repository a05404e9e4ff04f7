"""What the tf.data pretraining pipelines share: options, checks, tokenizing, the tf.data tail.

The pipelines, one module each: `causal_lm_blocks` (causal-LM blocks), `full_sentences_blocks`
(RoBERTa's FULL-SENTENCES blocks), `sentence_pair_examples` (NSP/SOP pairs) and
`denoising_blocks` (T5's span corruption, BART's text infilling).

Every pipeline takes documents as the corpus readers return them (a list of documents, each a
str or a list of str paragraphs) and a tokenizer, and yields dict batches with the encoder's
keys `token_ids`, `segment_ids` and `padding_mask`, int32 (batch, seq). The tokenizer is any of
the four the course teaches: `WordPieceTokenizer` (BERT), `BytePairTokenizer` (character or
byte-level BPE) or `UnigramTokenizer` (SentencePiece), with the role tokens the pipeline needs
([PAD]; [CLS] and [SEP] for sentence blocks and pairs): `with_roles()` adds them to a BPE or
unigram vocabulary.

How they are built, and why:

1. The text is tokenized once, when the pipeline is built (WordPiece: one traced graph call
   per 1,024 texts; BPE and unigram: their Python tokenizers, one word cache each), and cut into examples with NumPy and a seeded NumPy
   generator. Block
   boundaries, segment choices and NSP negatives are then fixed and reproducible (BERT's
   `create_pretraining_data` also fixes its pairs offline); the corpus is held in memory as int32
   ids (about 4 bytes per token, twice with `cache=True`).
2. The dataset then runs `examples → cache → shuffle → batch → encoder keys → map_fn → prefetch`:
   - `cache` keeps the finished, unmasked examples (for pairs, packed by `InputPacker` in the
     first epoch), so later epochs only read memory;
   - `shuffle` (whole dataset by default, reshuffled every epoch, seeded) comes after the cache,
     or every epoch would replay the first epoch's order;
   - `map_fn`, the masking hook (a masked-LM masker goes here), runs on batches after the cache,
     so its random masks are drawn anew every epoch (RoBERTa's dynamic masking) instead of being
     frozen into the cache; batched, it costs one call per batch, not per example;
   - `prefetch` last, so the next batches, masks included, are ready while the model trains on
     the current one (`measure_pipeline_throughput` checks the pipeline outruns the step).
"""

import dataclasses
import weakref

import numpy as np
import tensorflow as tf

from kbert.checks import check_int
from kbert.data.length_bucketing import bucket_by_length
from kbert.text.byte_pair_tokenizer import BytePairTokenizer
from kbert.text.unigram_tokenizer import UnigramTokenizer
from kbert.text.wordpiece_tokenizer import WordPieceTokenizer

TOKENIZERS = (WordPieceTokenizer, BytePairTokenizer, UnigramTokenizer)

# ------------------------------------------------------------------------------ checks


def check_documents(documents):
    """Returns documents as a list of lists of str, or says which one is malformed."""
    if isinstance(documents, str) or not isinstance(documents, (list, tuple)):
        raise ValueError(
            "documents must be a list of documents (each a str or a list of str paragraphs); "
            f"received {type(documents).__name__}"
        )
    if not documents:
        raise ValueError("documents is empty; expected at least one document with text")
    checked = []
    for index, document in enumerate(documents):
        texts = [document] if isinstance(document, str) else document
        if not isinstance(texts, (list, tuple)) or not all(isinstance(t, str) for t in texts):
            raise ValueError(
                f"documents[{index}] must be a str or a list of str paragraphs; received "
                f"{type(document).__name__}"
            )
        checked.append(list(texts))
    return checked


def check_tokenizer(tokenizer, roles, pipeline):
    if not isinstance(tokenizer, TOKENIZERS):
        raise ValueError(
            "tokenizer must be a kbert.text.WordPieceTokenizer, BytePairTokenizer or "
            f"UnigramTokenizer; received {type(tokenizer).__name__}"
        )
    missing = [role for role in roles if getattr(tokenizer, role) is None]
    if missing:
        raise ValueError(
            f"{pipeline} needs the tokenizer's {', '.join(roles)}; the tokenizer has None for "
            f"{missing} (build it on a vocabulary with [CLS], [SEP] and [PAD], or name them with "
            "cls_token=, sep_token=, pad_token=; for BPE or unigram, tokenizer.with_roles() adds "
            "them)"
        )


def check_at_least(name, value, minimum=1, why=""):
    check_int(name, value, minimum, expected=f"an int of at least {minimum}{why}")


def check_sequence_length(name, value, minimum, why, max_sequence_length):
    check_at_least(name, value, minimum, why)
    if max_sequence_length is None:
        return
    check_at_least("max_sequence_length", max_sequence_length)
    if value > max_sequence_length:
        raise ValueError(
            f"{name} must be at most max_sequence_length={max_sequence_length} (the encoder's "
            f"longest input); received {name}={value}"
        )


@dataclasses.dataclass(frozen=True)
class PipelineOptions:
    """How every pipeline turns its examples into batches (step 2 of the module docstring).

    Each builder takes `options=PipelineOptions(...)` or the same names as keywords
    (`causal_lm_blocks(..., shuffle=False, seed=0)`), which are applied over `options`.

    Args:
        shuffle: bool, default True. Shuffle the examples, differently every epoch.
        seed: int or None, default None. Seeds the shuffle (and a pipeline's own draws: NSP
            pairs, encoder-decoder corruption).
        shuffle_buffer_size: int or None, default None (all examples: a full shuffle).
        cache: bool or str, default True. Cache the examples in memory (True), in files with
            this name prefix (str), or not at all (False).
        map_fn: callable or None, default None. Applied to every batch dict after the cache
            (the masking hook); must return a dict.
        drop_remainder: bool, default False. Drop the last partial batch (each bucket's, when
            batches are bucketed by length).

    Raises:
        ValueError: naming the option and what it expects.
    """

    shuffle: bool = True
    seed: int | None = None
    shuffle_buffer_size: int | None = None
    cache: bool | str = True
    map_fn: object = None
    drop_remainder: bool = False

    def __post_init__(self):
        if self.shuffle_buffer_size is not None:
            check_at_least("shuffle_buffer_size", self.shuffle_buffer_size)
        if not isinstance(self.cache, (bool, str)):
            raise ValueError(
                "cache must be True (memory), False, or a str file name prefix; received "
                f"{self.cache!r}"
            )
        if self.map_fn is not None and not callable(self.map_fn):
            raise ValueError(
                f"map_fn must be callable or None; received {type(self.map_fn).__name__}"
            )

    @classmethod
    def resolve(cls, options, overrides, builder):
        """`options` (None: the defaults) with a builder's keyword `overrides` applied.

        Raises:
            TypeError: an override that is no option (as Python names an unexpected keyword).
        """
        names = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise TypeError(f"{builder}() got an unexpected keyword argument {unknown[0]!r}")
        if options is not None and not isinstance(options, cls):
            raise ValueError(f"options must be a PipelineOptions; received {options!r}")
        return dataclasses.replace(options or cls(), **overrides)


# ------------------------------------------------------------------------------ tokenizing


# One traced tokenizing function per tokenizer and output, reused by every pipeline built on it
# (tracing the tokenizer's graph costs about half a second; a graph call on 1,024 texts runs
# about twice as fast as tf.data's parallel map on two cores).
_TOKENIZE_FUNCTIONS = weakref.WeakKeyDictionary()


def _tokenize_function(tokenizer, with_word_ids):
    functions = _TOKENIZE_FUNCTIONS.setdefault(tokenizer, {})
    if with_word_ids not in functions:
        # A weak reference, so the cache does not keep the tokenizer alive.
        reference = weakref.ref(tokenizer)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def run(texts):
            if with_word_ids:
                outputs = reference().tokenize_with_alignment(texts)
                return outputs["token_ids"], outputs["word_ids"]
            return reference()(texts), None

        functions[with_word_ids] = run
    return functions[with_word_ids]


def tokenize_texts(tokenizer, texts, with_word_ids, batch_size=1024):
    """Tokenizes texts in batches.

    Returns:
        (ids, splits, word_ids): flat int32 ids, int64 row splits (text i is
        ids[splits[i]:splits[i + 1]]), and flat int32 word ids (0-based within each text) or None.
    """
    ids, lengths, word_ids = [np.zeros([0], np.int32)], [np.zeros([0], np.int64)], []
    if isinstance(tokenizer, WordPieceTokenizer):
        run = _tokenize_function(tokenizer, with_word_ids)
        for start in range(0, len(texts), batch_size):
            token_ids, words = run(tf.constant(texts[start : start + batch_size], tf.string))
            ids.append(token_ids.flat_values.numpy())
            lengths.append(token_ids.row_lengths().numpy())
            if with_word_ids:
                word_ids.append(words.flat_values.numpy())
    else:  # the Python BPE and unigram tokenizers
        rows, words = tokenizer.tokenize_batch(list(texts), with_word_ids)
        ids += [np.asarray(row, np.int32) for row in rows]
        lengths.append(np.asarray([len(row) for row in rows], np.int64))
        if with_word_ids:
            word_ids = [np.asarray(row, np.int32) for row in words]
    splits = np.concatenate([[0], np.cumsum(np.concatenate(lengths))]).astype(np.int64)
    if with_word_ids:
        word_ids = np.concatenate([np.zeros([0], np.int32)] + word_ids).astype(np.int32)
    return np.concatenate(ids).astype(np.int32), splits, (word_ids if with_word_ids else None)


def sentences_of_documents(documents, sentence_splitter):
    """Splits every paragraph into sentences; returns (sentences, document index of each)."""
    sentences, document_of = [], []
    for index, document in enumerate(documents):
        for paragraph in document:
            for sentence in sentence_splitter(paragraph):
                sentences.append(sentence)
                document_of.append(index)
    return sentences, np.asarray(document_of, np.int64)


def vocabulary_token_id(tokenizer, token, name):
    try:
        token_id = tokenizer.token_to_id(token)  # WordPiece raises, BPE and unigram give None
        if token_id is None:
            raise ValueError(token)
        return token_id
    except ValueError:
        raise ValueError(
            f"{name} must be a token of the tokenizer's vocabulary ({tokenizer.vocabulary_source}) "
            f"or None; received {token!r}"
        ) from None


# ------------------------------------------------------------------------------ tf.data tail


def finish_pipeline(examples, count, batch_size, pad_token_id, options, bucket_lengths=None):
    """examples → cache → shuffle → batch → encoder keys → map_fn → prefetch (module docstring)."""
    dataset = examples
    if options.cache is not False:
        dataset = dataset.cache("" if options.cache is True else options.cache)
    if options.shuffle:
        dataset = dataset.shuffle(
            options.shuffle_buffer_size or count, seed=options.seed, reshuffle_each_iteration=True
        )
    if bucket_lengths is None:
        dataset = dataset.batch(batch_size, drop_remainder=options.drop_remainder)
    else:
        padding = {"token_ids": pad_token_id}
        if "word_ids" in dataset.element_spec:
            padding["word_ids"] = -1
        dataset = bucket_by_length(
            dataset, batch_size, bucket_lengths, padding, drop_remainder=options.drop_remainder
        )

    def encoder_keys(batch):
        # Special tokens never come out of text, so padding is exactly where [PAD] is; deriving
        # the mask here keeps the cache to the ids.
        token_ids = batch["token_ids"]  # (batch, seq)
        outputs = {
            "token_ids": token_ids,
            "segment_ids": batch.get("segment_ids", tf.zeros_like(token_ids)),
            "padding_mask": tf.cast(token_ids != pad_token_id, tf.int32),
        }
        outputs.update({key: value for key, value in batch.items() if key not in outputs})
        return outputs

    dataset = dataset.map(encoder_keys, num_parallel_calls=tf.data.AUTOTUNE)
    if options.map_fn is not None:
        dataset = dataset.map(options.map_fn, num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)
