"""SentencePiece's unigram language-model tokenizer: the most probable segmentation (Viterbi).

A unigram model (Kudo 2018; T5, ALBERT, XLNet and most multilingual models) gives every piece a
log probability and segments a word into the pieces whose log probabilities sum highest. Text
is first written the SentencePiece way: each space becomes "▁" (U+2581), a "▁" opens the text,
and the text is cut before each "▁" into words (no piece crosses a word boundary). A character
that no piece covers becomes the unknown token (its score: the lowest piece score minus 10), and
consecutive unknown characters fuse into one.

`UnigramTokenizer.from_huggingface` loads a Hugging Face `tokenizer.json` (Unigram model, with
the normalizers, pre-tokenizers and post-processors of `kbert.text.normalizers`,
`pre_tokenizers` and `post_processors`: T5's and ALBERT's among them) and `from_sentencepiece` a `.model` file written by the
`sentencepiece` package (read with a small protobuf reader, no dependency); both reproduce
their reference's ids and offsets. Pieces and scores come from `learn_unigram`.
"""

import collections
import math
import os
import struct

from kbert.text import normalizers, post_processors, pre_tokenizers
from kbert.text._json_config import JsonConfigFile, read_hugging_face_spec
from kbert.text.special_token_roles import SpecialTokenRoles
from kbert.text.unigram_trainer import SPACE, learn_unigram, sentencepiece_words

UNKNOWN_PENALTY = 10.0  # SentencePiece's and Hugging Face's kUnkPenalty


