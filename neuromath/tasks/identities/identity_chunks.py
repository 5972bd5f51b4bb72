"""Chunks of the identities generator: candidates for the (depth, label) pairs a round still needs, from chains of
local rewrites seeded by the chunk's seed alone (so a chunk can be made in any process), screened (trivial,
duplicate, inexact constants), labelled by ``identity_labels`` and counted (``GenerationCounts``). The rounds of
chunks over worker processes, the merge, SymPy and the balancing per depth are ``identity_generator``. No torch here.

Two styles of false equations (``GeneratorSettings.style``): ``chain`` (``generate_chunk``: mutations of chain
states, kept wherever a depth needs false equations) and ``paper`` (``generate_paper_chunk``: every true equation
is kept together with a false twin one local edit away, as Arabshahi et al. describe their generator). Each false
example records its edit in ``extra["edit"]``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields

from neuromath.expr.equation_tree import EquationNode, apply, height
from neuromath.tasks.identities.equations import to_preorder
from neuromath.tasks.identities.identity_labels import has_inexact_zero, numeric_label
from neuromath.tasks.identities.mutations import mutate_with_edit, paper_edit
from neuromath.tasks.identities.rewrites import GeneratorSettings, chain_step, layout, start_state


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
    not_proved: int = 0  # labelled by the numeric check, but a true one of them SymPy did not prove (in time): dropped
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
                mutant, edit_name = mutate_with_edit(state, rng, shape)
                mutant_depth = height(mutant)
                if needed.get((mutant_depth, False), 0) > 0 or needed.get((mutant_depth, True), 0) > 0:
                    consider(mutant, mutant_depth, built_true=False, edit=edit_name)
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
    twin (edit ``<edit>+both sides``: still one edit away from a true equation, the edit deep inside). The pairs
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
            twin, edit_name = item if item is not None else paper_edit(
                state, rng, shape, settings.substitute_share, settings.substitute_pool
            )
            if height(twin) != depth or not screen(twin, depth, seen, counts):
                continue
            label = checked_label(twin)
            if label is False:
                return twin, edit_name
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
                edit_name = twin[1] if twin[1].endswith("+both sides") else f"{twin[1]}+both sides"
                twin = (apply("Equality", *(operation(side) for side in twin[0].children)), edit_name)
            else:
                twin = None
            state, shape = next_state, next_shape
        if len(candidates) > kept_before:
            chains_since_kept = 0
    return ChunkResult(candidates, counts, paired=True)
