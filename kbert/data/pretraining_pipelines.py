"""tf.data pretraining pipelines: causal-LM blocks, RoBERTa FULL-SENTENCES blocks, NSP/SOP pairs.

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

Label convention: `next_sentence_labels` is 1 when B truly follows A (NSP) or the order is
right (SOP), and 0 otherwise. This is the reverse of Google's BERT and Hugging Face's
`BertForPreTraining`, where 0 means "is next"; flip the labels to use their pretrained NSP head.
"""

import dataclasses
import weakref

import numpy as np
import tensorflow as tf

from kbert.checks import check_int
from kbert.data.length_bucketing import bucket_by_length
from kbert.data.sentence_splitter import split_sentences
from kbert.data.token_classification_features import IGNORE_INDEX
from kbert.text.byte_pair_tokenizer import BytePairTokenizer
from kbert.text.input_packer import InputPacker
from kbert.text.seq2seq_noising import span_corruption, text_infilling
from kbert.text.unigram_tokenizer import UnigramTokenizer
from kbert.text.wordpiece_tokenizer import WordPieceTokenizer

TASKS = ("nsp", "sop")
TOKENIZERS = (WordPieceTokenizer, BytePairTokenizer, UnigramTokenizer)
LAST_BLOCKS = ("drop", "pad")

# ------------------------------------------------------------------------------ checks


def _check_documents(documents):
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


def _check_tokenizer(tokenizer, roles, pipeline):
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


def _check_positive_int(name, value, minimum=1, why=""):
    check_int(name, value, minimum, expected=f"an int of at least {minimum}{why}")


def _check_sequence_length(name, value, minimum, why, max_sequence_length):
    _check_positive_int(name, value, minimum, why)
    if max_sequence_length is None:
        return
    _check_positive_int("max_sequence_length", max_sequence_length)
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
            _check_positive_int("shuffle_buffer_size", self.shuffle_buffer_size)
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


def _tokenize(tokenizer, texts, with_word_ids, batch_size=1024):
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


def _sentences(documents, sentence_splitter):
    """Splits every paragraph into sentences; returns (sentences, document index of each)."""
    sentences, document_of = [], []
    for index, document in enumerate(documents):
        for paragraph in document:
            for sentence in sentence_splitter(paragraph):
                sentences.append(sentence)
                document_of.append(index)
    return sentences, np.asarray(document_of, np.int64)


def _token_id(tokenizer, token, name):
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


def _finish(examples, count, batch_size, pad_token_id, options, bucket_lengths=None):
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


# ------------------------------------------------------------------------------ causal LM


