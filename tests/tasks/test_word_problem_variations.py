"""The rule-made variations of word problems (neuromath/tasks/word_problems/variations.py): each keeps what it must
(the answer, the numbers the equation reads, the order of the question) and changes what it says it changes."""

import random
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neuromath.errors import NeuromathError
from neuromath.tasks.word_problems import Example, equation_value, prepare_problem, read_examples
from neuromath.tasks.word_problems.templates import generate
from neuromath.tasks.word_problems.variations import (
    VARIATIONS,
    augment,
    blocks,
    irrelevant_sentence,
    numbers_resampled,
    question_changed,
    question_removed,
    sentences_reordered,
    split_question,
    vary,
)

MAWPS = Path(__file__).resolve().parents[3] / "shared" / "data" / "mawps-cv" / "fold0" / "dev.csv"
GENERATED = generate(300, random.Random(7))


def problem(text: str, equation: tuple[str, ...], id: str = "p") -> Example:
    prepared = prepare_problem(text, id)
    numbers = prepared.numbers
    return Example(id, prepared.text, prepared.masked_text, numbers, equation,
                   float(equation_value(equation, numbers)))


STORY = problem("Tom has 8 apples. Ann has 5 pears. How many fruits do they have?", ("+", "n0", "n1"))
LEANING = problem("Ann had 20 pens. Then she gave away 6 pens. Bob has 3 cups. How many pens does Ann have now?",
                  ("-", "n0", "n1"))


def value(example: Example) -> Fraction:
    return equation_value(example.equation, example.numbers)


def words(example: Example) -> list[str]:
    """The problem's tokens with its numbers filled in, lower-cased."""
    return [example.numbers[int(token[1:])] if token[:1] == "n" and token[1:].isdigit() else token.lower()
            for token in example.masked_text.split()]


def test_the_question_is_the_last_sentence_from_its_question_word():
    story, question = split_question(problem("If Bryan has 56 books in each of his 9 shelves, how many books does he "
                                             "have?", ("*", "n0", "n1")))
    assert question[:3] == ["how", "many", "books"] and question[-1] == "?"
    assert story == [["If", "Bryan", "has", "n0", "books", "in", "each", "of", "his", "n1", "shelves", "."]]
    assert split_question(problem("Tom has 3 apples.", ("n0",))) is None  # no question at all


def test_removing_the_question_keeps_the_story_its_numbers_and_the_gold_answer():
    removed = question_removed(STORY)
    assert removed.masked_text == "Tom has n0 apples . Ann has n1 pears ."
    assert (removed.numbers, removed.equation, removed.answer) == (STORY.numbers, STORY.equation, STORY.answer)
    assert removed.text == "Tom has 8 apples . Ann has 5 pears ."
    # a question that holds a number of the equation cannot go
    assert question_removed(problem("Tom has 8 apples. How many are left if he eats 3?", ("-", "n0", "n1"))) is None


def test_an_irrelevant_sentence_comes_before_the_question_and_the_equation_follows_the_renumbering():
    other = problem("Kim runs 4 miles. How far does Kim run?", ("n0",), id="other")
    donors = [(other, ["Kim", "runs", "n0", "miles", "."])]
    varied = irrelevant_sentence(LEANING, donors, random.Random(0))
    assert varied.masked_text.split(" . ")[-2] == "Kim runs n3 miles" and varied.numbers[3] == "4"
    assert value(varied) == value(LEANING) and varied.equation == LEANING.equation  # n0, n1 are still first
    assert irrelevant_sentence(other, donors, random.Random(0)) is None  # never a sentence of the problem itself


