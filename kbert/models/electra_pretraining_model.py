"""ELECTRA: a small MLM generator corrupts the input, a discriminator spots the replacements."""

import dataclasses

import keras
from keras import ops

from kbert.models import pretraining_utils
from kbert.models.encoder import Encoder
from kbert.models.masked_language_model import MaskedLanguageModel


def tied_generator(generator_encoder, discriminator_encoder):
    """`generator_encoder`'s architecture, rebuilt to read `discriminator_encoder`'s embedding
    tables (at their width, projected down to the generator's when it is narrower)."""
    tables = discriminator_encoder.embeddings
    width = tables.embedding_dim or tables.hidden_dim
    config = generator_encoder.config
    if config.num_segments and config.num_segments != discriminator_encoder.config.num_segments:
        raise ValueError(
            f"tie_embeddings needs the same num_segments in generator and discriminator; "
            f"received {config.num_segments} and {discriminator_encoder.config.num_segments}"
        )
    config = dataclasses.replace(
        config,
        embedding_dim=None if width == config.hidden_dim else width,
        max_sequence_length=discriminator_encoder.config.max_sequence_length,
    )
    return Encoder(
        config,
        skip_padding=generator_encoder.skip_padding,
        dtype=generator_encoder.layer_dtype,
        shared_embedding_tables=tables,
        name=generator_encoder.name,
    )


