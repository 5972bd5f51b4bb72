"""``neuromath analyze edits``: how often equation classifiers call the false equations of an identities file false,
by how far below the root the edit that made each one lies (``neuromath.tasks.identities.audit.edit_levels``).

``neuromath analyze roles``: collect the role vectors of every TP-Attention head and layer of a trained run over a
data file (teacher-forced on the gold answers, so the decoder's roles are those of the right answer) and analyse
them with ``neuromath.evaluation.roles`` (k-means, purity and NMI against token classes, a shuffled-class baseline,
a PCA plot)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import numpy as np
import torch

from neuromath.api import Solver, load
from neuromath.errors import NeuromathError
from neuromath.evaluation.roles import RoleSample, analyse_roles, write_report
from neuromath.models.batching import EncodedExamples, collate, move_batch
from neuromath.nn.precision import autocast
from neuromath.nn.recording import recording
from neuromath.tasks.identities.audit import EDIT_LEVEL_BUCKETS, accuracy_by_edit_level, edit_levels
from neuromath.tasks.identities.equations import read_equations
from neuromath.text import Vocabulary


@dataclass(frozen=True)
class RolesRequest:
    data: str
    out: str
    k: int = 20
    max_examples: int = 2000  # the first this many examples of the data (0: all)
    max_vectors: int = 20000  # per head: a seeded sample of at most this many token occurrences (0: all)
    seed: int = 0
    shuffles: int = 20
    batch_size: int = 64
    head_row: int | None = None  # the row of the table whose clusters and plot are shown (None: the largest NMI)
    format: str | None = None
    json: bool = False

    def __post_init__(self) -> None:
        for name in ("k", "shuffles", "batch_size"):
            if getattr(self, name) < 1:
                raise NeuromathError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        for name in ("max_examples", "max_vectors"):
            if getattr(self, name) < 0:
                raise NeuromathError(f"--{name.replace('_', '-')} must be >= 0 (0: all), got {getattr(self, name)}")


def collect_roles(solver: Solver, examples: list, batch_size: int = 64) -> list[RoleSample]:
    """One ``RoleSample`` per head of every layer that binds roles, over the examples' tokens (padding left out):
    the encoder's roles belong to the source tokens, the decoder's and cross-attention's to the decoder's input
    tokens (bos and the gold answer)."""
    encoded = EncodedExamples(examples, solver.task, solver.source_vocab, solver.target_vocab)
    vectors: dict[tuple[str, int], list[np.ndarray]] = {}
    tokens: dict[tuple[str, int], list[str]] = {}
    titles: dict[str, str] = {}
    for start in range(0, len(encoded), batch_size):
        batch = move_batch(collate([encoded[i] for i in range(start, min(start + batch_size, len(encoded)))]),
                           solver.device)
        with torch.no_grad(), autocast(solver.precision, solver.device), recording(solver.model) as recorder:
            solver.model(batch)
        for name, record in recorder.records.items():
            if record.roles is None:
                continue
            side = "source" if record.query_side == "source" else "target_in"
            ids = batch[side]  # (B, T)
            vocab: Vocabulary = solver.source_vocab if side == "source" else solver.target_vocab
            valid = ids.ne(Vocabulary.pad_id)  # (B, T)
            if side == "target_in":  # a shorter target's eos sits in the decoder's input only to fill the batch
                valid &= ids.ne(Vocabulary.eos_id)
            words = [vocab.tokens[i] for i in ids[valid].tolist()]
            titles[name] = record.title
            for head in range(record.roles.size(1)):
                vectors.setdefault((name, head), []).append(record.roles[:, head][valid].cpu().numpy())  # (n, Dh)
                tokens.setdefault((name, head), []).extend(words)
    if not vectors:
        raise NeuromathError(f"the {solver.config.model.name} model of {solver.run_dir} binds no role vectors "
                             "(roles are TP-Attention's: train with model.attention=tp)")
    return [RoleSample(titles[name], head, np.concatenate(vectors[(name, head)]), tokens[(name, head)])
            for name, head in vectors]


def subsample(sample: RoleSample, limit: int, seed: int) -> RoleSample:
    """At most ``limit`` of the sample's vectors (0: all), chosen with a seeded generator."""
    if not limit or len(sample.vectors) <= limit:
        return sample
    chosen = np.sort(np.random.default_rng(seed).choice(len(sample.vectors), limit, replace=False))
    return RoleSample(sample.layer, sample.head, sample.vectors[chosen], [sample.tokens[i] for i in chosen])


