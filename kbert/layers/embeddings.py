"""Token + segment + learned position embeddings, with BERT's LayerNorm and ALBERT's factorization."""

import keras
from keras import ops

from kbert.layers.dropout import Dropout
from kbert.layers.initializers import clone_initializer


@keras.saving.register_keras_serializable(package="kbert")
class Embeddings(keras.layers.Layer):
    """Sums token, segment and position embeddings, then normalizes, projects and drops out.

    With `embedding_dim` smaller than `hidden_dim` this is ALBERT's factorized embedding
    (Lan et al. 2020): the vocabulary table is `vocabulary_size × embedding_dim` and a Dense
    `projection` maps to `hidden_dim`, so a 30k × 128 table replaces a 30k × 768 one.

    Sublayers: `token_embedding`, `position_embedding`, `segment_embedding` (absent when
    `num_segments == 0`), `norm` (absent when `normalize=False`), `projection` (only when
    factorized). Output heads that tie their weights read `token_embedding.embeddings`.

    Args:
        vocabulary_size: int. Rows of the token table.
        hidden_dim: int. Output width.
        max_sequence_length: int. Rows of the position table; longer inputs raise ValueError.
        num_segments: int, default 2. Rows of the segment table; 0 for none (GPT-style).
        embedding_dim: int, default None (= hidden_dim). Factorized embedding width.
        dropout: float, default 0.1.
        layer_norm_epsilon: float, default 1e-12.
        normalize: bool, default True. BERT normalizes embeddings; pre-LN GPT-2 does not.
        embeddings_initializer: initializer, default TruncatedNormal(stddev=0.02).
        shared_tables: `Embeddings` or None (default). Another layer whose token, position and
            segment tables this one uses instead of its own (ELECTRA ties its generator's
            embeddings to the discriminator's); they must have the same shapes. Not part of
            `get_config`: the model that shares them ties them again when rebuilt.

    Call args:
        token_ids: int tensor `(batch, seq)`.
        segment_ids: int tensor `(batch, seq)`, default None (all zeros).
        training: bool, default None.
        start_position: int scalar, default 0. Position of the first token (for decoding with a
            key/value cache, where one new token sits at the end of a prefix).

    Example:
    >>> layer = Embeddings(vocabulary_size=50, hidden_dim=16, max_sequence_length=8)
    >>> tuple(layer(keras.ops.array([[2, 7, 3]])).shape)
    (1, 3, 16)
    """

    def __init__(
        self,
        vocabulary_size,
        hidden_dim,
        max_sequence_length,
        num_segments=2,
        embedding_dim=None,
        dropout=0.1,
        layer_norm_epsilon=1e-12,
        normalize=True,
        embeddings_initializer=None,
        shared_tables=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.hidden_dim = hidden_dim
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.embedding_dim = embedding_dim
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.normalize = normalize
        self.embeddings_initializer = keras.initializers.get(
            embeddings_initializer or keras.initializers.TruncatedNormal(stddev=0.02)
        )
        width = embedding_dim or hidden_dim
        policy = self.dtype_policy

        def table(rows, name):
            return keras.layers.Embedding(
                rows,
                width,
                embeddings_initializer=clone_initializer(self.embeddings_initializer),
                dtype=policy,
                name=name,
            )

        if shared_tables is None:
            self.token_embedding = table(vocabulary_size, "token_embedding")
            self.position_embedding = table(max_sequence_length, "position_embedding")
            self.segment_embedding = (
                table(num_segments, "segment_embedding") if num_segments else None
            )
        else:
            _check_shared_tables(
                shared_tables, vocabulary_size, width, max_sequence_length, num_segments
            )
            self.token_embedding = shared_tables.token_embedding
            self.position_embedding = shared_tables.position_embedding
            self.segment_embedding = shared_tables.segment_embedding if num_segments else None
        self.norm = (
            keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=policy, name="norm")
            if normalize
            else None
        )
        self.projection = None
        if embedding_dim is not None and embedding_dim != hidden_dim:
            self.projection = keras.layers.Dense(
                hidden_dim,
                kernel_initializer=clone_initializer(self.embeddings_initializer),
                dtype=policy,
                name="projection",
            )
        self.dropout_layer = Dropout(dropout, dtype=policy)

    def build(self, token_ids_shape, segment_ids_shape=None):
        width = self.embedding_dim or self.hidden_dim
        if not self.token_embedding.built:  # shared tables are built by their owner
            self.token_embedding.build(token_ids_shape)
        if not self.position_embedding.built:
            self.position_embedding.build((None,))
        if self.segment_embedding is not None and not self.segment_embedding.built:
            self.segment_embedding.build(token_ids_shape)
        if self.norm is not None:
            self.norm.build(tuple(token_ids_shape) + (width,))
        if self.projection is not None:
            self.projection.build(tuple(token_ids_shape) + (width,))
        self.built = True

    def call(self, token_ids, segment_ids=None, training=None, start_position=0):
        seq = token_ids.shape[1]
        if isinstance(start_position, int) and seq is not None:
            seq = seq + start_position
        if seq is not None and isinstance(seq, int) and seq > self.max_sequence_length:
            raise ValueError(
                f"token_ids has sequence length {seq}, above the position table's "
                f"max_sequence_length={self.max_sequence_length}; truncate the input "
                f"(e.g. a packer with sequence_length <= {self.max_sequence_length})"
            )
        seq = ops.shape(token_ids)[1]
        if not isinstance(start_position, int):
            # Keras turns numeric call arguments into float tensors; positions are integers.
            start_position = ops.cast(start_position, "int32")
        seq = self._checked_length(seq, start_position)
        x = self.token_embedding(token_ids)  # (batch, seq, width)
        table = self.position_embedding.embeddings
        positions = ops.slice(table, (start_position, 0), (seq, ops.shape(table)[1]))
        x = x + ops.cast(positions, x.dtype)[None, :, :]
        if self.segment_embedding is not None:
            if segment_ids is None:
                segment_ids = ops.zeros_like(token_ids)
            x = x + self.segment_embedding(segment_ids)
        if self.norm is not None:
            x = self.norm(x)
        if self.projection is not None:
            x = self.projection(x)
        return self.dropout_layer(x, training=training)

    def _checked_length(self, seq, start_position):
        # Dynamic lengths (unknown when tracing) are checked when the graph runs. The slice of
        # the position table takes its size from the check's output, so the check runs first;
        # otherwise the slice may fail first with a message that does not name the cause.
        if keras.backend.backend() != "tensorflow" or isinstance(seq + start_position, int):
            return seq
        import tensorflow as tf

        check = tf.debugging.assert_less_equal(
            seq + start_position,
            self.max_sequence_length,
            message=(
                f"token_ids sequence length is above the position table's "
                f"max_sequence_length={self.max_sequence_length}"
            ),
        )
        with tf.control_dependencies([check]):
            return tf.identity(seq)

    def compute_output_shape(self, token_ids_shape, segment_ids_shape=None):
        return tuple(token_ids_shape) + (self.hidden_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "hidden_dim": self.hidden_dim,
                "max_sequence_length": self.max_sequence_length,
                "num_segments": self.num_segments,
                "embedding_dim": self.embedding_dim,
                "dropout": self.dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "normalize": self.normalize,
                "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
            }
        )
        return config


def _check_shared_tables(shared, vocabulary_size, width, max_sequence_length, num_segments):
    if not isinstance(shared, Embeddings):
        raise ValueError(
            f"shared_tables must be a kbert Embeddings layer; received {type(shared).__name__}"
        )
    theirs = (
        shared.vocabulary_size,
        shared.embedding_dim or shared.hidden_dim,
        shared.max_sequence_length,
    )
    if theirs != (vocabulary_size, width, max_sequence_length):
        raise ValueError(
            f"shared_tables must match this layer's (vocabulary_size, embedding width, "
            f"max_sequence_length) = {(vocabulary_size, width, max_sequence_length)}; "
            f"received a layer with {theirs}"
        )
    if num_segments and shared.num_segments != num_segments:
        raise ValueError(
            f"shared_tables must have num_segments={num_segments}; received a layer with "
            f"{shared.num_segments}"
        )
