"""The two graphs of Graph2Tree (Zhang et al. 2020, "Graph-to-Tree Learning for Solving Math Word Problems", Sec. 3.2)
over a masked problem's tokens, built without a parser (no parser model can be downloaded here). No torch.

**Quantity cell graph** (``quantity_cell_links``): each number is linked to the words that describe it. The paper
takes them from a dependency parse and a POS tagger (the number's noun, its unit, the verb it depends on). The
dependency-free heuristic here works inside the number's clause (tokens between two span breaks ``, . ， 。`` or a
``?``) on *content words*: tokens made of letters (or CJK characters) that are not masked numbers and not in
``FUNCTION_WORDS`` (articles, pronouns, auxiliaries, prepositions, conjunctions, question words):

- the first ``WORDS_AFTER`` (2) content words after the number, stopping at the next number: in English the counted
  noun and its unit follow the number (``n0 cups of flour`` -> cups, flour; ``n1 red apples`` -> red, apples);
- the nearest content word before the number, skipping function words: most often the verb or adjective that
  governs it (``she bought n2 ...`` -> bought; ``weighs n0 grams`` -> weighs).

**Shared words** (``shared_word_links``, Graph2Tree with ``model.shared_words``): every word the cell graph links
to a number is also linked to every other occurrence of the same word anywhere in the problem, in both directions;
words are compared lower-cased with one final ``s`` dropped from words of more than three letters that do not end
in ``ss`` (``gallons`` = ``gallon``, ``gas`` and ``glass`` unchanged). The question is its own clause, so without
these links nothing in it reaches a number's cell; with them ``how many cups ...`` is two hops from the number of
``n0 cups``. The reference implementation of Graph2Tree links equal tokens among the parser's quantity cells and the
question's words in the same way.

**Quantity comparison graph** (``comparison_links``): an edge from number i to number j when value_i > value_j.
"""

from __future__ import annotations

import math
from typing import Sequence

from neuromath.tasks.word_problems.records import MASK_REGEX

WORDS_AFTER = 2
CLAUSE_ENDS = frozenset({",", ".", "?", "!", ";", ":", "，", "。", "？", "！", "；", "："})
FUNCTION_WORDS = frozenset(
    """
    a an the this that these those there here it its it's he she they them their his her him we us our you your i me
    my mine who whom whose which what when where why how much many is are was were be been being am do does did has
    have had will would shall should can could may might must of in on at to for from by with about into onto over
    under than then and or but so if as each every all some any no not another other more less per also just only
    still already now 's
    """.split()
)


def is_content_word(token: str) -> bool:
    """A token the quantity cell graph may link to a number: letters (or CJK characters), not a masked number, not a
    function word."""
    if MASK_REGEX.fullmatch(token) or token.lower() in FUNCTION_WORDS:
        return False
    return any(character.isalpha() for character in token) and not token.startswith("<")


def quantity_cell_links(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """(number position, word position) pairs of the quantity cell graph of ``tokens`` (see the module docstring)."""
    links = []
    for position, token in enumerate(tokens):
        if not MASK_REGEX.fullmatch(token):
            continue
        found = 0
        for after in range(position + 1, len(tokens)):
            if tokens[after] in CLAUSE_ENDS or MASK_REGEX.fullmatch(tokens[after]) or found == WORDS_AFTER:
                break
            if is_content_word(tokens[after]):
                links.append((position, after))
                found += 1
        for before in range(position - 1, -1, -1):
            if tokens[before] in CLAUSE_ENDS or MASK_REGEX.fullmatch(tokens[before]):
                break
            if is_content_word(tokens[before]):
                links.append((position, before))
                break
    return links


def word_key(token: str) -> str:
    """The form under which ``shared_word_links`` compares words: lower-cased, one plural ``s`` dropped."""
    word = token.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def shared_word_links(tokens: Sequence[str], cell_links: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """(position, position) pairs, both directions, joining each word of ``cell_links`` (number, word) to the other
    occurrences of the same content word in ``tokens`` (compared by ``word_key``); sorted, without repeats."""
    by_word: dict[str, list[int]] = {}
    for position, token in enumerate(tokens):
        if is_content_word(token):
            by_word.setdefault(word_key(token), []).append(position)
    pairs = set()
    for _, word in cell_links:
        for other in by_word.get(word_key(tokens[word]), ()):
            if other != word:
                pairs.update({(word, other), (other, word)})
    return sorted(pairs)


def comparison_links(values: Sequence[float]) -> list[tuple[int, int]]:
    """(i, j) for every pair of numbers with values[i] > values[j]; NaN values compare with nothing."""
    return [
        (i, j)
        for i, left in enumerate(values)
        for j, right in enumerate(values)
        if not (math.isnan(left) or math.isnan(right)) and left > right
    ]
