"""Graph2Tree's training step against the SVAMP repository's ``train_tree``, measured side by side in one run.

Usage: ``python benchmarks/graph2tree_vs_svamp.py --reference PATH [--train FILE] [--threads N] [--rounds R]
[--batches K] [--quick] [--json FILE]``

``PATH`` is the ``code/graph2tree`` folder of a checkout of arkilpatel/SVAMP (Patel et al. 2021), the research code
whose epoch the speed issue set ours beside. Its ``src.train_and_evaluate`` is imported as it is (it star-imports the
models, the loss, ``pre_data`` and two helper modules). Its modules import gensim, nltk and pandas at the top, for
word2vec, tokenising and reading csv files, none of which a training step uses: where one is not installed, the
script puts an empty module in its place and says so. Nothing of that repository is kept in this repository.

Both sides train on the same problems: ``--batches`` batches of 8 from fold 0 of ``mawps-cv`` (``--train``), drawn
in one fixed shuffled order, so the target lengths mix as in an epoch. Their batches are made by their own
``prepare_data`` and ``prepare_train_batch`` from pairs built from our reading of the file (the masked question with
``NUM`` for each number, the prefix equation with ``N0``, ``N1``, ...; constants used five times or more are
generated, as their ``transfer_num`` decides; quantity cells are the words within three of a number, their graph's
rule); ours by ``neuromath``'s collate. Sizes are the reference's: embeddings 768, hidden 384, two-layer Bi-GRU
encoder (their ``-cell_type gru -depth 2``), batch 8, dropout 0.5, learned word embeddings (``-embedding random``).
Their graph module's feed-forward is 384 wide and ours 768 (``tree_decoder_training.py``'s ``reference`` size); the
parameter counts are printed.

A step is what each code's training loop runs for a batch. Theirs: ``train_tree`` (tensors from the batch's lists,
forward, their masked cross-entropy, backward, five Adam steps; no gradient clipping). Ours: forward, cross-entropy,
backward, clipping at the preset's 5.0, Adam as our trainer builds it, in float32 and in the preset's precision
(``auto``: bf16 autocast on a CPU with AVX512-BF16 or AMX), with node-by-node teacher forcing (``model.tree_forcing:
nodes``, ``graph2tree_nodes``) and with ``model.tree_forcing: levels`` (the ``graph2tree`` preset's since 2026-12-05).
Making the batches is timed apart (their ``prepare_train_batch``, which their epoch loop calls before its timer
starts; our collate). The process sets the allocator as our training does
(``neuromath.training.allocator``), for both sides. The settings take turns round after round, so machine noise falls
on all of them; reported are medians, the epoch they give (seconds per step x the steps of an epoch of fold 0 at
batch 8: all of the file, as their loop trains it) and the ratios theirs / ours (above 1: ours is faster). A GPU,
where there is one, is hidden: their code moves tensors to it whenever it sees one.

A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import importlib.abc
import importlib.machinery
import json
import logging
import math
import os
import random
import statistics
import sys
import time
import types
from pathlib import Path

os.environ["CUDA_VISIBLE_DEVICES"] = ""  # a CPU benchmark; their code moves tensors to a GPU whenever it sees one
import torch  # noqa: E402

from neuromath.config import load_config  # noqa: E402
from neuromath.dataroot import data_root  # noqa: E402
from neuromath.models.batching import collate  # noqa: E402
from neuromath.nn.precision import resolve_precision  # noqa: E402
from neuromath.training.allocator import keep_freed_memory  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tree_decoder_training import (  # noqa: E402  (our model at the reference size, the trainer's step)
    LEVELS,
    NODES,
    optimizer_for,
    sets_of,
    task_model,
    training_step,
)

BATCH, EMBEDDING, HIDDEN = 8, 768, 384
UNUSED_IMPORTS = ("gensim", "nltk", "pandas")  # imported by their modules, used by no training step
NEEDED = ("train_tree", "prepare_data", "prepare_train_batch", "Embedding", "EncoderSeq", "Prediction",
          "GenerateNode", "Merge")
SETTINGS = (("theirs", "32-true"), ("ours", "32-true"), ("ours", "preset"), ("levels", "32-true"),
            ("levels", "preset"))


def placeholder(name: str) -> types.ModuleType:
    """An empty module whose every attribute is None (``from gensim import models`` binds None)."""
    module = types.ModuleType(name)

    def attribute(key: str):
        if key.startswith("__"):
            raise AttributeError(key)
        return None

    module.__getattr__ = attribute
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    return module


class Placeholders(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports each of ``UNUSED_IMPORTS`` that nothing else finds as a placeholder, and keeps the names it made."""

    def __init__(self):
        self.made: list[str] = []

    def find_spec(self, name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, self) if name in UNUSED_IMPORTS else None

    def create_module(self, spec):
        self.made.append(spec.name)
        return placeholder(spec.name)

    def exec_module(self, module):
        pass


