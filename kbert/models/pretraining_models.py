"""The model each pretraining objective trains, from one set of sizes.

lab01 and `kbert pretrain` pretrain from scratch with four objectives: `causal` (GPT's next-token
prediction, pre-LN by default), `masked` (BERT's MLM), `electra` (replaced-token detection; by
default the generator a quarter of the discriminator's width, ELECTRA's best ratio) and
`span_corruption` (T5's; an encoder-decoder). The first three train a kbert `Encoder` that fine-tuning starts
from; the last trains an `EncoderDecoder`.
"""

import dataclasses

from kbert.models.causal_language_model import CausalLanguageModel
from kbert.models.electra_pretraining_model import ElectraPretrainingModel
from kbert.models.encoder import Encoder
from kbert.models.encoder_config import PRESETS as ENCODER_PRESETS
from kbert.models.encoder_decoder import PRESETS as ENCODER_DECODER_PRESETS
from kbert.models.encoder_decoder import EncoderDecoder
from kbert.models.masked_language_model import MaskedLanguageModel

OBJECTIVES = ("causal", "masked", "electra", "span_corruption")
ENCODER_OBJECTIVES = ("causal", "masked", "electra")
SIZED_PRESET = "lab01"  # sized by `PretrainingModelSettings`' num_layers, hidden_dim, num_heads
LAYER_NORMS = ("auto", "pre", "post")
# The defaults of lab01 and `kbert pretrain`: a recipe for pretraining in an hour on a CPU, each
# choice with its source. `benchmarks/pretraining_recipe.py` sets each back to BERT's at equal
# minutes and measures what the start is worth fine-tuned (docs/results/pretraining_recipe.json).
RECIPE = {
    "layer_norm": "pre",  # Xiong et al. 2020; Geiping & Goldstein 2022 ("Cramming")
    "dropout": 0.0,  # Cramming: one pass over the data needs no regularizer
    "fine_tuning_dropout": 0.1,  # BERT's, which Cramming keeps for fine-tuning
    "masked_mask_rate": 0.4,  # Wettig et al. 2023: 40% beats BERT's 15%
    "electra_mask_rate": 0.15,  # Clark et al. 2020 (ELECTRA-Small)
    "schedule": "linear",  # Cramming's one-cycle: linear warmup, linear decay to 0
    "block_length": 128,  # Cramming
    "generator_width_factor": 4,  # Clark et al. 2020: a quarter to a half of the width
    "discriminator_weight": 50.0,  # Clark et al. 2020
    "tie_embeddings": True,  # Clark et al. 2020
}


def recipe_mask_rate(objective):
    """The recipe's share of masked tokens for `objective` (None where it masks nothing).

    >>> recipe_mask_rate("masked"), recipe_mask_rate("electra"), recipe_mask_rate("causal")
    (0.4, 0.15, None)
    """
    return RECIPE.get(f"{objective}_mask_rate")


