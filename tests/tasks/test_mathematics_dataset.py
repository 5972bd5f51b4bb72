"""The Mathematics Dataset task: import fixes, DeepMind's generator driven per module, the release-layout reader."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from neuromath.errors import DataFormatError, NeuromathError
from neuromath.tasks import get_task
from neuromath.tasks import mathematics_dataset as md
from neuromath.tasks.mathematics_dataset import mathematics_generator as mg

N_TRAIN_MODULES, N_EXTRAPOLATE_MODULES = 56, 15


def test_import_fixes_make_the_package_importable_in_a_fresh_interpreter():
    """Without the fixes the import fails on current SymPy and NumPy; with them it works (fresh process, so
    nothing earlier in this session has patched anything)."""
    without = subprocess.run(
        [sys.executable, "-c", "import mathematics_dataset.modules.modules"], capture_output=True, text=True
    )
    assert without.returncode != 0 and "base_solution_linear" in without.stderr
    with_fixes = subprocess.run(
        [sys.executable, "-c",
         "from neuromath.tasks.mathematics_dataset.mathematics_generator import prepare_mathematics_dataset as p;"
         "p(); p();"
         "import numpy, importlib; import mathematics_dataset.modules.modules;"
         "d = importlib.import_module('sympy.solvers.diophantine');"
         "from sympy.solvers.diophantine.diophantine import base_solution_linear as b;"
         "assert d.base_solution_linear is b and numpy.object is object; print('ok')"],
        capture_output=True, text=True,
    )
    assert with_fixes.returncode == 0, with_fixes.stderr
    assert with_fixes.stdout.strip() == "ok"


def test_module_lists_match_the_release():
    train = mg.module_names("train-easy")
    assert len(train) == N_TRAIN_MODULES and mg.module_names("interpolate") == train
    assert mg.module_names("train-hard") == train
    extrapolate = mg.module_names("extrapolate")
    assert len(extrapolate) == N_EXTRAPOLATE_MODULES
    assert {"arithmetic__add_or_sub_big", "comparison__sort_more",
            "probability__swr_p_sequence_more_samples"} <= set(extrapolate)
    # every extrapolate module extends a training module
    assert all(mg.training_module(name) in train for name in extrapolate)


@pytest.mark.slow
def test_every_module_of_every_split_generates_a_valid_sample():
    for split in ("train-medium", "extrapolate"):
        for module in mg.module_names(split):
            sample = mg.sample_module(split, module, 1, seed=5)
            [(question, answer)] = sample.pairs
            assert question.strip() and answer.strip(), (split, module)
            assert len(question) <= mg.MAX_QUESTION_LENGTH and len(answer) <= mg.MAX_ANSWER_LENGTH
            assert "\n" not in question + answer


def test_generation_is_a_function_of_seed_split_and_module():
    first = mg.sample_module("train-easy", "algebra__linear_1d_composed", 6, seed=11).pairs
    mg.sample_module("train-easy", "comparison__sort_composed", 4, seed=3)  # other work in between
    again = mg.sample_module("train-easy", "algebra__linear_1d_composed", 6, seed=11).pairs
    other_seed = mg.sample_module("train-easy", "algebra__linear_1d_composed", 6, seed=12).pairs
    other_split = mg.sample_module("train-hard", "algebra__linear_1d_composed", 6, seed=11).pairs
    assert first == again
    assert first != other_seed and first != other_split


def test_generation_does_not_depend_on_string_hashing():
    """Composed modules once followed set orders (symbols, entities); the patches fix them, so a
    process with another PYTHONHASHSEED produces the same questions."""
    code = ("from neuromath.tasks.mathematics_dataset.mathematics_generator import sample_module as s;"
            "print(repr(s('train-easy', 'polynomials__evaluate_composed', 4, 2).pairs))")
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**__import__("os").environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert outputs.pop() == repr(mg.sample_module("train-easy", "polynomials__evaluate_composed", 4, 2).pairs) + "\n"


def test_over_long_items_are_drawn_again_and_counted(monkeypatch):
    class Problem:
        def __init__(self, question, answer):
            self.question, self.answer = question, answer

    outputs = iter([Problem("q" * 161, "1"), Problem("What is 1+1?", "2" * 31), Problem("What is 1+1?", "2")])
    monkeypatch.setitem(mg.module_functions("train-easy"), "fake__module", lambda: next(outputs))
    sample = mg.sample_module("train-easy", "fake__module", 1, seed=0)
    assert sample.pairs == [("What is 1+1?", "2")]
    assert (sample.dropped_question, sample.dropped_answer) == (1, 1)


def test_module_globs_and_extrapolation_counterparts():
    names = ["arithmetic__add_or_sub", "arithmetic__add_or_sub_in_base", "numbers__gcd", "arithmetic__mul"]
    assert mg.select_modules(names, "arithmetic__*") == [
        "arithmetic__add_or_sub", "arithmetic__add_or_sub_in_base", "arithmetic__mul"
    ]
    assert mg.select_modules(names, "numbers__gcd, arithmetic__mul") == ["numbers__gcd", "arithmetic__mul"]
    extrapolate = ["arithmetic__add_or_sub_big", "arithmetic__mixed_longer", "comparison__sort_more"]
    assert mg.select_modules(extrapolate, "arithmetic__add_or_sub", "extrapolate") == ["arithmetic__add_or_sub_big"]
    assert mg.select_modules(extrapolate, "arithmetic__add_or_sub", "interpolate") == []


def test_generate_directory_writes_the_release_layout_and_resumes(tmp_path):
    out = tmp_path / "md"
    report = mg.generate_directory(out, 3, splits=["train-easy", "extrapolate"], modules="numbers__place_value",
                                   seed=4, workers=1, progress=False)
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*.txt"))
    assert files == ["extrapolate/numbers__place_value_big.txt", "train-easy/numbers__place_value.txt"]
    lines = (out / "train-easy" / "numbers__place_value.txt").read_text().splitlines()
    assert len(lines) == 6 and report.pairs == 6
    assert lines[0].endswith("?") and lines[1].isdigit()
    assert lines == [
        text for q, a in mg.sample_module("train-easy", "numbers__place_value", 3, seed=4).pairs for text in (q, a)
    ]
    # an interrupted run: one file cut short, one missing -> only those are written again
    (out / "train-easy" / "numbers__place_value.txt").write_text("\n".join(lines[:3]) + "\n")
    kept = (out / "extrapolate" / "numbers__place_value_big.txt").stat().st_mtime_ns
    again = mg.generate_directory(out, 3, splits=["train-easy", "extrapolate"], modules="numbers__place_value",
                                  seed=4, workers=1, progress=False)
    assert again.written == ["train-easy/numbers__place_value"]
    assert again.skipped == ["extrapolate/numbers__place_value_big"]
    assert (out / "train-easy" / "numbers__place_value.txt").read_text().splitlines() == lines
    assert (out / "extrapolate" / "numbers__place_value_big.txt").stat().st_mtime_ns == kept
    with pytest.raises(NeuromathError, match="refusing to mix"):
        mg.generate_directory(out, 3, splits=["train-easy"], modules="numbers__place_value", seed=5, progress=False)
    assert not list(out.rglob("*.tmp"))


def test_a_generation_cut_off_is_refused_by_the_readers_until_it_is_run_again(tmp_path, monkeypatch):
    out = tmp_path / "md"
    args = dict(splits=["train-easy"], modules="numbers__place_value,numbers__round_number", seed=4, workers=1,
                progress=False)
    real = mg._write_module_job
    calls = []

    def killed_after_one_module(job):
        if calls:
            raise KeyboardInterrupt  # stands for the kill after the first module file
        calls.append(job)
        return real(job)

    monkeypatch.setattr(mg, "_write_module_job", killed_after_one_module)
    with pytest.raises(KeyboardInterrupt):
        mg.generate_directory(out, 2, **args)
    monkeypatch.setattr(mg, "_write_module_job", real)
    assert len(list(out.rglob("*.txt"))) == 1  # one module of two
    for path in (out, out / "train-easy", next(out.rglob("*.txt"))):
        with pytest.raises(DataFormatError, match="generation was interrupted"):
            md.module_files(path)
    mg.generate_directory(out, 2, **args)  # the same command finishes it
    assert len(md.module_files(out)) == 2


@pytest.mark.slow
def test_worker_processes_write_the_same_files(tmp_path):
    args = dict(splits=["train-easy", "interpolate"], modules="numbers__gcd,comparison__pair", seed=9, progress=False)
    mg.generate_directory(tmp_path / "one", 4, workers=1, **args)
    mg.generate_directory(tmp_path / "two", 4, workers=2, **args)
    for path in sorted((tmp_path / "one").rglob("*.txt")):
        assert path.read_text() == (tmp_path / "two" / path.relative_to(tmp_path / "one")).read_text()


def test_generate_directory_rejects_bad_requests(tmp_path):
    with pytest.raises(NeuromathError, match="unknown split"):
        mg.generate_directory(tmp_path, 1, splits=["train"], progress=False)
    with pytest.raises(NeuromathError, match="no module"):
        mg.generate_directory(tmp_path, 1, splits=["train-easy"], modules="nothing__*", progress=False)
    with pytest.raises(NeuromathError, match="at least 1"):
        mg.generate_directory(tmp_path, 0, progress=False)


# --- reader ---------------------------------------------------------------------------------------


def write_tree(root: Path, files: dict[str, list[str]]) -> Path:
    for name, lines in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root


@pytest.fixture
def tree(tmp_path):
    return write_tree(tmp_path / "v1.0", {
        "train-easy/arithmetic__add.txt": ["What is 1 + 1?", "2", "What is 2 + 3?", "5"],
        "train-medium/arithmetic__add.txt": ["What is 10 + 11?", "21"],
        "train-hard/arithmetic__add.txt": ["What is 100 + 250?", "350"],
        "train-easy/numbers__gcd.txt": ["gcd of 4 and 6?", "2"],
        "interpolate/arithmetic__add.txt": ["What is 7 + 8?", "15"],
        "interpolate/numbers__gcd.txt": ["gcd of 9 and 6?", "3"],
        "extrapolate/arithmetic__add_big.txt": ["What is 12345 + 1?", "12346"],
    })


def test_reader_merges_the_training_difficulties(tree):
    examples = md.read_examples(tree)
    assert [(e.split, e.module, e.question, e.answer) for e in examples] == [
        ("train-easy", "arithmetic__add", "What is 1 + 1?", "2"),
        ("train-easy", "arithmetic__add", "What is 2 + 3?", "5"),
        ("train-easy", "numbers__gcd", "gcd of 4 and 6?", "2"),
        ("train-medium", "arithmetic__add", "What is 10 + 11?", "21"),
        ("train-hard", "arithmetic__add", "What is 100 + 250?", "350"),
    ]
    assert examples[1].id == "train-easy/arithmetic__add:3"


def test_reader_selects_splits_modules_and_counts(tree):
    tests = md.read_examples(tree, splits="interpolate,extrapolate", modules="arithmetic__add")
    assert [(e.split, e.module, e.answer) for e in tests] == [
        ("interpolate", "arithmetic__add", "15"), ("extrapolate", "arithmetic__add_big", "12346")]
    assert [e.answer for e in md.read_examples(tree / "train-easy", modules="numbers__*")] == ["2"]
    assert [e.answer for e in md.read_examples(tree / "train-easy" / "arithmetic__add.txt", per_module=1)] == ["2"]
    assert len(md.read_examples(tree, per_module=1)) == 4
    with pytest.raises(DataFormatError, match="no module file matches algebra"):
        md.read_examples(tree, modules="algebra__*")
    partial = write_tree(tree.parent / "partial", {"interpolate/a.txt": ["q", "a"]})
    with pytest.raises(DataFormatError, match="missing split folder.*extrapolate"):
        md.read_examples(partial, splits="extrapolate")
    assert [e.split for e in md.read_examples(partial, splits="interpolate,extrapolate")] == ["interpolate"]


def test_reader_errors_name_file_and_line(tmp_path):
    odd = write_tree(tmp_path, {"interpolate/odd.txt": ["What is 1 + 1?", "2", "What is 2 + 2?"]})
    odd = odd / "interpolate" / "odd.txt"
    with pytest.raises(DataFormatError, match=r"odd\.txt:3: odd number of lines"):
        md.read_examples(odd)
    empty = write_tree(tmp_path, {"interpolate/empty.txt": ["What is 1 + 1?", "2", "What is 2 + 2?", ""]})
    empty = empty / "interpolate" / "empty.txt"
    with pytest.raises(DataFormatError, match=r"empty\.txt:4: empty answer to the question on line 3"):
        md.read_examples(empty)
    skipped: list = []
    assert [e.answer for e in md.read_examples(empty, lenient=True, skipped=skipped)] == ["2"]
    assert len(skipped) == 1 and skipped[0].line == 4
    binary = tmp_path / "interpolate" / "binary.txt"
    binary.write_bytes(b"What is \xff?\n1\n")
    with pytest.raises(DataFormatError, match=r"binary\.txt: not UTF-8"):
        md.read_examples(binary)
    with pytest.raises(DataFormatError, match="no such file"):
        md.read_examples(tmp_path / "missing")
    with pytest.raises(DataFormatError, match="no module files and no split folders"):
        (tmp_path / "nothing" / "train").mkdir(parents=True)
        md.read_examples(tmp_path / "nothing")


def test_reader_keeps_answers_exactly_and_handles_crlf(tmp_path):
    path = tmp_path / "train-easy" / "m.txt"
    path.parent.mkdir()
    path.write_bytes(b"Sort -1, 2.\r\n-1, 2\r\nIs 3 prime?\nTrue\n")
    examples = md.read_examples(path)
    assert [(e.question, e.answer) for e in examples] == [("Sort -1, 2.", "-1, 2"), ("Is 3 prime?", "True")]


def test_writer_and_reader_round_trip(tmp_path):
    examples = md.generate(12, random.Random(3), modules="numbers__place_value,comparison__pair")
    md.write_release(examples, tmp_path)
    read = md.read_examples(tmp_path / "train-easy")
    key = lambda e: (e.module, e.question, e.answer)  # noqa: E731
    assert sorted(map(key, read)) == sorted(map(key, examples))


def test_in_process_generator_is_seeded_and_leaves_global_state_alone():
    import numpy

    random.seed(123)
    numpy.random.seed(7)
    before = random.random(), numpy.random.random()
    random.seed(123)
    numpy.random.seed(7)
    first = md.generate(8, random.Random(0), modules="arithmetic__add_or_sub,numbers__gcd")
    after = random.random(), numpy.random.random()
    assert after == before
    assert first == md.generate(8, random.Random(0), modules="arithmetic__add_or_sub,numbers__gcd")
    assert sorted(e.module for e in first) == ["arithmetic__add_or_sub"] * 4 + ["numbers__gcd"] * 4
    # the default modules; in extrapolate, their harder variants
    assert {e.module for e in md.generate(8, random.Random(0))} == set(md.DEFAULT_MODULES)
    assert {e.module for e in md.generate(8, random.Random(0), split="extrapolate")} == {
        "arithmetic__add_or_sub_big", "arithmetic__mul_big", "numbers__place_value_big", "comparison__sort_more"}


def test_task_scores_exact_answer_strings():
    task = get_task("mathematics_dataset")
    example = md.MathQuestion("x", "Sort 3, -1.", "-1, 3", "comparison__sort", "interpolate")
    assert task.source_tokens(example) == list("Sort 3, -1.")
    assert task.is_correct(list("-1, 3"), example)
    assert not task.is_correct(list("-1,3"), example) and not task.is_correct(list("-1, 3 "), example)
    record = task.describe(list("3, -1"), example)
    assert record["prediction"] == "3, -1" and record["correct"] is False and record["module"] == "comparison__sort"


def test_under_numpy_2_the_polynomial_sampler_gets_itemset_back():
    """NumPy 2 removed ndarray.itemset, which DeepMind's polynomial sampler calls on the arrays it makes with zeros and
    empty; the shim's arrays set the element as NumPy 1 did (an object array's element may be a list)."""
    import numpy

    shimmed = mg.NumpyWithItemset("numpy")
    coefficients = shimmed.zeros((2, 3), dtype=numpy.int64)
    coefficients.itemset((1, 2), 7)
    assert coefficients[1, 2] == 7 and coefficients.sum() == 7
    expanded = shimmed.empty((2,), dtype=object)
    expanded.itemset((1,), [3, 4])
    assert expanded[1] == [3, 4]
    assert shimmed.count_nonzero is numpy.count_nonzero  # everything else is NumPy's own
