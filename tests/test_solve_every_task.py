"""`solve` for every task: an integrand or ODE typed in ordinary notation is read without eval into the generators'
canonical prefix and answered in ordinary notation with the verifier's verdict; a Mathematics Dataset question gets
its answer string; an equation gets the classifier's probability beside the numeric check; unknown input symbols are
named. The decoders are stood in for by fixed hypotheses where a test is about what solve does with them."""

import math
import random
import time

import pytest
import sympy
import torch

from neuromath.api import Candidate, LoadedClassifier, Solver, load
from neuromath.cli import main
from neuromath.config import load_config, save_config
from neuromath.errors import NeuromathError
from neuromath.expr.equation_tree import SYMBOL_NAMES
from neuromath.expr.sympy_bridge import sympy_to_prefix
from neuromath.models import build_task_model
from neuromath.models.classifiers import build_classifier
from neuromath.tasks import get_task
from neuromath.tasks.identities import EquationExample
from neuromath.tasks.identities.numeric_evaluation import OutsideDomain, evaluate
from neuromath.tasks.identities.typed_equations import parse_equation
from neuromath.tasks.symbolic.typed_problems import prepare_problem
from neuromath.text import Vocabulary

TINY = ["model.d_model=16", "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1", "model.n_decoder_layers=1"]


def write_run(run_dir, task: str, tokens: list[str]):
    """A run folder of ``task`` with one shared vocabulary and untrained weights, as training would leave it."""
    run_dir.mkdir(parents=True)
    config = load_config(None, [f"data.task={task}", *TINY])
    vocab = Vocabulary(tokens)
    save_config(config, run_dir / "config.yaml")
    vocab.save(run_dir / "source_vocab.json")
    vocab.save(run_dir / "target_vocab.json")
    torch.save(build_task_model(config.model, get_task(task), vocab, vocab).state_dict(), run_dir / "model.pt")
    return run_dir


def answering(solver: Solver, monkeypatch, *hypotheses: str) -> None:
    """Make the solver's decoder return ``hypotheses`` (space-separated tokens, best first), verified for real."""
    def predict_nbest(examples, batch_size=None):
        candidates = [[Candidate(tuple(h.split()), -0.1 * rank, None) for rank, h in enumerate(hypotheses)]]
        return solver.verify_candidates(candidates, examples)
    monkeypatch.setattr(solver, "predict_nbest", predict_nbest)


@pytest.mark.parametrize("text", ["x*cos(x)", "exp(x)*sin(x)", "1/(1 + x^2)", "-3*x^2 + 0.25", "sqrt(x)*ln(x)"])
def test_an_integrand_is_read_into_the_canonical_prefix_of_the_data(text):
    example = prepare_problem(text)
    # the generators write SymPy's form of an expression; the test may sympify its own, trusted, text
    trusted = sympy.sympify(text.replace("^", "**").replace("ln", "log"), rational=True)
    assert list(example.source) == sympy_to_prefix(trusted)
    assert example.kind == "integration" and example.target == ()


def test_an_ode_is_its_left_side_minus_its_right_and_an_equation_without_y_is_refused():
    example = prepare_problem("Y' - Y = x")
    assert example.kind == "ode1"
    with pytest.raises(NeuromathError, match="an equation is an ODE in Y and Y'"):
        prepare_problem("x^2 = 1")
    with pytest.raises(NeuromathError, match="unknown name 'z'"):
        prepare_problem("z*x")


def test_symbolic_solve_answers_in_ordinary_notation_with_the_verifiers_verdict(tmp_path, monkeypatch, capsys):
    tokens = ["add", "mul", "sin", "cos", "x", "INT+", "INT-", *"0123456789"]
    run = write_run(tmp_path / "run", "symbolic", tokens)
    solver = load(run, beam=2, nbest=2)
    answering(solver, monkeypatch, "mul x sin x", "add mul x sin x cos x")  # wrong first, then right
    solution = solver.solve("x*cos(x)")
    assert solution.answer_text == "x*sin(x) + cos(x)" and solution.verified is True and not solution.reason
    assert [(c.answer_text, c.verified) for c in solution.nbest] == [("x*sin(x)", False), ("x*sin(x) + cos(x)", True)]
    assert str(solution) == "x*sin(x) + cos(x)  [verified]"
    assert solution.unknown_tokens == ()
    # a symbol the run never saw is named
    assert solver.solve("x*exp(x)").unknown_tokens == ("exp",)

    answering(solver, monkeypatch, "add x")  # not an expression
    solution = solver.solve("x*cos(x)")
    assert solution.answer_text == "" and solution.reason.startswith("not a well-formed expression")