@dataclasses.dataclass(frozen=True)
class PretrainingModelSettings:
    """The size and shape of a model to pretrain.

    Args:
        preset: str, default "lab01". "lab01" (sized by the fields below, on the "tiny"
            encoder's other settings), an encoder preset (`kbert.models.encoder_config.PRESETS`)
            or, for span corruption, an `EncoderDecoder` preset ("tiny", "t5_small").
        num_layers: int, default 4. Blocks (span corruption: encoder and decoder each).
        hidden_dim: int, default 256.
        num_heads: int, default 4.
        layer_norm: str, default "auto". "pre" (GPT-2), "post" (BERT, ELECTRA) or "auto": pre
            for causal, post for the others. Not used by span corruption (T5 is pre-norm).
        dropout: float, default 0.1.
        block_length: int, default 128. The position table's length (encoders).
        dtype: str, default "float32". A Keras dtype policy, e.g. "mixed_bfloat16".
        seed: int, default 0. ELECTRA's sampling seed.
        generator_width_factor: int, default 4. ELECTRA's generator is this many times
            narrower than the discriminator (Clark et al. 2020: 1/4 to 1/2 works best).
        discriminator_weight: float, default 50.0. ELECTRA's λ on the replaced-token loss.
        tie_embeddings: bool, default False. ELECTRA's generator reads the discriminator's
            embedding tables (ELECTRA's choice).
    """

    preset: str = SIZED_PRESET
    num_layers: int = 4
    hidden_dim: int = 256
    num_heads: int = 4
    layer_norm: str = "auto"
    dropout: float = 0.1
    block_length: int = 128
    dtype: str = "float32"
    seed: int = 0
    generator_width_factor: int = 4
    discriminator_weight: float = 50.0
    tie_embeddings: bool = False

    def __post_init__(self):
        factor = self.generator_width_factor
        if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
            raise ValueError(f"generator_width_factor must be an int >= 1; received {factor!r}")
        weight = self.discriminator_weight
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight > 0:
            raise ValueError(f"discriminator_weight must be a number > 0; received {weight!r}")
        if not isinstance(self.tie_embeddings, bool):
            raise ValueError(f"tie_embeddings must be a bool; received {self.tie_embeddings!r}")


