"""The goal-tree solvers' training step (gts, graph2tree) against the code of an earlier commit, in one run.

Usage: ``python benchmarks/tree_decoder_training.py [--baseline REV] [--train FILE] [--threads N] [--rounds R]
[--batches K] [--models gts,graph2tree] [--sizes preset,reference] [--quick] [--json FILE]``

Two sizes per model:

- ``preset``: the CPU preset ``word_problems/<model>`` as shipped (batch 64);
- ``reference``: the sizes of the SVAMP paper's code (Patel et al. 2021), which the speed issue measured our epoch
  against side by side: embeddings 768, hidden 384, graph feed-forward 768, batch 8, word embeddings learned (the
  ``*_roberta`` presets' sizes without RoBERTa).

A step is what training runs: the forward (``train.precision``; bf16 autocast without its cache of cast weights, as
Lightning runs it), cross-entropy over the target tokens, backward, gradient clipping at the preset's
``optim.grad_clip``, and the optimiser each code base's trainer builds (today ``neuromath.training.module.adam``,
PyTorch's fused Adam where it may run; a baseline without it, ``torch.optim.Adam``), with the allocator setting each
code base's training makes (today ``neuromath.training.allocator``, which keeps freed memory in the process; a
baseline before it, malloc as it is).
A measurement is ``--batches`` consecutive batches of fold 0 of ``mawps-cv`` (``--train``), shuffled with a fixed
seed, so the target lengths mix as in an epoch. ``--baseline`` (default 7c929cf, the code when the speed issue was
filed) is unpacked with ``git archive`` and runs in its own worker process (``decoding.py``'s ``Worker``); the
workers take turns, round after round, so machine noise falls on both; medians are reported, and the epoch they give
(seconds per step x steps per epoch at that batch).

Every setting runs in float32 on both sides; ``today preset-precision`` adds today's step in the preset's own
``train.precision`` (``auto``: bf16 on a CPU with AVX512-BF16 or AMX). The ``today`` settings force one tree node
per step (``model.tree_forcing: nodes``, set where the preset says otherwise: ``graph2tree`` and ``gts`` force levels
since 2026-12-05; a baseline before the setting forced nodes); the two ``levels`` settings are today's code with
``model.tree_forcing: levels`` (teacher forcing one tree depth per step, ``neuromath.nn.goal_tree_levels``).
Before timing, each side takes one step of the same seeded weights with dropout 0 on the first batch; the losses must
agree (the "loss diff" columns): the speed changes may not change what is computed.

To set our step beside the SVAMP code's own, side by side at the ``reference`` size, run ``graph2tree_vs_svamp.py``
with a checkout of that repository.

A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decoding import REPOSITORY, Worker, unpack  # noqa: E402  (baseline workers as decoding.py's)

BASELINE = "7c929cf"
MODELS = ("gts", "graph2tree")
REFERENCE = {"model.d_model": 768, "model.encoder_hidden": 384, "model.d_ff": 768, "train.batch_size": 8}
SIZES = ("preset", "reference")
SETTINGS = (("baseline", "32-true"), ("today", "32-true"), ("today", "preset"), ("levels", "32-true"),
            ("levels", "preset"))
LEVELS = "model.tree_forcing=levels"  # the "levels" settings: today's code with teacher forcing a tree level per step
NODES = "model.tree_forcing=nodes"  # the other settings: one tree node per step, whatever the preset forces


def sets_of(model: str, size: str, dropout: float | None = None) -> list[str]:
    """The ``--set`` values of a model at a size (``model.d_ff`` only where the model has one)."""
    values = dict(REFERENCE) if size == "reference" else {}
    if model == "gts":
        values.pop("model.d_ff", None)
    if dropout is not None:
        values["model.dropout"] = dropout
    return [f"{key}={value}" for key, value in values.items()]


# ---------------------------------------------------------------------------- worker (one code base per process)


def task_model(config, train_file: str, read: dict):
    """The model of ``config`` (in training mode) over the vocabularies of ``train_file``, and the file's examples
    encoded; ``read`` keeps each task's examples, so a file is read once for all models of a task. It imports only
    what every baseline has, from the ``neuromath`` on the path (a worker's), so ``word_problems.py`` uses it too."""
    from neuromath.models import build_task_model
    from neuromath.models.batching import EncodedExamples
    from neuromath.tasks import get_task
    from neuromath.text import Vocabulary

    task = get_task(config.data.task)
    if task.name not in read:
        read[task.name] = task.read(train_file, None)
    examples = read[task.name]
    source_vocab = Vocabulary.build((task.source_tokens(e) for e in examples), level=task.vocab_level)
    target_vocab = Vocabulary.build((task.target_tokens(e) for e in examples), level=task.vocab_level)
    model = build_task_model(config.model, task, source_vocab, target_vocab).train()
    return model, EncodedExamples(examples, task, source_vocab, target_vocab)


def training_autocast(precision: str):
    """Autocast as Lightning's mixed-precision plugin enters it around a training step: no cache of cast weights, so
    each use of a weight casts it again and its gradient comes back through each cast."""
    import torch

    if precision == "bf16-mixed":
        return torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False)
    return contextlib.nullcontext()


