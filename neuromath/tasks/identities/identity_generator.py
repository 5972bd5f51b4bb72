"""Generator of identities-task equations (the data generation of Arabshahi, Singh, Anandkumar 2018, used by
Mali et al. 2021; ``statistics_table`` has the layout of their Table 1): an axiom set, true equations by random
local rewrites, false ones by mutations of true ones, every label checked, deduplicated, balanced per depth and
split by depth. No torch here.

This module is the driver: rounds of chunks (``identity_chunks``: candidates from chains, in the ``chain`` or
``paper`` style) in worker processes, each seeded from the caller's ``rng``; their candidates merged in order and
deduplicated across chunks; every true label proven by SymPy (``identity_labels.SympyJudge``, over ``workers``
processes), and the numerically undecided candidates asked about while their depth still needs true equations; and
the pools balanced per depth (``balanced_counts``), as many true as false equations at every depth. How labels are
decided: ``identity_labels``.

How true equations are made: ``rewrites``; false ones: ``mutations``; the axioms: ``axioms``; splits, the statistics
table and the files of a generated data set: ``dataset``.
"""

from __future__ import annotations

import math
import multiprocessing
import random
import sys
from concurrent.futures import ProcessPoolExecutor

from tqdm import tqdm

from neuromath.errors import NeuromathError
from neuromath.expr.equation_tree import EquationNode, height
from neuromath.tasks.identities.equations import EquationExample
from neuromath.tasks.identities.identity_chunks import ChunkResult, GenerationCounts, equation_key, generate_chunk
from neuromath.tasks.identities.identity_labels import SympyJudge
from neuromath.tasks.identities.rewrites import GeneratorSettings

# Deepest equations generated (``max_depth``). The released data go to depth 13; generation slows steeply beyond
# about 30 (200 equations: 1 s at depth 30, 35 s at depth 60), and the rewrites, SymPy's judge and the tree models
# recurse once per level.
MAX_DEPTH = 50

# ---------------------------------------------------------------------------------------------- balancing


def balanced_counts(capacities: dict[int, int], half: int) -> dict[int, int]:
    """How many true (and as many false) equations to take at each depth: as even as the capacities allow
    (water filling), ``half`` in all when the capacities add up to that; where an even split leaves a remainder,
    the deeper depths get one more."""
    depths = sorted(capacities)
    if not depths or half <= 0:
        return {depth: 0 for depth in depths}
    if sum(capacities.values()) <= half:
        return dict(capacities)
    level = 0
    while sum(min(capacities[depth], level) for depth in depths) < half:
        level += 1
    counts = {depth: min(capacities[depth], level) for depth in depths}
    surplus = sum(counts.values()) - half
    for depth in depths:  # the shallow depths give back first
        if surplus == 0:
            break
        if counts[depth] == level:
            counts[depth] -= 1
            surplus -= 1
    return counts


def _generate_chunk_job(arguments: tuple) -> ChunkResult:
    return generate_chunk(*arguments)


def run_chunks(jobs: list[tuple], workers: int) -> list[ChunkResult]:
    """The results of ``generate_chunk`` for each argument tuple, in order; in worker processes when ``workers`` > 1."""
    if workers <= 1 or len(jobs) <= 1:
        return [generate_chunk(*job) for job in jobs]
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=spawn) as pool:
        return list(pool.map(_generate_chunk_job, jobs))