def check_preset(objective, preset):
    """Refuses a preset the objective's model has not, naming the ones it has."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}; received {objective!r}")
    presets = ENCODER_DECODER_PRESETS if objective == "span_corruption" else ENCODER_PRESETS
    if preset != SIZED_PRESET and preset not in presets:
        raise ValueError(
            f"preset {preset!r} is not one for objective {objective}; expected "
            f"{SIZED_PRESET!r} (sized by num_layers, hidden_dim, num_heads) or one of "
            f"{sorted(presets)}"
        )


def pre_layer_norm(objective, layer_norm):
    """Whether each block normalizes first: "pre", "post", or "auto" (pre for causal only)."""
    if layer_norm == "auto":
        return objective == "causal"
    return layer_norm == "pre"


def pretraining_encoder(objective, settings, vocabulary_size, width_factor=1):
    """The encoder an encoder objective trains, `width_factor` times narrower (ELECTRA's
    generator).

    Args:
        objective: str. "causal", "masked" or "electra".
        settings: `PretrainingModelSettings`.
        vocabulary_size: int.
        width_factor: int, default 1.

    Returns:
        `kbert.models.Encoder`: causal and without segments for "causal", bidirectional with
        two segments otherwise.
    """
    check_preset(objective, settings.preset)
    changes = dict(
        vocabulary_size=vocabulary_size,
        max_sequence_length=settings.block_length,
        causal=objective == "causal",
        norm_first=pre_layer_norm(objective, settings.layer_norm),
        dropout=settings.dropout,
        attention_dropout=settings.dropout,
    )
    if settings.preset == SIZED_PRESET:
        hidden_dim = settings.hidden_dim // width_factor
        changes.update(
            num_layers=settings.num_layers,
            hidden_dim=hidden_dim,
            num_heads=max(1, settings.num_heads // width_factor),
            intermediate_dim=4 * hidden_dim,
        )
        return Encoder.from_preset(
            "tiny",
            num_segments=0 if objective == "causal" else 2,
            skip_padding=False,
            dtype=settings.dtype,
            **changes,
        )
    if width_factor != 1:
        config = Encoder.from_preset(settings.preset).config
        changes.update(
            hidden_dim=config.hidden_dim // width_factor,
            num_heads=max(1, config.num_heads // width_factor),
            intermediate_dim=config.intermediate_dim // width_factor,
        )
    return Encoder.from_preset(settings.preset, skip_padding=False, dtype=settings.dtype, **changes)


def build_pretraining_model(objective, settings, vocabulary_size):
    """The model `objective` trains, built (its weights exist before `fit`).

    Args:
        objective: str. One of `OBJECTIVES`.
        settings: `PretrainingModelSettings`.
        vocabulary_size: int.

    Returns:
        `CausalLanguageModel`, `MaskedLanguageModel`, `ElectraPretrainingModel` or
        `EncoderDecoder`.

    Example:
    >>> settings = PretrainingModelSettings(num_layers=1, hidden_dim=16, num_heads=2,
    ...                                     block_length=8)
    >>> type(build_pretraining_model("masked", settings, 50)).__name__
    'MaskedLanguageModel'
    """
    check_preset(objective, settings.preset)
    if objective == "causal":
        return CausalLanguageModel(pretraining_encoder(objective, settings, vocabulary_size))
    if objective == "masked":
        return MaskedLanguageModel(pretraining_encoder(objective, settings, vocabulary_size))
    if objective == "electra":
        return ElectraPretrainingModel(
            generator_encoder=pretraining_encoder(
                objective, settings, vocabulary_size, width_factor=settings.generator_width_factor
            ),
            discriminator_encoder=pretraining_encoder(objective, settings, vocabulary_size),
            discriminator_weight=settings.discriminator_weight,
            tie_embeddings=settings.tie_embeddings,
            seed=settings.seed,
        )
    if settings.preset == SIZED_PRESET:
        sizes = dict(
            hidden_dim=settings.hidden_dim,
            num_heads=settings.num_heads,
            intermediate_dim=4 * settings.hidden_dim,
            num_encoder_layers=settings.num_layers,
            num_decoder_layers=settings.num_layers,
        )
    else:
        sizes = {k: v for k, v in ENCODER_DECODER_PRESETS[settings.preset].items()}
    sizes["vocabulary_size"] = vocabulary_size
    model = EncoderDecoder(dropout=settings.dropout, dtype=settings.dtype, **sizes)
    model.ensure_built()
    return model


def encoder_for_fine_tuning(encoder, dropout=0.1):
    """`encoder` with the dropout its fine-tuning will use, for saving after pretraining.

    Pretraining on a small budget runs without dropout (Cramming: one pass over the data needs
    no regularizer); fine-tuning on few labels wants it back (BERT's 0.1, which Cramming keeps
    for fine-tuning). The returned encoder has the same weights under a config whose `dropout`
    and `attention_dropout` are `dropout`; `encoder` itself is returned when it has them already.

    Args:
        encoder: `kbert.models.Encoder`.
        dropout: float in [0, 1), default 0.1.

    Returns:
        `kbert.models.Encoder`.

    Example:
    >>> settings = PretrainingModelSettings(num_layers=1, hidden_dim=16, num_heads=2,
    ...                                     block_length=8, dropout=0.0)
    >>> model = build_pretraining_model("masked", settings, 50)
    >>> encoder_for_fine_tuning(pretrained_encoder(model)).config.dropout
    0.1
    """
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
        raise ValueError(f"dropout must be a number in [0, 1); received {dropout!r}")
    config = encoder.get_config()
    if config["dropout"] == dropout and config["attention_dropout"] == dropout:
        return encoder
    copy = Encoder.from_config({**config, "dropout": dropout, "attention_dropout": dropout})
    copy.set_weights(encoder.get_weights())
    return copy


def pretrained_encoder(model):
    """The encoder a pretraining model leaves for fine-tuning (ELECTRA's discriminator), or
    None for an encoder-decoder (it is kept whole)."""
    if isinstance(model, EncoderDecoder):
        return None
    if isinstance(model, ElectraPretrainingModel):
        return model.discriminator_encoder
    return model.encoder


__all__ = [
    "ENCODER_OBJECTIVES",
    "OBJECTIVES",
    "RECIPE",
    "PretrainingModelSettings",
    "build_pretraining_model",
    "check_preset",
    "encoder_for_fine_tuning",
    "pretrained_encoder",
    "pretraining_encoder",
    "recipe_mask_rate",
]