def causal_lm_blocks(
    documents,
    tokenizer,
    block_length,
    batch_size,
    max_sequence_length=None,
    document_separator="[SEP]",
    last_block="drop",
    options=None,
    **option_overrides,
):
    """Fixed-length blocks cut from the concatenated token stream, for causal language models.

    The documents are tokenized, joined into one stream with `document_separator` between
    consecutive documents (not before the first or after the last; documents without tokens
    are skipped), and cut into consecutive blocks of `block_length` tokens: no [CLS], no
    padding, blocks cross document boundaries (the NAACL 2019 tutorial's and GPT-2's setup).
    The causal model predicts token t + 1 from tokens up to t inside each block.

    Args:
        documents: list of documents, each a str or a list of str paragraphs.
        tokenizer: WordPiece, BPE or unigram tokenizer (module docstring) with [PAD] (for
            `padding_mask`).
        block_length: int, at least 2. Tokens per block.
        batch_size: int. Blocks per batch.
        max_sequence_length: int or None, default None. The encoder's longest input (its
            position embeddings); `block_length` above it raises.
        document_separator: str or None, default "[SEP]". Token put between documents (any
            token of the vocabulary), or None to join them directly.
        last_block: str, default "drop". What to do with the stream's tail shorter than a
            block: "drop" it (training), or "pad" it with [PAD] into a last block whose
            `padding_mask` marks the padding (evaluation over every token, e.g. word-level
            perplexity).
        options, **option_overrides: `PipelineOptions` (shuffle, seed, shuffle_buffer_size,
            cache, map_fn, drop_remainder), or those names as keywords.

    Returns:
        A `tf.data.Dataset` of dicts of int32 (batch, block_length) tensors: `token_ids`,
        `segment_ids` (all 0) and `padding_mask` (all 1 except a padded last block).

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c"]
    >>> tokenizer = WordPieceTokenizer(vocabulary)
    >>> blocks = causal_lm_blocks(["a b c a", "b c"], tokenizer, block_length=3,
    ...                           batch_size=2, shuffle=False)
    >>> next(iter(blocks))["token_ids"].numpy().tolist()
    [[5, 6, 7], [5, 3, 6]]
    """
    options = PipelineOptions.resolve(options, option_overrides, "causal_lm_blocks")
    documents = _check_documents(documents)
    if last_block not in LAST_BLOCKS:
        raise ValueError(f"last_block must be one of {LAST_BLOCKS}; received {last_block!r}")
    _check_tokenizer(tokenizer, ("pad_token",), "causal_lm_blocks")
    _check_sequence_length(
        "block_length", block_length, 2, " (an input and a next token)", max_sequence_length
    )
    _check_positive_int("batch_size", batch_size)
    separator_id = None
    if document_separator is not None:
        separator_id = _token_id(tokenizer, document_separator, "document_separator")
        if separator_id == tokenizer.pad_token_id:
            raise ValueError(
                "document_separator must not be the padding token (padding_mask would hide "
                f"it); received {document_separator!r}"
            )

    paragraphs = [paragraph for document in documents for paragraph in document]
    ids, splits, _ = _tokenize(tokenizer, paragraphs, with_word_ids=False)
    paragraph_ends = np.cumsum([len(document) for document in documents])
    document_starts = splits[paragraph_ends - np.asarray([len(d) for d in documents])]
    document_ends = splits[paragraph_ends]
    starts = document_starts[document_ends > document_starts]  # documents with tokens
    if ids.size == 0:
        raise ValueError(
            f"documents hold no text: {len(documents)} documents give no tokens; expected a "
            "non-empty corpus"
        )
    stream = ids if separator_id is None else np.insert(ids, starts[1:], separator_id)
    if stream.size < block_length:
        raise ValueError(
            f"documents give {stream.size} tokens (separators included), fewer than one block of "
            f"block_length={block_length}; expected a longer corpus or a shorter block_length"
        )
    full = stream.size // block_length
    blocks = stream[: full * block_length].reshape(full, block_length)
    if last_block == "pad" and stream.size > full * block_length:
        tail = np.full([1, block_length], tokenizer.pad_token_id, np.int32)
        rest = stream[full * block_length :]
        tail[0, : rest.size] = rest
        blocks = np.concatenate([blocks, tail])
    examples = tf.data.Dataset.from_tensor_slices({"token_ids": blocks})
    return _finish(
        examples,
        len(blocks),
        batch_size,
        tokenizer.pad_token_id,
        options,
    )


# ------------------------------------------------------------------------------ SPAN CORRUPTION


def span_corruption_blocks(
    documents,
    tokenizer,
    block_length,
    batch_size,
    sentinel_ids,
    noise_density=0.15,
    mean_noise_span_length=3.0,
    end_token="[SEP]",
    decoder_start_id=0,
    options=None,
    **option_overrides,
):
    """T5's pretraining batches: blocks of the token stream, span-corrupted for an encoder-decoder.

    The corpus is cut into blocks of `block_length` tokens as `causal_lm_blocks` cuts it
    (documents joined directly, blocks crossing document boundaries, as T5 packs C4). Every
    epoch each block is corrupted anew (`kbert.text.seq2seq_noising.span_corruption`):
    round(block_length × noise_density) tokens in round(noise / mean_noise_span_length) spans
    are each replaced by the next sentinel in the encoder's input; the decoder writes each
    sentinel followed by the tokens it hid, then `end_token`. Noise and span counts are exact,
    so every batch has the same shapes: inputs `block_length - noise + spans + 1`, targets
    `noise + spans + 1` tokens.

    Args:
        documents: list of documents, each a str or a list of str paragraphs.
        tokenizer: WordPiece, BPE or unigram tokenizer whose vocabulary holds the sentinels.
        block_length: int >= 2. Tokens per uncorrupted block.
        batch_size: int. Blocks per batch.
        sentinel_ids: sequence of int. `<extra_id_0>`, `<extra_id_1>`, … in order, at least as
            many as a block's spans.
        noise_density: float in (0, 1), default 0.15.
        mean_noise_span_length: float >= 1, default 3.0.
        end_token: str, default "[SEP]". Ends inputs and targets.
        decoder_start_id: int, default 0. The decoder's first input (`EncoderDecoder`'s).
        options, **option_overrides: `PipelineOptions` (shuffle, seed, shuffle_buffer_size,
            cache, drop_remainder; not map_fn: the corruption is the per-batch map), or those
            names as keywords; the seed also draws the corruption.

    Returns:
        A `tf.data.Dataset` of `(x, y)`: `x` the four `EncoderDecoder` inputs (int32; every row
        has the same lengths, so both padding masks are all ones), `y` the target ids
        `(batch, targets)`.

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c", "<s0>", "<s1>"]
    >>> blocks = span_corruption_blocks(["a b c " * 10], WordPieceTokenizer(vocabulary), 20, 2,
    ...                                 [8, 9], shuffle=False, seed=0)
    >>> x, y = next(iter(blocks))
    >>> tuple(x["encoder_token_ids"].shape), tuple(y.shape)  # 3 noise tokens in 1 span
    ((1, 19), (1, 5))
    """
    options = PipelineOptions.resolve(options, option_overrides, "span_corruption_blocks")
    end_id = _token_id(tokenizer, end_token, "end_token")
    sentinel_ids = [int(i) for i in sentinel_ids]
    vocabulary_size = tokenizer.vocabulary_size()
    bad = [i for i in sentinel_ids if not 0 <= i < vocabulary_size or i in (0, end_id)]
    if not sentinel_ids or bad:
        raise ValueError(
            f"sentinel_ids must be ids of the vocabulary (0 to {vocabulary_size - 1}) other than "
            f"padding and end_token; received {sentinel_ids if not bad else bad}"
        )
    return _denoising_batches(
        documents,
        tokenizer,
        block_length,
        batch_size,
        lambda row, rng: span_corruption(
            row, sentinel_ids, noise_density, mean_noise_span_length, end_id, rng=rng
        ),
        decoder_start_id,
        options,
    )


