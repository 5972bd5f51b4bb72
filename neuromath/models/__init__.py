"""Whole models, each registered in ``neuromath.registry.MODELS`` under a name."""

from neuromath.config import ModelConfig
from neuromath.models import recurrent  # noqa: F401  (registers "dns", "bilstm_seq2seq", "group_attention")
from neuromath.models import transformer  # noqa: F401  (registers "transformer")
from neuromath.registry import MODELS


def build_model(
    config: ModelConfig,
    source_vocab_size: int,
    target_vocab_size: int,
    pad_id: int = 0,
    source_classes=None,
    target_classes=None,
    source_tokens=None,
):
    """``source_classes`` / ``target_classes``: ``TokenClasses`` of a side written in prefix or postfix
    notation (from ``TreeGrammar.token_classes(vocabulary.tokens)``), for structure-aware variants;
    ``source_tokens``: the source vocabulary's tokens by id, for models that read the text's structure (group
    attention finds spans and numbers with them)."""
    return MODELS.get(config.name)(
        config, source_vocab_size, target_vocab_size, pad_id, source_classes=source_classes,
        target_classes=target_classes, source_tokens=source_tokens,
    )


def build_task_model(config: ModelConfig, task, source_vocab, target_vocab):
    """A model for ``task``: the task's grammars (if any) are turned into per-id tables of the vocabularies."""
    source_grammar = getattr(task, "source_grammar", None)
    target_grammar = getattr(task, "target_grammar", None)
    return build_model(
        config,
        len(source_vocab),
        len(target_vocab),
        source_vocab.pad_id,
        source_classes=source_grammar.token_classes(source_vocab.tokens) if source_grammar else None,
        target_classes=target_grammar.token_classes(target_vocab.tokens) if target_grammar else None,
        source_tokens=tuple(source_vocab.tokens),
    )
