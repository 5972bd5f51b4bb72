"""neuromath import released: a released state dict of Arabshahi et al. (ForoughA/recursiveMemNet, MIT) as a
neuromath run folder (config.yaml, node_vocab.json, model.pt, summary.json and a model card README.md naming the
source and its licence), which neuromath solve, serve, complete, evaluate and neuromath.load read like a trained run.
The mapping of their weights and vocabulary is ``neuromath.models.released_weights``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch
import yaml

from neuromath.config import config_from_dict, save_config
from neuromath.errors import NeuromathError
from neuromath.fileio import write_atomic, write_text_atomic
from neuromath.models.classifiers import OPERATORS, build_classifier
from neuromath.models.cost import check_classifier_cost, resolve_limits
from neuromath.models.released_weights import (
    BINARY,
    LEAF_KEYS,
    LEAF_TOKENS,
    RELEASED_MODELS,
    SOURCE,
    STACK_SIZE,
    UNARY,
    check_released,
    convert_released,
    released_vocabulary,
)
from neuromath.models.weights import RUN_WEIGHTS, load_run_weights, read_weights
from neuromath.sharing.card import CARD_FILE, usage
from neuromath.tasks import get_task

# what the authors' flags were for each model, for the card
THEIR_FLAGS = {
    "tree_lstm": "--model-class LSTMTrees",
    "tree_smu": ("--model-class StackNNTreesMem2out --stack-node-activation tanh --tree-node-activation tanh "
                 "--top-k 1 --stack-type stack --gate-push-pop --normalize-action --no-op"),
}
LICENCE = "MIT, copyright Forough Arabshahi and Zhichu Lu (the LICENSE file of ForoughA/recursiveMemNet)"


def released_config(model: str, hidden: int, dropout: float) -> dict:
    """The config of an imported model: the identities task, the cell with the settings their model has."""
    settings: dict = {"name": model, "d_model": hidden}
    if model == "tree_lstm":  # their dropout is on the candidate u; leaves are the embedding, memory zero
        settings.update(dropout=dropout, dropout_site="candidate", tree_leaf="embedding")
    else:  # their dropout is on the pushed vector, which neuromath's cell has no place for: none
        settings.update(dropout=0.0, stack_depth=STACK_SIZE)
    return {"data": {"task": "identities"}, "model": settings}


def import_released(checkpoint: str | Path, model: str, out: str | Path, dropout: float = 0.1) -> list[str]:
    """Write the run folder ``out`` (which must not exist, or be empty) from the authors' state dict
    ``checkpoint`` of ``model`` (``tree_lstm`` or ``tree_smu``); ``dropout`` is recorded for fine-tuning only (the
    released runs used 0.1). Returns the names of the files written. The folder is checked before this returns:
    it loads back into the model, with exactly the converted weights."""
    if model not in RELEASED_MODELS:
        raise NeuromathError(f"--model must be one of {', '.join(RELEASED_MODELS)}, not {model!r}")
    checkpoint, out = Path(checkpoint), Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise NeuromathError(f"{out} exists and is not an empty folder: name a new folder")
    state = read_weights(checkpoint)  # torch.load(weights_only=True): tensors only, nothing that runs
    hidden = check_released(state, model, str(checkpoint))
    vocab = released_vocabulary()
    config = config_from_dict(released_config(model, hidden, dropout))
    check_classifier_cost(config, vocab, checkpoint, None, resolve_limits())  # before it is built (--max-memory)
    classifier = build_classifier(config.model, vocab)
    converted = convert_released(state, model, hidden, vocab)
    classifier.load_state_dict(converted)  # the same keys and shapes, or a bug here: a traceback is right
    digest = hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    summary = {
        "imported": True,
        "source": SOURCE,
        "checkpoint": checkpoint.name,
        "checkpoint_sha256": digest,
        "their_flags": THEIR_FLAGS[model],
        "licence": LICENCE,
        "parameters": sum(p.numel() for p in classifier.parameters()),
        "left_out": {
            "operators": [name for name in UNARY + BINARY if name not in OPERATORS],
            "leaves": [key for key in LEAF_KEYS if key not in LEAF_TOKENS],
            "networks": ["Number_enc", "Number_dec"],
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, out / "config.yaml")
    vocab.save(out / "node_vocab.json")
    write_atomic(out / RUN_WEIGHTS, lambda stream: torch.save(classifier.state_dict(), stream))
    write_text_atomic(out / "summary.json", json.dumps(summary, indent=2) + "\n")
    write_text_atomic(out / CARD_FILE, released_card(model, hidden, checkpoint.name, digest, summary))
    check = build_classifier(config.model, vocab)
    load_run_weights(check, out / RUN_WEIGHTS)
    for key, value in check.state_dict().items():
        if not torch.equal(value, converted[key]):
            raise NeuromathError(f"{out / RUN_WEIGHTS}: {key} did not load back as written")
    return ["config.yaml", "node_vocab.json", RUN_WEIGHTS, "summary.json", CARD_FILE]


def released_card(model: str, hidden: int, checkpoint: str, digest: str, summary: dict) -> str:
    """The model card of an imported model: where it comes from, under what licence, what was mapped and left out."""
    task = get_task("identities")
    header = {"library_name": "neuromath", "license": "mit", "tags": ["neuromath", "identities", model,
                                                                      "tree-classifier", "imported"]}
    left = summary["left_out"]
    return "\n\n".join([
        "---\n" + yaml.safe_dump(header, sort_keys=False).rstrip() + "\n---",
        f"# {model} of Arabshahi et al., imported into neuromath",
        f"The authors' own trained {'Tree-LSTM' if model == 'tree_lstm' else 'Tree-SMU (Tree Stack Memory Unit)'} "
        f"(hidden size {hidden}), released in the public repository {SOURCE} (\"Tree Stack Memory Units\", "
        "Arabshahi, Lu, Mundra, Singh, Anandkumar, 2019) as the PyTorch state dict "
        f"`checkpoints/{checkpoint}` (sha256 `{digest}`), trained by their code with `{THEIR_FLAGS[model]}`. "
        "`neuromath import released` read it as plain tensors (`torch.load(weights_only=True)`) and mapped every "
        "weight onto neuromath's own cell, which gives the same scores as their code (to float precision) on the "
        "equations both can read. Nothing here was trained by neuromath.",
        "## How to use it\n\n" + usage(task),
        "## What was mapped\n\n"
        "Each function's parameters became that operator's block of neuromath's per-operator weights, the leaf "
        "embedding the rows of node_vocab.json's leaf tokens, and the output bias the bias of dot(h_left, h_right) "
        "+ b (see `models/released_weights.py`). Left out, since neuromath's equations have no such node: the "
        f"operators {', '.join(left['operators'])}; the leaf rows {', '.join(left['leaves'])} (One and Rational_0 "
        "read as Integer_1 and Integer_0, as their `unify_one_zero` does); and their number encoder and decoder, "
        "which symbolic equations never use. Their `log` takes two arguments; neuromath's one-argument `log` reads "
        "its first-argument weights only. A leaf outside their vocabulary, which their code cannot read, is "
        "neuromath's unknown token (a zero vector).",
        "## Licence\n\n"
        f"The weights are the authors', under the {LICENCE}: keep that licence with them. neuromath's code is under "
        "the MIT licence too.",
    ]) + "\n"
