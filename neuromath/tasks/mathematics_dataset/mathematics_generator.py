"""DeepMind's Mathematics Dataset generator (Saxton et al. 2019), driven from neuromath.

The questions come from DeepMind's own ``mathematics_dataset`` package (1.0.1 on PyPI). Compatibility
fixes let it run on current SymPy, NumPy 1.24+ and 2, and Python 3.12+, and two small patches make its output
a function of the seed alone (it leaves some orders to memory addresses and string hashing);
``prepare_mathematics_dataset`` applies them when the package is first imported.

``generate_directory`` writes the release's own layout, ``OUT/<split>/<module>.txt`` with question
and answer on alternating lines, from worker processes: one job per (split, module), seeded from
(seed, split, module) alone, so the files do not depend on the number of workers or on the order
in which jobs run. Complete module files are skipped, so an interrupted run resumes.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib
import itertools
import json
import multiprocessing
import os
import random
import sys
import time
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy
import sympy.core.random
from sympy.solvers.diophantine.diophantine import base_solution_linear
from tqdm import tqdm

from neuromath.config.rules import MATHEMATICS_SPLITS, MATHEMATICS_TEST_SPLITS
from neuromath.errors import NeuromathError
from neuromath.extras import require
from neuromath.fileio import write_text_atomic
from neuromath.safe_read import load_json, open_data, read_data_text

TRAIN_SPLITS = MATHEMATICS_SPLITS  # data.train_splits and data.test_splits take these
TEST_SPLITS = MATHEMATICS_TEST_SPLITS
SPLITS = TRAIN_SPLITS + TEST_SPLITS
MAX_QUESTION_LENGTH = 160  # the release drops longer questions ...
MAX_ANSWER_LENGTH = 30  # ... and longer answers, and draws again
MAX_DRAWS_PER_SAMPLE = 1000  # a module that keeps producing over-long items is an error, not a hang

_prepared = False
_entity_order = itertools.count()


class ItemsetArray(numpy.ndarray):
    """An array with NumPy 1's ``itemset(index, value)``: ``array[index] = value`` (an object array's element may
    be a list, as the package stores there)."""

    def itemset(self, index, value) -> None:
        self[index] = value


class NumpyWithItemset(types.ModuleType):
    """NumPy as DeepMind's polynomial sampler sees it under NumPy 2: ``zeros`` and ``empty`` make ``ItemsetArray``
    views; every other name is NumPy's own."""

    def __getattr__(self, name: str):
        return getattr(numpy, name)

    @staticmethod
    def zeros(*args, **kwargs) -> ItemsetArray:
        return numpy.zeros(*args, **kwargs).view(ItemsetArray)

    @staticmethod
    def empty(*args, **kwargs) -> ItemsetArray:
        return numpy.empty(*args, **kwargs).view(ItemsetArray)


def _integral(value):
    """An integral float as the int Python 3.11's ``randrange`` made of it; any other value unchanged."""
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"non-integer argument {value!r} for randrange()")
        return int(value)
    return value


class RandomWithIntegralFloats(types.ModuleType):
    """``random`` as DeepMind's modules see it under Python 3.12+, which refuses floats in ``randrange``: ``randint``
    and ``randrange`` take integral floats as 3.10 and 3.11 did (``numbers__round_number`` passes ``-10 ** k / 2``),
    drawing from the same global generator, so the draws are those of 3.11. Every other name is ``random``'s own."""

    def __getattr__(self, name: str):
        return getattr(random, name)

    @staticmethod
    def randint(a, b) -> int:
        return random.randint(_integral(a), _integral(b))

    @staticmethod
    def randrange(start, stop=None, step=1) -> int:
        return random.randrange(_integral(start), _integral(stop), _integral(step))


