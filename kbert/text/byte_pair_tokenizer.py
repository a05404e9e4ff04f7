"""Byte-pair-encoding tokenizers: the textbook's character BPE and GPT-2's byte-level BPE.

`BytePairTokenizer` splits text into words (a pre-tokenizer pattern), turns each word into its
start symbols (`kbert.text.byte_pair_trainer.word_symbols`) and applies the learned merges in
the order they were learned: repeatedly, the adjacent pair with the lowest merge rank becomes
one symbol, until no adjacent pair is a merge. Tokens come with character offsets into the
original text, and ids decode back to text. A `tokenizer.json` written by Hugging Face
`tokenizers` for a BPE model (character or byte-level), with the normalizers, pre-tokenizers
and post-processors of `kbert.text.normalizers`, `pre_tokenizers` and `post_processors`, loads
with `from_huggingface` and gives the same ids and offsets (`benchmarks/tokenizer_parity.py`
measures it on real text).

This tokenizer runs eagerly in Python; the pretraining pipelines call it once, when they are
built (`tokenize_batch`), and it names BERT's role tokens (`pad_token`, `cls_token`,
`sep_token`, `mask_token`; `with_roles()` adds them) so every pipeline accepts it.
"""

import json

import regex

from kbert.text import normalizers, post_processors, pre_tokenizers
from kbert.text._json_config import JsonConfigFile, read_hugging_face_spec
from kbert.text.byte_pair_trainer import (
    END_OF_WORD,
    byte_level_alphabet,
    learn_merges,
    merge_pair,
)
from kbert.text.special_token_roles import SpecialTokenRoles

# Pre-tokenizers: how text is cut into words before BPE (no merge crosses a word boundary).
PRE_TOKENIZERS = {
    # GPT-2's: contractions, letters, numbers, other symbols, each with one leading space.
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    # Hugging Face's `Whitespace`: runs of word characters, runs of other non-space characters.
    "whitespace": r"\w+|[^\w\s]+",
    # Hugging Face's `WhitespaceSplit`: anything between whitespace.
    "whitespace_split": r"\S+",
}