def generate_with_counts(
    n: int,
    rng: random.Random,
    max_depth: int = 13,
    *,
    workers: int = 1,
    chunks_per_round: int = 4,
    max_rounds: int = 12,
    sympy_timeout: float = 2.0,
    judge: SympyJudge | None = None,
    settings: GeneratorSettings | None = None,
    progress: bool = False,
) -> tuple[list[EquationExample], GenerationCounts]:
    """``generate`` that also returns the counts.

    Work goes in rounds of ``chunks_per_round`` chunks, each seeded from ``rng`` in order and asked for an equal
    share of what every (depth, label) still needs; the results are merged in order (deduplicated across chunks,
    SymPy asked about numerically undecided ones while their depth needs true equations). A (depth, label) that
    two rounds in a row bring less than a quarter of what was asked is taken as exhausted (depth 1 has only
    ``t = t`` as true equations), and its shortfall is spread over the other depths. Nothing depends on
    ``workers``, so the result is the same for any number of them."""
    if not 1 <= max_depth <= MAX_DEPTH:
        raise NeuromathError(f"the maximum depth must be between 1 and {MAX_DEPTH}, not {max_depth}")
    settings = settings or GeneratorSettings()
    depths = list(range(1, max_depth + 1))
    labels = (True, False)
    half = max(0, n) // 2
    pools: dict[tuple[int, bool], list[tuple[EquationNode, str]]] = {  # (equation, edit)
        (depth, label): [] for depth in depths for label in labels
    }
    seen: set[tuple[str, str]] = set()
    counts = GenerationCounts()
    low_rounds = {key: 0 for key in pools}  # rounds in a row that brought too little
    own_judge = judge is None
    judge = judge or SympyJudge(timeout=sympy_timeout, workers=max(1, workers))
    bar = _progress_bar(2 * half, progress)

    def capacities(exhausted_only: bool) -> dict[int, int]:
        found = {}
        for depth in depths:
            exhausted = any(low_rounds[(depth, label)] >= 2 for label in labels)
            smallest = min(len(pools[(depth, label)]) for label in labels)
            found[depth] = smallest if exhausted or not exhausted_only else half
        return found

    try:
        for _ in range(max_rounds if half else 0):
            targets = balanced_counts(capacities(exhausted_only=True), half)
            needs = {key: max(0, targets[key[0]] - len(pools[key])) for key in pools if low_rounds[key] < 2}
            if not any(needs.values()):
                break
            counts.rounds += 1
            share = {key: math.ceil(1.25 * value / chunks_per_round) for key, value in needs.items() if value > 0}
            known = frozenset(seen)
            jobs = [(rng.getrandbits(63), share, known, settings) for _ in range(chunks_per_round)]
            sizes_before = {key: len(pool) for key, pool in pools.items()}
            results = run_chunks(jobs, workers)
            undecided: list[EquationNode] = []
            accepted: list[list[tuple[EquationNode, bool, str]]] = []  # labelled groups, each kept or dropped whole
            for result in results:  # labelled candidates first, in chunk order
                counts.add(result.counts)
                step = 2 if result.paired else 1  # a pair is kept or dropped whole
                for start in range(0, len(result.candidates), step):
                    group = result.candidates[start:start + step]
                    keys = [equation_key(equation) for equation, _, _ in group]
                    if any(key in seen for key in keys):
                        counts.duplicates += len(group)
                        continue
                    labelled = []
                    for key, (equation, label, edit) in zip(keys, group):
                        if label is None:
                            undecided.append(equation)
                        else:
                            seen.add(key)
                            labelled.append((equation, label, edit))
                    if labelled:
                        accepted.append(labelled)
            # a true label is kept only once SymPy proves it (the numeric check only found no difference)
            to_prove = [equation for group in accepted for equation, label, _ in group if label]
            proofs = iter(judge.prove_many(to_prove) if to_prove else [])
            for group in accepted:
                proved = [next(proofs) for _, label, _ in group if label]
                if not all(proved):
                    counts.not_proved += len(group)
                    continue
                for equation, label, edit in group:
                    counts.verified += 1
                    pools[(height(equation), label)].append((equation, edit))
            for equation in undecided:  # then SymPy, only where true equations are still missing
                key = equation_key(equation)
                depth = height(equation)
                if key in seen:
                    counts.duplicates += 1
                    continue
                if len(pools[(depth, True)]) >= targets[depth]:
                    counts.undecided_not_needed += 1
                    continue
                seen.add(key)
                proved = judge.simplifies_to_zero(equation)
                if proved is None:
                    counts.sympy_timed_out += 1
                elif not proved:
                    counts.sympy_not_proved += 1
                else:
                    counts.sympy_proved += 1
                    counts.verified += 1
                    pools[(depth, True)].append((equation, ""))
            for key, value in needs.items():
                if value > 0:
                    brought = len(pools[key]) - sizes_before[key]
                    low_rounds[key] = low_rounds[key] + 1 if brought < value / 4 else 0
            bar.n = min(2 * half, 2 * sum(balanced_counts(capacities(exhausted_only=False), half).values()))
            bar.refresh()
    finally:
        bar.close()
        if own_judge:
            judge.close()
    plan = balanced_counts(capacities(exhausted_only=False), half)
    examples: list[EquationExample] = []
    for depth in depths:
        for (true_tree, _), (false_tree, edit) in zip(
            pools[(depth, True)][: plan[depth]], pools[(depth, False)][: plan[depth]]
        ):
            examples.append(EquationExample(true_tree, True, source="generated"))
            examples.append(EquationExample(false_tree, False, source="generated", extra={"edit": edit}))
    counts.kept = len(examples)
    return examples, counts


def generate(n: int, rng: random.Random, max_depth: int = 13, **params) -> list[EquationExample]:
    """``n`` labelled equations (``n`` rounded down to even: as many true as false at each depth), spread as evenly
    over depths 1..max_depth as each depth allows, every label checked (module docstring). Deterministic for the
    state of ``rng``; ``params`` go to ``generate_with_counts``."""
    return generate_with_counts(n, rng, max_depth, **params)[0]


def _progress_bar(total: int, enabled: bool):
    return tqdm(total=total, unit="eq", disable=not enabled, file=sys.stderr, desc="generating identities",
                dynamic_ncols=True)
