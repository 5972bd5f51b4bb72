"""Graph2Tree's graphs without a parser (neuromath/tasks/word_problems/graphs.py), checked by hand."""

import math

from neuromath.tasks.word_problems.graphs import (
    comparison_links,
    is_content_word,
    quantity_cell_links,
    shared_word_links,
    word_key,
)


def test_a_number_is_linked_to_the_two_content_words_after_it_and_the_nearest_before_it_within_its_clause():
    tokens = "mary wants n0 cups of flour , she already put in n1 red cups . how many cups ?".split()
    links = quantity_cell_links(tokens)
    words = {(tokens[number], tokens[word]) for number, word in links}
    # n0: "cups", "flour" after it ("of" is a function word), "wants" before it; n1: "red", "cups" after, "put"
    # before (skipping "in"); nothing crosses a clause break, so "flour" is never linked to n1
    assert words == {("n0", "cups"), ("n0", "flour"), ("n0", "wants"), ("n1", "red"), ("n1", "cups"), ("n1", "put")}
    assert all(tokens[number].startswith("n") for number, _ in links)


def test_a_number_stops_at_the_next_number_and_links_nothing_across_it():
    tokens = "he has n0 n1 apples".split()
    assert {(tokens[a], tokens[b]) for a, b in quantity_cell_links(tokens)} == {("n1", "apples")}


def test_content_words_exclude_numbers_function_words_punctuation_and_specials():
    assert is_content_word("apples") and is_content_word("苹果")
    assert not any(is_content_word(token) for token in ["n3", "the", "How", ",", "<unk>", "12"])


def test_comparison_links_point_from_larger_to_smaller_and_skip_ties_and_nan():
    assert sorted(comparison_links([3.0, 5.0, 3.0, math.nan])) == [(1, 0), (1, 2)]
    assert comparison_links([]) == []


def test_shared_words_join_a_cell_word_to_its_other_occurrences_in_both_directions():
    tokens = "my car gets n0 miles per gallon . how many Miles can i drive on n1 gallons of gas ? gas is cheap".split()
    links = shared_word_links(tokens, quantity_cell_links(tokens))
    words = {(tokens[a], tokens[b]) for a, b in links}
    # n0's cell: miles, gallon, gets; n1's cell: gallons, gas, drive. "Miles" in the question joins n0's "miles",
    # "gallons" joins "gallon" (one plural s), and the second "gas" joins n1's "gas"; "car" and "cheap" are in no
    # cell and "how"/"many" are function words, so nothing else is linked
    assert words == {("miles", "Miles"), ("Miles", "miles"), ("gallon", "gallons"), ("gallons", "gallon"),
                     ("gas", "gas")}
    assert len(links) == 6 and len(set(links)) == 6 and all(a != b for a, b in links)
    assert all((b, a) in links for a, b in links)


def test_word_keys_drop_one_plural_s_only_from_longer_words():
    assert [word_key(w) for w in ["Gallons", "gas", "glass", "bus", "apples", "miles"]] == [
        "gallon", "gas", "glass", "bus", "apple", "mile"]


def test_shared_words_need_a_cell_word():
    tokens = "apples are red . tom has n0 . how many apples ?".split()  # n0's cell is "has" only
    assert shared_word_links(tokens, quantity_cell_links(tokens)) == []
