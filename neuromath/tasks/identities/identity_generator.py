"""Generator of identities-task equations (the data generation of Arabshahi, Singh, Anandkumar 2018, used by
Mali et al. 2021; ``statistics_table`` has the layout of their Table 1): an axiom set, true equations by random
local rewrites, false ones by mutations of true ones, every label checked, deduplicated, balanced per depth and
split by depth. No torch here.

How labels are decided (never trusted from construction)
    ``numeric_label``: both sides are evaluated at random points with ``identities.numeric_check`` (points outside a
    side's domain are skipped), first on [-3, 3], and when that cannot tell, on (0.05, 2) and (-1, 1) as well. A
    candidate whose check is inconclusive goes to SymPy (``simplify(lhs - rhs) == 0``) in a worker process that is
    killed and replaced when it runs past its time limit (``SympyJudge``); SymPy can only prove equality, so such a
    candidate becomes True or is dropped; SymPy is asked only while a depth still lacks true equations after the
    numerically decided ones. A chain state whose check says False is dropped (and ends its chain); a mutation
    whose check says True is kept as a True example when its depth still needs true ones, else dropped. Candidates
    holding a constant that is 0 on paper but not in floating point (``cos(pi/2)``) are skipped.
    An identity here means: both sides are equal wherever both are defined over the reals, which is what the
    numeric check tests; every axiom of ``axioms`` holds in that sense.

Two styles of false equations (``GeneratorSettings.style``): ``chain`` (``generate_chunk``: mutations of chain
states, kept wherever a depth needs false equations) and ``paper`` (``generate_paper_chunk``: every true equation
is kept together with a false twin one local edit away, as Arabshahi et al. describe their generator). Each false
example records its edit kind in ``extra["edit"]``.

How equations are made: ``rewrites``; the axioms: ``axioms``; splits, the statistics table and the files of a
generated data set: ``dataset``.
"""

from __future__ import annotations

import math
import multiprocessing
import random
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields

import sympy
from tqdm import tqdm

from neuromath.errors import ExpressionError, NeuromathError
from neuromath.expr.equation_tree import EquationNode, apply, height, postorder
from neuromath.expr.sympy_bridge import equation_to_sympy
from neuromath.expr.tree import preorder
from neuromath.tasks.identities.equations import (
    EquationExample,
    OutsideDomain,
    evaluate,
    numeric_check,
    parse_preorder,
    to_preorder,
)
from neuromath.tasks.identities.rewrites import (
    GeneratorSettings,
    chain_step,
    layout,
    mutate_with_kind,
    paper_edit,
    start_state,
)
from neuromath.timelimit import TimeLimitedPool

# Deepest equations generated (``max_depth``). The released data go to depth 13; generation slows steeply beyond
# about 30 (200 equations: 1 s at depth 30, 35 s at depth 60), and the rewrites, SymPy's judge and the tree models
# recurse once per level.
MAX_DEPTH = 50

# ---------------------------------------------------------------------------------------------- label checks


def numeric_label(equation: EquationNode, rng: random.Random) -> bool | None:
    """True / False when random points decide it, None when they cannot (see the module docstring). False needs
    two points where both sides are defined and differ; True needs every usable point of every range tried to
    agree."""
    first = numeric_check(equation, rng, points=10, attempts=50)
    if first.verdict is not None:
        return first.verdict
    checks = [first]
    for low, high in ((0.05, 2.0), (-1.0, 1.0)):
        check = numeric_check(equation, rng, points=10, attempts=50, low=low, high=high)
        if check.verdict is False:
            return False
        checks.append(check)
    if any(check.verdict for check in checks) and all(check.agreeing == check.points for check in checks):
        return True
    return None


def has_inexact_zero(tree: EquationNode) -> bool:
    """Whether a subtree without symbols evaluates (in floating point) to a tiny non-zero number, like
    ``cos(pi/2)`` = 6e-17: such a subtree in a base or under a root can make the numeric check see a difference
    that is not there, so candidates holding one are skipped."""
    constant: dict[int, bool] = {}
    for node in postorder(tree):
        constant[id(node)] = node.func != "Symbol" and all(constant[id(child)] for child in node.children)
    for node in preorder(tree):
        if constant[id(node)] and not node.is_leaf and node.func != "Equality":
            try:
                value = evaluate(node, {})
            except (OutsideDomain, ExpressionError):
                continue
            if 0 < abs(value) < 1e-9:
                return True
    return False


def simplify_difference_is_zero(func: str, variables: str) -> bool:
    """Whether ``simplify(lhs - rhs) == 0`` for the equation of pre-order ``func`` / ``vars`` strings (which pickle
    flat however deep the tree is). Runs in ``SympyJudge``'s worker."""
    expression = equation_to_sympy(parse_preorder(func, variables))
    return bool(sympy.simplify(expression.lhs - expression.rhs) == 0)


