"""The encoder family's configuration and its named presets (plain data)."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class EncoderConfig:
    """Architecture of a kbert `Encoder` (its `config` argument): sizes and behaviour, no weights.

    Args:
        vocabulary_size: int. Token table rows.
        num_layers: int. Transformer blocks.
        hidden_dim: int. Model width.
        num_heads: int. Attention heads.
        intermediate_dim: int. Feed-forward inner width.
        max_sequence_length: int, default 512. Position table rows.
        num_segments: int, default 2. Segment (token type) table rows; 0 for none.
        embedding_dim: int, default None. ALBERT's factorized embedding width.
        dropout: float, default 0.1. Hidden dropout.
        attention_dropout: float, default 0.1.
        activation: str, default "gelu" (exact erf GELU, as BERT checkpoints mean it).
        layer_norm_epsilon: float, default 1e-12.
        norm_first: bool, default False. Pre-LN blocks plus a final LayerNorm (GPT-2 style).
        causal: bool, default False. Left-to-right attention (a causal language model).
        share_layers: bool, default False. ALBERT's cross-layer parameter sharing.
        initializer_range: float, default 0.02. Stddev of the truncated-normal initializer.

    Example:
    >>> EncoderConfig.preset("tiny").hidden_dim
    16
    """

    vocabulary_size: int
    num_layers: int
    hidden_dim: int
    num_heads: int
    intermediate_dim: int
    max_sequence_length: int = 512
    num_segments: int = 2
    embedding_dim: int | None = None
    dropout: float = 0.1
    attention_dropout: float = 0.1
    activation: str = "gelu"
    layer_norm_epsilon: float = 1e-12
    norm_first: bool = False
    causal: bool = False
    share_layers: bool = False
    initializer_range: float = 0.02

    def __post_init__(self):
        for name in (
            "vocabulary_size",
            "num_layers",
            "hidden_dim",
            "num_heads",
            "intermediate_dim",
            "max_sequence_length",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"EncoderConfig.{name} must be a positive int; received {value!r}")
        if self.hidden_dim % self.num_heads:
            raise ValueError(
                f"EncoderConfig.hidden_dim ({self.hidden_dim}) must be divisible by num_heads "
                f"({self.num_heads})"
            )
        for name in ("dropout", "attention_dropout"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(
                    f"EncoderConfig.{name} must be in [0, 1); received {getattr(self, name)!r}"
                )

    def to_dict(self):
        return dataclasses.asdict(self)

    def replace(self, **changes):
        """Returns a copy with some fields changed (e.g. `causal=True`)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def preset(cls, name, **changes):
        """Returns a named preset, optionally with some fields changed.

        Args:
            name: str. One of `PRESETS`.
            **changes: fields to override.
        """
        if name not in PRESETS:
            raise ValueError(f"unknown encoder preset {name!r}; expected one of {sorted(PRESETS)}")
        return cls(**{**PRESETS[name], **changes})


PRESETS = {
    # For tests: every code path, tiny shapes.
    "tiny": dict(
        vocabulary_size=50,
        num_layers=2,
        hidden_dim=16,
        num_heads=2,
        intermediate_dim=32,
        max_sequence_length=16,
    ),
    # The NAACL 2019 tutorial's model: 16 pre-LN causal layers, about 50M parameters with
    # bert-base-cased's 28,996-token vocabulary; no segment embeddings.
    "tutorial_50m": dict(
        vocabulary_size=28996,
        num_layers=16,
        hidden_dim=410,
        num_heads=10,
        intermediate_dim=2100,
        max_sequence_length=256,
        num_segments=0,
        norm_first=True,
        causal=True,
        layer_norm_epsilon=1e-5,
    ),
    "bert_base": dict(
        vocabulary_size=30522, num_layers=12, hidden_dim=768, num_heads=12, intermediate_dim=3072
    ),
    "minilm_l6": dict(
        vocabulary_size=30522, num_layers=6, hidden_dim=384, num_heads=12, intermediate_dim=1536
    ),
    # ALBERT-base: factorized 128-wide embeddings, one block shared by all 12 layers.
    "albert_base": dict(
        vocabulary_size=30000,
        num_layers=12,
        hidden_dim=768,
        num_heads=12,
        intermediate_dim=3072,
        embedding_dim=128,
        share_layers=True,
        activation="gelu_approximate",
        dropout=0.0,
        attention_dropout=0.0,
    ),
}
