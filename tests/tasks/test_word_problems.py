"""Masking, equations and scoring of neuromath/tasks/word_problems.py (readers: test_word_problem_readers.py)."""

import math
import random
from fractions import Fraction

import pytest

from neuromath.errors import DataFormatError, ExpressionError
from neuromath.expr import Node
from neuromath.tasks.word_problems import (
    Example,
    describe_prediction,
    equation_matches,
    equation_value,
    example_from_equation,
    fill_numbers,
    generate,
    is_correct,
    mask_numbers,
    prepare_problem,
    words_to_number,
)
from neuromath.tasks.word_problems import templates as word_problem_templates

# --- mask_numbers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "masked", "numbers"),
    [
        ("Jerry had 135 pens.", "Jerry had n0 pens .", ("135",)),
        ("It weighs 2.5 kg or .5 kg.", "It weighs n0 kg or n1 kg .", ("2.5", ".5")),
        ("She ate (2/5) of it.", "She ate n0 of it .", ("(2/5)",)),
        ("Prices fell 30% and 2.5%.", "Prices fell n0 and n1 .", ("30%", "2.5%")),
        ("Add 1(1/2) cups.", "Add n0 cups .", ("1(1/2)",)),
        ("It cost $1,000 or 12,345,678.5 yen.", "It cost $ n0 or n1 yen .", ("1000", "12345678.5")),
    ],
)
def test_mask_numbers_masks_each_kind_of_number_as_one_token(text, masked, numbers):
    assert mask_numbers(text) == (masked, numbers)


def test_mask_numbers_reads_a_list_of_small_numbers_as_separate_numbers():
    assert mask_numbers("grades 1,2,3") == ("grades n0 , n1 , n2", ("1", "2", "3"))


def test_mask_numbers_splits_punctuation_from_words_but_not_from_numbers():
    masked, numbers = mask_numbers('He said: "Buy 3.5 (not 4) apples; ok?" Yes!')
    assert masked == 'He said : " Buy n0 ( not n1 ) apples ; ok ? " Yes !'
    assert numbers == ("3.5", "4")


def test_mask_numbers_splits_chinese_punctuation_and_units():
    masked, numbers = mask_numbers("一 共有 280kg 水果糖 ， 每 袋装 (1/4)kg ， 装完 了 20% ．")
    assert masked == "一 共有 n0 kg 水果糖 ， 每 袋装 n1 kg ， 装完 了 n2 ．"
    assert numbers == ("280", "(1/4)", "20%")


def test_mask_numbers_collapses_whitespace_to_single_spaces():
    assert mask_numbers("  two\tapples \n and   3 pears ")[0] == "n0 apples and n1 pears"


def test_mask_numbers_leaves_digits_inside_words_and_ordinals_alone():
    masked, numbers = mask_numbers("the 2nd and 21st mp3 of H1")
    assert masked == "the 2nd and 21st mp3 of H1"
    assert numbers == ()


def test_mask_numbers_reads_a_sign_against_a_number_and_keeps_subtraction_an_operator():
    assert mask_numbers("between -11 and 2") == ("between n0 and n1", ("-11", "2"))
    assert mask_numbers("between - 11 and 2") == ("between - n0 and n1", ("11", "2"))  # a spaced minus: an operator
    assert mask_numbers("11 -2 and 11-2") == ("n0 - n1 and n2 - n3", ("11", "2", "11", "2"))  # after a number


@pytest.mark.parametrize(
    ("text", "masked", "numbers"),
    [
        ("He has fifty-eight apples.", "He has n0 apples .", ("58",)),
        ("Twelve eggs and three hundred pears", "n0 eggs and n1 pears", ("12", "300")),
        ("one of them and the fifth day", "one of them and the fifth day", ()),
        ("one hundred and five cars", "n0 cars", ("105",)),
        ("two and three", "n0 and n1", ("2", "3")),
        ("a three-legged stool", "a three-legged stool", ()),
    ],
)
def test_mask_numbers_masks_cardinal_number_words_from_two_upwards(text, masked, numbers):
    assert mask_numbers(text) == (masked, numbers)


@pytest.mark.parametrize(
    ("words", "value"),
    [
        ("two", 2),
        ("Twelve", 12),
        ("fifty-eight", 58),
        ("ninety", 90),
        ("three hundred", 300),
        ("one hundred and five", 105),
        ("two thousand five hundred and six", 2506),
        ("five hundred thousand", 500_000),
        ("zero", 0),
        ("twelve hundred", 1200),
        ("nineteen hundred and five", 1905),
        ("twenty-five hundred", 2500),
        ("two thousand and five", 2005),
        ("one hundred twenty", 120),
    ],
)
def test_words_to_number_reads_cardinals(words, value):
    assert words_to_number(words) == value


