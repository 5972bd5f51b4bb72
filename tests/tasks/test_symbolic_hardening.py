"""Hostile input to the symbolic task: deeply nested input is a clear error (file, line, reason) or an ``unparsable``
verdict, never a RecursionError; ``neuromath generate symbolic`` resumes a killed run from its journal and writes the
file an uninterrupted run writes."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from neuromath.cli import main
from neuromath.errors import DataFormatError, ExpressionError, NeuromathError
from neuromath.expr.symbolic_prefix import MAX_DEPTH, check_prefix, nesting_depth, node_tokens
from neuromath.expr.sympy_bridge import prefix_to_sympy, symbol
from neuromath.tasks.symbolic import SymbolicExample, read_pairs
from neuromath.tasks.symbolic.symbolic_generator import generate_symbolic_file, generate_with_counts, journal_path
from neuromath.tasks.symbolic.verify import check, verdicts

DEEP_SIN = ["sin"] * 3000 + ["x"]
INTEGRAL = SymbolicExample(("cos", "x"), ("sin", "x"))


def write_lines(path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


# --- deep nesting ----------------------------------------------------------------------------------------


def test_nesting_up_to_the_bound_is_read_and_beyond_it_is_an_expression_error():
    assert nesting_depth(check_prefix(["sin"] * MAX_DEPTH + ["x"])) == MAX_DEPTH
    with pytest.raises(ExpressionError, match=f"expression nested deeper than {MAX_DEPTH} levels"):
        check_prefix(["sin"] * (MAX_DEPTH + 1) + ["x"])
    with pytest.raises(ExpressionError, match="nested deeper"):
        prefix_to_sympy(DEEP_SIN)


def test_a_long_chain_of_add_is_one_level_and_read_without_recursion():
    tokens = ["add", "x"] * 3000 + ["x"]  # SymPy flattens it into one sum: 3001 x
    tree = check_prefix(tokens)
    assert nesting_depth(tree) == 1 and node_tokens(tree) == tokens and tree.size() == 6001
    assert prefix_to_sympy(tokens) == 3001 * symbol("x")


def test_a_deeply_nested_line_names_the_file_and_line_or_is_skipped_when_lenient(tmp_path):
    path = tmp_path / "deep.txt"
    write_lines(path, ["1|cos x\tsin x", "1|" + " ".join(DEEP_SIN) + "\tx"])
    with pytest.raises(DataFormatError) as raised:
        read_pairs(path)
    assert str(raised.value) == f"{path}:2: input: expression nested deeper than 100 levels (at position 100)"
    skipped: list = []
    assert len(read_pairs(path, lenient=True, skipped=skipped)) == 1
    assert [error.line for error in skipped] == [2]


def test_data_dedup_of_a_deeply_nested_file_is_one_error_line(tmp_path, capsys):
    deep, other = tmp_path / "deep.txt", tmp_path / "test.txt"
    write_lines(deep, ["1|" + " ".join(DEEP_SIN) + "\tx"])
    write_lines(other, ["1|cos x\tsin x"])
    assert main(["data", "dedup", str(deep), str(other)]) == 1
    assert capsys.readouterr().err == f"error: {deep}:1: input: expression nested deeper than 100 levels " \
                                      "(at position 100)\n"


def test_the_verifier_calls_a_deeply_nested_hypothesis_unparsable():
    assert check("integration", INTEGRAL.source, DEEP_SIN) == "unparsable"
    assert verdicts([(DEEP_SIN, INTEGRAL), (["sin", "x"], INTEGRAL)], workers=1) == ["unparsable", "correct"]


def test_evaluate_on_a_deeply_nested_file_is_one_error_line(tmp_path, capsys):
    from neuromath.config import load_config
    from neuromath.experiments.fit_then_test import train

    pairs = tmp_path / "train.txt"
    write_lines(pairs, ["1|cos x\tsin x", "1|exp x\texp x", "1|mul INT+ 2 x\tpow x INT+ 2", "1|INT+ 1\tx"] * 4)
    config = load_config(None, [
        "data.task=symbolic", f"data.train={pairs}", "data.valid_fraction=0.25", "model.d_model=16",
        "model.n_heads=2", "model.d_ff=16", "model.n_encoder_layers=1", "model.n_decoder_layers=1",
        "train.batch_size=8", "train.max_epochs=1", "train.num_threads=1", "train.progress=false", "decode.max_len=8",
    ])
    train(config, tmp_path / "run")
    deep = tmp_path / "deep.txt"
    write_lines(deep, ["1|cos x\tsin x", "1|" + " ".join(DEEP_SIN) + "\tx"])
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--data", str(deep)]) == 1
    assert capsys.readouterr().err.endswith(f"error: {deep}:2: input: expression nested deeper than 100 levels "
                                            "(at position 100)\n")


# --- resuming generation -----------------------------------------------------------------------------------

GENERATE = ["generate", "symbolic", "--n", "100", "--max-ops", "4", "--seed", "5", "--no-progress"]


@pytest.mark.slow
def test_a_killed_generation_resumes_and_writes_what_an_uninterrupted_run_writes(tmp_path, capsys):
    whole, resumed = tmp_path / "whole.txt", tmp_path / "resumed.txt"
    assert main([*GENERATE, "--out", str(whole)]) == 0
    journal = journal_path(resumed)
    command = [sys.executable, "-c", "import sys; from neuromath.cli import main; sys.exit(main(sys.argv[1:]))",
               *GENERATE, "--out", str(resumed)]
    process = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if journal.exists() and journal.read_text(encoding="utf-8").count("\n") > 10:
                break
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the run and its workers, mid-way
        process.wait()
    assert not resumed.exists(), "the run finished before it was killed"
    recorded = journal.read_text(encoding="utf-8").count("\n") - 1  # less the line of settings
    capsys.readouterr()
    assert main([*GENERATE, "--out", str(resumed)]) == 0
    assert f"resumed: {recorded} attempts read from the journal" in capsys.readouterr().out
    assert resumed.read_bytes() == whole.read_bytes()
    assert not journal.exists()
    stats = json.loads((tmp_path / "resumed.txt.stats.json").read_text())
    assert stats["counts"]["resumed"] == recorded
    assert stats["counts"]["tried"] == json.loads((tmp_path / "whole.txt.stats.json").read_text())["counts"]["tried"]


def test_a_journal_cut_short_by_a_kill_loses_only_its_last_line(tmp_path):
    whole, resumed = tmp_path / "whole.txt", tmp_path / "resumed.txt"
    generate_symbolic_file(whole, 6, max_ops=2, seed=1, progress=False)
    journal = journal_path(resumed)
    generate_with_counts(2, 1, max_ops=2, journal=journal)  # a run asked for fewer pairs leaves its journal
    recorded = journal.read_text(encoding="utf-8").count("\n") - 1
    with journal.open("a", encoding="utf-8") as stream:
        stream.write('{"attempt": 99, "sta')  # the line a kill cut short
    report = generate_symbolic_file(resumed, 6, max_ops=2, seed=1, progress=False)
    assert report.counts.resumed == recorded > 0
    assert resumed.read_bytes() == whole.read_bytes()


def test_a_journal_of_other_settings_is_refused(tmp_path):
    out = tmp_path / "pairs.txt"
    journal_path(out).write_text(json.dumps({"journal": "neuromath symbolic attempts 1", "seed": 2}) + "\n")
    with pytest.raises(NeuromathError, match="refusing to mix in attempts"):
        generate_symbolic_file(out, 2, max_ops=2, seed=1, progress=False)
    settings = {"journal": "neuromath symbolic attempts 1", "seed": 1, "method": "backward", "max_ops": 2,
                "max_tokens": 256, "time_limit": 5.0, "known_integrals": None}
    journal_path(out).write_text(json.dumps(settings) + "\nnot json\n{}\n")
    with pytest.raises(DataFormatError, match=r"pairs.txt.attempts.jsonl:2: not an attempt record"):
        generate_symbolic_file(out, 2, max_ops=2, seed=1, progress=False)