def text_infilling_blocks(
    documents,
    tokenizer,
    block_length,
    batch_size,
    mask_rate=0.3,
    poisson_lambda=3.0,
    mask_token="[MASK]",
    end_token="[SEP]",
    decoder_start_id=0,
    options=None,
    **option_overrides,
):
    """BART's pretraining batches: blocks of the token stream with text infilling.

    Blocks as in `span_corruption_blocks`; every epoch each block is corrupted anew
    (`kbert.text.seq2seq_noising.text_infilling`): spans of Poisson(`poisson_lambda`) length
    covering `mask_rate` of the tokens each become one `mask_token` (a length-0 span inserts
    one), so the encoder must also tell how many tokens are missing; the decoder writes the
    whole block, then `end_token`. Inputs differ in length: padded with 0 to the batch's longest
    (`encoder_padding_mask` marks them).

    Args:
        documents, tokenizer, block_length, batch_size: as `span_corruption_blocks`.
        mask_rate: float in (0, 1), default 0.3.
        poisson_lambda: float > 0, default 3.0.
        mask_token: str, default "[MASK]".
        end_token, decoder_start_id, options, **option_overrides: as
            `span_corruption_blocks`.

    Returns:
        A `tf.data.Dataset` of `(x, y)`: `x` the four `EncoderDecoder` inputs, `y` the block
        and the end id `(batch, block_length + 1)`.
    """
    options = PipelineOptions.resolve(options, option_overrides, "text_infilling_blocks")
    end_id = _token_id(tokenizer, end_token, "end_token")
    mask_id = _token_id(tokenizer, mask_token, "mask_token")

    def corrupt(row, rng):
        inputs, targets = text_infilling(row, mask_id, mask_rate, poisson_lambda, rng=rng)
        return np.append(inputs, end_id), np.append(targets, end_id)

    return _denoising_batches(
        documents,
        tokenizer,
        block_length,
        batch_size,
        corrupt,
        decoder_start_id,
        options,
    )