def test_reordering_moves_whole_blocks_and_renumbers_the_equation():
    assert [block[0] for block in blocks(split_question(LEANING)[0])] == ["Ann", "Bob"]  # "Then she ..." stays
    varied = sentences_reordered(LEANING, random.Random(0))
    assert varied.masked_text == ("Bob has n0 cups . Ann had n1 pens . Then she gave away n2 pens . How many pens "
                                  "does Ann have now ?")
    assert varied.equation == ("-", "n1", "n2") and value(varied) == value(LEANING) == 14
    assert sentences_reordered(problem("Ann had 20 pens. She gave 6 away. How many are left?", ("-", "n0", "n1")),
                               random.Random(0)) is None  # one block: nothing to reorder


def test_a_cut_out_question_is_capitalised_only_where_the_corpus_writes_capitals():
    # ASDiv-A is lower-cased: a model that keeps case (data.lowercase: false) knows "how" there and not "How", so a
    # capital would make the question's first word unknown to it and the variation would measure that instead
    lower = problem("if ann had 20 pens and bob has 3 cups , how many pens does ann have ?", ("n0",))
    donors = [(problem("kim runs 4 miles. how far does kim run?", ("n0",), id="other"), ["kim", "runs", "n0", "miles",
                                                                                        "."])]
    assert irrelevant_sentence(lower, donors, random.Random(0)).masked_text.endswith(
        "kim runs n2 miles . how many pens does ann have ?")
    two_blocks = problem("ann had 20 pens . bob has 3 cups . how many pens does ann have ?", ("n0",))
    assert sentences_reordered(two_blocks, random.Random(0)).masked_text.endswith(". how many pens does ann have ?")
    capitals = problem("If Ann had 20 pens and Bob has 3 cups, how many pens does Ann have?", ("n0",))
    assert irrelevant_sentence(capitals, donors, random.Random(0)).masked_text.endswith(
        "kim runs n2 miles . How many pens does Ann have ?")


def test_resampled_numbers_give_a_new_answer_of_the_same_kind_from_the_same_equation():
    division = problem("Ivan shares 12 marbles among 4 friends. How many does each get?", ("/", "n0", "n1"))
    for seed in range(30):
        varied = numbers_resampled(division, random.Random(seed))
        assert varied.masked_text == division.masked_text and varied.equation == division.equation
        assert varied.answer == value(varied) and Fraction(varied.answer).denominator == 1 and varied.answer > 0
    assert numbers_resampled(division, random.Random(3)) == numbers_resampled(division, random.Random(3))
    fractions_only = problem("Ann ate (1/2) of a cake and (1/4) of a pie. How much did she eat?", ("+", "n0", "n1"))
    assert numbers_resampled(fractions_only, random.Random(0)) is None  # nothing to draw again


@pytest.mark.parametrize("name", sorted(VARIATIONS))
def test_every_variation_of_generated_problems_is_a_well_formed_problem_with_a_consistent_answer(name):
    varied = vary(GENERATED, name, seed=1)
    assert len(varied) >= 20, name  # the rules find problems to vary, not none
    for position, example in varied:
        original = GENERATED[position]
        assert example.id == f"{original.id}#{name}"
        assert float(value(example)) == pytest.approx(example.answer)
        again = prepare_problem(example.text)  # the text says what the masked text and the numbers say
        assert (again.masked_text, again.numbers) == (example.masked_text, example.numbers)
        if name != "numbers_resampled":
            assert example.answer == original.answer
    assert vary(GENERATED, name, seed=1) == varied  # the same seed draws the same variations


@settings(max_examples=60, deadline=None)
@given(position=st.integers(min_value=0, max_value=len(GENERATED) - 1), seed=st.integers(min_value=0, max_value=99))
def test_property_reordering_and_adding_keep_the_value_and_the_sentences(position, seed):
    example = GENERATED[position]
    rng = random.Random(seed)
    reordered = sentences_reordered(example, rng)
    if reordered is not None:
        assert value(reordered) == value(example)
        assert sorted(words(reordered)) == sorted(words(example)) and words(reordered) != words(example)
    added = irrelevant_sentence(example, [(other, split_question(other)[0][0]) for other in GENERATED[:20]
                                         if split_question(other) and split_question(other)[0]], rng)
    if added is not None:
        assert value(added) == value(example) and len(added.numbers) > len(example.numbers)


