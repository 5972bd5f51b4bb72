"""The quantities read from a word problem's text (``read_numbers``, what ``mask_numbers`` masks), checked against a
table of texts and the values a reader of English gives them. The values were written by hand from the texts, not
from the reader: a value the reader gets wrong fails here. What the reader cannot read for sure stays text (an empty
list or fewer values), never a wrong number."""

from fractions import Fraction as F

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuromath.errors import ExpressionError
from neuromath.tasks.word_problems import example_from_equation, mask_numbers, prepare_problem, read_numbers

# text -> the values of its quantities, in order
TABLE = [
    # digits, decimals, thousands separators
    ("Jerry had 135 pens.", [135]),
    ("It weighs 2.5 kg or .5 kg.", [F(5, 2), F(1, 2)]),
    ("A town of 1,200 people and 12,345,678.5 yen.", [1200, F(24691357, 2)]),
    ("grades 1,2,3", [1, 2, 3]),
    # number words with multipliers
    ("He bought twelve hundred pens.", [1200]),
    ("It was built in nineteen hundred.", [1900]),
    ("two thousand five hundred marbles", [2500]),
    ("one hundred twenty cars", [120]),
    ("one hundred and five cars", [105]),
    ("three million people", [3_000_000]),
    ("twenty-five hundred dollars", [2500]),
    ("twelve hundred and fifty sheep", [1250]),
    ("two thousand and five visitors", [2005]),
    ("nine hundred ninety-nine thousand nine hundred ninety-nine", [999_999]),
    ("fifty-eight apples and seven pears", [58, 7]),
    ("two and three", [2, 3]),
    ("two point five liters", [F(5, 2)]),
    ("one point two five meters", [F(5, 4)]),
    # negative numbers
    ("It was -5 degrees.", [-5]),
    ("He owes -20 dollars.", [-20]),
    ("The temperature fell to minus 5 degrees.", [-5]),
    ("The answer is negative 5.", [-5]),
    ("The sum is negative fifteen.", [-15]),
    ("It was minus one degree.", [-1]),
    ("between -11 and 2", [-11, 2]),
    ("Find the product of -2 , -15 , 4 and -1 .", [-2, -15, 4, -1]),
    ("What is 5 - -3?", [5, -3]),
    ("(-5) squared", [-5]),
    ("It cost -1,000 dollars and -2.5 more.", [-1000, F(-5, 2)]),
    # a hyphen between numbers, a spaced minus and minus after a number are subtraction or a range: no negative
    ("What is 10-5?", [10, 5]),
    ("Read pages 3-5.", [3, 5]),
    ("What is 10 -5?", [10, 5]),
    ("What is 10 minus 5?", [10, 5]),
    ("What is ten minus five?", [10, 5]),
    ("8 - 11 hours", [8, 11]),
    # percentages, fractions and mixed numbers
    ("Prices fell 25% and 2.5%.", [F(1, 4), F(1, 40)]),
    ("She ate 3/4 of a pie.", [F(3, 4)]),
    ("Add 2 1/2 cups of flour.", [F(5, 2)]),
    ("She ate (2/5) of it and 1(1/2) more.", [F(2, 5), F(3, 2)]),
    ("A 7/4 inch bolt", [F(7, 4)]),
    ("It lost -5% of its value.", [F(-1, 20)]),
    # powers and scientific notation
    ("A 2^10 byte page", [1024]),
    ("2.5E-3 kg", [F(1, 400)]),
    # what cannot be read for sure stays text
    ("twelve hundredths of a meter", []),
    ("two thirds of the class", []),
    ("three quarters of an hour", []),
    ("two and a half hours", []),
    ("the twenty first day", []),
    ("the two thousandth visitor", []),
    ("at twenty hundred hours", []),
    ("twelve hundred thousand", []),
    ("one of them, the fifth day, a three-legged stool", []),
    ("on 3/4/2020", [3, 4, 2020]),  # a date is no fraction: its numbers as written
    ("a score of 3/0", [3, 0]),  # no fraction with a zero denominator
    ("the 2nd and 21st mp3 of H1", []),
    ("two third graders", [2]),  # an ordinal noun after a number: the number is read
]


