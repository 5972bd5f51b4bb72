"""Whole models assembled from ``neuromath.nn``, each registered in ``neuromath.registry.MODELS`` under a name.

Every registered sequence model is built as ``Model(config: ModelConfig, inputs: ModelInputs)`` and implements
``forward``, ``encode`` and ``decode_step`` (see docs/design.md, Contracts); the identities classifiers are built by
``neuromath.models.classifiers.build_classifier``.
"""

from neuromath.config import ModelConfig
from neuromath.models import (
    recurrent,  # noqa: F401  (registers "dns", "bilstm_seq2seq", "group_attention")
    transformer,  # noqa: F401  (registers "transformer")
    tree_decoders,  # noqa: F401  (registers "gts", "graph2tree")
)
from neuromath.models.inputs import ModelInputs
from neuromath.registry import MODELS


def build_model(config: ModelConfig, inputs: ModelInputs):
    """The registered model ``config.name`` for these inputs."""
    return MODELS.get(config.name)(config, inputs)


def build_task_model(config: ModelConfig, task, source_vocab, target_vocab):
    """A model for ``task`` over these vocabularies (see ``ModelInputs.for_task``)."""
    return build_model(config, ModelInputs.for_task(task, source_vocab, target_vocab))


__all__ = ["ModelInputs", "build_model", "build_task_model"]
