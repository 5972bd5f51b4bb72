"""Tree-cell benchmark on the CPU: level-batched engine against node-at-a-time recursion.

Usage: ``python benchmarks/trees.py [--hidden 50] [--batch 128] [--threads 2] [--batches 10]
[--recursive-trees 32] [--rounds 3] [--cells tree_lstm mtree_lstm ...] [--seed 0]``

A script, not a test. For every cell of ``neuromath.registry.TREE_CELLS`` (or those named by ``--cells``) it
measures trees per second of forward + backward (loss: mean square of the roots' h) over the same random
equation-like trees, two ways in the same run:

1. level-batched: ``TreeEncoder.forward`` on ``--batches`` batches of ``--batch`` trees, already flattened
   (one ``cell.node`` call per height level); ``make_tree_batch`` is timed separately (it runs in the collate
   function);
2. node-at-a-time: ``TreeEncoder.recursive_forward`` on each of ``--recursive-trees`` trees of one batch, the
   roots' losses summed, one backward.

The cells are measured round-robin, ``--rounds`` times (after one warm-up batch each), so that noise from other
jobs on the machine falls on all of them alike; reported are the median round and, for the level-batched engine,
the range over the rounds (a wide range means the machine was busy and the numbers are unreliable).

Trees: 14 operators (5 binary, 9 unary), 30 leaf tokens, heights 1..10, at most 40 nodes (16 on average), like
the equations of Arabshahi et al. 2018. Target, printed as PASS / FAIL: for ``tree_lstm`` the level-batched
engine at least 8x faster than node-at-a-time and at least 3000 trees/s (hidden 50, batch 128, 2 threads).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

from neuromath.nn.tree_engine import TreeEncoder, make_tree_batch
from neuromath.registry import TREE_CELLS

BINARY_OPERATORS = ["Add", "Mul", "Pow", "Sub", "Div"]
UNARY_OPERATORS = ["sin", "cos", "tan", "csc", "sec", "cot", "log", "exp", "sqrt"]
N_OPERATORS = len(BINARY_OPERATORS) + len(UNARY_OPERATORS)
N_LEAF_TOKENS = 30
MAX_NODES = 40
MAX_HEIGHT = 10


def random_tree(rng: random.Random, height: int):
    """A random tree of exactly this height: one child reaches height - 1, a binary node's (60%) other is shallow."""
    if height == 0:
        return (rng.randrange(N_LEAF_TOKENS), ())
    deep_child = random_tree(rng, height - 1)
    if rng.random() < 0.4:  # unary
        return (rng.randrange(len(BINARY_OPERATORS), N_OPERATORS), (deep_child,))
    operator_id = rng.randrange(len(BINARY_OPERATORS))
    shallow_child = random_tree(rng, min(height - 1, rng.choice([0, 1, 1, 2, 2, 3])))
    children = (deep_child, shallow_child) if rng.random() < 0.5 else (shallow_child, deep_child)
    return (operator_id, children)


def count_nodes(tree) -> int:
    return 1 + sum(count_nodes(child) for child in tree[1])


def random_forest(rng: random.Random, n_trees: int) -> list:
    trees = []
    while len(trees) < n_trees:
        tree = random_tree(rng, rng.randint(1, MAX_HEIGHT))
        if count_nodes(tree) <= MAX_NODES:
            trees.append(tree)
    return trees


def time_level_batched(encoder: TreeEncoder, batches: list) -> float:
    """Seconds per tree of forward + backward with the level-batched engine (batches already flattened)."""
    start = time.perf_counter()
    for batch in batches:
        encoder.zero_grad(set_to_none=True)
        roots_hidden = encoder(batch)[0][batch.roots]
        roots_hidden.pow(2).mean().backward()
    return (time.perf_counter() - start) / sum(batch.n_trees for batch in batches)


def time_node_at_a_time(encoder: TreeEncoder, forests: list) -> float:
    """Seconds per tree of forward + backward by recursion, node at a time (the root is the last node returned)."""
    start = time.perf_counter()
    for trees in forests:
        encoder.zero_grad(set_to_none=True)
        roots_hidden = torch.stack([encoder.recursive_forward(tree)[-1] for tree in trees])
        roots_hidden.pow(2).mean().backward()
    return (time.perf_counter() - start) / sum(len(trees) for trees in forests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=50)
    parser.add_argument("--batch", type=int, default=128, help="trees per batch")
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    parser.add_argument("--batches", type=int, default=10, help="timed batches per round, level-batched engine")
    parser.add_argument("--recursive-trees", type=int, default=32,
                        help="trees per round timed node at a time (the first of one batch)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all cells; the median round is reported")
    parser.add_argument("--cells", nargs="+", default=None, help="cell names (default: every registered cell)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    cells = args.cells or TREE_CELLS.names()
    forests = [random_forest(rng, args.batch) for _ in range(args.batches + 1)]
    node_counts = [sum(count_nodes(tree) for tree in trees) for trees in forests]

    start = time.perf_counter()
    batches = [make_tree_batch(trees) for trees in forests]
    batching_seconds = (time.perf_counter() - start) / len(forests)
    levels = [batch.n_levels for batch in batches]
    print(f"threads {args.threads}, hidden {args.hidden}, {args.batch} trees per batch, "
          f"{sum(node_counts) / len(node_counts) / args.batch:.1f} nodes per tree, "
          f"{min(levels)}-{max(levels)} levels per batch, {args.rounds} rounds")
    print(f"make_tree_batch: {args.batch / batching_seconds:,.0f} trees/s ({1000 * batching_seconds:.1f} ms per batch)")

    encoders = {cell: TreeEncoder(cell, N_LEAF_TOKENS, N_OPERATORS, args.hidden) for cell in cells}
    for encoder in encoders.values():
        time_level_batched(encoder, batches[:1])  # warm-up
    batched = {cell: [] for cell in cells}  # seconds per tree, one entry per round
    recursive = {cell: [] for cell in cells}
    for round_index in range(args.rounds):  # round-robin, so that machine noise falls on every cell alike
        recursive_forest = forests[1 + round_index % args.batches][: args.recursive_trees]
        for cell, encoder in encoders.items():
            batched[cell].append(time_level_batched(encoder, batches[1:]))
            recursive[cell].append(time_node_at_a_time(encoder, [recursive_forest]))

    print(f"\n{'cell':<24}{'level-batched trees/s (range)':>32}{'node-at-a-time trees/s':>25}{'speed ratio':>13}")
    results = {}
    for cell in cells:
        batched_rate = 1 / statistics.median(batched[cell])
        recursive_rate = 1 / statistics.median(recursive[cell])
        spread = f"({1 / max(batched[cell]):,.0f}-{1 / min(batched[cell]):,.0f})"
        results[cell] = (batched_rate, batched_rate / recursive_rate)
        ratio = batched_rate / recursive_rate
        print(f"{cell:<24}{batched_rate:>17,.0f} {spread:>14}{recursive_rate:>25,.0f}{ratio:>12.1f}x")
    if "tree_lstm" in results:
        rate, ratio = results["tree_lstm"]
        verdict = "PASS" if ratio >= 8 and rate >= 3000 else "FAIL"
        print(f"\ntarget tree_lstm: >= 8x node-at-a-time and >= 3000 trees/s: {verdict} "
              f"({ratio:.1f}x, {rate:,.0f} trees/s)")


if __name__ == "__main__":
    main()