@pytest.mark.parametrize(("text", "values"), TABLE)
def test_the_quantities_of_a_text_have_the_values_a_reader_gives_them(text, values):
    assert [number.value for number in read_numbers(text)] == values


def test_the_table_is_large_and_holds_cases_that_must_stay_text():
    assert len(TABLE) >= 40
    assert sum(1 for _, values in TABLE if not values) >= 8


@pytest.mark.parametrize(("text", "values"), TABLE)
def test_the_masked_numbers_are_the_quantities_read(text, values):
    masked, numbers = mask_numbers(text)
    assert [number.literal for number in read_numbers(text)] == list(numbers)
    assert sum(token.startswith("n") and token[1:].isdigit() for token in masked.split()) == len(values)


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("He bought twelve hundred pens.", [("twelve hundred", 10, 24)]),
        ("It was -5 degrees.", [("-5", 7, 9)]),
        ("fell to minus 5 and 1,200", [("minus 5", 8, 15), ("1,200", 20, 25)]),
        ("Add 2 1/2 cups or 3/4 cup.", [("2 1/2", 4, 9), ("3/4", 18, 21)]),
        ("What is 10-5?", [("10", 8, 10), ("5", 11, 12)]),
    ],
)
def test_each_quantity_has_its_span_in_the_text(text, spans):
    numbers = read_numbers(text)
    assert [(number.text, number.start, number.end) for number in numbers] == spans
    assert all(text[number.start : number.end] == number.text for number in numbers)


def test_a_signed_number_is_one_mask_and_a_negative_literal():
    assert mask_numbers("It was -5 degrees, then minus 3.") == ("It was n0 degrees , then n1 .", ("-5", "-3"))
    assert mask_numbers("The sum is negative fifteen.") == ("The sum is n0 .", ("-15",))


def test_the_problem_to_solve_carries_the_numbers_read():
    example = prepare_problem("Tom had twelve hundred pens and gave away -5. How many?")
    assert example.numbers == ("1200", "-5")
    example = prepare_problem("Add 2 1/2 cups to 3/4 cup.")
    assert example.numbers == ("2(1/2)", "(3/4)")


def test_a_problem_whose_only_number_words_cannot_be_read_has_no_numbers():
    with pytest.raises(Exception, match="no numbers to compute with"):
        prepare_problem("twelve hundredths of a meter")


def test_an_equation_over_a_number_in_words_points_at_it():
    example = example_from_equation("1", "He had twelve hundred pens and sold 200 .", "x=1200-200")
    assert example.numbers == ("1200", "200")
    assert example.equation == ("-", "n0", "n1")
    assert example.answer == 1000


def test_a_power_too_large_to_compute_is_refused_by_name_not_read_as_another_number():
    with pytest.raises(ExpressionError, match=r"the number '2\^32\^3': power too large to compute"):
        read_numbers("Tom has 2^32^3 pens.")


PIECES = ["-", "−", " ", "minus", "negative", "twelve", "hundred", "and", "two", "thirds", "point", "five", "5", "3/4",
          "2 1/2", "1,200", "25%", "10-5", "(", ")", ",", ".", "one", "twenty", "first", "hundredths", "x", "2^3"]


@given(st.lists(st.sampled_from(PIECES), max_size=30), st.lists(st.sampled_from(["", " "]), min_size=30, max_size=30))
def test_property_spans_are_in_order_and_are_the_text(pieces, gaps):
    text = "".join(piece + gap for piece, gap in zip(pieces, gaps))
    try:
        numbers = read_numbers(text)
    except ExpressionError as error:  # a chained power (2^32^3 = 2^32768) beyond evaluate's limits is refused by name
        assert "^3" in text and "power too large to compute" in str(error)
        return
    assert all(text[number.start : number.end] == number.text for number in numbers)
    assert all(before.end <= after.start for before, after in zip(numbers, numbers[1:]))
    masked, literals = mask_numbers(text)
    assert [number.literal for number in numbers] == list(literals)
    assert sum(token.startswith("n") and token[1:].isdigit() for token in masked.split()) == len(numbers)
