"""Whole models assembled from ``neuromath.nn``, each registered in ``neuromath.registry.MODELS`` under a name.

Every registered sequence model is built as ``Model(config: ModelConfig, inputs: ModelInputs)`` and satisfies
``neuromath.models.contracts.SequenceModel`` (training, encode, decode_step, cache reordering); the identities
classifiers are built by ``neuromath.models.classifiers.build_classifier`` and satisfy ``EquationClassifier``.
``tests/models/test_contracts.py`` builds every registered model and checks it.
"""

from neuromath.config import ModelConfig
from neuromath.models import (
    recurrent,  # noqa: F401  (registers "dns", "bilstm_seq2seq", "group_attention")
    transformer,  # noqa: F401  (registers "transformer")
    tree_decoders,  # noqa: F401  (registers "gts", "graph2tree")
)
from neuromath.models.contracts import EquationClassifier, SequenceModel
from neuromath.models.inputs import ModelInputs
from neuromath.registry import MODELS


def build_model(config: ModelConfig, inputs: ModelInputs) -> SequenceModel:
    """The registered model ``config.name`` for these inputs."""
    return MODELS.get(config.name)(config, inputs)


def build_task_model(config: ModelConfig, task, source_vocab, target_vocab) -> SequenceModel:
    """A model for ``task`` over these vocabularies (see ``ModelInputs.for_task``)."""
    return build_model(config, ModelInputs.for_task(task, source_vocab, target_vocab))


__all__ = ["EquationClassifier", "ModelInputs", "SequenceModel", "build_model", "build_task_model"]