@keras.saving.register_keras_serializable(package="kbert")
class ElectraPretrainingModel(keras.Model):
    """Replaced-token detection (Clark et al. 2020) with a generator and a discriminator encoder.

    One step, on a masked batch `x`:

    1. The generator (`MaskedLanguageModel` on `generator_encoder`) predicts the masked tokens.
    2. A replacement is *sampled* from its softmax at each masked position (sampling, not
       arg-max, so the discriminator sees plausible mistakes; token ids carry no gradient, so
       the discriminator's loss never reaches the generator).
    3. The corrupted input is the original text (`mask_ids` put back) with every masked position
       replaced by its sample.
    4. The discriminator (`discriminator_encoder` + Dense(1)) predicts, at every real token,
       whether it was replaced. A sample equal to the original counts as original (label 0).

    Loss: `generator MLM + discriminator_weight · RTD`, where RTD is the mean sigmoid
    cross-entropy over real tokens (`padding_mask`). Metrics: `generator_loss`,
    `generator_accuracy`, `generator_perplexity`, `rtd_loss`, `rtd_accuracy`.

    With `tie_embeddings=True` (ELECTRA's choice; its ablation reports about 0.7 GLUE points
    from tying) the generator reads the discriminator's token, position and segment tables:
    the generator's MLM softmax then trains every row of the table the discriminator reads,
    where the discriminator's own loss reaches only the tokens in its input. A narrower
    generator reads them at the discriminator's width and projects down (ALBERT's factorized
    embedding, `embedding_dim`). The generator is rebuilt from its config for this, so its
    given weights are not kept; `get_config` records the flag and loading ties again. Within
    the generator, the MLM decoder is tied to the token table it reads, as in BERT. After
    training, `discriminator_encoder` is an ordinary `Encoder` for any task head.

    Input `x`: the encoder inputs (`segment_ids` optional; `token_ids` as masked by the
    masker) and `mask_positions`, `mask_ids`, `mask_weights` `(batch, max_selections)`.

    Args:
        generator_encoder: `kbert.models.Encoder`, usually smaller (ELECTRA: 1/4 to 1/3 of the
            discriminator's width).
        discriminator_encoder: `kbert.models.Encoder` with the same vocabulary.
        discriminator_weight: float, default 50.0 (ELECTRA's λ).
        tie_embeddings: bool, default False. The generator reads the discriminator's
            embedding tables (see above).
        seed: int, default None. Seed of the replacement sampler.
        dtype: dtype policy (keyword), default None (the discriminator encoder's).
        **kwargs: `name`, `trainable`.

    Returns (from `call`):
        dict with `generator` (`{"logits": (batch, max_selections, vocab)}`),
        `discriminator_logits` `(batch, seq)`, `corrupted_token_ids` `(batch, seq)` and
        `replaced_labels` int32 `(batch, seq)` (1 where the token differs from the original).

    Example:
    >>> from kbert.models import Encoder
    >>> electra = ElectraPretrainingModel(Encoder.from_preset("tiny", hidden_dim=8),
    ...                                   Encoder.from_preset("tiny"), seed=0)
    >>> x = {"token_ids": ops.array([[2, 4, 9, 3]]), "padding_mask": ops.ones((1, 4), "int32"),
    ...      "mask_positions": ops.array([[1]]), "mask_ids": ops.array([[7]]),
    ...      "mask_weights": ops.array([[1.0]])}
    >>> tuple(electra(x)["discriminator_logits"].shape)
    (1, 4)
    """

    def __init__(
        self,
        generator_encoder,
        discriminator_encoder,
        discriminator_weight=50.0,
        seed=None,
        tie_embeddings=False,
        **kwargs,
    ):
        generator_vocabulary = generator_encoder.config.vocabulary_size
        discriminator_vocabulary = discriminator_encoder.config.vocabulary_size
        if generator_vocabulary != discriminator_vocabulary:
            raise ValueError(
                f"generator_encoder and discriminator_encoder must share a vocabulary; "
                f"received vocabulary_size {generator_vocabulary} and {discriminator_vocabulary}"
            )
        if not isinstance(tie_embeddings, bool):
            raise ValueError(f"tie_embeddings must be a bool; received {tie_embeddings!r}")
        if tie_embeddings:
            generator_encoder = tied_generator(generator_encoder, discriminator_encoder)
        dtype = kwargs.pop("dtype", None)
        if dtype is None:
            dtype = pretraining_utils.encoder_dtype_policy(discriminator_encoder)
        super().__init__(dtype=dtype, **kwargs)
        self.tie_embeddings = tie_embeddings
        self.generator = MaskedLanguageModel(
            generator_encoder, metric_prefix="generator", name="generator"
        )
        self.discriminator_encoder = discriminator_encoder
        config = discriminator_encoder.config
        self.discriminator_head = keras.layers.Dense(
            1,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=config.initializer_range),
            dtype=self.dtype_policy,
            name="discriminator_head",
        )
        self.discriminator_head.build((None, None, config.hidden_dim))
        self.discriminator_weight = float(discriminator_weight)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed, name="sampler_seed")
        self.rtd_loss_metric = keras.metrics.Mean(name="rtd_loss")
        self.rtd_accuracy_metric = keras.metrics.Mean(name="rtd_accuracy")
        self.built = True

    @property
    def generator_encoder(self):
        return self.generator.encoder

    @property
    def metrics(self):
        # Keras skips sub-model metrics; the generator's belong to this model's report.
        return super().metrics + self.generator.objective_metrics

    def sample_replacements(self, generator_logits):
        """Draws one token per masked position from the generator's softmax.

        Args:
            generator_logits: `(batch, max_selections, vocabulary_size)`.

        Returns:
            int32 `(batch, max_selections)`.
        """
        logits = ops.cast(ops.stop_gradient(generator_logits), "float32")
        vocabulary_size = logits.shape[-1]
        samples = keras.random.categorical(
            ops.reshape(logits, (-1, vocabulary_size)), 1, dtype="int32", seed=self.seed_generator
        )
        return ops.reshape(samples, ops.shape(logits)[:-1])

    def corrupt(self, x, sampled_ids):
        """Builds the discriminator's input and its replaced/original labels.

        Args:
            x: dict with `token_ids`, `padding_mask`, `mask_positions`, `mask_ids`,
                `mask_weights`.
            sampled_ids: int `(batch, max_selections)`: a replacement per masked position.
                Each position is selected at most once (as a masker produces them).

        Returns:
            (corrupted_token_ids, replaced_labels), both int32 `(batch, seq)`; a label is 1
            where the corrupted token differs from the original, 0 elsewhere and at padding.
        """
        token_ids = ops.cast(x["token_ids"], "int32")
        # Selection rows with weight 0 are padding: they point at position 0 and change nothing.
        selected = ops.cast(ops.not_equal(x["mask_weights"], 0), "int32")  # (batch, sel)
        one_hot = (
            ops.one_hot(
                ops.cast(x["mask_positions"], "int32"), ops.shape(token_ids)[1], dtype="int32"
            )
            * selected[:, :, None]
        )  # (batch, sel, seq)
        is_masked = ops.sum(one_hot, axis=1) > 0  # (batch, seq)

        def spread(values):  # (batch, sel) → (batch, seq), zero where nothing is masked
            return ops.sum(one_hot * ops.cast(values, "int32")[:, :, None], axis=1)

        original = ops.where(is_masked, spread(x["mask_ids"]), token_ids)
        corrupted = ops.where(is_masked, spread(sampled_ids), token_ids)
        real = ops.cast(x["padding_mask"], "bool")
        replaced = ops.logical_and(ops.not_equal(corrupted, original), real)
        return corrupted, ops.cast(replaced, "int32")

    def call(self, x, training=None):
        generator_outputs = self.generator(x, training=training)  # validates x
        sampled = self.sample_replacements(generator_outputs["logits"])
        corrupted, replaced = self.corrupt(x, sampled)
        discriminator_inputs = {**pretraining_utils.encoder_inputs(x), "token_ids": corrupted}
        sequence = self.discriminator_encoder(discriminator_inputs, training=training)[
            "sequence_output"
        ]
        logits = ops.squeeze(self.discriminator_head(sequence), axis=-1)  # (batch, seq)
        return {
            "generator": generator_outputs,
            "discriminator_logits": logits,
            "corrupted_token_ids": corrupted,
            "replaced_labels": replaced,
        }

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        generator_loss = self.generator.objective_loss(x, y_pred["generator"])
        labels = ops.cast(y_pred["replaced_labels"], "float32")
        logits = ops.cast(y_pred["discriminator_logits"], "float32")
        real = ops.cast(x["padding_mask"], "float32")
        per_token = keras.losses.binary_crossentropy(
            labels[..., None], logits[..., None], from_logits=True
        )  # (batch, seq)
        rtd_loss = pretraining_utils.weighted_mean(per_token, real)
        correct = ops.cast(ops.equal(ops.cast(logits > 0, "float32"), labels), "float32")
        self.rtd_loss_metric.update_state(rtd_loss)
        self.rtd_accuracy_metric.update_state(correct, sample_weight=real)
        loss = generator_loss + self.discriminator_weight * rtd_loss
        return pretraining_utils.total_loss(self, loss, y)

    def get_config(self):
        return {
            "generator_encoder": keras.saving.serialize_keras_object(self.generator_encoder),
            "discriminator_encoder": keras.saving.serialize_keras_object(
                self.discriminator_encoder
            ),
            "discriminator_weight": self.discriminator_weight,
            "tie_embeddings": self.tie_embeddings,
            "seed": self.seed,
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in ("generator_encoder", "discriminator_encoder"):
            config[key] = keras.saving.deserialize_keras_object(config[key])
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)
