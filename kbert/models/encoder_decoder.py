"""A T5-style encoder-decoder transformer (Raffel et al. 2020; textbook §20.10, J&M §11.4.1).

T5 casts every task as text in, text out: an encoder reads the input, a decoder writes the
output one token at a time, attending to its own past (causal self-attention) and to every
encoder position (cross-attention). Its choices, kept here:

- no position embeddings: a learned scalar bias per head and bucketed relative distance is added
  to the attention logits, one table for the encoder and one for the decoder's self-attention,
  shared by all layers of that stack (`kbert.layers.RelativePositionBias`);
- pre-norm residual blocks with RMS normalization (`kbert.layers.RMSNorm`), no biases in any
  projection, and no 1/√d scaling of attention logits (folded into the initialization);
- one token embedding shared by encoder, decoder and (tied) output; tied logits are scaled by
  1/√hidden_dim, as in T5 v1.0.

Decoding (`generate`) keeps a key/value cache for the decoder's self-attention and computes the
cross-attention keys and values of the encoder outputs once; greedy, beam search (with length
penalty), top-k and nucleus sampling.
"""

import keras
import numpy as np
from keras import ops

from kbert.checks import check_int
from kbert.layers.dropout import Dropout
from kbert.layers.masks import attention_bias
from kbert.layers.relative_position_bias import RelativePositionBias
from kbert.layers.rms_norm import RMSNorm
from kbert.models import pretraining_utils
from kbert.models.pretraining_utils import IGNORE_INDEX

INPUTS = ("encoder_token_ids", "encoder_padding_mask", "decoder_token_ids", "decoder_padding_mask")

PRESETS = {
    # For tests: tiny shapes.
    "tiny": {
        "vocabulary_size": 100,
        "hidden_dim": 32,
        "num_heads": 2,
        "intermediate_dim": 64,
        "num_encoder_layers": 2,
        "num_decoder_layers": 2,
    },
    # T5-small's shape (60M parameters with its 32,128-token vocabulary).
    "t5_small": {
        "vocabulary_size": 32128,
        "hidden_dim": 512,
        "num_heads": 8,
        "intermediate_dim": 2048,
        "num_encoder_layers": 6,
        "num_decoder_layers": 6,
    },
}


def _dense(units, std, name, dtype=None):
    return keras.layers.Dense(
        units,
        use_bias=False,
        kernel_initializer=keras.initializers.RandomNormal(stddev=std),
        name=name,
        dtype=dtype,
    )