def optimizer_for(model, optim, precision: str):
    """The optimiser the trainer of the ``neuromath`` on the path builds (today ``neuromath.training.module.adam``;
    a baseline before it: PyTorch's Adam)."""
    import torch

    groups = [{"params": list(model.parameters()), "lr": optim.lr}]
    try:
        from neuromath.training.module import adam
    except ImportError:
        return torch.optim.Adam(groups, betas=optim.betas, eps=optim.eps, weight_decay=optim.weight_decay)
    return adam(groups, optim, type("Trainer", (), {"precision": precision}))


def training_step(model, optimizer, batch: dict, precision: str, clip: float):
    """One training step as the trainer takes it: forward in ``precision``, cross-entropy over the target tokens,
    backward, gradient clipping at ``clip`` (0: none), the optimiser's step; the loss."""
    import torch
    import torch.nn.functional as F

    optimizer.zero_grad(set_to_none=True)
    with training_autocast(precision):
        logits = model(batch)
    loss = F.cross_entropy(logits.flatten(0, 1).float(), batch["target_out"].flatten(), ignore_index=0)
    loss.backward()
    if clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return loss


def worker(threads: int, train: str, batches: int) -> None:
    """Answer one JSON line per request ``{"model", "size", "precision", "check", "levels"}``: the seconds per step
    over the timed batches, or (``check``) the first step's loss with dropout 0 from seed 0; ``levels`` adds
    ``LEVELS`` to the model's settings, and otherwise ``NODES`` where the preset forces anything else."""
    import torch

    from neuromath.config import load_config
    from neuromath.models.batching import collate
    from neuromath.nn.precision import resolve_precision

    try:  # the allocator setting training makes today (faulting large tensors in again every step costs more than
        from neuromath.training.allocator import keep_freed_memory  # some of the ops that use them)
    except ImportError:  # a baseline before it trained with malloc as it is
        pass
    else:
        keep_freed_memory()

    torch.set_num_threads(threads)
    read, built = {}, {}

    def setup(model_name: str, size: str, precision: str, check: bool, levels: bool):
        key = (model_name, size, precision, check, levels)
        if key in built:
            return built[key]
        sets = sets_of(model_name, size, 0.0 if check else None) + ([LEVELS] if levels else [])
        config = load_config(f"word_problems/{model_name}", sets)
        if not levels and getattr(config.model, "tree_forcing", "nodes") != "nodes":  # a baseline lacks the key
            config = load_config(f"word_problems/{model_name}", sets + [NODES])
        torch.manual_seed(0)  # the same weights on both sides
        model, encoded = task_model(config, train, read)
        order = torch.randperm(len(encoded), generator=torch.Generator().manual_seed(1)).tolist()
        batch_size = config.train.batch_size
        chosen = [collate([encoded[i] for i in order[start: start + batch_size]])
                  for start in range(0, min(len(encoded), batch_size * (1 if check else batches)), batch_size)]
        resolved = resolve_precision(config.train.precision if precision == "preset" else precision, "cpu")
        optimizer = optimizer_for(model, config.optim, resolved)
        steps = math.ceil(len(encoded) * (1 - config.data.valid_fraction) / batch_size)
        built[key] = (model, optimizer, chosen, resolved, config.optim.grad_clip, steps)
        return built[key]

    for line in sys.stdin:
        request = json.loads(line)
        model, optimizer, chosen, resolved, clip, steps = setup(
            request["model"], request["size"], request["precision"], request.get("check", False),
            request.get("levels", False))
        start = time.perf_counter()
        for batch in chosen:
            loss = training_step(model, optimizer, batch, resolved, clip)
        seconds = (time.perf_counter() - start) / len(chosen)
        print(json.dumps({"seconds": seconds, "loss": float(loss.detach()), "precision": resolved,
                          "steps_per_epoch": steps}), flush=True)


