"""Whole models, each registered in ``neuromath.registry.MODELS`` under a name."""

from neuromath.config import ModelConfig
from neuromath.models import transformer  # noqa: F401  (registers "transformer")
from neuromath.registry import MODELS


def build_model(config: ModelConfig, source_vocab_size: int, target_vocab_size: int, pad_id: int = 0):
    return MODELS.get(config.name)(config, source_vocab_size, target_vocab_size, pad_id)