class SympyJudge:
    """Asks SymPy whether ``simplify(lhs - rhs) == 0`` in a worker process with a time limit (a one-worker
    ``TimeLimitedPool``): when the limit passes, the worker is killed and a new one is started for the next question
    (no SIGALRM)."""

    def __init__(self, timeout: float = 2.0, start_method: str = "spawn", startup_timeout: float = 120.0):
        self.pool = TimeLimitedPool(simplify_difference_is_zero, workers=1, time_limit=timeout,
                                    startup_timeout=startup_timeout, start_method=start_method)
        self.errors: list[str] = []

    @property
    def timeouts(self) -> int:
        return self.pool.timeouts

    def start(self) -> None:
        """Start the worker now (its start-up, importing SymPy, is never charged to a question anyway)."""
        self.pool.start()

    def simplifies_to_zero(self, equation: EquationNode) -> bool | None:
        """True when SymPy simplifies lhs - rhs to 0, False when it finishes with something else (not a proof that
        the equation is false), None when the time limit passed or SymPy failed."""
        outcome = self.pool.run(*to_preorder(equation))
        if outcome.status == "error":
            self.errors.append(f"error: {outcome.value}")
        return outcome.value if outcome.ok else None

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> SympyJudge:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------- chunks


@dataclass
class GenerationCounts:
    """What happened to the candidates (each one is counted once, by the first reason it was dropped)."""

    chains: int = 0
    checked: int = 0  # candidates whose label was checked (numerically)
    duplicates: int = 0  # equal to an earlier candidate, also with the sides swapped
    trivial: int = 0  # both sides the same tree (kept only at depth 1, where nothing else is true)
    inexact_constants: int = 0  # a constant subtree that is 0 but not in floating point (has_inexact_zero)
    contradicted: int = 0  # built as true, checked false: dropped
    mutations_found_true: int = 0  # built as false, checked true: kept as true when that depth needs it
    numeric_undecided: int = 0  # the numeric check could not tell
    sympy_proved: int = 0  # ... and SymPy proved the equation
    sympy_not_proved: int = 0  # ... SymPy finished without proving it: dropped
    sympy_timed_out: int = 0  # ... SymPy ran past the time limit or failed: dropped
    undecided_not_needed: int = 0  # ... not sent to SymPy because its depth had enough true equations
    no_false_twin: int = 0  # paper style: a true equation dropped because no edit of it was checked false
    verified: int = 0  # candidates that got a label and were new across chunks (before balancing)
    kept: int = 0  # examples in the final set
    rounds: int = 0  # rounds of chunks

    @property
    def tried(self) -> int:
        """Candidates offered for a (depth, label) that still needed some."""
        return self.checked + self.duplicates + self.trivial + self.inexact_constants

    @property
    def undecided(self) -> int:
        """Numerically undecided candidates that were dropped: SymPy did not prove them, ran out of time, or was not
        asked because their depth had enough true equations."""
        return self.sympy_not_proved + self.sympy_timed_out + self.undecided_not_needed

    def add(self, other: GenerationCounts) -> None:
        for item in fields(self):
            setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))

    def as_dict(self) -> dict[str, int]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


@dataclass
class ChunkResult:
    # (equation, label, edit): label None when the numeric check could not tell; edit is how a false candidate was
    # made from a true one ("" for true candidates)
    candidates: list[tuple[EquationNode, bool | None, str]]
    counts: GenerationCounts
    paired: bool = False  # paper style: the candidates are (true, false) pairs of the same depth, in that order


def equation_key(equation: EquationNode) -> tuple[str, str]:
    """The same for an equation and for it with its sides swapped."""
    left, right = (",".join(to_preorder(side)) for side in equation.children)
    return (left, right) if left <= right else (right, left)


def screen(equation: EquationNode, depth: int, seen: set, counts: GenerationCounts) -> bool:
    """Whether a candidate is worth checking: not both sides the same tree (above depth 1), not equal to one in
    ``seen`` (then it is added), no inexact constant; each refusal is counted."""
    left, right = equation.children
    if depth >= 2 and left == right:
        counts.trivial += 1
        return False
    key = equation_key(equation)
    if key in seen:
        counts.duplicates += 1
        return False
    seen.add(key)
    if has_inexact_zero(equation):
        counts.inexact_constants += 1
        return False
    return True


def start_chain(rng: random.Random, settings: GeneratorSettings, deepest: int):
    """A chain's first state, its layout, and the depths it will not offer (each skipped with probability
    1 - ``offer_probability``: fewer states of one chain, more varied equations)."""
    state = start_state(rng, settings)
    skipped = {depth for depth in range(1, deepest + 2) if rng.random() >= settings.offer_probability}
    return state, layout(state), skipped