def load_reference(path: Path, script: str = "graph2tree_vs_svamp.py",
                   checkout: str = "the code/graph2tree folder of a checkout of arkilpatel/SVAMP",
                   needed: tuple = NEEDED):
    """Their ``src.train_and_evaluate`` (imported from ``path``) and the names of the modules replaced by
    placeholders."""
    source = path / "src" / "train_and_evaluate.py"
    if not source.is_file():
        raise SystemExit(f"{script}: {source} does not exist; --reference names {checkout}")
    finder = Placeholders()
    sys.meta_path.append(finder)  # last: an installed package is imported as it is
    sys.path.insert(0, str(path))
    try:
        module = importlib.import_module("src.train_and_evaluate")
    finally:  # their modules keep what they bound; nothing imported later may take a placeholder for the package
        sys.path.remove(str(path))
        sys.meta_path.remove(finder)
        for name in finder.made:
            del sys.modules[name]
    replaced = finder.made
    missing = [name for name in needed if not hasattr(module, name)]
    if missing:
        raise SystemExit(f"{script}: {source} (with what it imports) has no {', '.join(missing)}")
    return module, replaced


def their_pairs(examples) -> tuple[list, list[str], int]:
    """The pairs their ``transfer_num`` makes, built from our examples: (words with NUM, prefix equation with N<i>,
    numbers, positions of the numbers, quantity cells), the constants they generate, the most numbers a problem has."""
    pairs, counts = [], collections.Counter()
    for example in examples:
        words = example.masked_text.lower().split()
        positions = [i for i, word in enumerate(words) if word[:1] == "n" and word[1:].isdigit()]
        words = ["NUM" if i in positions else word for i, word in enumerate(words)]
        equation = [f"N{token[1:]}" if token[:1] == "n" and token[1:].isdigit() else token
                    for token in example.equation]
        counts.update(token for token in equation if token not in "+-*/^" and token[0] != "N")
        cells = sorted({j for i in positions for j in range(max(0, i - 3), min(len(words), i + 4))} - set(positions))
        pairs.append((words, equation, list(example.numbers), positions, cells))
    generated = [constant for constant, count in counts.items() if count >= 5]
    return pairs, generated, max(len(pair[2]) for pair in pairs)


class Reference:
    """What a reference side has: its ``parts`` (modules), and ``batches`` of the chosen problems (``groups``) made by
    its own ``prepare_train_batch`` (``module``) from its prepared pairs, ``batch_size`` at a time."""

    module, parts, prepared, groups, batch_size = None, (), (), (), 0

    def parameters(self) -> int:
        return sum(p.numel() for part in self.parts for p in part.parameters())

    def batches(self) -> tuple[list, float]:
        """One batch per group through their ``prepare_train_batch`` (which copies and pads the pairs, and in
        SVAMP's code builds the graphs), and the seconds it took a batch."""
        start, made = time.perf_counter(), []
        for group in self.groups:
            columns = self.module.prepare_train_batch([self.prepared[i] for i in group], self.batch_size)
            made.append([column[0] for column in columns])
        return made, (time.perf_counter() - start) / len(self.groups)


