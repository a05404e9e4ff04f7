"""Encoders and their configuration."""

from kbert.models.encoder import Encoder
from kbert.models.encoder_config import PRESETS, EncoderConfig

__all__ = ["PRESETS", "Encoder", "EncoderConfig"]