class UnigramTokenizer(SpecialTokenRoles, JsonConfigFile):
    """Text to unigram-LM token ids (Viterbi) and back, with character offsets.

    Args:
        pieces: list of `(piece, score)`: token `i` is `pieces[i][0]`, its log probability
            `pieces[i][1]`.
        unknown_id: int, default 0. The unknown token's id.
        add_dummy_prefix: bool, default True. A "▁" opens the text.
        collapse_whitespace: bool, default False. Drop leading, trailing and repeated spaces
            first (SentencePiece's default `remove_extra_whitespaces`).
        control_ids: sequence of int, default (). Tokens never produced from text (e.g.
            "<s>", "</s>", "<pad>") and dropped when decoding.
        float32_scores: bool, default False. Follow SentencePiece rather than Hugging Face:
            one Viterbi over the whole text, adding in float32 (Hugging Face scores each word
            apart in float64), so near-ties between segmentations break as the reference's do,
            and the dummy "▁" opens every text, even one that starts with a space (Hugging
            Face's Metaspace then adds none).
        pad_token, cls_token, sep_token, mask_token: str or None, default None. The pieces
            behind `pad_token_id` ... `mask_token_id` (each must be a piece); `with_roles()`
            returns a copy with BERT's four added as control pieces.
        normalizer, pre_tokenizer, post_processor: dict or None, default None. A Hugging Face
            pipeline (`kbert.text.normalizers`, `pre_tokenizers`, `post_processors`): with a
            normalizer or pre-tokenizer, text is normalized and split by them (each split
            segmented apart) in place of the SentencePiece-style words above;
            `add_dummy_prefix`, `collapse_whitespace` and `float32_scores` then do nothing.

    Raises:
        ValueError: repeated pieces, a bad `unknown_id`, or a non-finite score.

    Example:
    >>> tokenizer = UnigramTokenizer(
    ...     [("<unk>", 0.0), ("▁", -2.0), ("▁low", -3.0), ("est", -3.5), ("l", -6.0),
    ...      ("o", -6.0), ("w", -6.0), ("e", -6.0), ("s", -6.0), ("t", -6.0)])
    >>> [tokenizer.id_to_token(i) for i in tokenizer.tokenize("lowest")]
    ['▁low', 'est']
    >>> tokenizer.detokenize(tokenizer.tokenize("lowest low"))
    'lowest low'
    """

    def __init__(
        self,
        pieces,
        unknown_id=0,
        add_dummy_prefix=True,
        collapse_whitespace=False,
        control_ids=(),
        float32_scores=False,
        pad_token=None,
        cls_token=None,
        sep_token=None,
        mask_token=None,
        normalizer=None,
        pre_tokenizer=None,
        post_processor=None,
    ):
        self.pieces = [(str(piece), float(score)) for piece, score in pieces]
        self.unknown_id = int(unknown_id)
        self.add_dummy_prefix = bool(add_dummy_prefix)
        self.collapse_whitespace = bool(collapse_whitespace)
        self.control_ids = sorted({int(i) for i in control_ids})
        self.float32_scores = bool(float32_scores)
        self._round = _to_float32 if self.float32_scores else float
        self.normalizer = normalizers.check_normalizer(normalizer)
        self.pre_tokenizer = pre_tokenizer
        if pre_tokenizer is not None:
            pre_tokenizers.check_pre_tokenizer(pre_tokenizer)
        self.post_processor = post_processors.check_post_processor(post_processor)
        self._pipeline = normalizer is not None or pre_tokenizer is not None
        self._ids = {}
        for index, (piece, score) in enumerate(self.pieces):
            if piece in self._ids:
                raise ValueError(
                    f"pieces must not repeat; {piece!r} is at {self._ids[piece]} and {index}"
                )
            if not math.isfinite(score):
                raise ValueError(f"piece {piece!r} has a non-finite score {score}")
            self._ids[piece] = index
        if not 0 <= self.unknown_id < len(self.pieces):
            raise ValueError(
                f"unknown_id must index the {len(self.pieces)} pieces; received {unknown_id}"
            )
        excluded = set(self.control_ids) | {self.unknown_id}
        self._scores = {
            piece: score
            for index, (piece, score) in enumerate(self.pieces)
            if index not in excluded
        }
        if self.float32_scores:
            self._scores = {piece: _to_float32(score) for piece, score in self._scores.items()}
        self._unknown_score = self._round(min(self._scores.values(), default=0.0) - UNKNOWN_PENALTY)
        self._longest = max((len(piece) for piece in self._scores), default=1)
        self._cache = {}
        self._set_roles(
            pad_token=pad_token, cls_token=cls_token, sep_token=sep_token, mask_token=mask_token
        )

    def vocabulary_size(self):
        """Number of pieces."""
        return len(self.pieces)

    def id_to_token(self, token_id):
        """The piece string of `token_id`."""
        return self.pieces[token_id][0]

    def token_to_id(self, token):
        """The id of `token`, or None."""
        return self._ids.get(token)

    @property
    def unknown_token_id(self):
        """int: the unknown piece's id."""
        return self.unknown_id

    @property
    def special_token_ids(self):
        """list of int: the unknown piece, the control pieces and the role pieces."""
        roles = [self._ids[t] for t in self.role_config().values() if t]
        return list(dict.fromkeys([self.unknown_id, *self.control_ids, *roles]))

    def _config_with_special_tokens(self, tokens):
        # Control pieces: never produced from text, dropped when decoding.
        config = self.get_config()
        start = len(config["pieces"])
        config["pieces"] = config["pieces"] + [[token, 0.0] for token in tokens]
        config["control_ids"] = config["control_ids"] + list(range(start, start + len(tokens)))
        return config

    def _viterbi(self, word):
        """The best segmentation of `word`: list of `(id, start, end)` in characters."""
        if word in self._cache:
            return self._cache[word]
        size = len(word)
        # best[end] = (score, start, id) of the best path ending at `end`; the first path found
        # keeps a tie (Hugging Face and SentencePiece compare with a strict >).
        best = [None] * (size + 1)
        best[0] = (0.0, -1, -1)
        for start in range(size):
            if best[start] is None:
                continue
            here = best[start][0]
            covered = False
            for end in range(start + 1, min(size, start + self._longest) + 1):
                score = self._scores.get(word[start:end])
                if score is None:
                    continue
                covered |= end == start + 1
                candidate = self._round(here + score)
                if best[end] is None or candidate > best[end][0]:
                    best[end] = (candidate, start, self._ids[word[start:end]])
            if not covered:
                candidate = self._round(here + self._unknown_score)
                if best[start + 1] is None or candidate > best[start + 1][0]:
                    best[start + 1] = (candidate, start, self.unknown_id)
        path, end = [], size
        while end > 0:
            _, start, token_id = best[end]
            if token_id == self.unknown_id and path and path[-1][0] == self.unknown_id:
                path[-1] = (token_id, start, path[-1][2])  # consecutive unknowns fuse
            else:
                path.append((token_id, start, end))
            end = start
        path.reverse()
        if len(self._cache) < 100_000:
            self._cache[word] = path
        return path

    def tokenize_with_offsets(self, text, add_special_tokens=False):
        """`(ids, starts, ends)`: token ids and each token's character span in `text`.

        A token's span covers the characters it was made from; its "▁" covers the space it
        stands for (the opening "▁" the first character). `add_special_tokens=True` adds the
        post-processor's special tokens (spanning `(0, 0)`); without one nothing is added.
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a str; received {type(text).__name__}")
        if self._pipeline:
            ids, starts, ends = self._pipeline_tokens(text)
        else:
            ids, starts, ends = self._sentencepiece_tokens(text)
        if self.post_processor is None:
            return ids, starts, ends
        tokens = [(i, self.pieces[i][0], s, e) for i, s, e in zip(ids, starts, ends, strict=True)]
        tokens = post_processors.post_process(self.post_processor, tokens, add_special_tokens)
        return [t[0] for t in tokens], [t[2] for t in tokens], [t[3] for t in tokens]

    def _pipeline_tokens(self, text):
        """Hugging Face's way: normalize, pre-tokenize, segment each split apart."""
        aligned = normalizers.normalize(self.normalizer, text)
        splits = [aligned]
        if self.pre_tokenizer is not None:
            splits = pre_tokenizers.pre_tokenize(self.pre_tokenizer, aligned)
        ids, starts, ends = [], [], []
        for split in splits:
            for token_id, start, end in self._viterbi(split.text):
                begin, finish = split.original_span(start, end)
                ids.append(token_id)
                starts.append(begin)
                ends.append(finish)
        return ids, starts, ends

    def _sentencepiece_tokens(self, text):
        ids, starts, ends = [], [], []
        words = sentencepiece_words(
            text, self.add_dummy_prefix, self.collapse_whitespace, self.float32_scores
        )
        if self.float32_scores and words:
            # SentencePiece runs one Viterbi over the whole text: its float32 running score
            # then rounds the same way, and near-ties break as they do there.
            words = [("".join(word for word, _ in words), [p for _, ps in words for p in ps])]
        for word, positions in words:
            for token_id, start, end in self._viterbi(word):
                ids.append(token_id)
                starts.append(positions[start])
                ends.append(positions[end - 1] + 1)
        return ids, starts, ends

    def tokenize(self, text, add_special_tokens=False):
        """Token ids of `text` (list of int); `add_special_tokens` as in
        `tokenize_with_offsets`."""
        return self.tokenize_with_offsets(text, add_special_tokens)[0]

    def tokenize_with_word_ids(self, text):
        """`(ids, word_ids)`: token ids and, per token, the index of its whitespace-separated
        word (a new word starts at each piece that opens with "▁"), for whole-word masking."""
        ids, starts, _ = self.tokenize_with_offsets(text)
        word_ids, word = [], -1
        for index, (token_id, start) in enumerate(zip(ids, starts, strict=True)):
            opens = self.pieces[token_id][0].startswith(SPACE)
            if token_id == self.unknown_id:
                opens = text[start].isspace()
            if index == 0 or opens:
                word += 1
            word_ids.append(word)
        return ids, word_ids

    def detokenize(self, ids):
        """Text from ids: pieces joined, "▁" back to spaces, the opening one removed."""
        skip = set(self.control_ids)
        text = "".join(self.pieces[int(i)][0] for i in ids if int(i) not in skip)
        text = text.replace(SPACE, " ")
        return text[1:] if self.add_dummy_prefix and text.startswith(" ") else text

    def get_config(self):
        return {
            "pieces": [list(piece) for piece in self.pieces],
            "unknown_id": self.unknown_id,
            "add_dummy_prefix": self.add_dummy_prefix,
            "collapse_whitespace": self.collapse_whitespace,
            "control_ids": list(self.control_ids),
            "float32_scores": self.float32_scores,
            "normalizer": self.normalizer,
            "pre_tokenizer": self.pre_tokenizer,
            "post_processor": self.post_processor,
            **self.role_config(),
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    @classmethod
    def train(cls, texts, vocabulary_size, unknown_token="<unk>", float32_scores=False, **options):
        """Learns a unigram vocabulary from `texts` (iterable of str); returns the tokenizer.

        Words are written and cut as the tokenizer will see them (`sentencepiece_words`),
        counted, and passed to `learn_unigram` with `options` (`max_piece_length`,
        `seed_size`, `shrinking_factor`, `em_iterations`). `float32_scores=True` gives a
        tokenizer with SentencePiece's conventions, which `SentencePieceTokenizer` reproduces
        inside graphs (pretrain with it, serve with the layer).
        """
        counts = collections.Counter()
        for text in texts:
            counts.update(word for word, _ in sentencepiece_words(text))
        pieces = learn_unigram(
            dict(counts), vocabulary_size, reserved_tokens=(unknown_token,), **options
        )
        return cls(pieces, unknown_id=0, float32_scores=float32_scores)

    @classmethod
    def from_huggingface(cls, path):
        """Loads a Unigram `tokenizer.json` from Hugging Face `tokenizers`.

        Supported: a `Unigram` model; the normalizers of `kbert.text.normalizers.NORMALIZERS`
        (T5's and ALBERT's `Nmt`/`Precompiled`/`StripAccents` sequences among them), the
        pre-tokenizers of `kbert.text.pre_tokenizers.PRE_TOKENIZERS` and the post-processors
        of `kbert.text.post_processors.POST_PROCESSORS`; added tokens are control tokens. A
        file with no normalizer and a plain `Metaspace` ("▁", prepend scheme "always" or
        "first", splitting) loads as SentencePiece-style words. `SentencePieceTokenizer` runs
        either in graphs, a pipeline through `graph_normalizers` and `graph_pre_tokenizers`
        (it refuses, by name, what they lack, such as `Precompiled`).

        Raises:
            ValueError: naming a model, normalizer, pre-tokenizer or post-processor it cannot
                reproduce, or byte fallback.
        """
        spec = read_hugging_face_spec(path, "Unigram")
        model = spec["model"]
        if model.get("byte_fallback"):
            raise ValueError(f"{path}: Unigram byte_fallback is not supported")
        pre = spec.get("pre_tokenizer")
        plain = (
            spec.get("normalizer") is None
            and (pre or {}).get("type") == "Metaspace"
            and pre.get("replacement", SPACE) == SPACE
            and pre.get("prepend_scheme", "always") in ("always", "first")
            and pre.get("split", True)
        )
        added = [token["id"] for token in spec.get("added_tokens") or [] if token.get("special")]
        unknown = model.get("unk_id")
        if unknown is None:
            raise ValueError(f"{path}: the Unigram model has no unk_id")
        return cls(
            [tuple(piece) for piece in model["vocab"]],
            unknown_id=unknown,
            control_ids=[i for i in added if i != unknown],
            normalizer=spec.get("normalizer"),
            pre_tokenizer=None if plain else pre or {"type": "Sequence", "pretokenizers": []},
            post_processor=spec.get("post_processor"),
        )

    def to_sentencepiece(self, splits=False):
        """This model as a SentencePiece `ModelProto`: the bytes of a `.model` file.

        The `sentencepiece` package and tf-text's `SentencepieceTokenizer` (the op inside
        exported graphs, which TF Serving links) load it: a unigram model with the identity
        normalizer, this tokenizer's `add_dummy_prefix` and `collapse_whitespace`, the unknown
        piece as UNKNOWN and control and role pieces as CONTROL. Scores are stored as float32,
        and SentencePiece runs one Viterbi over the whole text, so it segments as this
        tokenizer does with `float32_scores=True` (see `from_sentencepiece`, its inverse).

        Args:
            splits: bool, default False. A model for the splits of a Hugging Face pipeline
                (`SentencePieceTokenizer` feeds them one by one): no dummy prefix, spaces kept
                as they are and not collapsed.

        Returns:
            bytes.
        """
        controls = set(self.control_ids) | {self._ids[t] for t in self.role_config().values() if t}
        data = b""
        for index, (piece, score) in enumerate(self.pieces):
            kind = 2 if index == self.unknown_id else 3 if index in controls else 1
            data += _bytes_field(
                1,
                _bytes_field(1, piece.encode("utf-8"))
                + _float_field(2, score)
                + _varint_field(3, kind),
            )
        trainer = (
            _varint_field(3, 1)  # model_type UNIGRAM
            + _varint_field(4, len(self.pieces))  # vocab_size
            + _varint_field(40, self.unknown_id)  # unk_id
            + _varint_field(41, -1)  # bos_id: none
            + _varint_field(42, -1)  # eos_id: none
            + _varint_field(43, -1)  # pad_id: none
        )
        normalizer = (
            _bytes_field(1, b"identity")
            + _varint_field(3, self.add_dummy_prefix and not splits)
            + _varint_field(4, self.collapse_whitespace and not splits)  # remove_extra_whitespaces
            + _varint_field(5, not splits)  # escape_whitespaces: " " becomes "▁"
        )
        return data + _bytes_field(2, trainer) + _bytes_field(3, normalizer)

    @classmethod
    def from_sentencepiece(cls, path):
        """Loads a unigram `.model` file written by the `sentencepiece` package (a path, or the
        file's bytes).

        Its normalizer must be the identity (train with `normalization_rule_name="identity"`);
        `remove_extra_whitespaces` and `add_dummy_prefix` are honoured.

        Raises:
            ValueError: a model that is not unigram, a normalizer other than the identity, or
                byte fallback.
        """
        if isinstance(path, bytes):  # the model itself, as `to_sentencepiece` returns it
            fields, path = protobuf_fields(path), "the SentencePiece model bytes"
        else:
            with open(os.fspath(path), "rb") as stream:
                fields = protobuf_fields(stream.read())
        pieces, unknown, controls = [], 0, []
        for index, raw in enumerate(value for number, value in fields if number == 1):
            piece = dict(protobuf_fields(raw))
            kind = piece.get(3, 1)  # NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, BYTE 6
            if kind == 2:
                unknown = index
            elif kind in (3, 6):
                controls.append(index)
            pieces.append((piece.get(1, b"").decode("utf-8"), _float32(piece.get(2, 0))))
        trainer = dict(protobuf_fields(next((v for n, v in fields if n == 2), b"")))
        if trainer.get(3, 1) != 1:
            raise ValueError(f"{path}: model_type {trainer.get(3)} is not unigram (1)")
        if trainer.get(35):
            raise ValueError(f"{path}: byte_fallback is not supported")
        normalizer = dict(protobuf_fields(next((v for n, v in fields if n == 3), b"")))
        rule = normalizer.get(1, b"").decode("utf-8")
        if rule not in ("identity", ""):
            raise ValueError(
                f"{path}: normalizer {rule!r} is not supported; train with "
                "normalization_rule_name='identity'"
            )
        return cls(
            pieces,
            unknown_id=unknown,
            add_dummy_prefix=bool(normalizer.get(3, 1)),
            collapse_whitespace=bool(normalizer.get(4, 1)),
            control_ids=controls,
            float32_scores=True,
        )


def _encode_varint(value):
    value &= (1 << 64) - 1  # negative int32/int64 fields: ten bytes, two's complement
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _varint_field(number, value):
    return _encode_varint(number << 3) + _encode_varint(int(value))


def _bytes_field(number, data):
    return _encode_varint(number << 3 | 2) + _encode_varint(len(data)) + data


def _float_field(number, value):
    return _encode_varint(number << 3 | 5) + struct.pack("<f", value)


def _varint(data, position):
    value, shift = 0, 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, position


def protobuf_fields(data):
    """`(field number, value)` of a serialized protobuf message: ints for varints and fixed32
    (as raw bits), bytes for length-delimited fields."""
    fields, position = [], 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 2:
            length, position = _varint(data, position)
            value, position = data[position : position + length], position + length
        elif wire == 5:
            value, position = int.from_bytes(data[position : position + 4], "little"), position + 4
        elif wire == 1:
            value, position = int.from_bytes(data[position : position + 8], "little"), position + 8
        else:
            raise ValueError(f"unsupported protobuf wire type {wire} for field {number}")
        fields.append((number, value))
    return fields


def _to_float32(value):
    """`value` rounded to the nearest float32 (as a Python float)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _float32(bits):
    return struct.unpack("<f", int(bits).to_bytes(4, "little"))[0]