@pytest.mark.parametrize(
    "words",
    [
        "fifth", "two three", "fifty-zero", "three-legged", "hundred", "thousand two", "two thousand three million",
        "and", "", "ten hundred", "twenty hundred", "twelve hundred thousand", "two thousand twelve hundred",
        "one hundred hundred",
    ],
)
def test_words_to_number_rejects_what_is_not_one_cardinal(words):
    with pytest.raises(ValueError):
        words_to_number(words)


# --- example_from_equation --------------------------------------------------------------------


def test_example_from_equation_masks_text_and_equation():
    example = example_from_equation("7", "Jerry had 135 pens. John took 19 pens.", "x=135-19")
    assert example == Example(
        id="7",
        text="Jerry had 135 pens. John took 19 pens.",
        masked_text="Jerry had n0 pens . John took n1 pens .",
        numbers=("135", "19"),
        equation=("-", "n0", "n1"),
        answer=116.0,
    )


def test_example_from_equation_matches_numbers_by_value_and_keeps_constants_canonical():
    example = example_from_equation("1", "Put 27 rows of 16 chairs.", "X=(27.0*16.0)+100.0")
    assert example.equation == ("+", "*", "n0", "n1", "100")


def test_example_from_equation_uses_the_first_number_of_equal_value():
    example = example_from_equation("1", "5 red and 5 blue and 2 green", "x=5*2")
    assert example.equation == ("*", "n0", "n2")


def test_example_from_equation_reads_expr_equals_x_and_a_bare_expression():
    text = "Dan found 7 shells but 3 were broken."
    assert example_from_equation("1", text, "7-3=x").equation == ("-", "n0", "n1")
    assert example_from_equation("1", text, "7-3").equation == ("-", "n0", "n1")


def test_example_from_equation_solves_a_linear_equation_for_its_unknown():
    example = example_from_equation("1", "He gave 7 and 4 away and has 5 left.", "X-7-4=5")
    assert example.answer == 16
    assert example.equation == ("+", "+", "n0", "n1", "n2")


def test_example_from_equation_solves_an_unknown_on_both_sides():
    text = "7 times a number added to 4 amounts to 20 less than the product of 3 and the number."
    example = example_from_equation("1", text, "(7.0*x)+4.0=(3.0*x)-20.0")
    assert example.answer == -6
    assert equation_value(example.equation, example.numbers) == -6


def test_example_from_equation_accepts_any_one_unknown_name():
    assert example_from_equation("1", "4 miles in 30 minutes", "miles=4.0/30.0").equation == ("/", "n0", "n1")


@pytest.mark.parametrize(
    ("equation", "reason"),
    [
        ("(6.0+x)*(x-6.0)=189.0", "not linear"),
        ("2000/(760+x)=1800/(760-x)", "not linear"),
        ("x=1=2", "more than one '='"),
        ("x+y=3", "exactly one unknown"),
        ("3+y", "unknown names"),
        ("x=3+*2", "cannot parse"),
        ("x=3/(2-2)", "division by zero"),
    ],
)
def test_example_from_equation_rejects_what_it_cannot_read(equation, reason):
    with pytest.raises(ExpressionError, match=reason):
        example_from_equation("1", "3 and 2 and 6 and 189", equation)


def test_a_fraction_literal_stands_for_a_fraction_of_the_text_or_else_is_a_division():
    chinese = example_from_equation("1", "一段布剪去6米，正好剪去这段布的(2/5)", "x=6/(2/5)")
    assert chinese.equation == ("/", "n0", "n1")
    mathqa = example_from_equation("1", "120 is what percent of 50 ?", "x=((120/50)*100)")
    assert mathqa.equation == ("*", "/", "n0", "n1", "100")
    assert mathqa.answer == 240


def test_example_from_equation_matches_word_numbers_and_percentages():
    example = example_from_equation("1", "Sam has twelve eggs and sells 25% of them.", "x=12*25%")
    assert example.numbers == ("12", "25%")
    assert example.equation == ("*", "n0", "n1")
    assert example.answer == 3


def test_example_from_equation_points_at_negative_text_numbers():
    example = example_from_equation("1", "Find the product of -2 , 4 and -1 .", "x=((-2.0)*4.0)*(-1.0)")
    assert example.numbers == ("-2", "4", "-1")
    assert example.equation == ("*", "*", "n0", "n1", "n2")
    assert example.answer == 8
    # the equation writes the magnitude of a text's negative number: neg of its mask, not a constant
    example = example_from_equation("2", "5 times a number less 9 is negative fifteen .", "x=(9-15/5)/2")
    assert example.numbers == ("5", "9", "-15")
    assert example.equation == ("/", "-", "n1", "/", "neg", "n2", "n0", "2")
    assert example.answer == 3
    # a spaced minus stays an operator, and the equation's unary minus applies to the positive number
    example = example_from_equation("3", "Find the product of - 2 and 4 .", "x=(-2)*4")
    assert example.equation == ("*", "neg", "n0", "n1")