@pytest.mark.skipif(not MAWPS.exists(), reason="needs ../shared/data (MAWPS fold 0)")
def test_most_mawps_problems_have_each_variation():
    examples = read_examples(str(MAWPS))
    counts = {name: len(vary(examples, name)) for name in VARIATIONS}
    assert counts["question_removed"] > 0.8 * len(examples) and counts["irrelevant_sentence"] == len(examples)
    assert counts["numbers_resampled"] > 0.9 * len(examples) and counts["sentences_reordered"] > 0.15 * len(examples)


def test_augmenting_adds_distinct_label_preserving_variants_and_refuses_the_others():
    added, counts = augment(GENERATED[:100], ["sentences_reordered", "numbers_resampled"], copies=2, seed=4)
    assert counts["numbers_resampled"] > 150 and 0 < counts["sentences_reordered"] <= 2 * 100
    assert len(added) == sum(counts.values())
    keys = [(example.masked_text, example.numbers) for example in added]
    assert len(set(keys)) == len(keys)  # no variant twice (a two-block story has one other order only)
    assert not set(keys) & {(example.masked_text, example.numbers) for example in GENERATED[:100]}
    by_id = {example.id: example for example in GENERATED[:100]}
    for example in added:
        original = by_id[example.id.split("#")[0]]
        assert float(value(example)) == pytest.approx(example.answer)
        if "#sentences_reordered" in example.id:
            assert example.answer == original.answer
    first, again = (augment(GENERATED[:100], ["numbers_resampled"], 1, 4) for _ in range(2))
    assert first == again
    with pytest.raises(NeuromathError, match="question_removed is not a training variation"):
        augment(GENERATED, ["question_removed"])


def test_a_difference_question_becomes_the_total_of_the_same_two_numbers():
    asked = problem("Bobby has 142 books. Kristi has 78 books. How many more books does Bobby have than Kristi?",
                    ("-", "n0", "n1"))
    changed = question_changed(asked)
    assert changed.masked_text == ("Bobby has n0 books . Kristi has n1 books . How many books do Bobby and Kristi "
                                   "have in all ?")
    assert changed.equation == ("+", "n0", "n1") and changed.answer == 220 and changed.numbers == asked.numbers
    past = problem("Beka flew 873 miles. Jackson flew 563 miles. How many more miles did Beka fly than Jackson?",
                   ("-", "n0", "n1"))
    assert question_changed(past).masked_text.endswith("How many miles did Beka and Jackson fly in all ?")


def test_a_total_question_becomes_the_difference_with_the_larger_number_first():
    asked = problem("Omar rolled 12 egg rolls. Karen rolled 19 egg rolls. How many egg rolls did Omar and Karen roll "
                    "altogether?", ("+", "n0", "n1"))
    changed = question_changed(asked)
    assert changed.masked_text.endswith("How many more egg rolls did Karen roll than Omar ?")
    assert changed.equation == ("-", "n1", "n0") and changed.answer == 7
    present = problem("Amy has 9 pens. Ben has 4 pens. How many pens do Amy and Ben have in total?", ("+", "n1", "n0"))
    assert question_changed(present).masked_text.endswith("How many more pens does Amy have than Ben ?")
    assert question_changed(present).equation == ("-", "n0", "n1")


