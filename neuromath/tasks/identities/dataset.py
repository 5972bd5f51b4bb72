"""A generated identities data set (Arabshahi, Singh, Anandkumar 2018; Mali et al. 2021): splits by depth, the
statistics table in the layout of their Table 1, and ``generate_identity_files``, which writes it all.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from neuromath.fileio import publish_together, write_text_atomic
from neuromath.tasks.identities.audit import audit_report
from neuromath.tasks.identities.equations import EquationExample, write_equations
from neuromath.tasks.identities.identity_chunks import GenerationCounts
from neuromath.tasks.identities.identity_generator import generate_with_counts
from neuromath.tasks.identities.rewrites import GeneratorSettings


def split_by_depth(
    examples: list[EquationExample],
    rng: random.Random,
    train_depths: Iterable[int] = range(1, 8),
    test_depths: Iterable[int] = range(8, 14),
    valid_fraction: float = 0.1,
) -> tuple[list[EquationExample], list[EquationExample], list[EquationExample]]:
    """(train, valid, test): equations of ``test_depths`` are the test set; those of ``train_depths`` are split
    into train and validation, ``valid_fraction`` of each (depth, label) group going to validation; equations of
    other depths are left out. Each split keeps the input order."""
    train_set, test_set = set(train_depths), set(test_depths)
    if train_set & test_set:
        raise ValueError(f"train and test depths overlap: {sorted(train_set & test_set)}")
    groups: dict[tuple[int, bool | None], list[int]] = {}
    for index, example in enumerate(examples):
        if example.depth in train_set:
            groups.setdefault((example.depth, example.label), []).append(index)
    valid_indices: set[int] = set()
    for key in sorted(groups, key=lambda item: (item[0], str(item[1]))):
        indices = list(groups[key])
        rng.shuffle(indices)
        valid_indices.update(indices[: round(valid_fraction * len(indices))])
    train = [
        example for index, example in enumerate(examples) if example.depth in train_set and index not in valid_indices
    ]
    valid = [example for index, example in enumerate(examples) if index in valid_indices]
    test = [example for example in examples if example.depth in test_set]
    return train, valid, test


def statistics_table(examples: list[EquationExample]) -> str:
    """A Markdown table like Table 1 of Mali et al. / Arabshahi et al.: per depth the number of equations, how
    many are true and the share of true ones, then the totals."""
    by_depth: dict[int, list[int]] = {}
    for example in examples:
        entry = by_depth.setdefault(example.depth, [0, 0])
        entry[0] += 1
        entry[1] += example.label is True
    lines = ["| depth | equations | true | false | share true |", "| ---: | ---: | ---: | ---: | ---: |"]

    def row(name: str, total: int, true: int) -> str:
        share = f"{100 * true / total:.1f}%" if total else "-"
        return f"| {name} | {total} | {true} | {total - true} | {share} |"

    for depth in sorted(by_depth):
        lines.append(row(str(depth), *by_depth[depth]))
    lines.append(row("total", len(examples), sum(entry[1] for entry in by_depth.values())))
    return "\n".join(lines) + "\n"


@dataclass
class GenerationReport:
    requested: int
    written: int
    max_depth: int
    seed: int
    counts: GenerationCounts
    rounds: int
    seconds: float
    split_sizes: dict[str, int] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)
    table: str = ""
    style: str = "chain"

    def summary(self) -> str:
        lines = [
            f"requested {self.requested}, written {self.written} (depths 1..{self.max_depth}, seed {self.seed}, "
            f"style {self.style}) "
            f"in {self.seconds:.1f} s ({self.rounds} round(s) of chunks)",
            "splits: " + ", ".join(f"{name} {size}" for name, size in self.split_sizes.items()),
        ]
        counts = self.counts
        lines += [
            f"candidates tried: {counts.tried}",
            f"kept: {counts.kept}",
            f"duplicates (also with the sides swapped): {counts.duplicates}",
            f"dropped because the check contradicted the construction: {counts.contradicted}",
            f"dropped as undecided or timed out: {counts.undecided} (SymPy did not prove {counts.sympy_not_proved}, "
            f"ran out of time {counts.sympy_timed_out}, not needed {counts.undecided_not_needed})",
            "details: " + ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in counts.as_dict().items()),
        ]
        return "\n".join(lines)


def generate_identity_files(
    n: int, max_depth: int, seed: int, out_path: str | Path, workers: int = 1, progress: bool = True,
    audit_baselines: bool = True, **params
) -> GenerationReport:
    """Generate ``n`` equations and write them to ``out_path`` (released JSON format) and beside it
    ``<stem>.train.json``, ``<stem>.valid.json``, ``<stem>.test.json`` (``split_by_depth`` with its defaults) and
    ``<stem>.stats.md`` (``statistics_table``, the counts and ``audit_report``; ``audit_baselines`` False leaves
    out its baselines, which fit small classifiers with torch). The same seed gives the same files for any number of
    workers."""
    started = time.perf_counter()
    out_path = Path(out_path)
    examples, counts = generate_with_counts(
        n, random.Random(seed), max_depth, workers=workers, progress=progress, **params
    )
    train, valid, test = split_by_depth(examples, random.Random(f"identities split {seed}"))
    stem = out_path.name[: -len(out_path.suffix)] if out_path.suffix else out_path.name
    paths = {
        "all": out_path,
        "train": out_path.with_name(f"{stem}.train.json"),
        "valid": out_path.with_name(f"{stem}.valid.json"),
        "test": out_path.with_name(f"{stem}.test.json"),
        "stats": out_path.with_name(f"{stem}.stats.md"),
    }
    # all five files or none: written to a staging folder beside them, then published together (the renames are
    # journalled), so a kill never leaves new training files beside old test files
    with publish_together(list(paths.values()), key=out_path.with_name(stem)) as staged_paths:
        staged = dict(zip(paths, staged_paths))
        write_equations(examples, staged["all"])
        for name, split in (("train", train), ("valid", valid), ("test", test)):
            write_equations(split, staged[name])
        report = GenerationReport(
            requested=n, written=len(examples), max_depth=max_depth, seed=seed, counts=counts,
            rounds=counts.rounds, seconds=time.perf_counter() - started,
            split_sizes={"train": len(train), "valid": len(valid), "test": len(test)}, paths=paths,
            table=statistics_table(examples), style=(params.get("settings") or GeneratorSettings()).description,
        )
        text = (
            f"# Generated identities: {out_path.name}\n\n{report.table}\n"
            + "\n".join(f"- {line}" for line in report.summary().splitlines())
            + "\n\n"
            + audit_report(train, valid, test, baselines=audit_baselines)
        )
        write_text_atomic(staged["stats"], text)
    return report
