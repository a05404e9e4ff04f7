"""The transformer encoder: a functional Keras model with dict inputs and dict outputs."""

import dataclasses

import keras
from keras import ops

from kbert.layers.block_adaptation import BlockAdaptation
from kbert.layers.embeddings import Embeddings
from kbert.layers.initializers import clone_initializer
from kbert.layers.transformer_block import TransformerBlock
from kbert.models.encoder_config import EncoderConfig
from kbert.models.pretraining_utils import symbolic_encoder_inputs

_CONFIG_FIELDS = tuple(field.name for field in dataclasses.fields(EncoderConfig))


@keras.saving.register_keras_serializable(package="kbert")
class Encoder(keras.Model):
    """A BERT-style (bidirectional) or GPT-style (causal) transformer encoder.

    Inputs (dict): `token_ids`, `segment_ids`, `padding_mask`, each int32 `(batch, seq)`.
    Outputs (dict):
        `sequence_output`: `(batch, seq, hidden_dim)`, the top layer (after the final LayerNorm
            for pre-LN models).
        `pooled_output`: `(batch, hidden_dim)`, tanh Dense on the first ([CLS]) position.
        `hidden_states`: list of `num_layers + 1` tensors `(batch, seq, hidden_dim)`: the
            embedding output, then each block's output (the last equals `sequence_output`).
            For layer averaging and probing.

    Task heads are built on `encoder.inputs` and `encoder.outputs`, so one encoder serves many
    heads. `layer_groups()` names the parts that freezing, gradual unfreezing and per-layer
    learning rates address: `embeddings`, `block_0` … `block_{N-1}`, `pooler` (and `final_norm`
    for pre-LN models).

    Args:
        config: `EncoderConfig`. The architecture (sizes, dropout, pre-/post-LN, causal, ...).
        skip_padding: bool, default True. Feed-forward sublayers compute real tokens only
            (`kbert.layers.unpadding`): same outputs at real positions, faster on padded batches.
        adaptation: `kbert.layers.BlockAdaptation`, its dict, or None (default): adapter, LoRA
            and prefix wrappers every block is built with. `kbert.models.peft` sets it (its
            `add_*` functions return a new encoder); `get_config` records it.
        dtype: Keras dtype policy or its name, default None (the global policy), e.g.
            "mixed_bfloat16": its layers' policy, kept as `layer_dtype` (the Model's own
            `dtype_policy` reads float32 whatever its layers compute in).
        shared_embedding_tables: `kbert.layers.Embeddings` or None (default): another
            encoder's embeddings whose token, position and segment tables this encoder reads
            (ELECTRA's tied generator). Not saved in `get_config`.
        **kwargs: Keras `name`, `trainable`.

    `get_config()` is flat: the `EncoderConfig` fields beside `skip_padding`, `dtype`, `name`
    (and `adaptation`), and `from_config` reads that form.

    Example:
    >>> encoder = Encoder.from_preset("tiny")
    >>> inputs = {"token_ids": ops.array([[2, 5, 3, 0]]), "segment_ids": ops.zeros((1, 4), "int32"),
    ...           "padding_mask": ops.array([[1, 1, 1, 0]])}
    >>> tuple(encoder(inputs)["sequence_output"].shape)
    (1, 4, 16)
    >>> Encoder(EncoderConfig.preset("tiny", causal=True), name="lm").config.causal
    True
    """

    def __init__(
        self,
        config,
        skip_padding=True,
        adaptation=None,
        dtype=None,
        shared_embedding_tables=None,
        **kwargs,
    ):
        if not isinstance(config, EncoderConfig):
            raise ValueError(
                f"config must be a kbert.models.EncoderConfig (Encoder.from_config reads a "
                f"dict); received {type(config).__name__}"
            )
        adaptation = BlockAdaptation.from_dict(adaptation) or None
        initializer = keras.initializers.TruncatedNormal(stddev=config.initializer_range)

        # === Layers ===
        embeddings = Embeddings(
            config.vocabulary_size,
            config.hidden_dim,
            config.max_sequence_length,
            num_segments=config.num_segments,
            embedding_dim=config.embedding_dim,
            dropout=config.dropout,
            layer_norm_epsilon=config.layer_norm_epsilon,
            normalize=not config.norm_first,
            embeddings_initializer=initializer,
            dtype=dtype,
            shared_tables=shared_embedding_tables,
            name="embeddings",
        )

        def make_block(index):
            return TransformerBlock(
                config.num_heads,
                config.hidden_dim,
                config.intermediate_dim,
                dropout=config.dropout,
                attention_dropout=config.attention_dropout,
                activation=config.activation,
                layer_norm_epsilon=config.layer_norm_epsilon,
                norm_first=config.norm_first,
                causal=config.causal,
                kernel_initializer=initializer,
                skip_padding=skip_padding,
                adaptation=adaptation,
                dtype=dtype,
                name=f"block_{index}",
            )

        if config.share_layers:
            shared = make_block("shared")
            blocks = [shared] * config.num_layers
        else:
            blocks = [make_block(i) for i in range(config.num_layers)]
        final_norm = (
            keras.layers.LayerNormalization(
                epsilon=config.layer_norm_epsilon, dtype=dtype, name="final_norm"
            )
            if config.norm_first
            else None
        )
        pooler = keras.layers.Dense(
            config.hidden_dim,
            activation="tanh",
            kernel_initializer=clone_initializer(initializer),
            dtype=dtype,
            name="pooler",
        )

        # === Functional model ===
        inputs = symbolic_encoder_inputs()
        x = embeddings(inputs["token_ids"], inputs["segment_ids"])
        hidden_states = [x]
        for block in blocks:
            x = block(x, padding_mask=inputs["padding_mask"])
            hidden_states.append(x)
        if final_norm is not None:
            x = final_norm(x)
            hidden_states[-1] = x
        pooled = pooler(x[:, 0, :])
        outputs = {"sequence_output": x, "pooled_output": pooled, "hidden_states": hidden_states}
        super().__init__(inputs=inputs, outputs=outputs, dtype=dtype, **kwargs)

        # === Config and named parts ===
        self.config = config
        self.skip_padding = skip_padding
        # A functional Model reports its own policy as float32 whatever `dtype` its layers got,
        # so the argument is kept for get_config (a saved mixed-precision encoder stays mixed).
        self.layer_dtype = dtype
        self.embeddings = embeddings
        self.blocks = blocks
        self.final_norm = final_norm
        self.pooler = pooler

    def layer_groups(self):
        """Named groups of layers, bottom to top, for freezing and per-layer learning rates.

        Returns:
            dict (ordered bottom to top) of group name → list of layers: `embeddings`,
            `block_0` … `block_{N-1}`, `final_norm` (pre-LN only), `pooler`. With
            `share_layers=True` every `block_i` holds the same shared layer.
        """
        groups = {"embeddings": [self.embeddings]}
        for index, block in enumerate(self.blocks):
            groups[f"block_{index}"] = [block]
        if self.final_norm is not None:
            groups["final_norm"] = [self.final_norm]
        groups["pooler"] = [self.pooler]
        return groups

    @property
    def adaptation(self):
        """The blocks' `BlockAdaptation` (None for a plain encoder); it names the live set."""
        return self.blocks[0].adaptation

    def get_config(self):
        dtype = self.layer_dtype
        if dtype is not None and not isinstance(dtype, str):
            dtype = keras.dtype_policies.serialize(dtype)
        config = {
            "name": self.name,
            "trainable": self.trainable,
            **self.config.to_dict(),
            "skip_padding": self.skip_padding,
            "dtype": dtype,
        }
        if self.adaptation is not None:
            config["adaptation"] = self.adaptation.to_dict()
        return config

    @classmethod
    def from_config(cls, config):
        """Rebuilds an encoder from `get_config()`'s flat dict (as `.keras` files hold it)."""
        config = dict(config)
        architecture = EncoderConfig(
            **{key: config.pop(key) for key in _CONFIG_FIELDS if key in config}
        )
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(architecture, **config)

    @classmethod
    def from_preset(cls, name, **changes):
        """Builds a randomly initialised encoder from a named preset (see `EncoderConfig`).

        Args:
            name: str. A preset name, e.g. "tiny", "minilm_l6", "tutorial_50m".
            **changes: `EncoderConfig` fields to override, plus `name`, `dtype`, `skip_padding`,
                `adaptation`.

        For pretrained weights use `kbert.checkpoints.load_hf_bert`.
        """
        keras_kwargs = {
            key: changes.pop(key)
            for key in ("name", "dtype", "skip_padding", "adaptation")
            if key in changes
        }
        return cls(EncoderConfig.preset(name, **changes), **keras_kwargs)

    def init_cache(self, batch_size, max_length):
        """Returns an empty key/value cache `(layers, batch, 2, heads, max_length, head_dim)`."""
        if not self.config.causal:
            raise ValueError("a key/value cache needs a causal encoder (config.causal=True)")
        if max_length > self.config.max_sequence_length:
            raise ValueError(
                f"max_length={max_length} is above the position table's "
                f"max_sequence_length={self.config.max_sequence_length}"
            )
        config = self.config
        head_dim = config.hidden_dim // config.num_heads
        return ops.zeros(
            (config.num_layers, batch_size, 2, config.num_heads, max_length, head_dim),
            dtype=self.compute_dtype,
        )

    def decode(self, token_ids, cache, cache_index, segment_ids=None):
        """Runs new positions of a causal encoder against a key/value cache.

        Args:
            token_ids: int tensor `(batch, new)`, the tokens at positions
                `cache_index … cache_index + new - 1`.
            cache: the tensor from `init_cache` or an earlier `decode`.
            cache_index: int scalar, the position of the first new token.
            segment_ids: int tensor `(batch, new)`, default None.

        Returns:
            `(sequence_output, cache)`: `(batch, new, hidden_dim)` and the updated cache.
        """
        if not self.config.causal:
            raise ValueError("decode() needs a causal encoder (config.causal=True)")
        x = self.embeddings(token_ids, segment_ids, start_position=cache_index)
        caches = []
        for index, block in enumerate(self.blocks):
            x, layer_cache = block(x, cache=cache[index], cache_index=cache_index)
            caches.append(layer_cache)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return x, ops.stack(caches)

    def dummy_inputs(self, batch_size=1, sequence_length=8):
        """Returns a valid input dict of zeros/ones, for building and smoke tests."""
        shape = (batch_size, sequence_length)
        return {
            "token_ids": ops.zeros(shape, "int32"),
            "segment_ids": ops.zeros(shape, "int32"),
            "padding_mask": ops.ones(shape, "int32"),
        }