def chain_ended(shape, deepest: int, settings: GeneratorSettings) -> bool:
    """A chain stops past the deepest depth still needed, or when its equation grew too bushy."""
    return shape.height > deepest + 1 or shape.node_count > settings.max_nodes_per_depth * shape.height + 10


def generate_chunk(
    chunk_seed: int,
    needs: dict[tuple[int, bool], int],
    known: frozenset = frozenset(),
    settings: GeneratorSettings | None = None,
) -> ChunkResult:
    """Checked candidates for the (depth, label) pairs of ``needs`` (up to that many each) and, for depths that need
    true equations, numerically undecided ones (label None, for SymPy), from chains seeded by ``chunk_seed`` alone,
    so that chunks can be made in any process. Equations whose ``equation_key`` is in ``known`` are skipped."""
    settings = settings or GeneratorSettings()
    if settings.style == "paper":
        return generate_paper_chunk(chunk_seed, needs, known, settings)
    rng = random.Random(chunk_seed)
    check_rng = random.Random(chunk_seed ^ 0x5EED)
    counts = GenerationCounts()
    needed = {key: value for key, value in needs.items() if value > 0}
    undecided_room = {depth: value for (depth, label), value in needed.items() if label}
    seen: set[tuple[str, str]] = set(known)
    candidates: list[tuple[EquationNode, bool | None, str]] = []

    def consider(equation: EquationNode, depth: int, built_true: bool, edit: str = "") -> str:
        if not screen(equation, depth, seen, counts):
            return "screened out"
        counts.checked += 1
        label = numeric_label(equation, check_rng)
        if label is None:
            counts.numeric_undecided += 1
            if undecided_room.get(depth, 0) > 0:
                undecided_room[depth] -= 1
                candidates.append((equation, None, ""))
            else:
                counts.undecided_not_needed += 1
            return "undecided"
        if built_true and not label:
            counts.contradicted += 1
            return "contradicted"
        if not built_true and label:
            counts.mutations_found_true += 1
        if needed.get((depth, label), 0) > 0:
            needed[(depth, label)] -= 1
            candidates.append((equation, label, "" if label else edit))
            return "kept"
        return "not needed"

    def deepest_needed() -> int:
        return max((depth for (depth, _), value in needed.items() if value > 0), default=0)

    max_chains = 200 + 20 * sum(needed.values())
    chains_since_kept = 0
    while deepest_needed() and chains_since_kept < settings.stall_chains and counts.chains < max_chains:
        counts.chains += 1
        chains_since_kept += 1
        kept_before = len(candidates)
        state, shape, offered_depths = start_chain(rng, settings, deepest_needed())
        mutations_made: dict[int, int] = {}
        for _ in range(settings.max_steps):
            depth = shape.height
            if chain_ended(shape, deepest_needed(), settings):
                break
            next_state, _ = chain_step(state, rng, settings, shape)
            next_shape = layout(next_state) if next_state is not None else None
            leaving = next_shape is None or next_shape.height != depth  # the last state of this depth
            if (
                needed.get((depth, True), 0) > 0
                and depth not in offered_depths
                and (leaving or rng.random() < settings.early_offer_probability)
            ):
                offered_depths.add(depth)
                if consider(state, depth, built_true=True) == "contradicted":
                    break  # the chain went through a point where a rewrite narrowed the domain; it is false now
            wanted_false = any(needed.get((near, False), 0) > 0 for near in (depth - 1, depth, depth + 1))
            if wanted_false and mutations_made.get(depth, 0) < settings.mutations_per_depth and (
                leaving or rng.random() < settings.early_offer_probability
            ):
                mutations_made[depth] = mutations_made.get(depth, 0) + 1
                mutant, kind = mutate_with_kind(state, rng, shape)
                mutant_depth = height(mutant)
                if needed.get((mutant_depth, False), 0) > 0 or needed.get((mutant_depth, True), 0) > 0:
                    consider(mutant, mutant_depth, built_true=False, edit=kind)
            if next_state is None:
                break
            state, shape = next_state, next_shape
        if len(candidates) > kept_before:
            chains_since_kept = 0
    return ChunkResult(candidates, counts)