class BytePairTokenizer(SpecialTokenRoles, JsonConfigFile):
    """Text to BPE token ids and back, with character offsets.

    Args:
        vocabulary: list of str. Token `i` has id `i`.
        merges: list of `(left, right)` pairs of str, in the order learned (rank = index).
        byte_level: bool, default False. Words are UTF-8 bytes (`byte_level_alphabet`).
        end_of_word: str or None, default "</w>". The marker closing each word (character
            BPE); None for none.
        end_of_word_attached: bool, default False. The marker is fused to the last character.
        continuing_subword_prefix: str or None, default None. Marks non-initial pieces of a
            word (Hugging Face's option; "##" gives WordPiece-looking pieces).
        unknown_token: str or None, default "[UNK]". Stands for symbols not in the vocabulary;
            with None they are dropped (Hugging Face's behaviour without an unknown token).
        fuse_unknown: bool, default False. Consecutive unknown symbols become one token.
        pre_tokenizer: str or dict, default None ("gpt2" for byte-level, else "whitespace"). A
            key of `PRE_TOKENIZERS`, or a Hugging Face pre-tokenizer (its `tokenizer.json`
            dict; `kbert.text.pre_tokenizers`), whose `ByteLevel` then writes the words in the
            byte alphabet before BPE.
        normalizer: dict or None, default None. A Hugging Face normalizer applied first
            (`kbert.text.normalizers`); offsets still refer to the original text.
        post_processor: dict or None, default None. A Hugging Face post-processor
            (`kbert.text.post_processors`): its special tokens are added when
            `add_special_tokens=True`, its offset trimming always.
        special_tokens: sequence of str, default (). Tokens matched verbatim in the text before
            pre-tokenization (each must be in the vocabulary).
        ignore_merges: bool, default False. A word that is itself in the vocabulary is one
            token without merging (Hugging Face's option).
        pad_token, cls_token, sep_token, mask_token: str or None, default None. The tokens
            behind `pad_token_id` ... `mask_token_id` (each must be in the vocabulary);
            `with_roles()` returns a copy with BERT's four added.

    Raises:
        ValueError: repeated tokens, a merge whose parts or result are not in the vocabulary,
            an unknown pre-tokenizer, or an unknown or special token missing from the vocabulary.

    Example:
    >>> from kbert.text.byte_pair_trainer import learn_merges
    >>> merges, vocabulary = learn_merges(
    ...     {"low": 5, "lower": 2, "newest": 6, "widest": 3}, num_merges=10,
    ...     reserved_tokens=["[UNK]"])
    >>> tokenizer = BytePairTokenizer(vocabulary, merges)
    >>> [tokenizer.id_to_token(i) for i in tokenizer.tokenize("lowest newer")]
    ['low', 'est</w>', 'n', 'ew', 'e', 'r', '</w>']
    >>> tokenizer.detokenize(tokenizer.tokenize("lowest newer"))
    'lowest newer'
    """

    def __init__(
        self,
        vocabulary,
        merges,
        byte_level=False,
        end_of_word=END_OF_WORD,
        end_of_word_attached=False,
        continuing_subword_prefix=None,
        unknown_token="[UNK]",
        fuse_unknown=False,
        pre_tokenizer=None,
        special_tokens=(),
        ignore_merges=False,
        pad_token=None,
        cls_token=None,
        sep_token=None,
        mask_token=None,
        normalizer=None,
        post_processor=None,
    ):
        self.vocabulary = [str(token) for token in vocabulary]
        self.merges = [(str(left), str(right)) for left, right in merges]
        self.byte_level = bool(byte_level)
        self.end_of_word = None if self.byte_level else end_of_word
        self.end_of_word_attached = bool(end_of_word_attached)
        self.continuing_subword_prefix = continuing_subword_prefix or None
        self.unknown_token = unknown_token
        self.fuse_unknown = bool(fuse_unknown)
        self.pre_tokenizer = pre_tokenizer or ("gpt2" if self.byte_level else "whitespace")
        self.special_tokens = list(special_tokens)
        self.ignore_merges = bool(ignore_merges)
        self._ids = {token: index for index, token in enumerate(self.vocabulary)}
        if len(self._ids) != len(self.vocabulary):
            repeated = sorted({t for t in self.vocabulary if self.vocabulary.count(t) > 1})
            raise ValueError(f"vocabulary must not repeat tokens; repeated: {repeated[:10]}")
        self.normalizer = normalizers.check_normalizer(normalizer)
        self.post_processor = post_processors.check_post_processor(post_processor)
        # Hugging Face's pipeline (normalizer, pre-tokenizer) in place of a named pattern: the
        # pre-tokenizer writes any byte alphabet itself, so BPE starts from characters.
        self._pipeline = self.normalizer is not None or isinstance(self.pre_tokenizer, dict)
        if isinstance(self.pre_tokenizer, dict):
            pre_tokenizers.check_pre_tokenizer(self.pre_tokenizer)
        elif self.pre_tokenizer not in PRE_TOKENIZERS:
            raise ValueError(
                f"pre_tokenizer must be one of {sorted(PRE_TOKENIZERS)}; "
                f"received {self.pre_tokenizer!r}"
            )
        for name, token in [("unknown_token", unknown_token)] + [
            ("special token", token) for token in self.special_tokens
        ]:
            if token is not None and token not in self._ids:
                raise ValueError(f"{name} {token!r} is not in the vocabulary")
        self._ranks = {}
        for rank, (left, right) in enumerate(self.merges):
            for part in self._merge_results(left, right):
                if part not in self._ids:
                    raise ValueError(
                        f"merge {rank} ({left!r}, {right!r}) makes or uses {part!r}, "
                        "which is not in the vocabulary"
                    )
            self._ranks.setdefault((left, right), rank)
        self._words = None if self._pipeline else regex.compile(PRE_TOKENIZERS[self.pre_tokenizer])
        self._specials = (
            regex.compile(
                "|".join(regex.escape(t) for t in sorted(self.special_tokens, key=len)[::-1])
            )
            if self.special_tokens
            else None
        )
        self._alphabet = byte_level_alphabet()
        self._bytes = {symbol: byte for byte, symbol in enumerate(self._alphabet)}
        self._cache = {}
        self._set_roles(
            pad_token=pad_token, cls_token=cls_token, sep_token=sep_token, mask_token=mask_token
        )

    def _merge_results(self, left, right):
        merged = left + right
        if self.continuing_subword_prefix and right.startswith(self.continuing_subword_prefix):
            merged = left + right[len(self.continuing_subword_prefix) :]
        return left, right, merged

    def merge_ranks(self):
        """dict: each merge `(left, right)` → its rank (the first, should a merge repeat)."""
        return dict(self._ranks)

    def merged_token(self, left, right):
        """The token merging `left` and `right` makes (`right`'s continuing-subword prefix off)."""
        return self._merge_results(left, right)[2]

    # --- vocabulary ---

    def vocabulary_size(self):
        """Number of tokens."""
        return len(self.vocabulary)

    def id_to_token(self, token_id):
        """The token string of `token_id`."""
        return self.vocabulary[token_id]

    def token_to_id(self, token):
        """The id of `token`, or None."""
        return self._ids.get(token)

    @property
    def unknown_token_id(self):
        """int or None: the id of `unknown_token` (None for byte-level BPE, which has none)."""
        return self._role_id(self.unknown_token)

    @property
    def special_token_ids(self):
        """list of int: the ids of `special_tokens` and of the role tokens, in that order."""
        tokens = list(self.special_tokens) + [t for t in self.role_config().values() if t]
        return [self._ids[t] for t in dict.fromkeys(tokens)]

    def _config_with_special_tokens(self, tokens):
        # Appended to the vocabulary only: not in `special_tokens`, so a literal "[SEP]" in the
        # text is not matched (no merge makes them either), and padding is only ever added.
        config = self.get_config()
        config["vocabulary"] = config["vocabulary"] + list(tokens)
        return config

    # --- tokenizing ---

    def _start_symbols(self, word):
        if self.byte_level and not self._pipeline:
            return [self._alphabet[byte] for byte in word.encode("utf-8")]
        symbols = list(word)
        if self.continuing_subword_prefix:
            symbols = symbols[:1] + [self.continuing_subword_prefix + s for s in symbols[1:]]
        if self.end_of_word:
            if self.end_of_word_attached:
                symbols[-1] += self.end_of_word
            else:
                symbols.append(self.end_of_word)
        return symbols

    def _bpe(self, word):
        """The pieces of one word after every applicable merge, lowest rank first."""
        if word in self._cache:
            return self._cache[word]
        symbols = self._start_symbols(word)
        whole = word if self._pipeline else "".join(symbols) if self.byte_level else None
        if self.ignore_merges and whole is not None and whole in self._ids:
            symbols = [whole]
        while len(symbols) > 1:
            ranked = [
                (self._ranks[pair], index)
                for index, pair in enumerate(zip(symbols, symbols[1:], strict=False))
                if pair in self._ranks
            ]
            if not ranked:
                break
            rank = min(ranked)[0]
            pair = self.merges[rank]
            symbols = list(merge_pair(symbols, pair, self._merge_results(*pair)[2]))
        if len(self._cache) < 100_000:
            self._cache[word] = symbols
        return symbols

    def _piece_length(self, piece):
        """How many symbols of the word's start form `piece` consumed (characters or bytes)."""
        if self.byte_level and not self._pipeline:
            return len(piece)  # one alphabet character per byte
        length = len(piece)
        if self.end_of_word and piece.endswith(self.end_of_word):
            length -= len(self.end_of_word)
        if self.continuing_subword_prefix and piece.startswith(self.continuing_subword_prefix):
            length -= len(self.continuing_subword_prefix)
        return length

    def _word_tokens(self, word, start):
        """`(id, start, end)` per token of one pre-tokenized word beginning at `start`."""
        tokens = []
        byte_level = self.byte_level and not self._pipeline
        if byte_level:
            # Byte offsets within the word → character offsets in the text.
            char_of_byte = []
            for index, character in enumerate(word):
                char_of_byte += [index] * len(character.encode("utf-8"))
            char_of_byte.append(len(word))
        position = 0
        for piece in self._bpe(word):
            length = self._piece_length(piece)
            if byte_level:
                first = char_of_byte[position]
                last = char_of_byte[position + length - 1] + 1 if length else first
                span = (start + first, start + last)
            else:
                span = (start + position, start + position + length)
            position += length
            token_id = self._ids.get(piece)
            if token_id is None:
                if self.unknown_token is None:
                    continue
                token_id = self._ids[self.unknown_token]
                if self.fuse_unknown and tokens and tokens[-1][0] == token_id:
                    tokens[-1] = (token_id, tokens[-1][1], span[1])
                    continue
            tokens.append((token_id, *span))
        return tokens

    def _pieces(self, text):
        """`(kind, text, start)`: special tokens verbatim, the rest cut into words (with the
        Hugging Face pipeline, `text` of a word is an `AlignedText` and `start` its segment's)."""
        cursor = 0
        spans = [] if self._specials is None else list(self._specials.finditer(text))
        for special in spans + [None]:
            end = len(text) if special is None else special.start()
            if self._pipeline:
                aligned = normalizers.normalize(self.normalizer, text[cursor:end])
                if isinstance(self.pre_tokenizer, dict):
                    splits = pre_tokenizers.pre_tokenize(self.pre_tokenizer, aligned, cursor)
                else:
                    splits = [
                        aligned.slice(m.start(), m.end())
                        for m in regex.finditer(PRE_TOKENIZERS[self.pre_tokenizer], aligned.text)
                    ]
                for split in splits:
                    yield "word", split, cursor
            else:
                for match in self._words.finditer(text, cursor, end):
                    yield "word", match.group(), match.start()
            if special is not None:
                yield "special", special.group(), special.start()
                cursor = special.end()

    def _piece_tokens(self, kind, piece, start):
        """`(id, start, end)` of one piece of `_pieces`."""
        if kind == "special":
            return [(self._ids[piece], start, start + len(piece))]
        if not isinstance(piece, normalizers.AlignedText):
            return self._word_tokens(piece, start)
        tokens = []
        for token_id, first, last in self._word_tokens(piece.text, 0):
            begin, end = piece.original_span(first, last)
            tokens.append((token_id, start + begin, start + end))
        return tokens

    def tokenize_with_offsets(self, text, add_special_tokens=False):
        """`(ids, starts, ends)`: token ids and each token's character span in `text`.

        Args:
            text: str.
            add_special_tokens: bool, default False. Add the post-processor's special tokens
                (spanning `(0, 0)`); without a post-processor nothing is added.

        Returns:
            three lists of int of equal length.
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a str; received {type(text).__name__}")
        tokens = []
        for kind, piece, start in self._pieces(text):
            tokens += self._piece_tokens(kind, piece, start)
        if self.post_processor is not None:
            tokens = [(i, self.vocabulary[i], s, e) for i, s, e in tokens]
            tokens = post_processors.post_process(self.post_processor, tokens, add_special_tokens)
            tokens = [(i, s, e) for i, _, s, e in tokens]
        return [t[0] for t in tokens], [t[1] for t in tokens], [t[2] for t in tokens]

    def tokenize(self, text, add_special_tokens=False):
        """Token ids of `text` (list of int); `add_special_tokens` as in
        `tokenize_with_offsets`."""
        return self.tokenize_with_offsets(text, add_special_tokens)[0]

    def tokenize_with_word_ids(self, text):
        """`(ids, word_ids)`: token ids and, per token, the index of the pre-tokenizer's word it
        came from (a special token is a word of its own), for whole-word masking."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a str; received {type(text).__name__}")
        ids, word_ids = [], []
        for word, (kind, piece, start) in enumerate(self._pieces(text)):
            tokens = [t[0] for t in self._piece_tokens(kind, piece, start)]
            ids += tokens
            word_ids += [word] * len(tokens)
        return ids, word_ids

    def detokenize(self, ids):
        """Text from token ids: byte-level tokens decode their bytes (invalid UTF-8 shown as
        U+FFFD); character tokens join, each end-of-word marker becoming a space. Role tokens
        ([PAD], [SEP], ...) are dropped."""
        roles = {self._ids[t] for t in self.role_config().values() if t}
        tokens = [self.vocabulary[int(i)] for i in ids if int(i) not in roles]
        if self.byte_level:
            data = bytes(
                self._bytes[c]
                for token in tokens
                if token not in self.special_tokens
                for c in token
            )
            return data.decode("utf-8", errors="replace")
        text = ""
        for token in tokens:
            if self.continuing_subword_prefix and token.startswith(self.continuing_subword_prefix):
                text = text.rstrip(" ") + token[len(self.continuing_subword_prefix) :]
            elif self.continuing_subword_prefix and text and not text.endswith(" "):
                text += " " + token
            else:
                text += token
            if self.end_of_word and text.endswith(self.end_of_word):
                text = text[: -len(self.end_of_word)] + " "
        return text.strip()

    # --- configuration and files ---

    def get_config(self):
        """Every constructor argument (vocabulary and merges included)."""
        return {
            "vocabulary": list(self.vocabulary),
            "merges": [list(pair) for pair in self.merges],
            "byte_level": self.byte_level,
            "end_of_word": self.end_of_word,
            "end_of_word_attached": self.end_of_word_attached,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "unknown_token": self.unknown_token,
            "fuse_unknown": self.fuse_unknown,
            "pre_tokenizer": self.pre_tokenizer,
            "special_tokens": list(self.special_tokens),
            "ignore_merges": self.ignore_merges,
            "normalizer": self.normalizer,
            "post_processor": self.post_processor,
            **self.role_config(),
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    @classmethod
    def train(
        cls,
        texts,
        vocabulary_size,
        byte_level=False,
        pre_tokenizer=None,
        min_frequency=2,
        end_of_word=END_OF_WORD,
        end_of_word_attached=False,
        special_tokens=("[UNK]",),
    ):
        """Learns merges from `texts` (an iterable of str) and returns the tokenizer.

        Words are cut by the same pre-tokenizer the tokenizer uses, then counted
        (`learn_merges` does the rest). `special_tokens` open the vocabulary; the first is
        the unknown token for character BPE (byte-level BPE has no unknown token).
        """
        pre_tokenizer = pre_tokenizer or ("gpt2" if byte_level else "whitespace")
        if pre_tokenizer not in PRE_TOKENIZERS:
            raise ValueError(
                f"pre_tokenizer must be one of {sorted(PRE_TOKENIZERS)}; received {pre_tokenizer!r}"
            )
        pattern = regex.compile(PRE_TOKENIZERS[pre_tokenizer])
        counts = {}
        for text in texts:
            for match in pattern.finditer(text):
                counts[match.group()] = counts.get(match.group(), 0) + 1
        merges, vocabulary = learn_merges(
            counts,
            vocabulary_size=vocabulary_size,
            min_frequency=min_frequency,
            end_of_word=end_of_word,
            end_of_word_attached=end_of_word_attached,
            byte_level=byte_level,
            reserved_tokens=special_tokens,
        )
        return cls(
            vocabulary,
            merges,
            byte_level=byte_level,
            end_of_word=end_of_word,
            end_of_word_attached=end_of_word_attached,
            unknown_token=None if byte_level or not special_tokens else special_tokens[0],
            pre_tokenizer=pre_tokenizer,
            special_tokens=special_tokens,
        )

    @classmethod
    def from_huggingface(cls, path):
        """Loads a BPE `tokenizer.json` written by Hugging Face `tokenizers`.

        Supported: a `BPE` model (with or without `end_of_word_suffix`,
        `continuing_subword_prefix`, `unk_token`, `fuse_unk`, `ignore_merges`); the normalizers
        of `kbert.text.normalizers.NORMALIZERS`, the pre-tokenizers of
        `kbert.text.pre_tokenizers.PRE_TOKENIZERS` and the post-processors of
        `kbert.text.post_processors.POST_PROCESSORS`; added tokens are matched verbatim in the
        original text. Anything else raises, naming it. A file with no normalizer and a plain
        `ByteLevel` (no prefix space, its regex), `Whitespace` or `WhitespaceSplit`
        pre-tokenizer loads as the named pattern, which `GraphBytePairTokenizer` runs in graphs.

        Args:
            path: str or Path. The `tokenizer.json` file.

        Returns:
            `BytePairTokenizer`.

        Raises:
            ValueError: a model, normalizer, pre-tokenizer or post-processor this tokenizer
                cannot reproduce, BPE dropout (random, so no fixed ids to reproduce) or byte
                fallback.
        """
        spec = read_hugging_face_spec(path, "BPE")
        model = spec["model"]
        if model.get("dropout"):
            raise ValueError(f"{path}: BPE dropout {model['dropout']} is random; set it to null")
        if model.get("byte_fallback"):
            raise ValueError(f"{path}: BPE byte_fallback is not supported")
        pre = spec.get("pre_tokenizer") or {"type": "Sequence", "pretokenizers": []}
        byte_level = "ByteLevel" in json.dumps(pre)
        plain = {
            "Whitespace": "whitespace",
            "WhitespaceSplit": "whitespace_split",
            "ByteLevel": "gpt2",
        }.get(pre["type"])
        if pre["type"] == "ByteLevel" and (
            pre.get("add_prefix_space", True) or not pre.get("use_regex", True)
        ):
            plain = None
        pre_tokenizer = plain if plain and spec.get("normalizer") is None else pre
        ids = dict(model["vocab"])
        for added in spec.get("added_tokens") or []:
            ids.setdefault(added["content"], added["id"])
        vocabulary = [None] * len(ids)
        for token, index in ids.items():
            if not 0 <= index < len(ids) or vocabulary[index] is not None:
                raise ValueError(f"{path}: token ids must be 0 … {len(ids) - 1}, each once")
            vocabulary[index] = token
        merges = [
            tuple(merge.split(" ", 1)) if isinstance(merge, str) else tuple(merge)
            for merge in model.get("merges", [])
        ]
        return cls(
            vocabulary,
            merges,
            byte_level=byte_level,
            end_of_word=model.get("end_of_word_suffix") or None,
            end_of_word_attached=True,
            continuing_subword_prefix=model.get("continuing_subword_prefix"),
            unknown_token=model.get("unk_token"),
            fuse_unknown=bool(model.get("fuse_unk")),
            pre_tokenizer=pre_tokenizer,
            special_tokens=[added["content"] for added in spec.get("added_tokens") or []],
            ignore_merges=bool(model.get("ignore_merges")),
            normalizer=spec.get("normalizer"),
            post_processor=spec.get("post_processor"),
        )