# ---------------------------------------------------------------------------- driver


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"git revision to compare with (default {BASELINE})")
    parser.add_argument("--train", default=None, help="training file (default: mawps-cv/fold0/train.csv under the "
                                                      "data root)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads of each worker (default 1)")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per setting (default 5)")
    parser.add_argument("--batches", type=int, default=12, help="training steps per measurement (default 12)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma list (default gts,graph2tree)")
    parser.add_argument("--sizes", default=",".join(SIZES), help="comma list (default preset,reference)")
    parser.add_argument("--quick", action="store_true", help="2 batches, 1 round: a smoke run")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements to this JSON file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.rounds = 2, 1
    if args.train is None:
        from neuromath.dataroot import data_root

        args.train = str(data_root() / "mawps-cv" / "fold0" / "train.csv")
    if args.worker:
        worker(args.threads, args.train, args.batches)
        return 0
    if not Path(args.train).is_file():
        raise SystemExit(f"tree_decoder_training.py: no training file {args.train} (set --train or the data root)")
    report = {"baseline": args.baseline, "threads": args.threads, "rounds": args.rounds, "batches": args.batches,
              "train": args.train, "rows": []}
    with tempfile.TemporaryDirectory() as folder:
        options = ["--train", args.train, "--batches", str(args.batches)]
        workers = {"baseline": Worker(__file__, unpack(args.baseline, Path(folder)), args.threads, options),
                   "today": Worker(__file__, REPOSITORY, args.threads, options)}

        def ask(code: str, **request) -> dict:  # "levels" is today's worker with LEVELS
            if code == "levels":
                return workers["today"].ask(levels=True, **request)
            return workers[code].ask(**request)

        print(f"goal-tree training steps, {args.batches} batches of {args.train} per measurement; {args.threads} "
              f"threads per worker; baseline {args.baseline}; medians of {args.rounds} rounds\n")
        print("| model | size | baseline fp32 s/step (epoch s) | today fp32 | today preset precision | levels fp32 | "
              "levels preset precision | loss diff (dropout 0): today, levels |")
        print("|---|---|---|---|---|---|---|---|")
        for model in args.models.split(","):
            for size in args.sizes.split(","):
                losses = {code: ask(code, model=model, size=size, precision="32-true", check=True)["loss"]
                          for code in ("baseline", "today", "levels")}
                seconds = {setting: [] for setting in SETTINGS}
                answers = {}
                for setting in SETTINGS:  # warm-up
                    code, precision = setting
                    answers[setting] = ask(code, model=model, size=size, precision=precision)
                for _ in range(args.rounds):
                    for setting in SETTINGS:
                        code, precision = setting
                        seconds[setting].append(ask(code, model=model, size=size, precision=precision)["seconds"])
                median = {setting: statistics.median(values) for setting, values in seconds.items()}
                steps = answers[SETTINGS[0]]["steps_per_epoch"]
                base = median[SETTINGS[0]]
                gaps = [abs(losses["baseline"] - losses[code]) for code in ("today", "levels")]
                cells = [f"{median[s]:.4f} ({median[s] * steps:.0f} s, {base / median[s]:.2f}x)" for s in SETTINGS[1:]]
                print(f"| {model} | {size} | {base:.4f} ({base * steps:.0f} s) | " + " | ".join(cells)
                      + f" ({answers[SETTINGS[2]]['precision']}) | {gaps[0]:.1e}, {gaps[1]:.1e} |", flush=True)
                report["rows"].append({
                    "model": model, "size": size, "sets": sets_of(model, size), "steps_per_epoch": steps,
                    "seconds_per_step": {" ".join(s): median[s] for s in SETTINGS},
                    "seconds_all": {" ".join(s): seconds[s] for s in SETTINGS},
                    "speedup_over_baseline_fp32": {" ".join(s): base / median[s] for s in SETTINGS[1:]},
                    "preset_precision": answers[SETTINGS[2]]["precision"],
                    "first_step_loss_dropout0": losses,
                })
                if args.json is not None:
                    args.json.write_text(json.dumps(report, indent=1))
        for process in workers.values():
            process.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
