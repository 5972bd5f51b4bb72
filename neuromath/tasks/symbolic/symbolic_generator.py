"""The driver of the Lample & Charton (2020) data generators: attempts of one method (``symbolic_methods``: backward,
forward, parts, ode1; one attempt each, checked) run in worker processes with a time limit, in rounds until ``n``
pairs are kept; duplicate inputs merged, the outcomes counted (``GenerationCounts``), journalled so that an
interrupted run resumes, and the pairs and their statistics written (``generate_symbolic_file``). No torch here.

Determinism
    Attempt k draws everything from ``random.Random(f"{seed}/{method}/{k}")``, attempts run in a
    ``TimeLimitedPool`` (every SymPy call of an attempt under one wall-clock limit, ``time_limit`` seconds per
    attempt), and the examples kept are the first ``n`` kept in attempt order; the counts stop at the attempt that
    brought the n-th. So the output does not depend on the number of workers. It does depend on the time limit: a pair
    whose attempt takes close to the limit can be kept on one machine and time out on a much slower (or busier) one.
    SymPy itself is deterministic for these calls as far as we know; workers are fresh processes, each with its own
    string-hash seed.

Resuming
    Since attempt k's outcome depends only on (seed, method, k, max_ops, max_tokens, time limit, known table), a
    journal of outcomes can stand in for running them. ``generate_symbolic_file`` appends each outcome to
    ``FILE.attempts.jsonl`` as it arrives (its first line holds those settings); a run killed half-way leaves the
    journal and no ``FILE`` (that is written atomically at the end), and a rerun with the same settings (any ``n``
    or number of workers) replays the journal, runs only the attempts missing from it, and writes the same ``FILE``.
    A journal of other settings is refused, not mixed in.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import random
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from tqdm import tqdm

from neuromath.errors import DataFormatError, NeuromathError
from neuromath.fileio import check_output_path, publish_together, write_text_atomic
from neuromath.safe_read import read_data_text
from neuromath.tasks.symbolic.pairs import METHODS, SymbolicExample, canonical, write_pairs
from neuromath.tasks.symbolic.symbolic_methods import DEFAULT_MAX_TOKENS, AttemptResult, run_attempt
from neuromath.timelimit import Outcome, TimeLimitedPool

DEFAULT_TIME_LIMIT = 5.0  # seconds per attempt, every SymPy call of the attempt included
JOURNAL_FORMAT = "neuromath symbolic attempts 1"  # the first line of a journal names its format and settings
DUPLICATE = "duplicate input (merged, count + 1)"  # the rejection reason counted here, not in the worker

# ---------------------------------------------------------------------------------------------- generation


@dataclass
class GenerationCounts:
    tried: int = 0  # attempts up to the one that brought the last kept pair (or all, when fewer were kept)
    kept: int = 0
    timed_out: int = 0  # attempts killed at the time limit
    errors: int = 0  # attempts that raised (SymPy errors other than the expected ones)
    rejected: dict[str, int] = field(default_factory=dict)  # reason -> attempts
    integral_sources: dict[str, int] = field(default_factory=dict)  # parts: kept pairs by where ∫ f*G came from
    error_messages: list[str] = field(default_factory=list)  # the first few errors
    resumed: int = 0  # attempts whose outcome was read from the journal of an interrupted run

    def add(self, outcome) -> str | None:
        """Count one outcome (``timelimit.Outcome``); the reason of a rejection, "kept", "timeout" or "error"."""
        self.tried += 1
        if outcome.status == "timeout":
            self.timed_out += 1
            return "timeout"
        if outcome.status != "ok":
            self.errors += 1
            if len(self.error_messages) < 5:
                self.error_messages.append(str(outcome.value))
            return "error"
        result: AttemptResult = outcome.value
        if not result.kept:
            self.rejected[result.reason] = self.rejected.get(result.reason, 0) + 1
            return result.reason
        self.kept += 1
        if result.integral_source:
            self.integral_sources[result.integral_source] = self.integral_sources.get(result.integral_source, 0) + 1
        return "kept"

    def add_rejection(self, reason: str) -> None:
        """Count an attempt rejected here rather than in the worker (a duplicate input)."""
        self.tried += 1
        self.rejected[reason] = self.rejected.get(reason, 0) + 1

    def as_dict(self) -> dict:
        return {
            "tried": self.tried, "kept": self.kept, "timed_out": self.timed_out, "errors": self.errors,
            "rejected": dict(sorted(self.rejected.items(), key=lambda item: (-item[1], item[0]))),
            "integral_sources": dict(sorted(self.integral_sources.items())),
            "error_messages": list(self.error_messages), "resumed": self.resumed,
        }

    def summary(self) -> str:
        """One line: ``tried 130, kept 100, timed out 3, errors 0, rejected 27 (no x: 12, too long: 9, ...)``."""
        reasons = ", ".join(f"{reason}: {count}" for reason, count in self.as_dict()["rejected"].items())
        line = (
            f"tried {self.tried}, kept {self.kept}, timed out {self.timed_out}, errors {self.errors}, "
            f"rejected {sum(self.rejected.values())}" + (f" ({reasons})" if reasons else "")
        )
        if self.integral_sources:
            line += "; integral of f*G from " + ", ".join(
                f"{source} {count}" for source, count in sorted(self.integral_sources.items())
            )
        return line


def check_arguments(n: int, method: str, max_ops: int, max_tokens: int, workers: int, time_limit: float) -> None:
    if method not in METHODS:
        raise NeuromathError(f"unknown symbolic generation method {method!r}; choose one of {', '.join(METHODS)}")
    if n < 1:
        raise NeuromathError(f"the number of pairs must be at least 1, not {n}")
    if max_ops < 1:
        raise NeuromathError(f"max_ops must be at least 1, not {max_ops}")
    if max_tokens < 1:
        raise NeuromathError(f"max_tokens must be at least 1, not {max_tokens}")
    if workers < 1:
        raise NeuromathError(f"workers must be at least 1, not {workers}")
    if not time_limit > 0:
        raise NeuromathError(f"the time limit must be positive, not {time_limit}")


def generate_with_counts(
    n: int,
    seed: int,
    method: str = "backward",
    max_ops: int = 6,
    workers: int = 1,
    time_limit: float = DEFAULT_TIME_LIMIT,
    progress: bool = False,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_attempts: int | None = None,
    known: Mapping[str, Sequence[str]] | None = None,
    unique: bool = True,
    journal: str | Path | None = None,
) -> tuple[list[SymbolicExample], GenerationCounts]:
    """The first ``n`` pairs kept by attempts 0, 1, 2, ... of ``method`` (module docstring), and the counts.

    Attempts go to a ``TimeLimitedPool`` of ``workers`` processes in rounds sized from the rate kept so far, until
    ``n`` are kept or ``max_attempts`` (default 50 n + 100) were tried; then fewer than ``n`` come back (the counts
    say why). ``time_limit`` is the wall-clock limit of one attempt, ``max_tokens`` the longest side kept, ``known``
    the table of integrals ``parts`` looks in first (``known_integrals``). Example ids are ``f"{method}#{k}"``, k
    the attempt. With ``unique`` (the default) a pair whose input has the canonical form of a kept one's is not kept
    again: the kept pair's ``count`` goes up by one (the ``count|`` of Lample & Charton's files) and the attempt is
    counted as rejected, ``DUPLICATE``; so ``n`` distinct inputs come back.

    With ``journal`` (a file) the outcome of every attempt is appended to it as it comes; attempts it already holds
    are not run again (module docstring: Resuming)."""
    check_arguments(n, method, max_ops, max_tokens, workers, time_limit)
    if max_attempts is None:
        max_attempts = 50 * n + 100
    if max_attempts < 1:
        raise NeuromathError(f"max_attempts must be at least 1, not {max_attempts}")
    function = functools.partial(run_attempt, known=dict(known)) if known else run_attempt
    settings = attempt_settings(seed, method, max_ops, max_tokens, time_limit, known)
    recorded = read_journal(journal, settings) if journal is not None else {}
    examples: list[SymbolicExample] = []
    counts = GenerationCounts(resumed=len(recorded))
    bar = progress_bar(n, method, progress)
    next_attempt = 0
    position_of: dict[str, int] = {}  # canonical input -> index in examples (unique)
    stream = open_journal(journal, settings) if journal is not None else None
    try:
        with TimeLimitedPool(function, workers=workers, time_limit=time_limit) as pool:
            while len(examples) < n and next_attempt < max_attempts:
                rate = max(counts.kept / counts.tried, 0.02) if counts.tried else 0.5
                size = max(workers, math.ceil(1.1 * (n - len(examples)) / rate))
                size = min(size, 4096, max_attempts - next_attempt)
                first = next_attempt
                to_run = [k for k in range(first, first + size) if k not in recorded]
                jobs = [(seed, method, k, max_ops, max_tokens) for k in to_run]

                def on_result(offset: int, outcome) -> None:
                    if stream is not None:  # each outcome as it comes, so a killed run loses only running attempts
                        stream.write(json.dumps(outcome_record(to_run[offset], outcome)) + "\n")
                        stream.flush()
                    if outcome.ok and outcome.value.kept and bar.n < n:
                        bar.update(1)

                fresh = dict(zip(to_run, pool.map(jobs, on_result=on_result)))
                for k in range(first, first + size):
                    if len(examples) >= n:
                        break
                    outcome = recorded[k] if k in recorded else fresh[k]
                    if unique and outcome.ok and outcome.value.kept:
                        key = canonical(outcome.value.source)
                        if key in position_of:
                            counts.add_rejection(DUPLICATE)
                            earlier = examples[position_of[key]]
                            examples[position_of[key]] = dataclasses.replace(earlier, count=earlier.count + 1)
                            continue
                        position_of[key] = len(examples)
                    if counts.add(outcome) == "kept":
                        result: AttemptResult = outcome.value
                        examples.append(
                            SymbolicExample(result.source, result.target, method=method, id=f"{method}#{k}")
                        )
                next_attempt = first + size
                bar.n = len(examples)
                bar.refresh()
    finally:
        bar.close()
        if stream is not None:
            stream.close()
    return examples, counts


# ---------------------------------------------------------------------------------------------- the journal


def attempt_settings(seed: int, method: str, max_ops: int, max_tokens: int, time_limit: float,
                     known: Mapping[str, Sequence[str]] | None) -> dict:
    """What the outcome of attempt k depends on besides k: a journal holds the outcomes of one such setting (not of
    ``n`` or ``workers``, which only say how many attempts are made and where)."""
    table = json.dumps(sorted((key, list(value)) for key, value in (known or {}).items()))
    return {"journal": JOURNAL_FORMAT, "seed": seed, "method": method, "max_ops": max_ops, "max_tokens": max_tokens,
            "time_limit": time_limit, "known_integrals": zlib.crc32(table.encode("utf-8")) if known else None}


def outcome_record(index: int, outcome: Outcome) -> dict:
    """One line of the journal: attempt ``index`` and its outcome."""
    if outcome.status != "ok":
        return {"attempt": index, "status": outcome.status, "message": str(outcome.value or "")}
    result: AttemptResult = outcome.value
    return {"attempt": index, "status": "ok", "kept": result.kept, "reason": result.reason,
            "source": " ".join(result.source), "target": " ".join(result.target),
            "integral_source": result.integral_source}


def outcome_of(record: dict) -> tuple[int, Outcome]:
    """The inverse of ``outcome_record``; ``KeyError``, ``TypeError`` or ``ValueError`` when the record is not one."""
    index, status = record["attempt"], record["status"]
    if not isinstance(index, int) or isinstance(index, bool) or index < 0 or status not in ("ok", "timeout", "error"):
        raise ValueError("not an attempt record")
    if status != "ok":
        return index, Outcome(status, str(record["message"]))
    result = AttemptResult(bool(record["kept"]), str(record["reason"]), tuple(record["source"].split()),
                           tuple(record["target"].split()), str(record["integral_source"]))
    return index, Outcome("ok", result)


def read_journal(path: str | Path, settings: dict) -> dict[int, Outcome]:
    """The outcomes recorded in the journal ``path`` (none when it does not exist). A journal of other settings is
    refused rather than mixed in; a last line cut short by a kill is dropped (that attempt runs again)."""
    path = Path(path)
    try:
        text = read_data_text(path)  # a FIFO or a device: refused before it is read
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        reason = f"cannot read the journal of attempts ({error}); delete it to start over"
        raise DataFormatError(path, None, reason) from None
    lines = text.split("\n")
    complete, torn = lines[:-1], lines[-1]  # text after the last newline was cut short by a kill
    try:
        saved = json.loads(complete[0]) if complete else None
    except ValueError:
        saved = None
    if saved != settings:
        raise NeuromathError(
            f"{path} holds the attempts of a run with {saved}; refusing to mix in attempts with {settings} "
            "(delete it to start over, or choose another --out)"
        )
    recorded: dict[int, Outcome] = {}
    for number, line in enumerate(complete[1:], start=2):
        try:
            index, outcome = outcome_of(json.loads(line))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise DataFormatError(path, number, "not an attempt record; delete the journal to start over") from None
        recorded[index] = outcome
    if torn:
        write_text_atomic(path, "\n".join(complete) + "\n")  # so the next record starts on a line of its own
    return recorded


def open_journal(path: str | Path, settings: dict):
    """The journal ``path`` opened for appending, its first line ``settings`` (written when it is new)."""
    path = check_output_path(path)  # a regular file or nothing: appending never goes through a planted link
    if not path.exists():
        write_text_atomic(path, json.dumps(settings) + "\n")
    return path.open("a", encoding="utf-8")


def generate(n: int, rng: random.Random, method: str = "backward", max_ops: int = 6, workers: int = 1,
             **params) -> list[SymbolicExample]:
    """The task contract: ``n`` pairs (fewer when the attempt cap is reached) of ``method``, seeded by ``rng``
    (one draw, ``rng.getrandbits(63)``); ``params`` go to ``generate_with_counts``."""
    seed = rng.getrandbits(63)
    return generate_with_counts(n, seed, method=method, max_ops=max_ops, workers=workers, **params)[0]


def progress_bar(total: int, method: str, enabled: bool):
    return tqdm(total=total, unit="pair", desc=f"generating {method}", disable=not enabled, file=sys.stderr,
                dynamic_ncols=True)


@dataclass
class SymbolicGenerationReport:
    path: Path
    stats_path: Path
    method: str
    max_ops: int
    seed: int
    requested: int
    written: int
    counts: GenerationCounts
    seconds: float

    def summary(self) -> str:
        rate = self.written / self.seconds if self.seconds > 0 else 0.0
        lines = [
            f"wrote {self.written} of {self.requested} {self.method} pairs (max_ops {self.max_ops}, seed {self.seed}) "
            f"to {self.path} in {self.seconds:.1f} s ({rate:.1f} pairs/s)",
            self.counts.summary(),
            f"stats: {self.stats_path}",
        ]
        if self.written < self.requested:
            lines.insert(1, "fewer than asked: the attempt cap was reached")
        if self.counts.resumed:
            lines.insert(1, f"resumed: {self.counts.resumed} attempts read from the journal of an interrupted run")
        return "\n".join(lines)


def generate_symbolic_file(
    path: str | Path,
    n: int,
    method: str = "backward",
    max_ops: int = 6,
    seed: int = 0,
    workers: int = 1,
    time_limit: float = DEFAULT_TIME_LIMIT,
    progress: bool = True,
    **params,
) -> SymbolicGenerationReport:
    """Generate ``n`` pairs and write them to ``path`` (``count|input<TAB>output``) and ``PATH.stats.json`` (method,
    max_ops, seed, n asked, the counts, seconds, ...), both or neither (``publish_together``). ``params`` go to
    ``generate_with_counts``.

    The outcome of every attempt goes to the journal ``PATH.attempts.jsonl`` as it comes, and a run with the same
    settings reads it back rather than run those attempts again: an interrupted run resumes and writes the same
    file an uninterrupted one would. The journal is removed once the file is written."""
    started = time.perf_counter()
    path = Path(path)
    journal = journal_path(path)
    examples, counts = generate_with_counts(
        n, seed, method=method, max_ops=max_ops, workers=workers, time_limit=time_limit, progress=progress,
        journal=journal, **params
    )
    seconds = time.perf_counter() - started
    stats_path = Path(f"{path}.stats.json")
    stats = {
        "method": method, "max_ops": max_ops, "seed": seed, "n_asked": n, "written": len(examples),
        "time_limit": time_limit, "workers": workers,
        "max_tokens": params.get("max_tokens", DEFAULT_MAX_TOKENS), "unique": params.get("unique", True),
        "known_integrals": len(params.get("known") or {}), "counts": counts.as_dict(),
        "seconds": round(seconds, 3),
    }
    with publish_together([path, stats_path]) as (staged_pairs, staged_stats):  # both files or neither
        write_pairs(examples, staged_pairs)
        write_text_atomic(staged_stats, json.dumps(stats, indent=2, ensure_ascii=False) + "\n")
    journal.unlink(missing_ok=True)
    return SymbolicGenerationReport(path, stats_path, method, max_ops, seed, n, len(examples), counts, seconds)


def journal_path(path: str | Path) -> Path:
    """Where ``generate_symbolic_file`` keeps the outcomes of the attempts for ``path`` until it is written."""
    return Path(f"{path}.attempts.jsonl")
