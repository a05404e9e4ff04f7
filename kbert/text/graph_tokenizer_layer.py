"""What the graph tokenizers that reproduce a Python tokenizer share.

`SentencePieceTokenizer` (a `UnigramTokenizer` through SentencePiece's ops) and
`GraphBytePairTokenizer` (a `BytePairTokenizer` in core ops) hold their Python tokenizer as
`reference`: the vocabulary, the role tokens and their ids come from it, and the graph ops
compute what it computes. This base makes them Keras layers of the same shape as
`WordPieceTokenizer` (no weights, int32 ids, text in), so `BertPreprocessor` and the exporter
read the same attributes from each.
"""

import keras
import tensorflow as tf


class GraphTokenizerLayer(keras.layers.Layer):
    """A tokenizer layer of graph ops that computes what its Python `reference` computes.

    Subclasses set `self.reference` (a tokenizer with `vocabulary_size`, `id_to_token`,
    `token_to_id`, `role_config` and the role ids) before calling `_adopt_roles()`, and define
    `call`, `get_vocabulary`, `unknown_token_id` and `get_config`.
    """

    # String and ragged ops have no XLA kernels: jit_compile="auto" then leaves XLA off.
    supports_jit = False

    def __init__(self, **kwargs):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("dtype", "int32")
        super().__init__(**kwargs)
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True

    def _adopt_roles(self, vocabulary_source):
        """The reference's role tokens become this layer's attributes (`pad_token`, ...)."""
        for role, token in self.reference.role_config().items():
            setattr(self, role, token)
        self.vocabulary_source = vocabulary_source

    def vocabulary_size(self):
        """Number of tokens."""
        return self.reference.vocabulary_size()

    def id_to_token(self, token_id):
        """The token of `token_id`."""
        return self.reference.id_to_token(token_id)

    def token_to_id(self, token):
        """The id of `token`; raises if it is not a token (as `WordPieceTokenizer` does)."""
        token_id = self.reference.token_to_id(token)
        if token_id is None:
            raise ValueError(f"token {token!r} is not in the vocabulary ({self.vocabulary_source})")
        return token_id

    pad_token_id = property(lambda self: self.reference.pad_token_id, doc="int or None.")
    cls_token_id = property(lambda self: self.reference.cls_token_id, doc="int or None.")
    sep_token_id = property(lambda self: self.reference.sep_token_id, doc="int or None.")
    mask_token_id = property(lambda self: self.reference.mask_token_id, doc="int or None.")
    special_token_ids = property(lambda self: self.reference.special_token_ids, doc="list of int.")

    def tokenize(self, inputs):
        """Same as calling the layer."""
        return self(inputs)

    @staticmethod
    def _id_batch(token_ids, dtype):
        """`(ids, single)`: `token_ids` (a tensor, ragged tensor or nested list; 1-D for one
        text, 2-D for a batch) as a `dtype` `tf.RaggedTensor` batch, and whether it was 1-D."""
        if not isinstance(token_ids, (tf.Tensor, tf.RaggedTensor)):
            token_ids = tf.ragged.constant(token_ids, dtype=dtype)
        token_ids = tf.cast(token_ids, dtype)
        single = token_ids.shape.rank == 1
        if single:
            token_ids = token_ids[tf.newaxis]
        if not isinstance(token_ids, tf.RaggedTensor):
            token_ids = tf.RaggedTensor.from_tensor(token_ids)
        return token_ids, single

    def compute_output_spec(self, inputs):
        shape = getattr(inputs, "shape", None)
        if shape is not None and len(shape) == 0:
            return keras.KerasTensor((None,), dtype="int32")
        return keras.KerasTensor(
            (None if shape is None else shape[0], None), dtype="int32", ragged=True
        )
