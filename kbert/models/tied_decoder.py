"""The output layer of a language-model head whose weights are the input embedding table."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kbert")
class TiedDecoder(keras.layers.Layer):
    """Vocabulary logits `hidden @ embedding_table^T + bias`, the table passed in at call time.

    Weight tying (Press & Wolf 2017; BERT, GPT-2) reuses the encoder's token table as the output
    matrix, so the layer owns only a per-token bias. The table is a call argument rather than
    a constructor argument so the layer stays serializable: the model that owns both the encoder
    and this layer passes `encoder.embeddings.token_embedding.embeddings` on every call, and
    gradients from the output reach that one table.

    Args:
        vocabulary_size: int. Rows of the embedding table, length of the bias.
        bias_initializer: initializer, default "zeros".

    Call args:
        hidden: float tensor `(..., width)`, where width is the table's embedding width
            (`embedding_dim`, or `hidden_dim` when the encoder does not factorize).
        embedding_table: float tensor or variable `(vocabulary_size, width)`.

    Returns:
        Logits `(..., vocabulary_size)` in the layer's compute dtype.

    Example:
    >>> decoder = TiedDecoder(vocabulary_size=5)
    >>> tuple(decoder(keras.ops.ones((2, 3, 4)), embedding_table=keras.ops.ones((5, 4))).shape)
    (2, 3, 5)
    """

    def __init__(self, vocabulary_size, bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, hidden_shape, embedding_table_shape=None):
        self.bias = self.add_weight(
            shape=(self.vocabulary_size,), initializer=self.bias_initializer, name="bias"
        )
        self.built = True

    def call(self, hidden, embedding_table):
        table_shape = tuple(embedding_table.shape)
        if (
            len(table_shape) != 2
            or table_shape[0] != self.vocabulary_size
            or (hidden.shape[-1] is not None and table_shape[1] != hidden.shape[-1])
        ):
            raise ValueError(
                f"embedding_table must have shape (vocabulary_size={self.vocabulary_size}, "
                f"width={hidden.shape[-1]}) to match hidden; received {table_shape}"
            )
        table = ops.cast(embedding_table, self.compute_dtype)  # (vocab, width)
        logits = ops.matmul(hidden, ops.transpose(table))  # (..., vocab)
        return logits + ops.cast(self.bias, self.compute_dtype)

    def compute_output_shape(self, hidden_shape, embedding_table_shape=None):
        return tuple(hidden_shape[:-1]) + (self.vocabulary_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config