@pytest.mark.parametrize("text, equation, question, changed", [
    # two names in one sentence: not the named form, so the words that name no one, what is counted kept
    ("Amy has 9 pens and Ben has 4 pens. How many pens do Amy and Ben have in all?", ("+", "n0", "n1"),
     "How many more pens are in the larger amount than in the smaller ?", ("-", "n0", "n1")),
    # lower-cased (ASDiv-A): the case of the question is kept, the larger number first
    ("a baker had 7 cakes but made 12 extra. how many cakes did the baker have total?", ("+", "n0", "n1"),
     "how many more cakes are in the larger amount than in the smaller ?", ("-", "n1", "n0")),
    ("a shop sold 7 red pens and 12 blue pens and 3 cups. how many pens did it sell altogether?", ("+", "n0", "n1"),
     "how many more pens are in the larger amount than in the smaller ?", ("-", "n1", "n0")),
    ("bobby has 14 books. kristi has 9 books. what 's the difference of the number of bobby 's books and kristi 's "
     "books?", ("-", "n0", "n1"), "what is the sum of both amounts ?", ("+", "n0", "n1")),
    ("Bob has 9 pens. He has 4 cups. How many more pens does he have than Bob?", ("-", "n0", "n1"),
     "How many pens are in both amounts together ?", ("+", "n0", "n1")),
])
def test_other_totals_and_comparisons_change_in_words_that_name_no_one(text, equation, question, changed):
    asked = problem(text, equation)
    varied = question_changed(asked)
    assert varied.masked_text.endswith(question) and varied.equation == changed
    assert varied.masked_text[:-len(question)] == asked.masked_text[:len(varied.masked_text) - len(question)]
    assert varied.answer == float(value(varied)) > 0 and varied.numbers == asked.numbers


@pytest.mark.parametrize("text, equation", [
    ("Tom has 8 apples. Ann has 5 pears. How many fruits do they have?", ("+", "n0", "n1")),  # no names
    ("Amy has 9 pens. Ben has 9 pens. How many pens do Amy and Ben have in all?", ("+", "n0", "n1")),  # a tie
    ("Amy has 9 pens. Ben has 4 pens. How many pens do Amy and Ben have?", ("+", "n0", "n1")),  # not asked as a total
    ("Lucy has 5 fish. She wants 12 fish. How many more fish does she need to buy?", ("-", "n1", "n0")),  # no "than"
    ("Tom had 5 cookies and 3 cakes. He baked 4 more cookies. How much did he have in total?",
     ("+", "n0", "n2")),  # "both amounts" without a noun, and a third number in the story
    ("Amy has 9 pens. Ben has 4 pens. Cal has 2. How many more pens does Amy have than Ben?",
     ("-", "+", "n0", "n2", "n1")),  # not two numbers
    ("Amy has 9 pens. Ben has 4 pens. How many more pens does Amy have than Ben has 2?", ("-", "n0", "n1")),
])
def test_other_questions_have_no_changed_question(text, equation):
    assert question_changed(problem(text, equation)) is None


def test_changed_questions_join_training_with_their_own_answers():
    examples = [problem("Bobby has 142 books. Kristi has 78 books. How many more books does Bobby have than Kristi?",
                        ("-", "n0", "n1"), id="a"), STORY]
    added, counts = augment(examples, ["question_changed"])
    assert counts == {"question_changed": 1} and added[0].id == "a#question_changed0"
    assert added[0].answer == 220 and float(value(added[0])) == 220


def test_every_changed_question_of_generated_problems_is_well_formed_and_answers_its_own_equation():
    problems = generate(2000, random.Random(7))
    changed = [(problem, question_changed(problem)) for problem in problems]
    changed = [(problem, variant) for problem, variant in changed if variant is not None]
    assert len(changed) >= 10  # the generator's comparison problems have it
    for problem, variant in changed:
        again = prepare_problem(variant.text)  # the text says what the masked text and the numbers say
        assert (again.masked_text, again.numbers) == (variant.masked_text, problem.numbers)
        assert float(value(variant)) == pytest.approx(variant.answer) and variant.answer > 0
        assert variant.answer != problem.answer and {variant.equation[0], problem.equation[0]} == {"+", "-"}
        assert variant.masked_text.split(" How ")[0] == problem.masked_text.split(" How ")[0]  # the same story