def test_the_solve_command_lists_symbolic_candidates_with_their_verdicts(tmp_path, monkeypatch, capsys):
    run = write_run(tmp_path / "run", "symbolic", ["add", "mul", "sin", "cos", "x"])

    def predict_nbest(solver, examples, batch_size=None):
        hypotheses = ["mul x sin x", "add mul x sin x cos x"]
        return solver.verify_candidates([[Candidate(tuple(h.split()), -0.1, None) for h in hypotheses]], examples)
    monkeypatch.setattr(Solver, "predict_nbest", predict_nbest)
    assert main(["solve", str(run), "x*cos(x)", "--beam", "2", "--nbest", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("  1. x*sin(x) ") and lines[0].endswith("[not verified]")
    assert lines[1].startswith("  2. x*sin(x) + cos(x) ") and lines[1].endswith("[verified]")
    assert lines[-1] == "answer: x*sin(x) + cos(x)  [verified]"


def test_a_mathematics_dataset_question_gets_the_answer_string(tmp_path, monkeypatch):
    run = write_run(tmp_path / "run", "mathematics_dataset", list(dict.fromkeys("What is 2+3?05")))
    solver = load(run)
    answering(solver, monkeypatch, "5")
    solution = solver.solve("What is 2+3?")
    assert (solution.answer_text, solution.verified, solution.unknown_tokens) == ("5", None, ())
    assert str(solution) == "5"
    assert solver.solve("What is 2*3?").unknown_tokens == ("*",)
    with pytest.raises(NeuromathError, match="the question is empty"):
        solver.solve("  ")


@pytest.mark.parametrize("text", ["sin(x)^2 + cos(x)^2 = 1", "x - y/2 = sqrt(x)^2 - y*0.5", "tan(x) = sin(x)/cos(x)",
                                  "exp(x)*e^y = exp(x + y)", "ln(x*y) = log(x) + ln(y)", "-x^2 = (-x)^2 - 2*x^2"])
def test_a_typed_equation_is_the_tree_of_what_was_typed(text):
    tree = parse_equation(text)
    left_text, right_text = text.replace("^", "**").replace("ln(", "log(").split("=")
    reference = [sympy.sympify(side, locals={"e": sympy.E}) for side in (left_text, right_text)]
    rng = random.Random(0)
    checked = 0
    for _ in range(30):
        point = {"var_0": rng.uniform(0.1, 2.0), "var_1": rng.uniform(0.1, 2.0)}
        symbols = {sympy.Symbol(SYMBOL_NAMES[name]): value for name, value in point.items()}
        try:
            ours = [evaluate(side, point) for side in tree.children]
        except OutsideDomain:
            continue
        theirs = [float(side.subs(symbols)) for side in reference]
        assert ours == pytest.approx(theirs, rel=1e-9)
        checked += 1
    assert checked >= 20


def tiny_identities_run(run):
    """An untrained tree_lstm run folder (hidden size 8) in ``run``: enough to load, solve and check."""
    run.mkdir()
    config = load_config(None, ["data.task=identities", "model.name=tree_lstm", "model.d_model=8"])
    vocab = Vocabulary(["Add", "Mul", "Pow", "sin", "cos", "var_0", "1", "2", "-1"])
    save_config(config, run / "config.yaml")
    vocab.save(run / "node_vocab.json")
    torch.save(build_classifier(config.model, vocab).state_dict(), run / "model.pt")
    return run


def test_an_equation_classifier_gives_its_probability_and_the_numeric_check(tmp_path, capsys):
    run = tiny_identities_run(tmp_path / "run")

    classifier = load(run)
    assert isinstance(classifier, LoadedClassifier)
    verdict = classifier.solve("sin(x)^2 + cos(x)^2 = 1")
    logit = classifier.logits([EquationExample(parse_equation("sin(x)^2 + cos(x)^2 = 1"), None)])[0]
    assert verdict.probability == pytest.approx(float(torch.sigmoid(logit)))
    assert verdict.reference is True and verdict.unknown_tokens == ()
    assert classifier.solve("sin(x) = cos(x)").reference is False
    assert classifier.solve("tan(x) = 3").unknown_tokens == ("tan", "3")

    assert main(["solve", str(run), "sin(x)^2 + cos(x)^2 = 1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("sin(x)^2 + cos(x)^2 = 1: ") and "numeric check: true" in out
    assert f"(probability {verdict.probability:.3f})" in out
    assert main(["solve", str(run), "sin(x) + = 1"]) == 2
    assert "at position 9" in capsys.readouterr().err
    assert not math.isnan(verdict.probability)


def test_a_run_of_the_normalised_word_problem_task_solves_a_typed_problem(tmp_path, monkeypatch):
    """A typed problem has no equation; the normalised task's target must then be empty, not an error (solve failed
    with "empty token list" on every GroupATT run trained on normalised postfix targets)."""
    words = ["jerry", "had", "pens", ".", "john", "took", "from", "him", "how", "many", "does", "have", "left", "?"]
    run = write_run(tmp_path / "run", "word_problems_normalized", [*words, "n0", "n1", "+", "-", "*", "/"])
    text = "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?"
    solver = load(run)
    decoded = solver.solve(text, attention=True)  # the real decoder and the attention pass read the example
    assert decoded.masked_equation is not None and decoded.attention
    answering(solver, monkeypatch, "n0 n1 -")  # postfix, as the normalised task's models write
    solution = solver.solve(text)
    assert (solution.equation, solution.answer_text) == ("135 - 19", "116")


@pytest.mark.parametrize("text,reason", [
    (" + ".join(["x"] * 500) + " = 1", "the equation is 500 levels deep"),  # was a RecursionError in format_infix
    ("1" + "0" * 309 + " * x = 1", "is too large: numbers up to 1.798e"),  # was an OverflowError in leaf_float
    ("x^" + "9" * 400 + " = 1", "is too large"),
    ("1" + "0" * 5000 + " * x = 1", "has 5001 digits; at most 4299 are read"),  # was int()'s ValueError
])
def test_solve_refuses_an_equation_the_identities_task_cannot_take_in_one_error_line(tmp_path, capsys, text, reason):
    run = tiny_identities_run(tmp_path / "run")

    with pytest.raises(NeuromathError, match=reason):
        load(run).solve(text)
    assert main(["solve", str(run), text]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ") and reason in captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    # the largest sum the task takes is answered
    assert main(["solve", str(run), " + ".join(["x"] * 99) + " = 99*x"]) == 0
    assert "numeric check: true" in capsys.readouterr().out


def test_a_symbolic_problem_with_a_5000_digit_integer_is_one_clear_error():
    with pytest.raises(NeuromathError, match="has 5000 digits; at most 4299 are read"):
        prepare_problem("9" * 5000 + "*x")


@pytest.mark.parametrize("text", ["9^9^9*x", "x + 2^100000", "x*2^-100000", "(3^3000)^4*x", "x*3^9100",
                                  "Y' - Y = 7^9999"])
def test_a_constant_too_large_to_compute_is_refused_before_sympy_spends_its_time_limit(text):
    # 9^9^9 held SymPy's worker, and every solve behind it, for the whole 10 s time limit
    start = time.perf_counter()
    with pytest.raises(NeuromathError, match="more than 4300 digits"):
        prepare_problem(text)
    assert time.perf_counter() - start < 5.0  # a guard against the 10 s hang, not a speed target


@pytest.mark.parametrize("factors", [257, 1000])
def test_a_problem_longer_than_any_symbolic_model_reads_is_refused_before_sympy(factors):
    # a 2 KB product x*x*...*x kept SymPy's worker busy for about a second; no preset reads more than 512 tokens
    with pytest.raises(NeuromathError, match=rf"is {2 * factors - 1} prefix tokens long; the symbolic models read "
                                             "at most 512"):
        prepare_problem("*".join(["x"] * factors))


@pytest.mark.parametrize("text,same_as", [("2^10*x", "1024*x"), ("x*1^(9^9)", "x"), ("x*(-1)^(9^9)", "-x"),
                                          ("x*0^(9^9) + x", "x"), ("x^(9^9)", "x^387420489")])
def test_constants_of_a_bounded_size_are_still_read(text, same_as):
    assert prepare_problem(text).source == prepare_problem(same_as).source
