"""BERT WordPiece tokenization inside the TensorFlow graph, identical to Hugging Face `tokenizers`.

The layer reproduces `BertNormalizer` + `BertPreTokenizer` + `WordPiece` of Hugging Face
`tokenizers` token for token (see `kbert/text/_bert_text.py` for how, and the slow tier for the
checks on TREC, SST-2 and every Unicode code point), and also returns, for every subword, the word
it comes from and its character offsets in the original text (for BIO labels and QA answers).

Which ops the graph may hold: exported SavedModels must load in TF Serving, whose builds embed
tensorflow-text 2.12 (tensorflow/serving#4057, #2064), so newer tf-text ops such as
`FastWordpieceTokenizeWithOffsets`, `FastBertNormalize` or `RoundRobinTrim` would be missing there.
This module uses only core TensorFlow ops plus the classic tf-text ops `RegexSplitWithOffsets`,
`NormalizeUTF8` and `WordpieceTokenizeWithOffsets`; lowercasing is a lookup table rather than
`tf.strings.lower` or `case_fold_utf8`, which differ from the reference (final sigma, NFKC
casefolding, newer Unicode).

Offsets are character (code point) offsets into the text after invalid UTF-8 has been replaced
(each maximal invalid byte sequence becomes one U+FFFD, i.e. one character; valid text is
unchanged), end exclusive. They follow the reference's alignment rule, also inside words that
normalization changes: every normalized character belongs to the original character it came from
("é" -> "e", "İ" -> "i" + U+0307 without strip_accents), deleted characters (a zero-width joiner,
a decomposed accent U+0301) belong to no subword, and a subword spans from its first character's
origin to the end of its last one's. So "Cafe\\u0301" gives "cafe" at [0, 4), not [0, 5).

Known differences from the reference: special tokens written literally in the text ("[SEP]") are
tokenized as ordinary text (Hugging Face matches them as added tokens); kbert's special tokens are
only inserted by `InputPacker`.
"""

import os
import types

import keras
import tensorflow as tf
import tensorflow_text as text

from kbert.run_inputs import note_input
from kbert.text import _bert_text
from kbert.text.special_token_roles import RoleTokenIds

DEFAULT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def load_vocabulary(vocabulary):
    """Reads a vocabulary given as a list of tokens or as a `vocab.txt` path.

    A file holds one token per line; as in Hugging Face `tokenizers`, trailing whitespace is
    stripped and line numbers are ids.

    Args:
        vocabulary: list or tuple of str, or str or `os.PathLike` path to a UTF-8 file.

    Returns:
        A pair `(tokens, source)`: the list of tokens and a short description of where they came
        from, for error messages.

    Raises:
        ValueError: naming the file, when it does not exist, is empty or is not UTF-8.

    Example:
    >>> load_vocabulary(["[PAD]", "a"])
    (['[PAD]', 'a'], 'the given list of 2 tokens')
    """
    if isinstance(vocabulary, (str, os.PathLike)):
        path = os.fspath(vocabulary)
        if not tf.io.gfile.exists(path):
            raise ValueError(f"vocabulary file {path!r} does not exist")
        note_input(path)  # a recorded run pins it (`kbert.run_inputs`); GFile is not `open`
        with tf.io.gfile.GFile(path, "rb") as file:
            data = file.read()
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(
                f"vocabulary file {path!r} is not valid UTF-8 (byte offset {error.start}: "
                f"{error.reason}); expected a UTF-8 text file, one token per line"
            ) from None
        if not content:
            raise ValueError(f"vocabulary file {path!r} is empty; expected one token per line")
        # Only "\n" separates tokens: str.splitlines() would also split on U+2028, U+0085, ...
        lines = content.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return [line.rstrip() for line in lines], f"file {path!r}"
    if isinstance(vocabulary, (list, tuple)):
        tokens = list(vocabulary)
        for token in tokens:
            if not isinstance(token, str):
                raise ValueError(
                    "vocabulary must hold str tokens; received an element of type "
                    f"{type(token).__name__}: {token!r}"
                )
        return tokens, f"the given list of {len(tokens)} tokens"
    raise ValueError(
        "vocabulary must be a list of str tokens or the path of a vocab.txt file; received "
        f"{type(vocabulary).__name__}"
    )


