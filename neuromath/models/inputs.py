"""The one constructor contract of the registered sequence models: ``Model(config: ModelConfig, inputs: ModelInputs)``.

``ModelInputs`` holds what a model learns from the data rather than from its config: the vocabulary sizes, the
padding id, and the structure of each side (token classes of a side written in prefix or postfix notation, the
source tokens by id for models that read the text's structure).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from neuromath.expr.grammar import TokenClasses
from neuromath.nn.pretrained import PRETRAINED_DIR


@dataclass(frozen=True)
class ModelInputs:
    source_vocab_size: int
    target_vocab_size: int
    pad_id: int = 0
    # ``TokenClasses`` of a side written in prefix or postfix notation
    # (``TreeGrammar.token_classes(vocabulary.tokens)``), for the structure-aware Transformer variants; None when the
    # side is plain text
    source_classes: TokenClasses | None = None
    target_classes: TokenClasses | None = None
    # the source vocabulary's tokens by id: group attention finds spans and numbers with them
    source_tokens: Sequence[str] | None = None
    # the target vocabulary's tokens by id: the tree decoders find operators, constants and number slots with them
    target_tokens: Sequence[str] | None = None
    # whether the task's batches carry the source tokens as written (``SourceText.in_batches``; model.char_ngrams
    # reads them)
    source_words: bool = False
    # a trained model's pretrained encoder files (a run's or an export's pretrained/: neuromath.nn.pretrained), from
    # which its encoder is built without downloading; None when a run starts and reads model.pretrained itself
    pretrained_dir: Path | None = None

    @classmethod
    def for_task(cls, task, source_vocab, target_vocab, folder: Path | None = None) -> ModelInputs:
        """The inputs of a model for ``task``: the task's grammars (if any) as per-id tables of the vocabularies; with
        ``folder`` (a trained run or an export) its pretrained encoder files, where it has them."""
        pretrained = Path(folder) / PRETRAINED_DIR if folder is not None else None
        source_grammar = getattr(task, "source_grammar", None)
        target_grammar = getattr(task, "target_grammar", None)
        source_text = getattr(task, "source_text", None)  # an EquationTask has none
        return cls(
            len(source_vocab),
            len(target_vocab),
            source_vocab.pad_id,
            source_classes=source_grammar.token_classes(source_vocab.tokens) if source_grammar else None,
            target_classes=target_grammar.token_classes(target_vocab.tokens) if target_grammar else None,
            source_tokens=tuple(source_vocab.tokens),
            target_tokens=tuple(target_vocab.tokens),
            source_words=source_text is not None and source_text.in_batches,
            pretrained_dir=pretrained if pretrained is not None and pretrained.is_dir() else None,
        )