def prepare_mathematics_dataset() -> None:
    """Make ``mathematics_dataset`` importable and deterministic; call before importing it (idempotent).

    Import fixes:
    - ``base_solution_linear`` moved from ``sympy.solvers.diophantine`` (a package since SymPy 1.7)
      to ``sympy.solvers.diophantine.diophantine``; it is made visible where the package looks.
    - ``np.object`` was removed in NumPy 1.24; it was an alias of ``object``.
    - ``ndarray.itemset`` was removed in NumPy 2; the package's polynomial sampler calls it on the arrays it makes
      with ``np.zeros`` and ``np.empty``, which now return ``ItemsetArray`` views (NumPy 2 only).

    - Python 3.12 refuses floats in ``random.randrange``; the package's modules see ``RandomWithIntegralFloats``
      (integral floats become ints, as 3.10 and 3.11 did), on every Python, so the deprecated float path is never
      taken.

    Determinism patches (applied after the import):
    - ``Context.pop`` draws a fresh symbol with ``random.choice`` from a set of letters, whose order
      follows string hashing (``PYTHONHASHSEED``); it now draws from the sorted letters.
    - ``expand_entities`` shuffles a set of ``Entity`` objects, whose order follows their memory
      addresses; entities now hash by creation order (equality stays identity).
    """
    global _prepared
    if _prepared:
        return
    # the module (the attribute sympy.solvers.diophantine is also a function)
    diophantine = importlib.import_module("sympy.solvers.diophantine")
    if not hasattr(diophantine, "base_solution_linear"):
        diophantine.base_solution_linear = base_solution_linear
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy 1.2x warns on touching the old alias
        has_object = "object" in numpy.__dict__
    if not has_object:
        numpy.object = object

    # DeepMind's package is imported here, not at the top: it can only be imported after the two import fixes
    # above, and importing neuromath.tasks must not patch NumPy, SymPy and the package as a side effect.
    require("mathematics_dataset", "DeepMind's Mathematics Dataset generator")
    from mathematics_dataset.util import composition

    allowed_symbols = composition._ALLOWED_SYMBOLS

    def pop_symbol(context):
        """Return an unused symbol and mark it used (as the original, but drawn from sorted letters)."""
        allowed = allowed_symbols - context._relation_symbols - context._self_symbols - context._child_symbols
        if not allowed:
            raise ValueError("Ran out of symbols")
        symbol = random.choice(sorted(allowed))
        context._self_symbols.add(symbol)
        return symbol

    if not hasattr(numpy.ndarray, "itemset"):  # NumPy 2
        from mathematics_dataset.sample import polynomials

        polynomials.np = NumpyWithItemset("numpy")

    # on every Python, so that 3.10 and 3.11 draw through the same code that 3.12+ needs
    importlib.import_module("mathematics_dataset.modules.modules")  # every module that draws
    with_floats = RandomWithIntegralFloats("random")
    for name, module in list(sys.modules.items()):
        if name.startswith("mathematics_dataset.") and getattr(module, "random", None) is random:
            module.random = with_floats

    composition.Context.pop = pop_symbol
    original_init = composition.Entity.__init__

    def entity_init(self, *args, **kwargs):
        self._creation_order = next(_entity_order)
        original_init(self, *args, **kwargs)

    composition.Entity.__init__ = entity_init
    composition.Entity.__hash__ = lambda self: self._creation_order
    _prepared = True


def seed_generators(seed: int, split: str, module: str) -> None:
    """Seed every generator the package draws from, from (seed, split, module) alone.

    The package uses Python's global ``random``, NumPy's global generator and SymPy's own
    (``sympy.core.random``, behind ``randprime``)."""
    global _entity_order
    digest = hashlib.sha256(f"{seed}/{split}/{module}".encode()).digest()
    value = int.from_bytes(digest[:8], "little")
    random.seed(value)
    numpy.random.seed(value % 2**32)
    sympy.core.random.seed(value)
    _entity_order = itertools.count()


def _flatten(tree: dict, prefix: str | None = None, out: dict | None = None) -> dict:
    out = {} if out is None else out
    for key, value in tree.items():
        name = key if prefix is None else f"{prefix}__{key}"
        if isinstance(value, dict):
            _flatten(value, name, out)
        else:
            out[name] = value
    return out


def _difficulty(level: int, levels: int = 3) -> Callable:
    """The release's entropy restriction: the level-th third of each module's entropy range."""

    def restrict(entropy_range):
        low, high = entropy_range
        return low + level / levels * (high - low), low + (level + 1) / levels * (high - low)

    return restrict


_module_cache: dict[str, dict] = {}


def module_functions(split: str) -> dict[str, Callable]:
    """The generating function of every module of a split, by name (``arithmetic__add_or_sub``)."""
    if split not in SPLITS:
        raise NeuromathError(f"unknown split {split!r}; the splits are {', '.join(SPLITS)}")
    if split not in _module_cache:
        prepare_mathematics_dataset()
        from mathematics_dataset.modules import modules  # only after prepare_mathematics_dataset (see there)

        if split in TRAIN_SPLITS:
            tree = modules.train(_difficulty(TRAIN_SPLITS.index(split)))
        elif split == "interpolate":
            tree = modules.test()
        else:
            tree = modules.test_extra()
        _module_cache[split] = dict(sorted(_flatten(tree).items()))
    return _module_cache[split]


