"""Raw text in, BERT encoder inputs out: a graph tokenizer followed by an `InputPacker`.

The tokenizer is a `WordPieceTokenizer`, a `SentencePieceTokenizer` (a unigram model) or a
`GraphBytePairTokenizer` (BPE).

Like its two parts it holds only core TensorFlow ops plus classic tf-text ops that TF Serving's
tensorflow-text 2.12 knows (see `wordpiece_tokenizer.py` and `input_packer.py`), so it can sit
inside an exported serving graph as well as in a tf.data pipeline.
"""

import keras
import tensorflow as tf

from kbert.text.graph_tokenizers import packing_tokenizer
from kbert.text.input_packer import InputPacker
from kbert.text.wordpiece_tokenizer import WordPieceTokenizer, as_texts

_ALIGNMENT_KEYS = ("word_ids", "start_offsets", "end_offsets")


@keras.saving.register_keras_serializable(package="kbert")
class BertPreprocessor(keras.layers.Layer):
    """Tokenizes one text or a pair of texts and packs them into encoder inputs.

    Args:
        tokenizer: `WordPieceTokenizer` or `SentencePieceTokenizer` (the unigram model in the
            graph), or its serialized form (as in `get_config()`). Must have
            `cls_token`, `sep_token` and `pad_token`.
        sequence_length: int, default 128. Length of every packed row.
        truncation: str, default "longest_first". How a pair is cut to fit; see `InputPacker`.
        return_alignment: bool, default False. Also return the packed `word_ids`,
            `start_offsets` and `end_offsets` (-1 at special and padding positions), to map
            tokens back to words (BIO labels) or characters (QA answers).
        **kwargs: passed to `keras.layers.Layer`.

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "!"]
    >>> preprocessor = BertPreprocessor(WordPieceTokenizer(vocabulary), sequence_length=8)
    >>> preprocessor(["Hello world!"])["token_ids"].numpy().tolist()
    [[2, 5, 6, 7, 3, 0, 0, 0]]
    >>> preprocessor((["Hello"], ["world!"]))["segment_ids"].numpy().tolist()
    [[0, 0, 0, 1, 1, 1, 0, 0]]
    """

    # String and ragged ops have no XLA kernels: jit_compile="auto" then leaves XLA off.
    supports_jit = False

    def __init__(
        self,
        tokenizer,
        sequence_length=128,
        truncation="longest_first",
        return_alignment=False,
        **kwargs,
    ):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        # Strings and tuples of strings pass through untouched (Keras would convert them).
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        tokenizer = packing_tokenizer(tokenizer)
        if return_alignment and not isinstance(tokenizer, WordPieceTokenizer):
            raise ValueError(
                "return_alignment needs a WordPieceTokenizer (word ids and character offsets); "
                f"received {type(tokenizer).__name__}"
            )
        self.tokenizer = tokenizer
        self.packer = InputPacker(
            sequence_length=sequence_length,
            start_token_id=tokenizer.cls_token_id,
            end_token_id=tokenizer.sep_token_id,
            pad_token_id=tokenizer.pad_token_id,
            truncation=truncation,
        )
        self.sequence_length = sequence_length
        self.truncation = truncation
        self.return_alignment = bool(return_alignment)
        self.built = True

    def _texts(self, inputs):
        # A tuple holds segments; anything else (str, list of str, tensor) is one segment.
        segments = list(inputs) if isinstance(inputs, tuple) else [inputs]
        if len(segments) not in (1, 2):
            raise ValueError(
                f"expected texts or a tuple (texts_a, texts_b); received a tuple of {len(segments)}"
            )
        segments = [as_texts(segment) for segment in segments]
        ranks = [segment.shape.rank for segment in segments]
        if len(set(ranks)) != 1:
            raise ValueError(
                "the two texts of a pair must both be single strings or both be batches; "
                f"received ranks {ranks}"
            )
        if len(segments) == 2 and ranks[0] == 1:
            sizes = [segment.shape[0] for segment in segments]
            if None not in sizes and sizes[0] != sizes[1]:
                raise ValueError(
                    f"the two batches of a pair must have the same size; received {sizes[0]} "
                    f"and {sizes[1]} texts"
                )
        return segments

    def tokenize(self, texts):
        """Tokenizes texts into ids (without special tokens), as `WordPieceTokenizer` does.

        Args:
            texts: str, list of str, or a string tensor of rank 0 or 1.

        Returns:
            A 1-D int32 tensor for one text, an int32 `tf.RaggedTensor` (batch, None) for a batch.

        Example:
        >>> preprocessor.tokenize(["Hello world!"]).to_list()
        [[5, 6, 7]]
        """
        return self.tokenizer(texts)

    def pack(self, segments, alignments=None):
        """Packs already tokenized segments, as `InputPacker` does.

        Args:
            segments: ids of one segment, or a tuple of two (ragged (batch, None) or 1-D).
            alignments: optional dict (or tuple of two dicts) of tensors aligned with the ids.

        Returns:
            The dict of `InputPacker.call`.

        Example:
        >>> preprocessor.pack(tf.ragged.constant([[5, 6]]))["token_ids"].numpy().tolist()
        [[2, 5, 6, 3, 0, 0, 0, 0]]
        """
        return self.packer(segments, alignments=alignments)

    @tf.autograph.experimental.do_not_convert  # no tensor-dependent Python control flow
    def call(self, inputs):
        """Turns texts into encoder inputs.

        Args:
            inputs: texts (str, list of str, or string tensor of rank 0 or 1), or a tuple
                `(texts_a, texts_b)` of two such with the same batch size.

        Returns:
            A dict of int32 tensors shaped (batch, sequence_length) (or (sequence_length,) for a
            single string): `token_ids`, `segment_ids`, `padding_mask`, and with
            `return_alignment` also `word_ids`, `start_offsets`, `end_offsets`.
        """
        segments = self._texts(inputs)
        if not self.return_alignment:
            ids = tuple(self.tokenizer(segment) for segment in segments)
            return self.packer(ids)
        tokenized = [self.tokenizer.tokenize_with_alignment(segment) for segment in segments]
        ids = tuple(t["token_ids"] for t in tokenized)
        alignments = tuple({key: t[key] for key in _ALIGNMENT_KEYS} for t in tokenized)
        return self.packer(ids, alignments=alignments)

    def compute_output_spec(self, inputs):
        first = inputs[0] if isinstance(inputs, tuple) else inputs
        shape = tuple(getattr(first, "shape", (None,)))
        leading = shape[:1]
        names = ["token_ids", "segment_ids", "padding_mask"]
        if self.return_alignment:
            names += list(_ALIGNMENT_KEYS)
        return {
            name: keras.KerasTensor(leading + (self.sequence_length,), dtype="int32")
            for name in names
        }

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
                "sequence_length": self.sequence_length,
                "truncation": self.truncation,
                "return_alignment": self.return_alignment,
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["tokenizer"] = keras.saving.deserialize_keras_object(config["tokenizer"])
        return cls(**config)