@keras.saving.register_keras_serializable(package="kbert")
class T5Attention(keras.layers.Layer):
    """Multi-head attention without biases or logit scaling, with an additive bias input.

    Call args:
        x: `(batch, query, hidden)`.
        context: `(batch, key, hidden)` or None (self-attention over `x`).
        bias: tensor broadcastable to `(batch, heads, query, key)` or None: relative position
            biases plus masks (`kbert.layers.masks.MASK_VALUE` where not allowed).
    """

    def __init__(self, num_heads, hidden_dim, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if hidden_dim % num_heads:
            raise ValueError(
                f"hidden_dim must be divisible by num_heads; received {hidden_dim}, {num_heads}"
            )
        self.num_heads, self.hidden_dim, self.dropout = num_heads, hidden_dim, dropout
        self.head_dim = hidden_dim // num_heads
        scale = hidden_dim**-0.5
        # The sublayers compute in this layer's dtype policy (a mixed `dtype` given to it alone).
        policy = self.dtype_policy
        self.query = _dense(hidden_dim, scale * self.head_dim**-0.5, "query", policy)
        self.key = _dense(hidden_dim, scale, "key", policy)
        self.value = _dense(hidden_dim, scale, "value", policy)
        self.output_dense = _dense(hidden_dim, hidden_dim**-0.5, "output", policy)
        self.dropout_layer = Dropout(dropout, dtype=policy)

    def build(self, x_shape, context_shape=None):
        for dense in (self.query, self.key, self.value, self.output_dense):
            dense.build((None, None, self.hidden_dim))
        self.built = True

    def _heads(self, x):
        shape = ops.shape(x)
        x = ops.reshape(x, (shape[0], shape[1], self.num_heads, self.head_dim))
        return ops.transpose(x, (0, 2, 1, 3))  # (batch, heads, seq, head_dim)

    def project_key_value(self, context):
        """Keys and values `(batch, heads, key, head_dim)` of `context` (cached when decoding)."""
        return self._heads(self.key(context)), self._heads(self.value(context))

    def call(self, x, context=None, bias=None, training=None):
        key, value = self.project_key_value(x if context is None else context)
        return self.attend(x, key, value, bias, training)

    def attend(self, x, key, value, bias=None, training=None):
        """Attention of `x`'s queries over given keys and values."""
        query = self._heads(self.query(x))
        scores = ops.matmul(
            ops.cast(query, "float32"), ops.transpose(ops.cast(key, "float32"), (0, 1, 3, 2))
        )  # (batch, heads, query, key)
        if bias is not None:
            scores = scores + ops.cast(bias, "float32")
        weights = self.dropout_layer(ops.softmax(scores, axis=-1), training=training)
        mixed = ops.matmul(ops.cast(weights, value.dtype), value)  # (batch, heads, query, dim)
        shape = ops.shape(mixed)
        mixed = ops.reshape(ops.transpose(mixed, (0, 2, 1, 3)), (shape[0], shape[2], -1))
        return self.output_dense(mixed)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "hidden_dim": self.hidden_dim,
            "dropout": self.dropout,
        }


def _padding_bias(padding_mask):
    """`(batch, 1, 1, key)`: 0 on real keys, `kbert.layers.masks.MASK_VALUE` on padding."""
    return attention_bias(padding_mask=padding_mask)