def module_names(split: str) -> list[str]:
    return list(module_functions(split))


EXTRAPOLATION_SUFFIXES = ("_more_samples", "_longer", "_more", "_big")  # extrapolate's names for harder variants


def training_module(name: str) -> str:
    """The training module an extrapolate module extends: ``arithmetic__add_or_sub_big`` ->
    ``arithmetic__add_or_sub``."""
    for suffix in EXTRAPOLATION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def select_modules(names: Iterable[str], patterns: Sequence[str] | str | None, split: str | None = None) -> list[str]:
    """The names matching any glob of ``patterns`` (a comma list or a sequence; None -> all).

    In the extrapolate split a module is also selected when the training module it extends
    matches, so ``arithmetic__add_or_sub`` picks ``arithmetic__add_or_sub_big`` there."""
    if patterns is None:
        return list(names)
    if isinstance(patterns, str):
        patterns = [p.strip() for p in patterns.split(",") if p.strip()]

    def matches(name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)

    return [name for name in names if matches(name) or (split == "extrapolate" and matches(training_module(name)))]


@dataclass
class ModuleSample:
    split: str
    module: str
    pairs: list[tuple[str, str]]
    dropped_question: int = 0  # draws dropped because the question was too long
    dropped_answer: int = 0  # ... because the answer was


def sample_module(split: str, module: str, n: int, seed: int) -> ModuleSample:
    """``n`` (question, answer) pairs of one module, the same for the same (seed, split, module).

    Over-long questions (> 160 characters) and answers (> 30) are drawn again, as the release
    does, and counted."""
    functions = module_functions(split)
    if module not in functions:
        raise NeuromathError(f"{split} has no module {module!r}")
    generate_one = functions[module]
    seed_generators(seed, split, module)
    result = ModuleSample(split, module, [])
    _draw(generate_one, n, result)
    return result


def _draw(generate_one: Callable, n: int, result: ModuleSample) -> None:
    split, module = result.split, result.module
    while len(result.pairs) < n:
        for _ in range(MAX_DRAWS_PER_SAMPLE):
            problem = generate_one()
            question, answer = str(problem.question), str(problem.answer)
            if len(question) > MAX_QUESTION_LENGTH:
                result.dropped_question += 1
            elif len(answer) > MAX_ANSWER_LENGTH:
                result.dropped_answer += 1
            else:
                break
        else:
            raise NeuromathError(f"{split}/{module}: {MAX_DRAWS_PER_SAMPLE} draws in a row were too long")
        if "\n" in question or "\n" in answer:
            raise NeuromathError(f"{split}/{module}: the generator produced a line break: {question!r} -> {answer!r}")
        result.pairs.append((question, answer))


# --- writing the release layout -------------------------------------------------------------------


@dataclass
class GenerationReport:
    written: list[str] = field(default_factory=list)  # "split/module" files written now
    skipped: list[str] = field(default_factory=list)  # complete files found and kept
    pairs: int = 0
    dropped_question: int = 0
    dropped_answer: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        return (
            f"wrote {len(self.written)} module files ({self.pairs} questions), "
            f"kept {len(self.skipped)} complete files; "
            f"dropped {self.dropped_question} over-long questions and {self.dropped_answer} over-long answers; "
            f"{self.seconds:.1f} s"
        )


MANIFEST = "neuromath_generation.json"  # a generated folder's settings, and whether its generation finished


def _manifest_path(out: Path) -> Path:
    return out / MANIFEST


def unfinished_generation(folder: Path) -> bool:
    """Whether ``folder`` was written by a ``generate_directory`` that has not finished (its manifest says
    ``"complete": false``): some of its modules are missing. A folder without a manifest (the release) or with an
    older one (no ``complete`` key) counts as finished."""
    try:
        saved = load_json(read_data_text(_manifest_path(folder)), _manifest_path(folder))  # a FIFO: refused
    except (OSError, ValueError):
        return False
    return isinstance(saved, dict) and saved.get("complete") is False


def _is_complete(path: Path, n: int) -> bool:
    """A module file is complete when it holds exactly n question/answer pairs (2n lines)."""
    try:
        with open_data(path, encoding="utf-8") as stream:  # a FIFO or a device: refused
            return sum(1 for _ in stream) == 2 * n
    except OSError:
        return False