def analyze_roles(run_dir: str, request: RolesRequest) -> int:
    solver = load(run_dir)
    if not isinstance(solver, Solver):
        raise NeuromathError(f"{run_dir} is an equation classifier: role analysis needs a TP-Transformer run")
    task = solver.task
    examples = task.read(request.data, request.format, **task.read_options(solver.config.data, "test"))
    if request.max_examples:
        examples = examples[: request.max_examples]
    if not examples:
        raise NeuromathError(f"{request.data}: no examples to analyse")
    progress = not request.json
    if progress:
        print(f"collecting role vectors over {len(examples)} examples ...", file=sys.stderr, flush=True)
    samples = [subsample(s, request.max_vectors, request.seed)
               for s in collect_roles(solver, examples, request.batch_size)]
    if progress:
        print(f"clustering the roles of {len(samples)} heads (k = {request.k}) ...", file=sys.stderr, flush=True)
    analyses = analyse_roles(samples, request.k, request.seed, request.shuffles)
    meta = {"run": str(run_dir), "data": str(request.data), "examples": len(examples), "k": request.k,
            "seed": request.seed, "shuffles": request.shuffles}
    try:
        paths = write_report(analyses, samples, meta, request.out, request.head_row)
    except ValueError as error:
        raise NeuromathError(f"--head: {error}") from None
    if request.json:
        print(json.dumps(json.loads(paths["json"].read_text(encoding="utf-8"))))
        return 0
    print(f"row  {'layer':<34} head  vectors  purity  shuffled      NMI   shuffled")
    for row, a in enumerate(analyses, start=1):
        print(f"{row:>3}  {a.layer:<34} {a.head + 1:>4} {a.n:>8} {100 * a.purity:6.1f}%  "
              f"{100 * a.shuffled_purity[0]:5.1f}±{100 * a.shuffled_purity[1]:.1f}%  {a.nmi:6.3f}  "
              f"{a.shuffled_nmi[0]:.3f}±{a.shuffled_nmi[1]:.3f}")
    print(f"report written to {paths['markdown']}, {paths['json']}, {paths['plot']}")
    return 0


def analyze_edits(run_dirs: list[str], data: str, as_json: bool = False, batch_size: int = 512) -> int:
    """Print, per run, the share of false equations called false by the level of their edit, and of true ones
    called true (``audit.accuracy_by_edit_level``); ``as_json``: one JSON object."""
    classifiers = []
    for run_dir in run_dirs:
        classifier = load(run_dir)
        if isinstance(classifier, Solver):
            raise NeuromathError(f"{run_dir} is not an equation classifier: edit levels need an identities run")
        classifiers.append(classifier)
    examples = read_equations(data)
    if not any(example.label is False for example in examples):
        raise NeuromathError(f"{data}: no false equations (label 0) to analyse")
    levels = edit_levels(examples)
    results = {}
    for run_dir, classifier in zip(run_dirs, classifiers):
        said = (classifier.logits(examples, batch_size) > 0).tolist()
        results[str(run_dir)] = accuracy_by_edit_level(examples, levels, said)
    if as_json:
        print(json.dumps({"data": str(data), "runs": results}))
        return 0
    buckets = [bucket for bucket in EDIT_LEVEL_BUCKETS if any(bucket in r["false"] for r in results.values())]
    first = next(iter(results.values()))
    print(f"{data}: false equations called false, by the level of their edit (1 = a whole side); "
          f"{first['false_without_edit']} false equations have no true one a single edit away and are left out")
    print("| run | true called true | " + " | ".join(f"level {b} (n={first['false'][b][1]})" for b in buckets) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in buckets) + " |")
    for run_dir, r in results.items():
        cells = [f"{100 * r['false'][b][0] / r['false'][b][1]:.1f}" for b in buckets]
        print(f"| {run_dir} | {100 * r['true'][0] / max(r['true'][1], 1):.1f} | " + " | ".join(cells) + " |")
    return 0