def as_texts(inputs):
    """Converts tokenizer inputs to a string tensor of rank 0 or 1, or says what is wrong.

    Args:
        inputs: str, bytes, list of them, numpy array or string `tf.Tensor`.

    Returns:
        A string `tf.Tensor` of rank 0 or 1.

    Example:
    >>> as_texts(["a", "b"]).shape
    TensorShape([2])
    """
    if isinstance(inputs, tf.RaggedTensor):
        raise ValueError(
            "inputs must be a string scalar or a 1-D batch of strings; received a "
            f"RaggedTensor of shape {inputs.shape}"
        )
    if not isinstance(inputs, tf.Tensor):
        inputs = tf.convert_to_tensor(inputs)
    if inputs.dtype != tf.string:
        raise ValueError(f"inputs must be strings (tf.string); received dtype {inputs.dtype.name}")
    if inputs.shape.rank not in (0, 1):
        raise ValueError(
            f"inputs must be a string scalar or a 1-D batch of strings; received shape {inputs.shape}"
        )
    return inputs


@keras.saving.register_keras_serializable(package="kbert")
class WordPieceTokenizer(RoleTokenIds, keras.layers.Layer):
    """BERT WordPiece tokenizer that runs in tf.data and inside exported graphs.

    Matches Hugging Face `tokenizers` (`BertNormalizer` with clean_text and handle_chinese_chars,
    `BertPreTokenizer`, `WordPiece`) token for token; see the module docstring for the graph ops
    used, the offset convention and the known differences. The layer holds no weights and is not
    trainable; its vocabulary lives in lookup tables that SavedModel export tracks.

    Args:
        vocabulary: list of str, or str path to a `vocab.txt` (one token per line); the line
            number is the id.
        lowercase: bool, default True. Lowercase character by character.
        strip_accents: bool or None, default None. Decompose (NFD) and drop nonspacing marks;
            None follows `lowercase`, as Hugging Face does.
        split_chinese_characters: bool, default True. Make every CJK ideograph its own word.
        unknown_token: str, default "[UNK]". Replaces a word that WordPiece cannot split or that is
            longer than `max_characters_per_word`.
        max_characters_per_word: int, default 100. Longer (normalized) words become
            `unknown_token`.
        suffix_indicator: str, default "##". Marks a subword that continues a word.
        special_tokens: sequence of str, default ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]").
            Tokens that must be in the vocabulary, and that `detokenize(...,
            skip_special_tokens=True)` drops.
        pad_token: str or None, default "[PAD]". The token behind `pad_token_id`.
        cls_token: str or None, default "[CLS]". The token behind `cls_token_id`.
        sep_token: str or None, default "[SEP]". The token behind `sep_token_id`.
        mask_token: str or None, default "[MASK]". The token behind `mask_token_id`.
        **kwargs: passed to `keras.layers.Layer` (e.g. `name`).

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "!"]
    >>> tokenizer = WordPieceTokenizer(vocabulary)
    >>> tokenizer("Unaffable!").numpy().tolist()
    [5, 6, 7, 8]
    >>> tokenizer(["Unaffable!", "un"]).to_list()
    [[5, 6, 7, 8], [5]]
    """

    # String and ragged ops have no XLA kernels: jit_compile="auto" then leaves XLA off.
    supports_jit = False

    def __init__(
        self,
        vocabulary,
        lowercase=True,
        strip_accents=None,
        split_chinese_characters=True,
        unknown_token="[UNK]",
        max_characters_per_word=100,
        suffix_indicator="##",
        special_tokens=DEFAULT_SPECIAL_TOKENS,
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        **kwargs,
    ):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        # Keras would turn string inputs into backend float tensors and refuse Python lists;
        # tokenizers take raw strings, as keras-hub's preprocessing layers do.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True

        tokens, source = load_vocabulary(vocabulary)
        if not isinstance(unknown_token, str) or not unknown_token:
            raise ValueError(f"unknown_token must be a non-empty str; received {unknown_token!r}")
        if not isinstance(max_characters_per_word, int) or max_characters_per_word < 1:
            raise ValueError(
                "max_characters_per_word must be a positive int; received "
                f"{max_characters_per_word!r}"
            )
        if not isinstance(suffix_indicator, str) or not suffix_indicator:
            raise ValueError(
                f"suffix_indicator must be a non-empty str; received {suffix_indicator!r}"
            )
        if isinstance(special_tokens, str):
            raise ValueError(
                "special_tokens must be a sequence of str tokens, not one str; received "
                f"{special_tokens!r}"
            )
        special_tokens = tuple(special_tokens)
        ids = {}
        duplicates = []
        for index, token in enumerate(tokens):
            if token in ids:
                duplicates.append(token)
            ids[token] = index
        if duplicates:
            raise ValueError(
                f"vocabulary {source} must not repeat tokens (a token needs one id); received "
                f"duplicates {duplicates[:10]}"
            )
        roles = (unknown_token, pad_token, cls_token, sep_token, mask_token)
        required = list(dict.fromkeys(special_tokens + tuple(t for t in roles if t is not None)))
        missing = [token for token in required if token not in ids]
        if missing:
            raise ValueError(
                f"vocabulary {source} is missing the special tokens {missing}; expected all of "
                f"{required} in it (for a vocabulary that names them differently, pass "
                "special_tokens= and the matching unknown_token=/pad_token=/cls_token=/"
                "sep_token=/mask_token=)"
            )

        self.vocabulary_source = source
        self.lowercase = bool(lowercase)
        self.strip_accents = None if strip_accents is None else bool(strip_accents)
        self.split_chinese_characters = bool(split_chinese_characters)
        self.unknown_token = unknown_token
        self.max_characters_per_word = max_characters_per_word
        self.suffix_indicator = suffix_indicator
        self.special_tokens = special_tokens
        self.pad_token = pad_token
        self.cls_token = cls_token
        self.sep_token = sep_token
        self.mask_token = mask_token
        # A tuple and a read-only mapping: Keras would wrap a list or dict attribute in a tracked
        # structure, which is slow for 30k entries and pointless for plain strings.
        self._vocabulary = tuple(tokens)
        self._token_ids = types.MappingProxyType(ids)

        with tf.init_scope():
            # Lifted out of any tf.function being traced: tables are resources that the layer
            # (and a SavedModel exported from it) must own.
            self._token_to_id_table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.constant(tokens, tf.string),
                    tf.range(len(tokens), dtype=tf.int64),
                ),
                # WordpieceTokenizeWithOffsets treats -1 as "not in the vocabulary".
                default_value=-1,
            )
            self._id_to_token_table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.range(len(tokens), dtype=tf.int64),
                    tf.constant(tokens, tf.string),
                ),
                default_value=unknown_token,
            )
        self._lowercase_table = _bert_text.lowercase_table()
        self._wordpiece = text.WordpieceTokenizer(
            self._token_to_id_table,
            suffix_indicator=suffix_indicator,
            # Words are counted in characters (below), as the reference does; the byte limit of
            # the op must never be the one that applies.
            max_bytes_per_word=4 * max_characters_per_word + len(unknown_token.encode("utf-8")),
            token_out_type=tf.int64,
            unknown_token=unknown_token,
            split_unknown_characters=False,
        )
        self.built = True

    @property
    def _effective_strip_accents(self):
        return self.lowercase if self.strip_accents is None else self.strip_accents

    # ------------------------------------------------------------------ vocabulary

    def vocabulary_size(self):
        """Returns the number of tokens in the vocabulary (one more than the largest id).

        Returns:
            int.

        Example:
        >>> WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]).vocabulary_size()
        5
        """
        return len(self._vocabulary)

    def get_vocabulary(self):
        """Returns the vocabulary as a list of tokens, indexed by id.

        Returns:
            list of str.

        Example:
        >>> WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]).get_vocabulary()[2]
        '[CLS]'
        """
        return list(self._vocabulary)

    def id_to_token(self, id):
        """Returns the token of an id.

        Args:
            id: int, in `[0, vocabulary_size())`.

        Returns:
            str.

        Example:
        >>> WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]).id_to_token(3)
        '[SEP]'
        """
        index = int(id)
        if not 0 <= index < len(self._vocabulary):
            raise ValueError(
                f"id must be in [0, {len(self._vocabulary)}) (the vocabulary size); received {id}"
            )
        return self._vocabulary[index]

    def token_to_id(self, token):
        """Returns the id of a token.

        Args:
            token: str, a token of the vocabulary.

        Returns:
            int.

        Example:
        >>> WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]).token_to_id("[CLS]")
        2
        """
        if token not in self._token_ids:
            raise ValueError(
                f"token {token!r} is not in the vocabulary ({self.vocabulary_source}, "
                f"{len(self._vocabulary)} tokens)"
            )
        return self._token_ids[token]

    def _role_id(self, token):
        return None if token is None else self._token_ids[token]

    @property
    def unknown_token_id(self):
        """int: the id of `unknown_token`."""
        return self._role_id(self.unknown_token)

    @property
    def special_token_ids(self):
        """list of int: the ids of `special_tokens`, in their order."""
        return [self._token_ids[token] for token in self.special_tokens]

    def with_added_special_tokens(self, tokens):
        """Returns a new tokenizer whose vocabulary has `tokens` appended as special tokens.

        Existing ids do not change; new tokens get ids from `vocabulary_size()` on (tokens already
        in the vocabulary keep theirs). Like the built-in special tokens they are never produced
        from text, only inserted by a packer, so they should contain punctuation (e.g. brackets),
        which the pre-tokenizer always splits off. The encoder's embedding must grow to the new
        `vocabulary_size()`.

        Args:
            tokens: list of str.

        Returns:
            A `WordPieceTokenizer` with the same settings.

        Example:
        >>> base = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
        >>> grown = base.with_added_special_tokens(["[CLS2]"])
        >>> grown.token_to_id("[CLS2]"), grown.vocabulary_size()
        (5, 6)
        """
        if isinstance(tokens, str) or not all(isinstance(t, str) and t for t in tokens):
            raise ValueError(f"tokens must be a list of non-empty str tokens; received {tokens!r}")
        config = self.get_config()
        new_tokens = [t for t in dict.fromkeys(tokens) if t not in self._token_ids]
        config["vocabulary"] = list(self._vocabulary) + new_tokens
        config["special_tokens"] = list(dict.fromkeys(list(self.special_tokens) + list(tokens)))
        config.pop("name", None)
        return self.__class__.from_config(config)

    # ------------------------------------------------------------------ tokenizing

    def _words(self, texts):
        """Pre-tokenizes a 1-D batch: `(pieces, wordpiece_input, word_lengths)`.

        `pieces` is `_bert_text.pre_tokenize`'s dict, whose `words` is the (batch, words) ragged
        tensor of normalized words (none empty);
        `wordpiece_input` its flat values with every too-long word replaced by the unknown token,
        which WordPiece then looks up whole, so the reference's "too long -> [UNK]" costs no
        second op; `word_lengths` the flat words' lengths in characters.
        """
        pieces = _bert_text.pre_tokenize(
            texts,
            self._lowercase_table,
            lowercase=self.lowercase,
            strip_accents=self._effective_strip_accents,
            split_chinese_characters=self.split_chinese_characters,
        )
        words = pieces["words"]  # (batch, words)
        flat_words = words.flat_values  # (num_words,)
        word_lengths = tf.strings.length(flat_words, unit="UTF8_CHAR")  # (num_words,)
        wordpiece_input = tf.where(
            word_lengths > self.max_characters_per_word,
            tf.constant(self.unknown_token),
            flat_words,
        )
        return pieces, wordpiece_input, word_lengths

    def tokenize_words(self, texts):
        """Token ids grouped by word: int32 ragged `(batch, words, pieces)`.

        What TF Hub's BERT preprocessors return from `.tokenize`; merging the last two
        dimensions gives `tokenize`'s output.

        Args:
            texts: 1-D string tensor (or list of str).

        Returns:
            int32 `tf.RaggedTensor` of shape `(batch, words, pieces)`.
        """
        pieces, wordpiece_input, _ = self._words(tf.convert_to_tensor(texts, tf.string))
        ids = self._wordpiece.tokenize(wordpiece_input)  # (num_words, pieces) int64
        return pieces["words"].with_flat_values(tf.cast(ids, tf.int32))

    def _tokenize(self, texts, with_alignment):
        """Tokenizes a 1-D batch; returns a dict of (batch, tokens) ragged tensors."""
        pieces, wordpiece_input, word_lengths = self._words(texts)
        words = pieces["words"]  # (batch, words), normalized, none empty
        flat_words = words.flat_values  # (num_words,)
        ids, piece_starts, piece_ends = self._wordpiece.tokenize_with_offsets(wordpiece_input)
        # ids: (num_words, pieces) -> (batch, words, pieces) -> (batch, tokens)
        token_ids = words.with_flat_values(tf.cast(ids, tf.int32)).merge_dims(1, 2)
        if not with_alignment:
            return {"token_ids": token_ids}

        # Per-token values are gathered from per-word ones (tf.repeat is slow to trace).
        word_of_token = ids.value_rowids()  # (num_tokens,) index into the flat words
        first_word = tf.gather(words.row_splits, words.value_rowids())  # (num_words,)
        word_position = tf.range(tf.size(flat_words, out_type=tf.int64)) - first_word
        word_ids = tf.gather(word_position, word_of_token)  # (num_tokens,) 0-based in its text

        # Subword spans in normalized characters of their word. A too-long word's single
        # unknown token spans the whole normalized word, as in the reference.
        word_lengths = tf.cast(word_lengths, tf.int64)
        too_long = tf.gather(word_lengths > self.max_characters_per_word, word_of_token)
        normalized_length = tf.gather(word_lengths, word_of_token)
        piece_start, piece_end = _bert_text.byte_to_char_offsets(
            wordpiece_input, piece_starts, piece_ends
        )
        piece_start = tf.where(too_long, tf.zeros_like(normalized_length), piece_start.flat_values)
        piece_end = tf.where(too_long, normalized_length, piece_end.flat_values)

        # Which original character produced each normalized character: every step of the
        # normalization works character by character, so normalizing the characters one at a time
        # gives each one's share of the normalized word (0 for a deleted character, 2 for "İ"
        # without strip_accents). Spans then map exactly as the reference's alignments do.
        characters = tf.strings.unicode_split(pieces["raw_words"].flat_values, "UTF-8")
        shares = tf.strings.length(
            _bert_text.normalize_words(
                characters.flat_values,
                self._lowercase_table,
                lowercase=self.lowercase,
                strip_accents=self._effective_strip_accents,
            ),
            unit="UTF8_CHAR",
        )  # (num_characters,)
        # One sorted sequence for all words: the running total of shares, which restarts at each
        # word's offset in the concatenation of all normalized words.
        covered = tf.cumsum(tf.cast(shares, tf.int64))  # (num_characters,) up to and including
        word_base = tf.cumsum(word_lengths, exclusive=True)  # (num_words,)
        token_base = tf.gather(word_base, word_of_token)  # (num_tokens,)
        first_character = tf.gather(characters.row_splits, word_of_token)  # (num_tokens,)
        source_start = tf.searchsorted(
            covered, token_base + piece_start, side="right", out_type=tf.int64
        )
        source_last = tf.searchsorted(
            covered, token_base + piece_end - 1, side="right", out_type=tf.int64
        )
        (word_start,) = _bert_text.byte_to_char_offsets(pieces["texts"], pieces["starts"])
        word_start = tf.gather(word_start.flat_values, word_of_token)  # (num_tokens,)
        start = word_start + source_start - first_character
        end = word_start + source_last - first_character + 1

        def like_tokens(values):
            return token_ids.with_flat_values(tf.cast(values, tf.int32))

        return {
            "token_ids": token_ids,
            "word_ids": like_tokens(word_ids),
            "start_offsets": like_tokens(start),
            "end_offsets": like_tokens(end),
        }

    # Plain graph code without Python control flow on tensors: AutoGraph would only spend time
    # (about a second per trace) converting it.
    @tf.autograph.experimental.do_not_convert
    def _run(self, inputs, with_alignment):
        texts = as_texts(inputs)
        if texts.shape.rank == 0:
            outputs = self._tokenize(texts[tf.newaxis], with_alignment)
            return {key: value[0] for key, value in outputs.items()}
        return self._tokenize(texts, with_alignment)

    def call(self, inputs):
        """Tokenizes text into ids.

        Args:
            inputs: a string scalar, a 1-D string tensor, or a Python str or list of str.

        Returns:
            For a scalar, a 1-D int32 `tf.Tensor` of ids; for a batch, an int32
            `tf.RaggedTensor` shaped (batch, None).
        """
        return self._run(inputs, with_alignment=False)["token_ids"]

    def tokenize(self, inputs):
        """Same as calling the layer: text to ids.

        Args:
            inputs: a string scalar, a 1-D string tensor, or a Python str or list of str.

        Returns:
            A 1-D int32 `tf.Tensor` for a scalar, an int32 `tf.RaggedTensor` (batch, None) for a
            batch.

        Example:
        >>> WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"]).tokenize("a A")
        <tf.Tensor: shape=(2,), dtype=int32, numpy=array([5, 5], dtype=int32)>
        """
        return self(inputs)

    def tokenize_with_alignment(self, inputs):
        """Tokenizes text and says where every subword comes from.

        Args:
            inputs: a string scalar, a 1-D string tensor, or a Python str or list of str.

        Returns:
            A dict of int32 tensors with the same shape as `tokenize`'s output (1-D for a scalar,
            ragged (batch, None) for a batch): `token_ids`; `word_ids`, the 0-based index of the
            pre-tokenized word (whitespace-separated piece, punctuation mark or CJK character) the
            subword belongs to, counted within its text; `start_offsets` and `end_offsets`, its
            character span in the text, end exclusive (see the module docstring).

        Example:
        >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able"]
        >>> outputs = WordPieceTokenizer(vocabulary).tokenize_with_alignment("é unaffable")
        >>> outputs["word_ids"].numpy().tolist(), outputs["start_offsets"].numpy().tolist()
        ([0, 1, 1, 1], [0, 2, 4, 7])
        """
        return self._run(inputs, with_alignment=True)

    @tf.autograph.experimental.do_not_convert
    def detokenize(self, token_ids, skip_special_tokens=False):
        """Turns ids back into text: subwords joined, words separated by one space.

        Padding (`pad_token_id`) is always dropped. Normalization is not undone (the text comes
        back lowercased, accents stripped, punctuation spaced out).

        Args:
            token_ids: int tensor, ragged tensor, or nested list: 1-D for one text, 2-D for a
                batch.
            skip_special_tokens: bool, default False. Also drop every token of `special_tokens`.

        Returns:
            A string scalar for 1-D input, a 1-D string tensor for a batch.

        Example:
        >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able"]
        >>> WordPieceTokenizer(vocabulary).detokenize([2, 5, 6, 7, 3, 0, 0]).numpy()
        b'[CLS] unaffable [SEP]'
        """
        if isinstance(token_ids, (list, tuple)):
            token_ids = tf.ragged.constant(token_ids, dtype=tf.int64)
        elif not isinstance(token_ids, (tf.Tensor, tf.RaggedTensor)):
            token_ids = tf.convert_to_tensor(token_ids)
        if not token_ids.dtype.is_integer:
            raise ValueError(f"token_ids must be integers; received dtype {token_ids.dtype.name}")
        rank = token_ids.shape.rank
        if rank not in (1, 2):
            raise ValueError(
                "token_ids must be 1-D (one text) or 2-D (a batch); received shape "
                f"{token_ids.shape}"
            )
        token_ids = tf.cast(token_ids, tf.int64)
        if rank == 1:
            token_ids = token_ids[tf.newaxis]
        if not isinstance(token_ids, tf.RaggedTensor):
            token_ids = tf.RaggedTensor.from_tensor(token_ids)
        dropped = [] if self.pad_token is None else [self.pad_token_id]
        if skip_special_tokens:
            dropped = dropped + self.special_token_ids
        keep = tf.ones_like(token_ids.flat_values, tf.bool)
        for token_id in dropped:
            keep = keep & (token_ids.flat_values != token_id)
        token_ids = tf.ragged.boolean_mask(token_ids, token_ids.with_flat_values(keep))
        tokens = tf.ragged.map_flat_values(self._id_to_token_table.lookup, token_ids)

        prefix_length = len(self.suffix_indicator.encode("utf-8"))

        def join_piece(token):
            is_suffix = tf.strings.substr(token, 0, prefix_length) == self.suffix_indicator
            # Positions must not pass the end of a string, even where tf.where discards them.
            start = tf.where(is_suffix, prefix_length, 0)
            rest = tf.strings.substr(token, start, -tf.ones_like(start))  # -1: up to the end
            return tf.where(is_suffix, rest, tf.strings.join([" ", token]))

        pieces = tf.ragged.map_flat_values(join_piece, tokens)
        texts = tf.strings.reduce_join(pieces, axis=-1)  # (batch,)
        texts = tf.strings.regex_replace(texts, "^ ", "")
        return texts[0] if rank == 1 else texts

    def compute_output_spec(self, inputs):
        rank = getattr(inputs, "shape", None)
        rank = len(rank) if rank is not None else 1
        if rank == 0:
            return keras.KerasTensor((None,), dtype="int32")
        return keras.KerasTensor((inputs.shape[0], None), dtype="int32", ragged=True)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary": list(self._vocabulary),
                "lowercase": self.lowercase,
                "strip_accents": self.strip_accents,
                "split_chinese_characters": self.split_chinese_characters,
                "unknown_token": self.unknown_token,
                "max_characters_per_word": self.max_characters_per_word,
                "suffix_indicator": self.suffix_indicator,
                "special_tokens": list(self.special_tokens),
                "pad_token": self.pad_token,
                "cls_token": self.cls_token,
                "sep_token": self.sep_token,
                "mask_token": self.mask_token,
            }
        )
        return config
