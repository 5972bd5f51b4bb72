"""The neuromath command: generate, train, evaluate, solve, and clear errors for bad input."""

import json

import pytest
from support.tiny_cli_run import JERRY, TINY, train_tiny

from neuromath.cli import main
from neuromath.expr import evaluate, parse_infix
from neuromath.tasks.word_problems import read_jsonl


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return train_tiny(tmp_path_factory.mktemp("cli") / "run")


def test_generate_is_deterministic_for_a_seed(tmp_path, capsys):
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        assert main(["generate", "word_problems", "--n", "25", "--seed", str(seed),
                     "--out", str(tmp_path / f"{name}.jsonl")]) == 0
    a, b, c = (read_jsonl(tmp_path / f"{name}.jsonl") for name in "abc")
    assert len(a) == 25 and a == b and a != c
    assert "wrote 25 word_problems examples" in capsys.readouterr().out


def test_evaluate_json_and_predictions(run_dir, tmp_path, capsys):
    data = tmp_path / "test.jsonl"
    main(["generate", "word_problems", "--n", "12", "--seed", "9", "--out", str(data)])
    capsys.readouterr()
    own = run_dir / "predictions.jsonl"  # the test predictions train writes (this run had no test file): untouched
    if not own.exists():
        own.write_text('{"id": "t0", "correct": true}\n')
    before = own.read_bytes()
    assert main(["evaluate", str(run_dir), "--data", str(data), "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["n"] == 12 and 0.0 <= metrics["value_accuracy"] <= 1.0 and "equation_accuracy" in metrics
    written = run_dir / "evaluations" / f"{tmp_path.parent.name}.{tmp_path.name}.test.jsonl"
    assert metrics["predictions"] == str(written)
    assert own.read_bytes() == before
    assert main(["evaluate", str(run_dir), "--data", str(data), "--predictions", str(own)]) == 1
    assert "holds the test predictions train wrote" in capsys.readouterr().err and own.read_bytes() == before
    records = [json.loads(line) for line in written.read_text().splitlines()]
    assert len(records) == 12
    for key in ("input", "predicted_equation", "predicted_value", "gold_answer", "correct"):
        assert key in records[0]
    assert sum(r["correct"] for r in records) == metrics["value_correct"]


def test_solve_prints_an_equation_or_says_why(run_dir, capsys):
    code = main(["solve", str(run_dir), JERRY, "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["text"] == JERRY
    # A one-epoch model may or may not produce an equation with a value; either way the parts agree, and the exit
    # status and the reason say which.
    if result["answer_text"]:
        assert code == 0 and result["reason"] == ""
        assert float(evaluate(parse_infix(result["equation"]))) == pytest.approx(result["answer"])
    else:
        assert code == 1 and result["reason"] and result["answer"] is None


def test_train_refuses_unknown_config_key(tmp_path, capsys):
    code = main(["train", "--config", "word_problems/transformer", "--set", "model.colour=red",
                 "--out", str(tmp_path / "r")])
    assert code == 1
    assert "unknown key in model: colour" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("empty.csv", b"", "empty.csv: the file is empty"),
        ("missing.csv", b"Question,Numbers,Answer\nA number0 b,1,1\n", "Equation"),
        ("bad_equation.csv", b"Question,Equation\n120 is what percent of 50 ?,x=((120/50)*\n", "bad_equation.csv:2"),
        ("bytes.csv", b"Question,Equation\nwhat is 2 \xff\xfe plus 3 ?,x=2+3\n", "bytes.csv:2"),
        ("zero.csv", b"Question,Equation\nsplit 5 apples among 0 people ?,x=5/0\n", "division by zero"),
    ],
)
def test_bad_data_gives_a_clear_error_not_a_traceback(run_dir, tmp_path, capsys, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    assert main(["evaluate", str(run_dir), "--data", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_lenient_evaluation_skips_and_reports(run_dir, tmp_path, capsys):
    path = tmp_path / "mixed.csv"
    path.write_text("Question,Equation\nwhat is 2 plus 3 ?,x=2+3\nsplit 5 among 0 ?,x=5/0\n")
    assert main(["evaluate", str(run_dir), "--data", str(path), "--lenient", "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["n"] == 1 and metrics["skipped"] == 1


def test_solve_without_numbers_and_missing_run(run_dir, tmp_path, capsys):
    assert main(["solve", str(run_dir), "How many pens does Jerry have left?"]) == 2
    assert "no numbers" in capsys.readouterr().err
    assert main(["solve", str(tmp_path / "nowhere"), JERRY]) == 2
    assert "not a run directory" in capsys.readouterr().err
    assert main(["evaluate", str(run_dir), "--data", str(tmp_path / "absent.jsonl")]) == 1
    assert "absent.jsonl" in capsys.readouterr().err


def test_a_problem_longer_than_the_model_reads_is_a_clear_error(run_dir, tmp_path, capsys):
    from neuromath.tasks.word_problems import example_from_equation, write_jsonl

    long_text = "Jerry had 135 pens " + "and more pens " * 200 + ". John took 19 pens ."
    write_jsonl([example_from_equation("long", long_text, "x=135-19")], tmp_path / "long.jsonl")
    assert main(["evaluate", str(run_dir), "--data", str(tmp_path / "long.jsonl")]) == 1
    assert "the model reads at most 512" in capsys.readouterr().err


def test_beam_nbest_constrained_evaluation(run_dir, tmp_path, capsys):
    from neuromath.expr import from_prefix

    data = tmp_path / "test.jsonl"
    main(["generate", "word_problems", "--n", "10", "--seed", "5", "--out", str(data)])
    greedy_file, beam1_file, beam_file = (tmp_path / f"{name}.jsonl" for name in ("greedy", "beam1", "beam"))
    main(["evaluate", str(run_dir), "--data", str(data), "--json", "--predictions", str(greedy_file)])
    main(["evaluate", str(run_dir), "--data", str(data), "--json", "--beam", "1", "--predictions", str(beam1_file)])
    capsys.readouterr()
    greedy = [json.loads(line)["predicted_tokens"] for line in greedy_file.read_text().splitlines()]
    assert greedy == [json.loads(line)["predicted_tokens"] for line in beam1_file.read_text().splitlines()]
    args = ["--beam", "3", "--nbest", "3", "--constrained", "--predictions", str(beam_file)]
    assert main(["evaluate", str(run_dir), "--data", str(data), "--json", *args]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["decode"] == {"beam": 3, "nbest": 3, "length_penalty": 1.0, "constrained": True, "verify": True}
    assert metrics["nbest_value_accuracy"] >= metrics["value_accuracy"]
    for line in beam_file.read_text().splitlines():
        record = json.loads(line)
        assert 1 <= len(record["nbest"]) <= 3
        scores = [entry["score"] for entry in record["nbest"]]
        assert scores == sorted(scores, reverse=True)
        for entry in record["nbest"]:
            from_prefix(entry["tokens"])  # constrained decoding: every hypothesis is a complete prefix expression
        verified = [entry["tokens"] for entry in record["nbest"] if entry["verified"]]
        assert record["predicted_tokens"] == (verified[0] if verified else record["nbest"][0]["tokens"])


def test_solve_prints_the_nbest_list_and_rejects_nbest_above_beam(run_dir, capsys):
    assert main(["solve", str(run_dir), JERRY, "--beam", "3", "--nbest", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["nbest"]) == 2 and result["nbest"][0]["score"] >= result["nbest"][1]["score"]
    assert main(["solve", str(run_dir), JERRY, "--beam", "2", "--nbest", "4"]) == 2
    assert "nbest (4) cannot exceed the beam width (2)" in capsys.readouterr().err


def test_a_tree_variant_trains_saves_its_relation_table_and_decodes(tmp_path, capsys):
    import torch

    import neuromath

    out = tmp_path / "tree"
    tree = ["--set", "model.attention=tree_relative", "--set", "model.positions=tree", "--set", "model.tree_depth=8"]
    assert main(["train", "--config", "word_problems/transformer", *TINY, *tree, "--out", str(out)]) == 0
    solver = neuromath.load(out, beam=4, nbest=2)
    table = solver.model.target_tree.relation_table
    assert torch.equal(table, torch.load(out / "model.pt", weights_only=True)["target_tree.relation_table"])
    assert not torch.equal(table, solver.model.target_tree.default_relation_table())  # fitted to the training equations
    assert solver.model.source_tree is None  # the text side has no tree
    assert len(solver.solve(JERRY).nbest) == 2


def test_data_templates_counts_what_normalisation_merges(tmp_path, capsys):
    path = tmp_path / "problems.csv"
    path.write_text(
        "Question,Equation\n"
        "Tom has 3 apples and gets 4 more. How many now?,x=3+4\n"
        "Ann gets 5 pears and has 2. How many now?,x=2+5\n"  # n1 + n0: the same template as n0 + n1 once normalised
        "Sam had 9 and gave 4 away. How many are left?,x=9-4\n"
        "Bo had 8 and gave 3 away. How many are left?,x=8-3\n",
        encoding="utf-8",
    )
    assert main(["data", "templates", str(path), "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["examples"], row["templates"], row["normalised_templates"], row["merged"]) == (4, 3, 2, 1)
    assert main(["data", "templates", str(path)]) == 0
    assert f"| {path} | 4 | 3 | 2 | 1 | 0 |" in capsys.readouterr().out


def test_config_show_prints_the_resolved_config_and_refuses_keys_that_do_not_apply(capsys):
    import yaml

    assert main(["config", "show", "word_problems/group_attention", "--set", "model.groups=question"]) == 0
    shown = yaml.safe_load(capsys.readouterr().out)
    assert shown["model"]["name"] == "group_attention" and shown["model"]["groups"] == "question"  # the override
    assert shown["model"]["decoder_hidden"] == 256  # the preset's own key
    assert shown["train"]["seed"] == 0 and shown["decode"]["beam"] == 1  # defaults the preset does not name
    assert "attention" not in shown["model"] and "modules" not in shown["data"]  # keys of other models and tasks
    assert main(["config", "show", "word_problems/group_attention", "--set", "data.modules=x"]) == 1
    assert "data.modules does not apply to the word_problems_normalized task" in capsys.readouterr().err


def test_evaluate_refuses_runs_that_are_evaluated_differently(run_dir, tmp_path, capsys):
    other = tmp_path / "identities_run"
    other.mkdir()
    (other / "config.yaml").write_text("data:\n  task: identities\nmodel:\n  name: majority\n")
    assert main(["evaluate", str(run_dir), str(other), "--data", str(tmp_path / "x.jsonl")]) == 1
    error = capsys.readouterr().err
    assert "evaluated the same way" in error and "(sequence)" in error and "(verification)" in error


def test_dedup_refuses_outputs_that_collide_with_each_other_or_an_input(tmp_path, capsys):
    pairs = tmp_path / "sym.txt"
    pairs.write_text("1|sin x\tmul INT- 1 cos x\n1|exp x\texp x\n")
    original = pairs.read_text()
    (tmp_path / "other").mkdir()
    cases = [
        ([str(pairs), str(pairs)], f"--test-out {tmp_path / 'sym.dedup.txt'} is the same file as --train-out"),
        ([str(pairs), str(tmp_path / "other" / ".." / "sym.txt")], "is the same file as --train-out"),
        ([str(pairs), str(pairs), "--train-out", str(pairs), "--test-out", str(tmp_path / "t.txt")],
         f"--train-out {pairs} is the same file as TRAIN"),
        ([str(pairs), str(pairs), "--train-out", "a.txt", "--test-out", "./a.txt"], "same file as --train-out"),
    ]
    for arguments, message in cases:
        assert main(["data", "dedup", *arguments]) == 1
        assert message in capsys.readouterr().err
    assert pairs.read_text() == original and sorted(p.name for p in tmp_path.iterdir()) == ["other", "sym.txt"]
    # distinct names go ahead: every test pair is in the training file, so the test output is empty
    assert main(["data", "dedup", str(pairs), str(pairs), "--test-out", str(tmp_path / "t.txt")]) == 0
    assert (tmp_path / "sym.dedup.txt").read_text() == original and (tmp_path / "t.txt").read_text() == ""


@pytest.mark.parametrize("arguments, message", [
    (["cv", "--config", "c", "--data", "d", "--out", "o", "--k", "1"], "--k: must be an integer from 2 to 100, got 1"),
    (["cv", "--config", "c", "--data", "d", "--out", "o", "--seed", "-3"], "--seed: must be an integer from 0 to"),
    (["train", "--config", "c.yaml", "--out", "o", "--seeds", "0"], "--seeds: must be an integer from 1 to 100, got 0"),
])
def test_counts_out_of_range_are_refused_when_the_command_line_is_read(arguments, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(arguments)
    assert exit_.value.code == 2 and message in capsys.readouterr().err