def _denoising_batches(
    documents,
    tokenizer,
    block_length,
    batch_size,
    corrupt,
    decoder_start_id,
    options,
):
    """Encoder-decoder batches from blocks of the token stream (`causal_lm_blocks`, documents
    joined directly): `corrupt(row, rng) → (inputs, targets)` per row, run in NumPy after the
    cache (new noise every epoch, one seeded generator); inputs padded with 0 and targets with
    -100 to each batch's longest row."""
    _check_sequence_length("block_length", block_length, 2, " (a kept and a hidden token)", None)
    if options.map_fn is not None:
        raise ValueError(
            "map_fn is not an option of the encoder-decoder pipelines: their corruption is the "
            "per-batch map; corrupt the text yourself or use causal_lm_blocks' map_fn"
        )
    blocks = causal_lm_blocks(
        documents, tokenizer, block_length, batch_size, document_separator=None, options=options
    )
    rng = np.random.default_rng(options.seed)

    def corrupt_batch(token_ids):
        pairs = [corrupt(row, rng) for row in token_ids]
        width = (
            max([len(p[0]) for p in pairs], default=0),
            max([len(p[1]) for p in pairs], default=0),
        )
        inputs = np.zeros((len(pairs), width[0]), np.int32)
        targets = np.full((len(pairs), width[1]), IGNORE_INDEX, np.int32)
        for row, (source, target) in enumerate(pairs):
            inputs[row, : len(source)] = source
            targets[row, : len(target)] = target
        return inputs, targets

    def to_example(batch):
        inputs, targets = tf.numpy_function(
            corrupt_batch, [batch["token_ids"]], (tf.int32, tf.int32), stateful=True
        )
        inputs.set_shape([None, None])
        targets.set_shape([None, None])
        scored = tf.cast(targets != IGNORE_INDEX, tf.int32)
        starts = tf.fill([tf.shape(targets)[0], 1], tf.constant(decoder_start_id, tf.int32))
        x = {
            "encoder_token_ids": inputs,
            "encoder_padding_mask": tf.cast(inputs != 0, tf.int32),
            "decoder_token_ids": tf.concat([starts, targets[:, :-1] * scored[:, :-1]], axis=1),
            "decoder_padding_mask": scored,
        }
        return x, targets

    # Sequential (one call at a time), so a seed gives the same corruptions in the same order.
    return blocks.map(to_example).prefetch(tf.data.AUTOTUNE)


# ------------------------------------------------------------------------------ FULL-SENTENCES