class Theirs(Reference):
    """Their embedding, encoder, decoder parts and five optimisers, and their batches of the chosen problems."""

    batch_size = BATCH

    def __init__(self, module, examples, groups: list[list[int]], seed: int):
        pairs, generated, copy_nums = their_pairs(examples)
        self.config = types.SimpleNamespace(embedding="random", challenge_disp=False)
        logger = logging.getLogger("svamp")
        self.input_lang, self.output_lang, prepared, _ = module.prepare_data(
            self.config, logger, pairs, [], 1, generated, copy_nums, tree=True)
        self.generate_ids = [self.output_lang.word2index[number] for number in generated]
        operators = self.output_lang.n_words - copy_nums - 1 - len(generated)
        torch.manual_seed(seed)
        self.parts = [
            module.Embedding(self.config, self.input_lang, input_size=self.input_lang.n_words,
                             embedding_size=EMBEDDING, dropout=0.5),
            module.EncoderSeq(cell_type="gru", embedding_size=EMBEDDING, hidden_size=HIDDEN, n_layers=2, dropout=0.5),
            module.Prediction(hidden_size=HIDDEN, op_nums=operators, input_size=len(generated), dropout=0.5),
            module.GenerateNode(hidden_size=HIDDEN, op_nums=operators, embedding_size=EMBEDDING, dropout=0.5),
            module.Merge(hidden_size=HIDDEN, embedding_size=EMBEDDING, dropout=0.5),
        ]
        self.optimizers = [torch.optim.Adam(part.parameters(), lr=1e-3, weight_decay=1e-5) for part in self.parts]
        self.module, self.prepared, self.groups = module, prepared, groups

    def step(self, batch) -> float:
        (inputs, input_lengths, outputs, output_lengths, _, num_stacks, num_positions, num_sizes, num_values,
         graph, cells) = batch
        return self.module.train_tree(
            self.config, inputs, input_lengths, outputs, output_lengths, num_stacks, num_sizes, num_values, cells,
            self.generate_ids, *self.parts, *self.optimizers, self.input_lang, self.output_lang, num_positions, graph)


class Ours:
    """Our model of a preset with ``sets`` (default: Graph2Tree at the SVAMP code's size), teacher-forced node by
    node or (``levels``) level by level, its optimiser per precision, and the collated batches of the chosen problems
    (``groups``). A step is ``tree_decoder_training.training_step``, the trainer's."""

    def __init__(self, train: str, seed: int, levels: bool, read: dict, preset: str = "word_problems/graph2tree",
                 sets: list[str] | None = None):
        sets = sets_of("graph2tree", "reference") if sets is None else sets
        self.config = load_config(preset, sets + [LEVELS if levels else NODES])
        torch.manual_seed(seed)
        self.model, self.encoded = task_model(self.config, train, read)
        self.groups: list[list[int]] = []
        self.optimizers = {}

    def parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def batches(self) -> tuple[list, float]:
        start = time.perf_counter()
        made = [collate([self.encoded[i] for i in group]) for group in self.groups]
        return made, (time.perf_counter() - start) / len(self.groups)

    def step(self, batch, precision: str) -> float:
        if precision not in self.optimizers:
            self.optimizers[precision] = optimizer_for(self.model, self.config.optim, precision)
        loss = training_step(self.model, self.optimizers[precision], batch, precision, self.config.optim.grad_clip)
        return float(loss.detach())


