"""Number words are read in linear time, so every text a user types is prepared within a fixed budget.

``_number_word_run`` used to try every end of a run of number words from every token and re-parse the run each
time: a 2 KB text of "5 and and ... and" took about 4-9 s to mask, and a server could be held up by a few of them.
These tests check that the results are those of that reading (against a copy of it, on short texts) and that the
work grows linearly with the text, counted in words examined (not timed): each adversarial text of 2 KB is compared
with the same text cut to 1 KB (longer than the most words a number can have, so the reading of each token is at
full cost in both), and the work per word is bounded.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuromath.tasks.word_problems import mask_numbers, prepare_problem
from neuromath.tasks.word_problems.records import (
    _MAX_NUMBER_WORD_TOKENS,
    _UNIT_WORDS,
    SMALLEST_MASKED_NUMBER_WORD,
    _decimal_words,
    _is_number_word,
    _number_word_run,
    _read_alone,
    words_to_number,
)


def reference_number_word_run(words, start):
    """The reading without its window (cubic in the length of a run), kept as the definition of the results: the
    longest run of number words from ``start`` that reads, unless the words after it make it part of something else
    (a decimal in words is read, a run before a multiplier or a denominator stays text)."""
    end = start
    while end < len(words) and _is_number_word(words[end]):
        end += 1
    for stop in range(end, start, -1):
        try:
            value = words_to_number(" ".join(words[start:stop]))
        except ValueError:
            continue
        if stop + 1 < len(words) and words[stop].lower() == "point" and words[stop + 1].lower() in _UNIT_WORDS:
            decimal = _decimal_words(words, stop)
            return None if decimal is None else (decimal[0], value + decimal[1])
        if not _read_alone(words, start, stop):
            return None
        return (stop, value) if value >= SMALLEST_MASKED_NUMBER_WORD else None
    return None


WORDS = [
    "zero", "one", "two", "Five", "nine", "ten", "twelve", "twenty", "ninety", "hundred", "Hundred", "thousand",
    "million", "billion", "and", "AND", "ninety-nine", "twenty-one", "and-and", "fifty-zero", "twenty-one-two",
    "fifth", "apples", "-", "5", "point", "thirds", "first", "twelve", "nineteen", "twenty-five",
]


@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=40))
def test_number_word_run_reads_as_the_reference_on_every_token(words):
    assert [_number_word_run(words, start) for start in range(len(words))] == [
        reference_number_word_run(words, start) for start in range(len(words))
    ]


def test_the_longest_number_in_words_is_read_whole():
    # Four groups of five parts and three scale words: the most a number in words can have, read to the end.
    group = "nine hundred and ninety nine"
    words = f"{group} billion {group} million {group} thousand {group} apples".split()
    assert len(words) - 1 == _MAX_NUMBER_WORD_TOKENS
    assert _number_word_run(words, 0) == (_MAX_NUMBER_WORD_TOKENS, 999_999_999_999)
    assert _number_word_run(words, 0) == reference_number_word_run(words, 0)


def test_masking_is_unchanged_on_ordinary_text():
    assert mask_numbers("He had twenty-five apples and two hundred and six pears, and and one more.") == (
        "He had n0 apples and n1 pears , and and one more .",
        ("25", "206"),
    )
    assert mask_numbers("5 and and and hundred thousand") == ("n0 and and and hundred thousand", ("5",))


ADVERSARIAL = {
    "5 and and ...": "5" + " and" * 1000,
    "two and two and ...": "two and " * 500,
    "two two two ...": "two " * 1000,
    "Two-Two ...": "5 " + "Two-Two " * 500,
    "hundred ...": "5 " + "hundred " * 500,
    "thousand ...": "5 " + "thousand " * 500,
    "nine hundred ...": "nine hundred " * 500,
    "twenty-one-and ...": "5 " + "twenty-one-and " * 500,
    "and-and ...": "5 " + "and-and " * 500,
    "ninety-nine thousand ...": "ninety-nine thousand " * 200,
    "nine hundred and ninety-nine billion ...": "5 " + "nine hundred and ninety-nine billion " * 100,
    "minus minus ...": "minus " * 400,
    "minus two minus two ...": "minus two " * 200,
    "two point five five ...": "two point " + "five " * 400,
    "twelve hundred twelve hundred ...": "twelve hundred " * 150,
    "two thirds two thirds ...": "two thirds " * 200,
    "the longest number, again and again": "nine hundred and ninety nine billion nine hundred and ninety nine "
    "million nine hundred and ninety nine thousand nine hundred and ninety nine " * 20,
}


def words_examined(text, monkeypatch):
    """The work of masking ``text``, counted rather than timed: the words looked at to decide whether they are number
    words, plus the words of every run parsed as a number."""
    from neuromath.tasks.word_problems import records

    count = [0]
    is_number_word, parse = records._is_number_word, records.words_to_number

    def counted_is_number_word(token):
        count[0] += 1
        return is_number_word(token)

    def counted_parse(run):
        count[0] += len(run.split())
        return parse(run)

    monkeypatch.setattr(records, "_is_number_word", counted_is_number_word)
    monkeypatch.setattr(records, "words_to_number", counted_parse)
    mask_numbers(text)
    monkeypatch.undo()
    return count[0]


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_a_2kb_adversarial_text_is_prepared_in_linear_time(name, monkeypatch):
    large = ADVERSARIAL[name][:2048]
    small = large[:1024]
    small_work, large_work = words_examined(small, monkeypatch), words_examined(large, monkeypatch)
    # twice the text may cost at most 2.5x the work (linear is 2x, and the ends of the texts add a little; quadratic
    # would be 4x, the cubic reading cost 8x), and at most a bounded amount per word: from each word, the window of
    # the longest number in words looked at, and each shorter run of it parsed (fewer than window^2 words)
    assert large_work <= 2.5 * small_work, (name, small_work, large_work)
    assert large_work <= _MAX_NUMBER_WORD_TOKENS**2 * len(large.split()), (name, large_work)


def test_a_2kb_worst_case_problem_is_prepared():
    text = "5" + " and" * 511
    assert len(text) == 2045
    example = prepare_problem(text)
    assert example.numbers == ("5",)
    assert example.masked_text == "n0" + " and" * 511
