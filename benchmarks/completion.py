"""Equation-completion benchmark on the CPU: the path-wise scorers against scoring each filled equation whole.

Usage: ``python benchmarks/completion.py [--blanks FILE] [--candidates FILE] [--n-blanks 40] [--model tree_lstm]
[--hidden 50] [--threads 2] [--rounds 3] [--seed 0]``

A script, not a test. Defaults read the released blank file and candidate classes under the data root (identities/)
(about 277 blanks, 1,470 candidates). On the first ``--n-blanks`` blanks it times, in the same run and round-robin
(``--rounds`` rounds, the median reported, so noise from other jobs falls on both sides alike):

1. a classifier (``--model``, randomly initialised: speed does not depend on training) scoring every candidate
   through ``CompletionScorer`` (candidates encoded once, per blank only the path's nodes computed for all
   candidates) against ``fill_and_score`` with ``predict_logits`` (every filled equation built and encoded whole,
   the pre-issue-18 way);
2. the numeric checker: ``numeric_completion_score`` (candidates evaluated once at fixed points, the path in numpy)
   against ``numeric_check`` on each filled equation (the pre-issue-18 scorer).

It prints blanks per second for each and the ratio, and checks that both classifier scorers rank alike (the same
top-1, top-5 and MRR). Target, printed as PASS / FAIL: three runs plus the numeric checker on all 277 blanks within
60 s on 2 cores, extrapolated from the measured rates.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

from neuromath.config import ModelConfig
from neuromath.dataroot import data_root
from neuromath.evaluation.verification import completion_metrics, fill_and_score, numeric_completion_score
from neuromath.models.classifiers import CompletionScorer, build_classifier, node_vocabulary, predict_logits
from neuromath.tasks.identities import numeric_check, read_candidates, read_equations

SHARED = data_root() / "identities"  # $NEUROMATH_DATA, else ./data


def old_numeric_score(filled, seed: int = 0, points: int = 6) -> list[float]:
    """The first scorer of complete (a baseline): numeric_check on each filled equation, one point at a time."""
    rng = random.Random(seed)
    result = []
    for example in filled:
        check = numeric_check(example.tree, rng, points=points)
        result.append(check.agreeing / check.points if check.points else 0.0)
    return result


def timed(function) -> tuple[float, object]:
    started = time.perf_counter()
    value = function()
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blanks", default=str(SHARED / "40k_test_blank_0.json"))
    parser.add_argument("--candidates", default=str(SHARED / "candidate_classes.json"))
    parser.add_argument("--n-blanks", type=int, default=40)
    parser.add_argument("--model", default="tree_lstm")
    parser.add_argument("--hidden", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    everything = [e for e in read_equations(args.blanks) if e.blank is not None]
    examples = everything[: args.n_blanks]
    candidates = read_candidates(args.candidates)
    vocab = node_vocabulary(everything)
    model = build_classifier(ModelConfig(name=args.model, d_model=args.hidden), vocab).eval()

    sides = {
        "classifier, path-wise": lambda: completion_metrics(
            examples, candidates, CompletionScorer(model, vocab, [c.tree for c in candidates])),
        "classifier, whole equations": lambda: completion_metrics(
            examples, candidates, fill_and_score(candidates, lambda f: predict_logits(model, f, vocab).tolist())),
        "numeric, path-wise": lambda: completion_metrics(examples, candidates, numeric_completion_score(candidates)),
        "numeric, whole equations": lambda: completion_metrics(
            examples, candidates, fill_and_score(candidates, old_numeric_score)),
    }
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    metrics = {}
    for _ in range(args.rounds):
        for name, run in sides.items():
            elapsed, metrics[name] = timed(run)
            seconds[name].append(elapsed)

    print(f"{len(examples)} blanks x {len(candidates)} candidates, {args.model} hidden {args.hidden}, "
          f"{args.threads} threads, median of {args.rounds} rounds\n")
    print("| scorer | s (median) | blanks/s | top-1 | MRR |")
    print("|---|---|---|---|---|")
    rate = {}
    for name in sides:
        median = statistics.median(seconds[name])
        rate[name] = len(examples) / median
        top1, mrr = metrics[name]["top1"], metrics[name]["mrr"]
        print(f"| {name} | {median:.2f} | {rate[name]:.1f} | {top1:.3f} | {mrr:.3f} |")
    same = all(metrics["classifier, path-wise"][k] == metrics["classifier, whole equations"][k]
               for k in ("top1", "top5", "mrr"))
    print(f"\nclassifier speed-up {rate['classifier, path-wise'] / rate['classifier, whole equations']:.1f}x "
          f"(same ranking: {same}); numeric speed-up "
          f"{rate['numeric, path-wise'] / rate['numeric, whole equations']:.1f}x")
    estimate = len(everything) * (3 / rate["classifier, path-wise"] + 1 / rate["numeric, path-wise"])
    verdict = "PASS" if estimate <= 60 and same else "FAIL"
    print(f"{verdict}: 3 runs + numeric checker on all {len(everything)} blanks, estimated {estimate:.1f} s "
          f"(target <= 60 s; model loading not included)")


if __name__ == "__main__":
    main()