def test_example_from_equation_points_a_division_at_a_text_fraction():
    example = example_from_equation("1", "She ate 3/4 of 8 pies .", "x=3/4*8")
    assert example.numbers == ("(3/4)", "8")
    assert example.equation == ("*", "n0", "n1")
    assert example.answer == 6


def test_example_from_equation_masks_the_segmented_text_but_keeps_the_original():
    example = example_from_equation("1", "运来3车白菜", "x=3*2", segmented_text="运 来 3 车 白菜")
    assert example.text == "运来3车白菜"
    assert example.masked_text == "运 来 n0 车 白菜"


def test_example_from_equation_keeps_a_given_answer():
    assert example_from_equation("1", "Add 2 and 3", "x=2+3", answer=6).answer == 6.0


# --- scoring ----------------------------------------------------------------------------------


def _example(numbers=("135", "19"), equation=("-", "n0", "n1"), answer=116.0):
    return Example(id="1", text="", masked_text="", numbers=numbers, equation=equation, answer=answer)


def test_fill_numbers_puts_the_problem_numbers_into_the_tree():
    tree = fill_numbers(["/", "n0", "n1"], ["(2/5)", "-3"])
    assert tree == Node("/", (Node("(2/5)"), Node("neg", (Node("3"),))))
    assert equation_value(["/", "n0", "n1"], ["(2/5)", "-3"]) == Fraction(-2, 15)


def test_fill_numbers_rejects_a_number_the_problem_does_not_have():
    with pytest.raises(ExpressionError, match="n2"):
        fill_numbers(["+", "n0", "n2"], ["1", "2"])


def test_is_correct_compares_values_not_tokens():
    example = _example()
    assert is_correct(["-", "n0", "n1"], example)
    assert is_correct(["-", "135", "19"], example)
    assert not is_correct(["+", "n0", "n1"], example)


def test_is_correct_uses_a_relative_tolerance():
    example = _example(numbers=("2", "3"), equation=("/", "n0", "n1"), answer=0.6667)
    assert is_correct(["/", "n0", "n1"], example)  # relative error 5e-5
    assert not is_correct(["/", "n0", "n1"], _example(numbers=("2", "3"), answer=0.667))  # 5e-4
    assert is_correct(["/", "n0", "n1"], _example(numbers=("2", "3"), answer=0.667), rel_tol=1e-3)


@pytest.mark.parametrize(
    "hypothesis",
    [
        [], ["+", "n0"], ["n0", "n1"], ["+", "n0", "n7"], ["/", "n0", "-", "n1", "n1"], ["frobnicate"],
        ["^", "10", "100000"],
    ],
)
def test_is_correct_is_false_for_an_ill_formed_or_unevaluable_hypothesis(hypothesis):
    assert is_correct(hypothesis, _example()) is False


def test_is_correct_is_false_without_a_gold_answer():
    assert not is_correct(["-", "n0", "n1"], prepare_problem("Jerry had 135 pens and gave 19 away."))


def test_equation_matches_is_token_exact():
    example = _example(equation=("+", "n0", "n1"))
    assert equation_matches(["+", "n0", "n1"], example)
    assert equation_matches(("+", "n0", "n1"), example)
    assert not equation_matches(["+", "n1", "n0"], example)


def test_describe_prediction_writes_the_equation_with_real_numbers():
    record = describe_prediction(["-", "n0", "n1"], _example())
    assert record["predicted_equation"] == "135 - 19"
    assert record["predicted_value"] == 116.0
    assert record["predicted_answer_text"] == "116"
    assert record["correct"] and record["equation_correct"]


def test_describe_prediction_of_bad_hypotheses_has_no_equation_or_no_value():
    ill_formed = describe_prediction(["+", "n0"], _example())
    assert ill_formed["predicted_equation"] is None and not ill_formed["correct"]
    division_by_zero = describe_prediction(["/", "n0", "-", "n1", "n1"], _example())
    assert division_by_zero["predicted_equation"] == "135 / (19 - 19)"
    assert division_by_zero["predicted_value"] is None


# --- prepare_problem and generate -------------------------------------------------------------


def test_prepare_problem_masks_the_text_and_has_no_equation():
    example = prepare_problem("Jerry had 135 pens. John took 19 pens from him. How many are left?")
    assert example.masked_text == "Jerry had n0 pens . John took n1 pens from him . How many are left ?"
    assert example.numbers == ("135", "19")
    assert example.equation == ()
    assert math.isnan(example.answer)


def test_prepare_problem_without_numbers_is_a_clear_error():
    with pytest.raises(DataFormatError, match="no numbers"):
        prepare_problem("How many pens does one person have?")


def test_generate_delegates_to_the_templates(monkeypatch):
    calls = []

    def fake_generate(n, rng, **params):
        calls.append((n, rng, params))
        return [_example()] * n

    monkeypatch.setattr(word_problem_templates, "generate", fake_generate)
    rng = random.Random(0)
    assert generate(2, rng, max_ops=1) == [_example(), _example()]
    assert calls == [(2, rng, {"max_ops": 1})]