def _write_module_job(job: tuple[str, str, int, int, str]) -> dict:
    split, module, n, seed, out = job
    sample = sample_module(split, module, n, seed)
    path = Path(out) / split / f"{module}.txt"
    # atomically, through a temporary file of a unique name: never through a link planted under a fixed name
    write_text_atomic(path, "".join(f"{question}\n{answer}\n" for question, answer in sample.pairs))
    return {"split": split, "module": module, "pairs": len(sample.pairs),
            "dropped_question": sample.dropped_question, "dropped_answer": sample.dropped_answer}


def plan_jobs(splits: Sequence[str], modules: Sequence[str] | str | None) -> list[tuple[str, str]]:
    jobs = []
    for split in splits:
        names = select_modules(module_names(split), modules, split)
        jobs.extend((split, name) for name in names)
    if not jobs:
        raise NeuromathError(f"no module of {', '.join(splits)} matches {modules!r}")
    return jobs


def generate_directory(
    out: str | Path,
    per_module: int,
    splits: Sequence[str] = SPLITS,
    modules: Sequence[str] | str | None = None,
    seed: int = 0,
    workers: int | None = None,
    progress: bool = True,
) -> GenerationReport:
    """Write ``per_module`` pairs of every selected module of every split under ``out``.

    The same (seed, per_module) always gives the same files. A folder generated with another seed
    or size is refused rather than mixed (its settings are kept in ``neuromath_generation.json``). The manifest says
    ``"complete": false`` until every module is written, and the readers refuse such a folder
    (``release.module_files``): an interrupted generation is all or nothing for them until it is run again.
    """
    if per_module < 1:
        raise NeuromathError(f"--per-module must be at least 1, not {per_module}")
    unknown = [split for split in splits if split not in SPLITS]
    if unknown:
        raise NeuromathError(f"unknown split(s) {', '.join(unknown)}; the splits are {', '.join(SPLITS)}")
    out = Path(out)
    started = time.perf_counter()
    jobs = plan_jobs(splits, modules)
    settings = {"generator": "mathematics_dataset 1.0.1", "seed": seed, "per_module": per_module}
    manifest = _manifest_path(out)
    if manifest.exists():
        saved = load_json(read_data_text(manifest), manifest)
        saved = {key: value for key, value in saved.items() if key != "complete"} if isinstance(saved, dict) else saved
        if saved != settings:
            raise NeuromathError(
                f"{out} was generated with {saved}; refusing to mix in files made with {settings} "
                "(choose another --out)"
            )
    for split in splits:
        (out / split).mkdir(parents=True, exist_ok=True)
    write_text_atomic(manifest, json.dumps({**settings, "complete": False}) + "\n")

    report = GenerationReport()
    todo = []
    for split, module in jobs:
        if _is_complete(out / split / f"{module}.txt", per_module):
            report.skipped.append(f"{split}/{module}")
        else:
            todo.append((split, module, per_module, seed, str(out)))
    workers = max(1, min(workers or os.cpu_count() or 1, len(todo) or 1))
    bar = _progress_bar(len(jobs), initial=len(report.skipped), enabled=progress)
    pool = None
    try:
        if workers == 1 or len(todo) <= 1:
            results = map(_write_module_job, todo)
        else:
            # spawn: a fresh interpreter per worker (no inherited state from a forked parent);
            # maxtasksperchild=1: each module starts from the same clean generator state.
            pool = multiprocessing.get_context("spawn").Pool(workers, maxtasksperchild=1)
            results = pool.imap_unordered(_write_module_job, todo)
        for result in results:
            report.written.append(f"{result['split']}/{result['module']}")
            report.pairs += result["pairs"]
            report.dropped_question += result["dropped_question"]
            report.dropped_answer += result["dropped_answer"]
            bar.update(1)
        if pool is not None:
            pool.close()
            pool.join()
    except BaseException:
        if pool is not None:
            pool.terminate()
        raise
    finally:
        bar.close()
    write_text_atomic(manifest, json.dumps({**settings, "complete": True}) + "\n")  # every module is there
    report.seconds = time.perf_counter() - started
    return report


def _progress_bar(total: int, initial: int, enabled: bool):
    return tqdm(total=total, initial=initial, unit="module", disable=not enabled, file=sys.stderr,
                desc="generating", dynamic_ncols=True)