@keras.saving.register_keras_serializable(package="kbert")
class EncoderDecoder(keras.Model):
    """A T5-style encoder-decoder with tied embeddings, trained by teacher forcing.

    Inputs (dict): `encoder_token_ids`, `encoder_padding_mask` `(batch, source)`,
    `decoder_token_ids`, `decoder_padding_mask` `(batch, target)` (the targets shifted right,
    starting with `decoder_start_id`). Output: logits `(batch, target, vocabulary_size)`.
    Labels: target ids `(batch, target)`, -100 where not scored.

    Args:
        vocabulary_size, hidden_dim, num_heads, intermediate_dim: int. Sizes.
        num_encoder_layers, num_decoder_layers: int.
        dropout: float, default 0.1.
        num_buckets: int, default 32. Relative position buckets.
        max_distance: int, default 128.
        tie_embeddings: bool, default True. Output logits from the shared embedding (scaled by
            1/√hidden_dim); False gives a separate output matrix.
        decoder_start_id: int, default 0 (T5 starts decoding from the padding id).

    Example:
    >>> model = EncoderDecoder.from_preset("tiny")
    >>> x = {"encoder_token_ids": np.ones((2, 5), "int32"),
    ...      "encoder_padding_mask": np.ones((2, 5), "int32"),
    ...      "decoder_token_ids": np.ones((2, 3), "int32"),
    ...      "decoder_padding_mask": np.ones((2, 3), "int32")}
    >>> tuple(model(x).shape)
    (2, 3, 100)
    """

    def __init__(
        self,
        vocabulary_size,
        hidden_dim,
        num_heads,
        intermediate_dim,
        num_encoder_layers,
        num_decoder_layers,
        dropout=0.1,
        num_buckets=32,
        max_distance=128,
        tie_embeddings=True,
        decoder_start_id=0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        for name, value in (
            ("vocabulary_size", vocabulary_size),
            ("hidden_dim", hidden_dim),
            ("num_heads", num_heads),
            ("intermediate_dim", intermediate_dim),
            ("num_encoder_layers", num_encoder_layers),
            ("num_decoder_layers", num_decoder_layers),
        ):
            check_int(name, value, minimum=1, expected="an integer >= 1")
        self.vocabulary_size, self.hidden_dim = vocabulary_size, hidden_dim
        self.num_heads, self.intermediate_dim = num_heads, intermediate_dim
        self.num_encoder_layers, self.num_decoder_layers = num_encoder_layers, num_decoder_layers
        self.dropout, self.num_buckets, self.max_distance = dropout, num_buckets, max_distance
        self.tie_embeddings, self.decoder_start_id = bool(tie_embeddings), decoder_start_id

        self.token_embedding = keras.layers.Embedding(
            vocabulary_size,
            hidden_dim,
            embeddings_initializer=keras.initializers.RandomNormal(stddev=1.0),
            name="token_embedding",
        )
        self.encoder_position_bias = RelativePositionBias(
            num_heads, True, num_buckets, max_distance, name="encoder_position_bias"
        )
        self.decoder_position_bias = RelativePositionBias(
            num_heads, False, num_buckets, max_distance, name="decoder_position_bias"
        )
        self.encoder_blocks = [
            self._block(f"encoder_{i}", cross=False) for i in range(num_encoder_layers)
        ]
        self.decoder_blocks = [
            self._block(f"decoder_{i}", cross=True) for i in range(num_decoder_layers)
        ]
        self.encoder_norm = RMSNorm(name="encoder_final_norm")
        self.decoder_norm = RMSNorm(name="decoder_final_norm")
        self.dropout_layer = Dropout(dropout)
        self.output_dense = (
            None if self.tie_embeddings else _dense(vocabulary_size, hidden_dim**-0.5, "output")
        )
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.accuracy_tracker = keras.metrics.Mean(name="token_accuracy")

    def _block(self, prefix, cross):
        """The sublayers of one block, as a dict of layers (tracked by Keras)."""
        block = {
            "self_norm": RMSNorm(name=f"{prefix}_self_norm"),
            "self_attention": T5Attention(
                self.num_heads, self.hidden_dim, self.dropout, name=f"{prefix}_self_attention"
            ),
            "ffn_norm": RMSNorm(name=f"{prefix}_ffn_norm"),
            "ffn_in": _dense(self.intermediate_dim, self.hidden_dim**-0.5, f"{prefix}_ffn_in"),
            "ffn_out": _dense(self.hidden_dim, self.intermediate_dim**-0.5, f"{prefix}_ffn_out"),
        }
        if cross:
            block["cross_norm"] = RMSNorm(name=f"{prefix}_cross_norm")
            block["cross_attention"] = T5Attention(
                self.num_heads, self.hidden_dim, self.dropout, name=f"{prefix}_cross_attention"
            )
        return block

    @classmethod
    def from_preset(cls, name, **changes):
        """A model of a named shape (`PRESETS`: "tiny", "t5_small"), with `changes` applied."""
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {sorted(PRESETS)}; received {name!r}")
        return cls(**{**PRESETS[name], **changes})

    @property
    def metrics(self):
        return [self.loss_tracker, self.accuracy_tracker]

    def _residual(self, x, sublayer_output, training):
        return x + self.dropout_layer(sublayer_output, training=training)

    def _feed_forward(self, block, x, training):
        hidden = ops.relu(block["ffn_in"](block["ffn_norm"](x)))
        return self._residual(
            x, block["ffn_out"](self.dropout_layer(hidden, training=training)), training
        )

    def encode(self, token_ids, padding_mask, training=None):
        """Encoder outputs `(batch, source, hidden)`."""
        x = self.dropout_layer(self.token_embedding(token_ids), training=training)
        length = ops.shape(token_ids)[1]
        bias = self.encoder_position_bias(query_length=length, key_length=length)
        bias = bias + _padding_bias(padding_mask)  # (batch, heads, source, source)
        for block in self.encoder_blocks:
            attended = block["self_attention"](block["self_norm"](x), bias=bias, training=training)
            x = self._feed_forward(block, self._residual(x, attended, training), training)
        return self.dropout_layer(self.encoder_norm(x), training=training)

    def decode(self, token_ids, padding_mask, encoded, encoder_padding_mask, training=None):
        """Decoder outputs `(batch, target, hidden)` given the encoder's outputs."""
        x = self.dropout_layer(self.token_embedding(token_ids), training=training)
        length = ops.shape(token_ids)[1]
        self_bias = self.decoder_position_bias(
            query_length=length, key_length=length
        ) + attention_bias(padding_mask=padding_mask, causal=True)
        cross_bias = _padding_bias(encoder_padding_mask)
        for block in self.decoder_blocks:
            attended = block["self_attention"](
                block["self_norm"](x), bias=self_bias, training=training
            )
            x = self._residual(x, attended, training)
            crossed = block["cross_attention"](
                block["cross_norm"](x), context=encoded, bias=cross_bias, training=training
            )
            x = self._feed_forward(block, self._residual(x, crossed, training), training)
        return self.dropout_layer(self.decoder_norm(x), training=training)

    def logits(self, hidden):
        """Vocabulary logits from decoder outputs."""
        if self.output_dense is not None:
            return self.output_dense(hidden)
        table = ops.cast(self.token_embedding.embeddings, hidden.dtype)
        return ops.matmul(hidden * self.hidden_dim**-0.5, ops.transpose(table))

    def call(self, x, training=None):
        missing = [name for name in INPUTS if name not in x]
        if missing:
            raise ValueError(f"EncoderDecoder inputs lack {missing}; expected {INPUTS}")
        encoded = self.encode(x["encoder_token_ids"], x["encoder_padding_mask"], training)
        hidden = self.decode(
            x["decoder_token_ids"],
            x["decoder_padding_mask"],
            encoded,
            x["encoder_padding_mask"],
            training,
        )
        return self.logits(hidden)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y is None:
            raise ValueError("EncoderDecoder needs the target ids as y (-100 where not scored)")
        targets = ops.cast(y, "int32")
        scored = ops.cast(ops.not_equal(targets, IGNORE_INDEX), "float32")
        nll = pretraining_utils.sparse_cross_entropy(ops.maximum(targets, 0), y_pred)
        loss = pretraining_utils.weighted_mean(nll, scored)
        correct = pretraining_utils.predicted_correctly(ops.maximum(targets, 0), y_pred)
        self.loss_tracker.update_state(loss)
        self.accuracy_tracker.update_state(pretraining_utils.weighted_mean(correct, scored))
        return pretraining_utils.with_regularization(self, loss)

    # === Decoding ===
    # Written in `keras.ops` on tensors, with Python loops over the (static) number of new
    # tokens: the same code runs eagerly and inside a traced `tf.function`, so an exported
    # `generate` signature decodes exactly as the Keras model does.

    def ensure_built(self):
        """Builds the weights (through `__call__` on a 1-token input) if the model has not been
        called yet: decoding calls its parts directly, and `count_params` needs them."""
        if not self.built:
            ones = np.ones((1, 1), "int32")
            self(
                {
                    "encoder_token_ids": ones,
                    "encoder_padding_mask": ones,
                    "decoder_token_ids": ones,
                    "decoder_padding_mask": ones,
                }
            )

    @staticmethod
    def source_padding_mask(encoder_token_ids):
        """`(batch, source)` int32: 1 on real tokens. Id 0 is padding (T5's); the first
        position always counts, so an empty source still has one key to attend to."""
        real = ops.not_equal(encoder_token_ids, 0)
        first = ops.expand_dims(ops.equal(ops.arange(ops.shape(encoder_token_ids)[1]), 0), 0)
        return ops.cast(ops.logical_or(real, first), "int32")

    def start_state(self, encoder_token_ids):
        """What decoding needs from the source: per decoder block, the cross-attention keys
        and values of the encoder outputs (computed once), empty self-attention caches, the
        source padding bias, and the position (0)."""
        self.ensure_built()
        encoder_token_ids = ops.convert_to_tensor(encoder_token_ids, "int32")
        padding = self.source_padding_mask(encoder_token_ids)
        encoded = self.encode(encoder_token_ids, padding, training=False)
        batch, head_dim = ops.shape(encoder_token_ids)[0], self.hidden_dim // self.num_heads
        empty = ops.zeros((batch, self.num_heads, 0, head_dim), encoded.dtype)
        return {
            "position": 0,
            "self": [(empty, empty) for _ in self.decoder_blocks],
            "cross": [
                block["cross_attention"].project_key_value(encoded) for block in self.decoder_blocks
            ],
            "cross_bias": _padding_bias(padding),
        }

    def decode_step(self, token_ids, state):
        """One decoding step with the key/value caches: logits `(batch, vocabulary)` for the
        token after `token_ids` `(batch,)` (at `state["position"]`), and the next state."""
        token_ids = ops.convert_to_tensor(token_ids, "int32")
        x = self.token_embedding(ops.expand_dims(token_ids, 1))  # (batch, 1, hidden)
        position = state["position"]
        self_bias = self.decoder_position_bias(
            query_length=1, key_length=position + 1, query_offset=position
        )  # (1, heads, 1, position + 1): only the past, so no future mask is needed
        caches = []
        for block, (keys, values), (cross_keys, cross_values) in zip(
            self.decoder_blocks, state["self"], state["cross"], strict=True
        ):
            normed = block["self_norm"](x)
            key, value = block["self_attention"].project_key_value(normed)
            keys = ops.concatenate([keys, key], axis=2)  # (batch, heads, position + 1, dim)
            values = ops.concatenate([values, value], axis=2)
            caches.append((keys, values))
            x = x + block["self_attention"].attend(normed, keys, values, self_bias)
            crossed = block["cross_attention"].attend(
                block["cross_norm"](x), cross_keys, cross_values, state["cross_bias"]
            )
            x = self._feed_forward(block, x + crossed, training=False)
        logits = self.logits(self.decoder_norm(x))[:, 0, :]
        return ops.cast(logits, "float32"), {**state, "position": position + 1, "self": caches}

    @staticmethod
    def _reorder(state, rows):
        """`state` with its batch rows taken in the order `rows` (beam search)."""
        take = lambda tensor: ops.take(tensor, rows, axis=0)  # noqa: E731
        return {
            "position": state["position"],
            "self": [(take(k), take(v)) for k, v in state["self"]],
            "cross": [(take(k), take(v)) for k, v in state["cross"]],
            "cross_bias": take(state["cross_bias"]),
        }

    def generate(
        self,
        encoder_token_ids,
        max_new_tokens,
        strategy="greedy",
        end_id=None,
        num_beams=4,
        length_penalty=1.0,
        temperature=1.0,
        top_k=50,
        top_p=0.9,
        seed=None,
    ):
        """Decodes with the key/value caches: `(batch, 1 + max_new_tokens)` int32 numpy ids
        starting with `decoder_start_id` (after `end_id`, a row repeats it).

        Args:
            encoder_token_ids: int array `(batch, source)`, 0 for padding.
            max_new_tokens: int >= 1.
            strategy: "greedy", "beam", "top_k" or "top_p".
            end_id: int or None. Ends a sequence.
            num_beams: int, default 4 (beam search).
            length_penalty: float, default 1.0. Beam hypotheses are ranked by total log
                probability / length^length_penalty (0: no normalization).
            temperature, top_k, top_p: sampling settings (`kbert.models.text_generator`).
            seed: int or None. For sampling.
        """
        from kbert.models.text_generator import filter_logits

        self._check_decoding(max_new_tokens, end_id)
        if strategy not in ("greedy", "beam", "top_k", "top_p"):
            raise ValueError(
                f"strategy must be greedy, beam, top_k or top_p; received {strategy!r}"
            )
        if strategy == "beam":
            return np.asarray(
                self.beam_search(
                    encoder_token_ids, max_new_tokens, num_beams, length_penalty, end_id
                )
            )
        if strategy == "greedy":
            return np.asarray(self.greedy_search(encoder_token_ids, max_new_tokens, end_id))
        filter_logits(np.zeros((1, 2)), strategy, temperature, top_k, top_p)  # validate
        rng = np.random.default_rng(seed)
        state = self.start_state(encoder_token_ids)
        batch = len(np.asarray(encoder_token_ids))
        output = np.full((batch, 1), self.decoder_start_id, "int32")
        finished = np.zeros(batch, bool)
        for _ in range(max_new_tokens):
            logits, state = self.decode_step(output[:, -1], state)
            filtered = np.asarray(filter_logits(logits, strategy, temperature, top_k, top_p))
            probabilities = np.exp(filtered - filtered.max(-1, keepdims=True))
            probabilities /= probabilities.sum(-1, keepdims=True)
            next_ids = np.array([rng.choice(len(p), p=p) for p in probabilities])
            if end_id is not None:
                next_ids = np.where(finished, end_id, next_ids)
                finished |= next_ids == end_id
            output = np.concatenate([output, next_ids[:, None].astype("int32")], axis=1)
        return output

    def _check_decoding(self, max_new_tokens, end_id):
        max_new_tokens = check_int(
            "max_new_tokens", max_new_tokens, minimum=1, expected="an integer >= 1"
        )
        if end_id is not None and (
            not isinstance(end_id, (int, np.integer)) or not 0 <= end_id < self.vocabulary_size
        ):
            raise ValueError(
                f"end_id must be None or a token id in [0, {self.vocabulary_size}); "
                f"received {end_id!r}"
            )

    def greedy_search(self, encoder_token_ids, max_new_tokens, end_id=None):
        """Greedy decoding as tensors: `(batch, 1 + max_new_tokens)` int32, traceable."""
        self._check_decoding(max_new_tokens, end_id)
        state = self.start_state(encoder_token_ids)
        batch = ops.shape(state["cross_bias"])[0]
        sequences = ops.full((batch, 1), self.decoder_start_id, "int32")
        finished = ops.zeros((batch,), "bool")
        for _ in range(max_new_tokens):
            logits, state = self.decode_step(sequences[:, -1], state)
            next_ids = ops.cast(ops.argmax(logits, axis=-1), "int32")
            if end_id is not None:
                next_ids = ops.where(finished, end_id, next_ids)
                finished = ops.logical_or(finished, ops.equal(next_ids, end_id))
            sequences = ops.concatenate([sequences, ops.expand_dims(next_ids, 1)], axis=1)
        return sequences

    def beam_search(
        self, encoder_token_ids, max_new_tokens, num_beams=4, length_penalty=1.0, end_id=None
    ):
        """Beam search as tensors: the best of `num_beams` hypotheses per row,
        `(batch, 1 + max_new_tokens)` int32, traceable (an exported `generate` runs it).

        Hypotheses are ranked by total log probability / (generated tokens)^length_penalty,
        end_id counted; a finished hypothesis continues with end_id at no cost.
        """
        self._check_decoding(max_new_tokens, end_id)
        num_beams = check_int("num_beams", num_beams, minimum=1, expected="an integer >= 1")
        if not isinstance(length_penalty, (int, float)) or length_penalty < 0:
            raise ValueError(f"length_penalty must be a number >= 0; received {length_penalty!r}")
        sources = ops.repeat(ops.convert_to_tensor(encoder_token_ids, "int32"), num_beams, axis=0)
        state = self.start_state(sources)
        rows = ops.shape(sources)[0]  # batch × beams
        batch = rows // num_beams
        vocabulary = self.vocabulary_size
        first = ops.arange(batch, dtype="int32") * num_beams  # each row's first beam
        sequences = ops.full((rows, 1), self.decoder_start_id, "int32")
        # Every beam of a row starts identical: only the first may expand at step one.
        start_scores = ops.convert_to_tensor([0.0] + [-np.inf] * (num_beams - 1), "float32")
        scores = ops.tile(start_scores, (batch,))  # (rows,)
        lengths = ops.zeros((rows,), "float32")  # generated tokens, end_id included
        finished = ops.zeros((rows,), "bool")
        if end_id is not None:
            only_end = ops.where(
                ops.equal(ops.arange(vocabulary), end_id), 0.0, -np.inf
            )  # (vocabulary,): a finished beam's continuation
        for _ in range(max_new_tokens):
            logits, state = self.decode_step(sequences[:, -1], state)
            log_probs = ops.log_softmax(logits, axis=-1)  # (rows, vocabulary)
            if end_id is not None:
                log_probs = ops.where(finished[:, None], only_end[None, :], log_probs)
            candidates = ops.reshape(scores[:, None] + log_probs, (batch, num_beams * vocabulary))
            grown = lengths + ops.cast(ops.logical_not(finished), "float32")  # (rows,)
            grown = ops.reshape(
                ops.broadcast_to(grown[:, None], (rows, vocabulary)),
                (batch, num_beams * vocabulary),  # not -1: a batch may be empty
            )
            rank = candidates / ops.power(ops.maximum(grown, 1.0), float(length_penalty))
            _, best = ops.top_k(rank, num_beams)  # (batch, beams), ties to the lower index
            best = ops.cast(best, "int32")
            parents = ops.reshape(best // vocabulary + first[:, None], (-1,))  # (rows,)
            tokens = ops.reshape(best % vocabulary, (-1,))
            scores = ops.reshape(ops.take_along_axis(candidates, best, axis=1), (-1,))
            lengths = ops.take(lengths, parents) + ops.cast(
                ops.logical_not(ops.take(finished, parents)), "float32"
            )
            finished = ops.take(finished, parents)
            if end_id is not None:
                finished = ops.logical_or(finished, ops.equal(tokens, end_id))
            sequences = ops.concatenate(
                [ops.take(sequences, parents, axis=0), ops.expand_dims(tokens, 1)], axis=1
            )
            state = self._reorder(state, parents)
        ranked = ops.reshape(
            scores / ops.power(ops.maximum(lengths, 1.0), float(length_penalty)),
            (batch, num_beams),
        )
        winners = ops.cast(ops.argmax(ranked, axis=1), "int32") + first
        return ops.take(sequences, winners, axis=0)

    def generate_by_recomputation(self, encoder_token_ids, max_new_tokens, end_id=None):
        """Greedy decoding that reruns the decoder over the whole prefix at every step: the
        reference `generate` (with its caches) must equal."""
        self.ensure_built()
        encoder_token_ids = np.asarray(encoder_token_ids, "int32")
        padding = np.asarray(self.source_padding_mask(encoder_token_ids))
        encoded = self.encode(encoder_token_ids, padding, training=False)
        output = np.full((len(encoder_token_ids), 1), self.decoder_start_id, "int32")
        finished = np.zeros(len(encoder_token_ids), bool)
        for _ in range(max_new_tokens):
            hidden = self.decode(output, np.ones_like(output), encoded, padding, training=False)
            next_ids = np.asarray(ops.argmax(self.logits(hidden[:, -1:, :]), axis=-1))[:, 0]
            if end_id is not None:
                next_ids = np.where(finished, end_id, next_ids)
                finished |= next_ids == end_id
            output = np.concatenate([output, next_ids[:, None].astype("int32")], axis=1)
            if end_id is not None and finished.all():
                break
        return output

    def get_config(self):
        return {
            "vocabulary_size": self.vocabulary_size,
            "hidden_dim": self.hidden_dim,
            "num_heads": self.num_heads,
            "intermediate_dim": self.intermediate_dim,
            "num_encoder_layers": self.num_encoder_layers,
            "num_decoder_layers": self.num_decoder_layers,
            "dropout": self.dropout,
            "num_buckets": self.num_buckets,
            "max_distance": self.max_distance,
            "tie_embeddings": self.tie_embeddings,
            "decoder_start_id": self.decoder_start_id,
            "name": self.name,
            "trainable": self.trainable,
        }
