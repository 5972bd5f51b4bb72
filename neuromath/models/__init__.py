"""Whole models assembled from ``neuromath.nn``; each is registered once, with its config class, in
``neuromath.config.models``.

Every sequence model is built as ``Model(config: ModelConfig, inputs: ModelInputs)`` and satisfies
``neuromath.models.contracts.SequenceModel`` (training, encode, decode_step, cache reordering); the identities
classifiers are built by ``neuromath.models.classifiers.build_classifier`` and satisfy ``EquationClassifier``.
``tests/models/test_contracts.py`` builds every registered model and checks it.
"""

from neuromath.config import ModelConfig
from neuromath.config.rules import SEQUENCE
from neuromath.errors import ConfigError
from neuromath.models.contracts import EquationClassifier, SequenceModel
from neuromath.models.inputs import ModelInputs


def build_model(config: ModelConfig, inputs: ModelInputs) -> SequenceModel:
    """The sequence model ``config.name`` for these inputs, built by its registered builder."""
    if config.kind != SEQUENCE:
        raise ConfigError(f"model {config.name!r} is not a sequence model")
    return config.builder()(config, inputs)


def build_task_model(config: ModelConfig, task, source_vocab, target_vocab, folder=None) -> SequenceModel:
    """A model for ``task`` over these vocabularies (see ``ModelInputs.for_task``; ``folder``: the trained run whose
    pretrained encoder files it reads)."""
    return build_model(config, ModelInputs.for_task(task, source_vocab, target_vocab, folder))


__all__ = ["EquationClassifier", "ModelInputs", "SequenceModel", "build_model", "build_task_model"]
