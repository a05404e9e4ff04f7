"""Prompt tuning (Lester et al. 2021): trainable vectors prepended to the input embeddings."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kbert")
class PromptTuning(keras.layers.Layer):
    """Prepends `num_prompt_tokens` trainable vectors to a sequence of embeddings.

    The padding mask is extended with ones (prompts are always attended to). Prompts are added
    after the embedding layer, so they take no position or segment embedding, and segment ids
    need no extension. See `kbert.models.peft.prompt_tuned_encoder` for an encoder built on it.

    Args:
        num_prompt_tokens: int, default 20. Number of prompt vectors.
        prompt_initializer: initializer, default RandomNormal(stddev=0.02) (Lester et al. also
            initialise from vocabulary embeddings; assign `prompts` for that).

    Call args:
        inputs: float tensor `(batch, seq, hidden_dim)`.
        padding_mask: int/bool tensor `(batch, seq)`, default None (all real).

    Returns:
        `(embeddings, padding_mask)`: `(batch, prompts + seq, hidden_dim)` and int32
        `(batch, prompts + seq)`.

    Example:
    >>> embeddings, mask = PromptTuning(num_prompt_tokens=3)(keras.ops.ones((2, 4, 8)))
    >>> tuple(embeddings.shape), tuple(mask.shape)
    ((2, 7, 8), (2, 7))
    """

    def __init__(self, num_prompt_tokens=20, prompt_initializer=None, **kwargs):
        super().__init__(**kwargs)
        if num_prompt_tokens < 1:
            raise ValueError(
                f"num_prompt_tokens must be a positive int; received {num_prompt_tokens}"
            )
        self.num_prompt_tokens = num_prompt_tokens
        self.prompt_initializer = keras.initializers.get(
            prompt_initializer or keras.initializers.RandomNormal(stddev=0.02)
        )

    def build(self, inputs_shape, padding_mask_shape=None):
        self.prompts = self.add_weight(
            name="prompts",
            shape=(self.num_prompt_tokens, inputs_shape[-1]),
            initializer=self.prompt_initializer,
        )
        self.built = True

    def call(self, inputs, padding_mask=None):
        batch, seq = ops.shape(inputs)[0], ops.shape(inputs)[1]
        prompts = ops.cast(self.prompts, inputs.dtype)[None]  # (1, prompts, hidden)
        prompts = ops.repeat(prompts, batch, axis=0)  # (batch, prompts, hidden)
        embeddings = ops.concatenate([prompts, inputs], axis=1)  # (batch, prompts + seq, hidden)
        if padding_mask is None:
            padding_mask = ops.ones((batch, seq), "int32")
        padding_mask = ops.concatenate(
            [ops.ones((batch, self.num_prompt_tokens), "int32"), ops.cast(padding_mask, "int32")],
            axis=1,
        )  # (batch, prompts + seq)
        return embeddings, padding_mask

    def compute_output_shape(self, inputs_shape, padding_mask_shape=None):
        seq = inputs_shape[1]
        seq = None if seq is None else seq + self.num_prompt_tokens
        return ((inputs_shape[0], seq, inputs_shape[-1]), (inputs_shape[0], seq))

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_prompt_tokens": self.num_prompt_tokens,
                "prompt_initializer": keras.initializers.serialize(self.prompt_initializer),
            }
        )
        return config
