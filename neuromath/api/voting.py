"""One model made of the seeds of ``neuromath train --seeds N``: a majority vote of their answers.

``train --seeds N --out OUT`` writes ``OUT/seed<S>/`` for each seed and no run of its own at ``OUT``.
``neuromath.load(OUT)`` (and so ``solve``, ``evaluate`` and ``serve``) reads such a folder as a ``VotingSolver``:
every seed decodes each problem, each seed's chosen answer votes with its value (``neuromath.evaluation.vote``:
values within value accuracy's tolerance are one answer, a tie goes to the earliest seed), and the answer is the
winning seed's. A vote of N seeds costs N decodings of each problem. Word problems only: their answers are values
that can be counted.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Sequence

from neuromath.api.sequence_solver import Candidate, Solver
from neuromath.errors import NeuromathError
from neuromath.evaluation.vote import vote
from neuromath.models.cost import resolve_limits

SEED_FOLDER = re.compile(r"seed(\d{1,9})")


def seed_runs(folder: str | Path) -> list[Path]:
    """The runs ``train --seeds`` wrote in ``folder`` (``seed<S>/`` with a config.yaml), by seed."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    runs = [(int(match.group(1)), path) for path in folder.iterdir()
            if (match := SEED_FOLDER.fullmatch(path.name)) and (path / "config.yaml").is_file()]
    return [path for _, path in sorted(runs)]


def is_seed_vote(folder: str | Path) -> bool:
    """Whether ``folder`` is what ``train --seeds N`` (N >= 2) wrote: no run of its own, seed runs inside."""
    return not (Path(folder) / "config.yaml").exists() and len(seed_runs(folder)) >= 2


class VotingSolver(Solver):
    """The seeds of one ``train --seeds`` folder as one solver; its config, task, vocabularies and decoding settings
    are the first seed's (the seeds differ in ``train.seed`` only), its answers the vote of all of them. The seeds
    share one memory limit (``max_memory``, as ``Solver`` takes it): each is checked against what the seeds loaded
    before it left."""

    def __init__(self, folder: str | Path, device: str = "cpu", precision: str | None = None, *,
                 max_memory: float | None = None, max_decode_len: int | None = None, **decode):
        runs = seed_runs(folder)
        if len(runs) < 2:
            raise NeuromathError(f"{folder}: a vote needs the runs of at least two seeds (seed<S>/ folders)")
        limits = resolve_limits(max_memory, max_decode_len, device)
        members: list[Solver] = []
        for run in runs:
            loaded = sum(member.cost.size.resident_bytes for member in members)
            members.append(Solver(run, device, precision, limits=limits.spent(loaded), **decode))
        first = members[0]
        if not first.task.name.startswith("word_problems"):
            raise NeuromathError(f"{folder}: a vote of seeds answers word problems; these are {first.task.name} runs")
        for run, member in zip(runs[1:], members[1:]):
            if (member.task.name, member.source_vocab.tokens, member.target_vocab.tokens) != \
                    (first.task.name, first.source_vocab.tokens, first.target_vocab.tokens):
                raise NeuromathError(f"{run}: not a seed of the same run as {runs[0]} (another task or vocabulary)")
        self.__dict__.update(first.__dict__)  # config, task, vocabularies, device, precision, decode, model
        self.run_dir = Path(folder)
        self.members = members

    def with_decode(self, **decode) -> VotingSolver:
        variant = copy.copy(self)
        variant.members = [member.with_decode(**decode) for member in self.members]
        variant.decode, variant.constraint = variant.members[0].decode, variant.members[0].constraint
        return variant

    def predict_nbest(self, examples: Sequence, batch_size: int | None = None) -> list[list[Candidate]]:
        """Each example's answer as the vote chose it, first, then the rest of the winning seed's n-best list."""
        lists = [member.predict_nbest(examples, batch_size) for member in self.members]
        voted = []
        for position, example in enumerate(examples):
            chosen = [member.choose(nbest[position]) for member, nbest in zip(self.members, lists)]
            winner = vote([self.task.describe(list(candidate.tokens), example) for candidate in chosen])["member"]
            rest = [candidate for candidate in lists[winner][position] if candidate is not chosen[winner]]
            voted.append([chosen[winner], *rest])
        return voted

    def choose(self, candidates: list[Candidate]) -> Candidate:
        return candidates[0]  # the vote chose already

    def attention_maps(self, example, tokens: Sequence[str]):
        raise NeuromathError(f"{self.run_dir} is a vote of {len(self.members)} seeds, which have no one attention "
                             "map: ask one seed's run (seed<S>/) for it")