def arguments(description: str, reference_help: str, batches: int, argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--reference", type=Path, required=True, help=reference_help)
    parser.add_argument("--train", default=None, help="training file (default: mawps-cv/fold0/train.csv under the "
                                                      "data root)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per setting (default 5)")
    parser.add_argument("--batches", type=int, default=batches, help=f"training steps per measurement (default "
                                                                     f"{batches})")
    parser.add_argument("--quick", action="store_true", help="2 batches, 1 round: a smoke run")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements to this JSON file")
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.rounds = 2, 1
    return args


def training_file(args, script: str) -> str:
    if args.train is None:
        args.train = str(data_root() / "mawps-cv" / "fold0" / "train.csv")
    if not Path(args.train).is_file():
        raise SystemExit(f"{script}: no training file {args.train} (set --train or the data root)")
    return args.train


def prepare(args) -> None:
    """The process as our training sets it up: the allocator, the threads; Python's random seeded for their batch
    making, which shuffles with it."""
    keep_freed_memory()
    torch.set_num_threads(args.threads)
    random.seed(0)


def chosen_groups(count: int, batches: int, batch: int) -> list[list[int]]:
    """The problems of each timed batch: consecutive slices of one fixed shuffled order."""
    order = torch.randperm(count, generator=torch.Generator().manual_seed(1)).tolist()
    return [order[start: start + batch] for start in range(0, batch * batches, batch)]


def compare(args, sides: dict, resolved: dict, steps_per_epoch: int, report: dict) -> dict:
    """Time every setting (side, precision) of ``resolved`` (which maps each to the precision it runs in; the first
    is theirs) in turns, round after round; print the table and return the report (also written to ``--json``).
    ``sides`` maps theirs, ours and levels to objects with ``batches`` and ``step``."""
    print(f"parameters: theirs {sides['theirs'].parameters():,}, ours {sides['ours'].parameters():,}")

    def measure(name: str, precision: str) -> tuple[float, float, float]:
        """Seconds per step and per batch made, and the last loss."""
        side = sides[name]
        batches, making = side.batches()
        start = time.perf_counter()
        for batch in batches:
            loss = side.step(batch) if name == "theirs" else side.step(batch, precision)
        return (time.perf_counter() - start) / len(batches), making, loss

    settings = list(resolved)
    first = {" ".join(setting): measure(setting[0], resolved[setting])[2] for setting in settings}  # warm-up
    for setting, loss in first.items():
        if not math.isfinite(loss):
            raise SystemExit(f"{Path(sys.argv[0]).name}: {setting}: loss {loss} after a measurement")
    seconds = {setting: [] for setting in settings}
    making = {name: [] for name in sides}
    for _ in range(args.rounds):
        for setting in settings:
            step, make, _ = measure(setting[0], resolved[setting])
            seconds[setting].append(step)
            making[setting[0]].append(make)
    median = {setting: statistics.median(values) for setting, values in seconds.items()}
    make = {name: statistics.median(values) for name, values in making.items()}
    base = median[settings[0]]
    print("\n| setting | precision | s/step | epoch s (steps) | theirs / this | with batch making: s/step, ratio |")
    print("|---|---|---|---|---|---|")
    rows = []
    for setting in settings:
        name = setting[0]
        with_making = median[setting] + make[name]
        ratio, ratio_making = base / median[setting], (base + make["theirs"]) / with_making
        print(f"| {name} | {resolved[setting]} | {median[setting]:.4f} | {median[setting] * steps_per_epoch:.0f} "
              f"({steps_per_epoch}) | {ratio:.2f}x | {with_making:.4f}, {ratio_making:.2f}x |", flush=True)
        rows.append({"setting": name, "precision": resolved[setting], "seconds_per_step": median[setting],
                     "seconds_all": seconds[setting], "epoch_seconds": median[setting] * steps_per_epoch,
                     "theirs_over_this": ratio, "with_batch_making": {"seconds_per_step": with_making,
                                                                      "theirs_over_this": ratio_making}})
    report.update({
        "reference": str(args.reference), "train": args.train, "threads": args.threads, "rounds": args.rounds,
        "batches": args.batches, "steps_per_epoch": steps_per_epoch, "torch": torch.__version__,
        "parameters": {"theirs": sides["theirs"].parameters(), "ours": sides["ours"].parameters()},
        "batch_making_seconds": make, "losses_after_warm_up": first, "rows": rows})
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1))
    return report


def main(argv=None) -> int:
    args = arguments(__doc__.split("\n\n")[0], "the code/graph2tree folder of a checkout of arkilpatel/SVAMP", 12,
                     argv)
    module, replaced = load_reference(args.reference)
    train = training_file(args, "graph2tree_vs_svamp.py")

    prepare(args)
    read: dict = {}
    ours = Ours(train, 0, False, read)
    levels = Ours(train, 0, True, read)
    examples = read["word_problems"]
    groups = chosen_groups(len(examples), args.batches, BATCH)
    ours.groups = levels.groups = groups
    theirs = Theirs(module, examples, groups, 0)
    preset = resolve_precision(ours.config.train.precision, "cpu")
    if replaced:
        print(f"placeholders for {', '.join(replaced)} (imported by the reference, used by no training step)")
    print(f"Graph2Tree training steps, {args.batches} batches of {BATCH} from {train} per measurement; "
          f"{args.threads} threads; medians of {args.rounds} rounds; our preset precision: {preset}")
    resolved = {setting: preset if setting[1] == "preset" else setting[1] for setting in SETTINGS}
    compare(args, {"theirs": theirs, "ours": ours, "levels": levels}, resolved,
            math.ceil(len(examples) / BATCH),  # their epoch: all of the training file
            {"placeholders": replaced, "batch_size": BATCH})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