def full_sentences_blocks(
    documents,
    tokenizer,
    block_length,
    batch_size,
    max_sequence_length=None,
    sentence_splitter=split_sentences,
    options=None,
    **option_overrides,
):
    """RoBERTa's FULL-SENTENCES inputs: whole sentences packed up to the block length.

    Sentences are taken in corpus order and packed as `[CLS] s1 s2 ... [SEP]` while they fit
    in `block_length`; a block may cross document boundaries, and an extra [SEP] separates the
    last sentence of one document from the first of the next inside a block (Liu et al. 2019,
    section 4.2). The rest of each block is padding. A sentence longer than a block
    (`block_length - 2` tokens) is cut into block-sized pieces, each starting a new block.

    `word_ids` number the words of each block 0, 1, 2, ... in order, -1 at [CLS], [SEP] and
    padding, so whole-word and span masking can run on them; a word is the tokenizer's word (a
    pre-tokenized word for WordPiece, where punctuation marks are words of their own, and BPE;
    a whitespace-separated word for unigram), and a word cut by a sentence piece boundary counts
    once in each block.

    Args:
        documents: list of documents, each a str or a list of str paragraphs.
        tokenizer: WordPiece, BPE or unigram tokenizer with [CLS], [SEP] and [PAD].
        block_length: int, at least 3. Tokens per block, [CLS] and [SEP] included.
        batch_size: int. Blocks per batch.
        max_sequence_length: int or None, default None. The encoder's longest input;
            `block_length` above it raises.
        sentence_splitter: callable, default `split_sentences`. Turns a paragraph (str) into a
            list of sentences (str).
        options, **option_overrides: `PipelineOptions` (shuffle, seed, shuffle_buffer_size,
            cache, map_fn, drop_remainder), or those names as keywords.

    Returns:
        A `tf.data.Dataset` of dicts of int32 (batch, block_length) tensors: `token_ids`,
        `segment_ids` (all 0), `padding_mask` and `word_ids`.

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "."]
    >>> blocks = full_sentences_blocks(["A b. B a.", "A."], WordPieceTokenizer(vocabulary),
    ...                                block_length=11, batch_size=1, shuffle=False)
    >>> batch = next(iter(blocks))
    >>> batch["token_ids"].numpy().tolist()
    [[2, 5, 6, 7, 6, 5, 7, 3, 5, 7, 3]]
    >>> batch["word_ids"].numpy().tolist()
    [[-1, 0, 1, 2, 3, 4, 5, -1, 6, 7, -1]]
    """
    options = PipelineOptions.resolve(options, option_overrides, "full_sentences_blocks")
    documents = _check_documents(documents)
    _check_tokenizer(tokenizer, ("cls_token", "sep_token", "pad_token"), "full_sentences_blocks")
    _check_sequence_length(
        "block_length", block_length, 3, " ([CLS], one token, [SEP])", max_sequence_length
    )
    _check_positive_int("batch_size", batch_size)
    if not callable(sentence_splitter):
        raise ValueError(f"sentence_splitter must be callable; received {sentence_splitter!r}")

    sentences, document_of = _sentences(documents, sentence_splitter)
    ids, splits, word_ids = _tokenize(tokenizer, sentences, with_word_ids=True)
    if ids.size == 0:
        raise ValueError(
            f"documents hold no text: {len(documents)} documents give no tokens; expected a "
            "non-empty corpus"
        )
    capacity = block_length - 2

    # Plan the blocks on lengths alone (plain Python ints), then copy all tokens at once.
    piece_start, piece_length, piece_block, piece_position, piece_word_offset = [], [], [], [], []
    separators = []  # (block, position) of the [SEP] between two documents
    block, used, words_used, last_document = 0, 0, 0, None
    for index, (start, end) in enumerate(
        zip(splits[:-1].tolist(), splits[1:].tolist(), strict=True)
    ):
        document = int(document_of[index])
        for piece in range(start, end, capacity):
            length = min(capacity, end - piece)
            separated = used > 0 and document != last_document
            if used + length + separated > capacity:
                block, used, words_used, separated = block + 1, 0, 0, False
            if separated:
                separators.append((block, 1 + used))
                used += 1
            piece_start.append(piece)
            piece_length.append(length)
            piece_block.append(block)
            piece_position.append(1 + used)  # after [CLS]
            # Words of the piece are renumbered from the block's running count.
            first = int(word_ids[piece])
            piece_word_offset.append(words_used - first)
            words_used += int(word_ids[piece + length - 1]) - first + 1
            used += length
            last_document = document
    num_blocks = block + 1
    total = int(np.sum(piece_length)) + len(separators)
    if total < capacity:
        raise ValueError(
            f"documents give {total} tokens (document separators included), fewer than one "
            f"block of block_length={block_length} ({capacity} tokens besides [CLS] and [SEP]); "
            "expected a longer corpus or a shorter block_length"
        )

    lengths = np.asarray(piece_length, np.int64)
    within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    source = np.repeat(np.asarray(piece_start, np.int64), lengths) + within
    rows = np.repeat(np.asarray(piece_block, np.int64), lengths)
    columns = np.repeat(np.asarray(piece_position, np.int64), lengths) + within
    token_ids = np.full([num_blocks, block_length], tokenizer.pad_token_id, np.int32)
    block_words = np.full([num_blocks, block_length], -1, np.int32)
    token_ids[rows, columns] = ids[source]
    block_words[rows, columns] = word_ids[source] + np.repeat(
        np.asarray(piece_word_offset, np.int64), lengths
    )
    token_ids[:, 0] = tokenizer.cls_token_id
    for row, column in separators:
        token_ids[row, column] = tokenizer.sep_token_id
    # The closing [SEP] goes right after each block's last token (a block never ends with a
    # document separator).
    last = np.zeros([num_blocks], np.int64)
    np.maximum.at(last, piece_block, np.asarray(piece_position) + lengths - 1)
    token_ids[np.arange(num_blocks), last + 1] = tokenizer.sep_token_id

    examples = tf.data.Dataset.from_tensor_slices({"token_ids": token_ids, "word_ids": block_words})
    return _finish(
        examples,
        num_blocks,
        batch_size,
        tokenizer.pad_token_id,
        options,
    )


# ------------------------------------------------------------------------------ NSP / SOP


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
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "."]
    >>> pairs = sentence_pair_examples(["A a. B b.", "B a. A b."], WordPieceTokenizer(vocabulary),
    ...                                sequence_length=8, task="sop", seed=1, shuffle=False)
    >>> batch = next(iter(pairs))
    >>> batch["token_ids"].shape, batch["next_sentence_labels"].shape
    (TensorShape([2, 8]), TensorShape([2]))
    """
    options = PipelineOptions.resolve(options, option_overrides, "sentence_pair_examples")
    documents = _check_documents(documents)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}; received {task!r}")
    _check_tokenizer(tokenizer, ("cls_token", "sep_token", "pad_token"), "sentence_pair_examples")
    _check_sequence_length(
        "sequence_length",
        sequence_length,
        5,
        " ([CLS] A [SEP] B [SEP] with a token in each segment)",
        max_sequence_length,
    )
    _check_positive_int("batch_size", batch_size)
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

    sentences, document_of = _sentences(documents, sentence_splitter)
    ids, splits, word_ids = _tokenize(tokenizer, sentences, with_word_ids=return_word_ids)
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
    return _finish(
        examples,
        len(pairs),
        batch_size,
        tokenizer.pad_token_id,
        options,
        bucket_lengths=buckets,
    )