def generate_paper_chunk(
    chunk_seed: int,
    needs: dict[tuple[int, bool], int],
    known: frozenset = frozenset(),
    settings: GeneratorSettings | None = None,
) -> ChunkResult:
    """``generate_chunk`` in the paper style: (true, false) pairs of the same depth, the false one made from its
    true twin by one local edit (``paper_edit``: shrink, swap or wrap, and substitute when
    ``settings.substitute_share`` asks for it), or, where the chain reached the true
    equation by an operation on both sides, the same operation applied to both sides of the previous state's false
    twin (kind ``<edit>+both sides``: still one edit away from a true equation, the edit deep inside). The pairs
    keep true and false equations alike in size, symbols and shape; only the edit tells them apart. A true state is
    kept only with a twin that the numeric check calls false; numerically undecided candidates are dropped (SymPy
    is not asked), so ``needs`` holds as many false as true equations at every depth."""
    settings = settings or GeneratorSettings()
    rng = random.Random(chunk_seed)
    check_rng = random.Random(chunk_seed ^ 0x5EED)
    counts = GenerationCounts()
    needed = {depth: value for (depth, label), value in needs.items() if label and value > 0}
    seen: set[tuple[str, str]] = set(known)
    candidates: list[tuple[EquationNode, bool | None, str]] = []

    def checked_label(equation: EquationNode) -> bool | None:
        """The numeric label; an undecided candidate is dropped (SymPy is not asked in this style)."""
        counts.checked += 1
        label = numeric_label(equation, check_rng)
        if label is None:
            counts.numeric_undecided += 1
            counts.undecided_not_needed += 1
        return label

    def false_twin(state: EquationNode, depth: int, shape, inherited: tuple[EquationNode, str] | None):
        tries = ([inherited] if inherited is not None else []) + [None] * settings.twin_tries
        for item in tries:
            twin, kind = item if item is not None else paper_edit(
                state, rng, shape, settings.substitute_share, settings.substitute_pool
            )
            if height(twin) != depth or not screen(twin, depth, seen, counts):
                continue
            label = checked_label(twin)
            if label is False:
                return twin, kind
            if label:
                counts.mutations_found_true += 1
        return None

    def offer(state: EquationNode, depth: int, shape, inherited) -> tuple[EquationNode, str] | None:
        """Keep (state, its false twin) when both check out; the twin, for the chain to carry."""
        if not screen(state, depth, seen, counts):
            return None
        label = checked_label(state)
        if label is not True:
            counts.contradicted += label is False
            return None
        twin = false_twin(state, depth, shape, inherited)
        if twin is None:
            counts.no_false_twin += 1
            return None
        needed[depth] -= 1
        candidates.append((state, True, ""))
        candidates.append((twin[0], False, twin[1]))
        return twin

    def deepest_needed() -> int:
        return max((depth for depth, value in needed.items() if value > 0), default=0)

    max_chains = 200 + 40 * sum(needed.values())
    chains_since_kept = 0
    while deepest_needed() and chains_since_kept < settings.stall_chains and counts.chains < max_chains:
        counts.chains += 1
        chains_since_kept += 1
        kept_before = len(candidates)
        state, shape, offered_depths = start_chain(rng, settings, deepest_needed())
        twin: tuple[EquationNode, str] | None = None  # the current state's false twin, when one was made
        for _ in range(settings.max_steps):
            depth = shape.height
            if chain_ended(shape, deepest_needed(), settings):
                break
            next_state, operation = chain_step(state, rng, settings, shape)
            next_shape = layout(next_state) if next_state is not None else None
            leaving = next_shape is None or next_shape.height != depth
            if (
                needed.get(depth, 0) > 0
                and depth not in offered_depths
                and (leaving or rng.random() < settings.early_offer_probability)
            ):
                offered_depths.add(depth)
                made = offer(state, depth, shape, twin)
                twin = made if made is not None else twin
            if next_state is None:
                break
            if operation is not None and twin is not None:
                kind = twin[1] if twin[1].endswith("+both sides") else f"{twin[1]}+both sides"
                twin = (apply("Equality", *(operation(side) for side in twin[0].children)), kind)
            else:
                twin = None
            state, shape = next_state, next_shape
        if len(candidates) > kept_before:
            chains_since_kept = 0
    return ChunkResult(candidates, counts, paired=True)


def _generate_chunk_job(arguments: tuple) -> ChunkResult:
    return generate_chunk(*arguments)


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
    judge = judge or SympyJudge(timeout=sympy_timeout)
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
            for result in results:  # labelled candidates first, in chunk order
                counts.add(result.counts)
                step = 2 if result.paired else 1  # a pair is kept or dropped whole
                for start in range(0, len(result.candidates), step):
                    group = result.candidates[start:start + step]
                    keys = [equation_key(equation) for equation, _, _ in group]
                    if any(key in seen for key in keys):
                        counts.duplicates += len(group)
                        continue
                    for key, (equation, label, edit) in zip(keys, group):
                        if label is None:
                            undecided.append(equation)
                        else:
                            seen.add(key)
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
