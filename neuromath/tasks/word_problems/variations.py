"""Rule-made variations of word problems, from one file alone: the robustness report of ``neuromath evaluate
--robustness`` asks a solver each problem again in four other forms (after Patel et al. 2021, "Are NLP models really
able to solve simple math word problems?"):

- ``question_removed``: the question is cut off (``body`` without ``question``). The gold answer is still scored:
  a solver that still gives it reads cues in the story, not the question, so here lower is better. A problem whose
  question holds one of its numbers has no such variation (the equation would lose a number).
- ``irrelevant_sentence``: a sentence of another problem of the file, holding a number, is put just before the
  question. The answer is the same; the numbers after it are renumbered and the equation with them.
- ``sentences_reordered``: the sentences of the story are put in another order, where the story allows it. A
  sentence that leans on the one before (it holds a pronoun, or starts with a word of time or consequence: "Then",
  "So") moves with it as one block; a story of one block has no such variation.
- ``numbers_resampled``: every integer, decimal and percentage is drawn again near its value (fractions are kept),
  and the answer is computed again from the gold equation. A draw is kept only when the new answer has the kind of
  the old one (whole when it was whole, positive when it was positive); twenty draws that all fail give no variation.

Each function takes an ``Example`` (and a ``random.Random`` where it draws) and returns the varied ``Example``, or None
when the problem has no such variation. The masked text is split into sentences at ``.``, ``?`` and ``!`` tokens; the
question is the last sentence from its first question word (``how``, ``what``, ``find``, ...) on. No torch here.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from fractions import Fraction
from typing import Callable, Sequence

from neuromath.config.rules import AUGMENT_NAMES
from neuromath.errors import ExpressionError, NeuromathError
from neuromath.tasks.word_problems.answer_scoring import equation_value
from neuromath.tasks.word_problems.records import MASK_REGEX, Example, number_value

SENTENCE_ENDS = {".", "?", "!", "。", "？", "！"}
QUESTION_WORDS = {"how", "what", "what's", "whats", "find", "calculate", "compute", "determine", "which", "who",
                  "when", "where", "why", "evaluate"}
# a sentence starting with one of these leans on the sentence before it: the two move together
LEANING_WORDS = {"he", "she", "it", "they", "his", "her", "its", "their", "them", "him", "this", "that", "these",
                 "those", "then", "later", "after", "afterwards", "next", "now", "so", "finally", "also", "but",
                 "still", "again", "another", "if", "when", "while", "afterward", "meanwhile", "thus", "therefore"}
# a sentence holding one of these anywhere refers to someone named before: it stays after the sentence before it
PRONOUNS = {"he", "she", "it", "they", "his", "her", "its", "their", "them", "him", "hers", "theirs", "himself",
            "herself", "themselves"}
RESAMPLE_TRIES = 20

Token = str | tuple[int, int]  # a word, or a number: (which problem it comes from, its index there)


def sentences(tokens: Sequence[str]) -> list[list[str]]:
    """The masked tokens split after each sentence end; trailing tokens without one are the last sentence."""
    result: list[list[str]] = [[]]
    for token in tokens:
        result[-1].append(token)
        if token in SENTENCE_ENDS:
            result.append([])
    return [sentence for sentence in result if sentence]


def split_question(example: Example) -> tuple[list[list[str]], list[str]] | None:
    """(the story's sentences, the question's tokens), or None when no question is found: the question is the last
    sentence from its first question word on (the part before it, "If she has n0 apples ,", stays in the story)."""
    parts = sentences(example.masked_text.split())
    if not parts:
        return None
    last = parts[-1]
    cue = next((index for index, token in enumerate(last) if token.lower() in QUESTION_WORDS), None)
    if cue is None:
        if last[-1] not in ("?", "？"):
            return None
        cue = 0
    story = parts[:-1]
    before = list(last[:cue])
    while before and before[-1] in (",", "，"):
        before.pop()
    if before:
        story.append(before + ["."])
    return story, last[cue:]


def _numbers_in(tokens: Sequence[str]) -> list[int]:
    return [int(match.group(1)) for token in tokens if (match := MASK_REGEX.fullmatch(token))]


def _as_refs(tokens: Sequence[str], origin: int) -> list[Token]:
    return [(origin, int(match.group(1))) if (match := MASK_REGEX.fullmatch(token)) else token for token in tokens]


def _renumbered(example: Example, tokens: Sequence[Token], sources: dict[int, Example]) -> Example | None:
    """The example whose masked text is ``tokens`` (words, and numbers as (problem, index) references into
    ``sources``, 0 being ``example``), its numbers renumbered n0, n1, ... in order of appearance and its equation
    rewritten with them; None when a number of the equation is no longer in the text."""
    numbers: list[str] = []
    new_index: dict[tuple[int, int], int] = {}
    words: list[str] = []
    for token in tokens:
        if isinstance(token, tuple):
            if token not in new_index:
                new_index[token] = len(numbers)
                numbers.append(sources[token[0]].numbers[token[1]])
            words.append(f"n{new_index[token]}")
        else:
            words.append(token)
    equation = []
    for token in example.equation:
        match = MASK_REGEX.fullmatch(token)
        if match:
            if (0, int(match.group(1))) not in new_index:
                return None
            token = f"n{new_index[(0, int(match.group(1)))]}"
        equation.append(token)
    return _with_tokens(example, words, tuple(numbers), tuple(equation))


def _with_tokens(example: Example, words: Sequence[str], numbers: tuple[str, ...], equation: tuple[str, ...],
                 answer: float | None = None) -> Example:
    text = " ".join(numbers[int(match.group(1))] if (match := MASK_REGEX.fullmatch(word)) else word for word in words)
    return replace(example, text=text, masked_text=" ".join(words), numbers=numbers, equation=equation,
                   answer=example.answer if answer is None else answer)


def _capitalised(tokens: Sequence[str], example: Example | None = None) -> list[str]:
    """A question cut out of "If ..., how many ...?" starts a sentence of its own: its first word is capitalised,
    unless ``example``'s text has no capital letter at all (a lower-cased corpus such as ASDiv-A's: a capital there
    is a word form none of its problems has, unknown to a model that keeps case, ``data.lowercase: false``)."""
    if not tokens or example is not None and example.masked_text == example.masked_text.lower():
        return list(tokens)
    return [tokens[0][:1].upper() + tokens[0][1:], *tokens[1:]]


def question_removed(example: Example) -> Example | None:
    parts = split_question(example)
    if parts is None:
        return None
    story, question = parts
    if not story or _numbers_in(question):
        return None
    return _renumbered(example, [token for sentence in story for token in _as_refs(sentence, 0)], {0: example})


def donor_sentences(examples: Sequence[Example]) -> list[tuple[Example, list[str]]]:
    """(problem, sentence) for every sentence of a story in ``examples`` that holds a number and no question word:
    what ``irrelevant_sentence`` may put into another problem."""
    donors = []
    for example in examples:
        split = split_question(example)
        if split is not None:
            donors += [(example, sentence) for sentence in split[0]
                       if _numbers_in(sentence) and sentence[-1] in SENTENCE_ENDS
                       and not any(token.lower() in QUESTION_WORDS for token in sentence)]
    return donors


def irrelevant_sentence(example: Example, donors: Sequence[tuple[Example, list[str]]],
                        rng: random.Random) -> Example | None:
    parts = split_question(example)
    if parts is None:
        return None
    story, question = parts
    candidates = [(other, sentence) for other, sentence in donors if other.id != example.id]
    if not candidates:
        return None
    other, sentence = rng.choice(candidates)
    tokens = [token for part in story for token in _as_refs(part, 0)]
    tokens += _as_refs(sentence, 1) + _as_refs(_capitalised(question, example), 0)
    return _renumbered(example, tokens, {0: example, 1: other})


def blocks(story: Sequence[Sequence[str]]) -> list[list[str]]:
    """The story's sentences grouped so that a sentence that leans on the one before it stays after it."""
    result: list[list[str]] = []
    for sentence in story:
        if result and (sentence[0].lower() in LEANING_WORDS or any(token.lower() in PRONOUNS for token in sentence)):
            result[-1] = result[-1] + list(sentence)
        else:
            result.append(list(sentence))
    return result


def sentences_reordered(example: Example, rng: random.Random) -> Example | None:
    parts = split_question(example)
    if parts is None:
        return None
    story, question = parts
    grouped = blocks(story)
    if len(grouped) < 2:
        return None
    order = list(range(len(grouped)))
    while order == sorted(order):
        rng.shuffle(order)
    tokens = [token for index in order for token in _as_refs(grouped[index], 0)]
    tokens += _as_refs(_capitalised(question, example), 0)
    return _renumbered(example, tokens, {0: example})


def _resampled_number(number: str, rng: random.Random) -> str:
    """A number of the same kind drawn near ``number``: integers between half and twice their value, decimals with
    as many places, percentages between 1 and 99; fractions and mixed numbers as they are."""
    if number.endswith("%"):
        return f"{rng.randint(1, 99)}%"
    if number.isdigit():
        value = int(number)
        return str(rng.randint(max(1, value // 2), max(2, 2 * value)))
    if number.count(".") == 1 and number.replace(".", "", 1).isdigit():
        places = len(number.split(".")[1])
        value = float(number) * rng.uniform(0.5, 2.0)
        return f"{max(value, 10 ** -places):.{places}f}"
    return number


def _same_kind(old: float, new: Fraction) -> bool:
    if not math.isfinite(float(new)):
        return False
    if old > 0 and new <= 0 or old >= 0 and new < 0:
        return False
    return not float(old).is_integer() or new.denominator == 1


def numbers_resampled(example: Example, rng: random.Random) -> Example | None:
    try:
        old = equation_value(example.equation, example.numbers)
    except (ExpressionError, ZeroDivisionError, OverflowError, ValueError):
        return None
    for _ in range(RESAMPLE_TRIES):
        numbers = tuple(_resampled_number(number, rng) for number in example.numbers)
        if numbers == example.numbers:
            return None  # nothing to draw again (fractions only, or no numbers)
        try:
            new = equation_value(example.equation, numbers)
        except (ExpressionError, ZeroDivisionError, OverflowError, ValueError):
            continue
        if _same_kind(float(old), new) and all(number_value(n) != 0 for n in numbers):
            return _with_tokens(example, example.masked_text.split(), numbers, example.equation, float(new))
    return None


# -- label-changing: another question about the same story -------------------------------------------------------

TOTAL_WORDS = (("in", "all"), ("altogether",), ("in", "total"), ("together",), ("combined",))
CHANGED_AUXILIARIES = {"does": "do", "did": "did", "do": "do"}  # "how many more X does A ..." -> "... do A and B ..."
SINGLE_AUXILIARIES = {"do": "does", "did": "did"}
ASKING_TOTAL = (("in", "all"), ("altogether",), ("total",), ("together",), ("combined",), ("sum",))
# where the words naming what is counted end: "How many egg rolls | did ...", "How many more pens | does ..."
COUNTED_ENDS = {"do", "does", "did", "are", "were", "is", "was", "have", "has", "had", "will", "would", "can",
                "could", "should", "must", "in", "on", "at", "of", "than", "there", "altogether", "together", "total",
                "combined", "all", "left", "now", "the", "they", "he", "she", "we", "you", "i", "it"}


def _name(token: str) -> bool:
    """A one-word name (a capitalised word that is not a pronoun or a number): who a comparison is about."""
    return token[:1].isupper() and token.isalpha() and token.lower() not in PRONOUNS


def _difference_question(question: Sequence[str]) -> tuple[list[str], str, str, list[str], str] | None:
    """(what is counted, auxiliary, A, verb words, B) of "How many more X does A verb than B ?", or None."""
    words = [token.lower() for token in question]
    if len(words) < 9 or words[:3] not in (["how", "many", "more"], ["how", "much", "more"]) or words[-1] != "?":
        return None
    if "than" not in words:
        return None
    than = words.index("than")
    auxiliary = next((i for i in range(4, than) if words[i] in CHANGED_AUXILIARIES), None)
    if auxiliary is None or auxiliary + 2 >= than or than + 3 != len(words):  # "... than B ?"
        return None
    subject, other = question[auxiliary + 1], question[than + 1]
    if not (_name(subject) and _name(other)) or subject == other:
        return None
    return list(question[3:auxiliary]), words[auxiliary], subject, list(question[auxiliary + 2:than]), other


def _total_question(question: Sequence[str]) -> tuple[list[str], str, str, list[str], str] | None:
    """(what is counted, auxiliary, A, verb words, B) of "How many X do A and B verb in all ?", or None."""
    words = [token.lower() for token in question]
    if len(words) < 8 or words[:2] not in (["how", "many"], ["how", "much"]) or words[2] == "more" or words[-1] != "?":
        return None
    auxiliary = next((i for i in range(3, len(words)) if words[i] in SINGLE_AUXILIARIES), None)
    if auxiliary is None or auxiliary + 4 > len(words) or words[auxiliary + 2] != "and":
        return None
    subject, other = question[auxiliary + 1], question[auxiliary + 3]
    if not (_name(subject) and _name(other)) or subject == other:
        return None
    rest = words[auxiliary + 4:-1]
    ending = next((len(total) for total in TOTAL_WORDS if tuple(rest[-len(total):]) == total), None)
    if ending is None or len(rest) == ending:
        return None
    return list(question[2:auxiliary]), words[auxiliary], subject, list(question[auxiliary + 4:-1 - ending]), other


def _number_of(story: Sequence[Sequence[str]], name: str) -> int | None:
    """The one number of the one story sentence that names ``name``, or None."""
    holding = [sentence for sentence in story if name in sentence]
    if len(holding) != 1 or len(_numbers_in(holding[0])) != 1:
        return None
    return _numbers_in(holding[0])[0]


def _counted(question: Sequence[str], start: int) -> list[str]:
    """The words naming what "how many [more] ..." counts: from ``start`` up to the first auxiliary, verb-like or
    question-ending word ("How many egg rolls did ..." -> ["egg", "rolls"]); empty when there are none."""
    words = []
    for token in question[start:]:
        if token.lower() in COUNTED_ENDS or not token.isalpha():
            break
        words.append(token)
    return words


def _generic_question(question: Sequence[str], operator: str) -> tuple[list[str], bool]:
    """The changed question in words that name no one: a total of two amounts asked as their difference, or a
    comparison of two amounts asked as their total; what is counted is kept when the question names it. Returns
    the question and whether it names what is counted."""
    words = [token.lower() for token in question]
    if operator == "-":  # the new question asks for the difference
        counted = _counted(question, 2) if words[:2] == ["how", "many"] else []
        new = (["how", "many", "more", *counted, "are", "in", "the", "larger", "amount", "than", "in", "the",
                "smaller", "?"] if counted else
               ["what", "is", "the", "difference", "between", "the", "larger", "amount", "and", "the", "smaller", "?"])
    else:
        counted = (_counted(question, 3) if words[:3] in (["how", "many", "more"], ["how", "many", "fewer"])
                   else [])
        new = (["how", "many", *counted, "are", "in", "both", "amounts", "together", "?"] if counted else
               ["what", "is", "the", "sum", "of", "both", "amounts", "?"])
    return (_capitalised(new) if question[0][:1].isupper() else new), bool(counted)


def _asks_total(question: Sequence[str]) -> bool:
    """Whether the question asks for a total: it says in all, altogether, total, together, combined or sum."""
    words = [token.lower() for token in question]
    return any(tuple(words[i:i + len(total)]) == total for total in ASKING_TOTAL for i in range(len(words)))


def _asks_comparison(question: Sequence[str]) -> bool:
    """"How many more / fewer X ... than ...", or "... the difference between (of) ...": both amounts are the story's,
    of one kind, and their total is a question of its own."""
    words = [token.lower() for token in question]
    compared = words[:3] in (["how", "many", "more"], ["how", "many", "fewer"], ["how", "much", "more"],
                             ["how", "much", "less"]) and "than" in words
    return compared or "difference" in words


def question_changed(example: Example) -> Example | None:
    """Another question about the same story, with its equation derived from the original, where the equation's form
    makes it safe (a label-changing variation, for training only: ``data.augment``). Only two-number sums and
    differences change, the two numbers both in the story:

    - "How many more X does A verb than B ?" over ``- nA nB`` becomes "How many X do A and B verb in all ?" over
      ``+ nA nB``;
    - "How many X do A and B verb in all (altogether, in total, together, combined) ?" over ``+ nA nB`` becomes "How
      many more X does A verb than B ?" over ``- nA nB``, A being whoever has the larger number, where each of A and B
      is named in exactly one sentence of the story holding exactly one number (A and B are one-word names).

    Other questions of the same two kinds are changed in words that name no one (``_generic_question``): a total
    (the question says in all, altogether, total, together, combined or sum) becomes "How many more X are in the
    larger amount than in the smaller ?" over the larger minus the smaller, and a comparison ("How many more X ...
    than ...", "the difference between ...") becomes "How many X are in both amounts together ?" over their sum.
    Two equal numbers, and every other question, have no such variation."""
    parts = split_question(example)
    if parts is None or len(example.equation) != 3 or example.equation[0] not in ("-", "+"):
        return None
    story, question = parts
    if _numbers_in(question) or not story:
        return None
    first, second = (MASK_REGEX.fullmatch(token) for token in example.equation[1:])
    if first is None or second is None or first.group(1) == second.group(1):
        return None
    named = _named_question_changed(example, story, question, int(first.group(1)), int(second.group(1)))
    if named is not None:
        return named
    if example.equation[0] == "+" and _asks_total(question):
        larger, smaller = sorted((int(first.group(1)), int(second.group(1))),
                                 key=lambda index: -number_value(example.numbers[index]))
        equation = ("-", f"n{larger}", f"n{smaller}")
        new_question, counts = _generic_question(question, "-")
    elif example.equation[0] == "-" and _asks_comparison(question):
        equation = ("+", example.equation[1], example.equation[2])
        new_question, counts = _generic_question(question, "+")
    else:
        return None
    if not counts and len(set(_numbers_in([token for sentence in story for token in sentence]))) != 2:
        return None  # "both amounts" without what they count: only where the story holds no other number
    return _changed(example, story, new_question, equation)


def _changed(example: Example, story: Sequence[Sequence[str]], new_question: list[str],
             equation: tuple[str, ...]) -> Example | None:
    try:
        answer = equation_value(equation, example.numbers)
    except (ExpressionError, ZeroDivisionError, OverflowError, ValueError):
        return None
    if answer <= 0:
        return None
    words = [token for sentence in story for token in sentence] + new_question
    return _with_tokens(example, words, example.numbers, equation, float(answer))


def _named_question_changed(example: Example, story, question, first: int, second: int) -> Example | None:
    """The change of ``question_changed`` between two one-word names, or None."""
    how = [question[0], question[1]]
    if example.equation[0] == "-":
        found = _difference_question(question)
        if found is None:
            return None
        counted, auxiliary, subject, verb, other = found
        new_question = [*how, *counted, CHANGED_AUXILIARIES[auxiliary], subject, "and", other, *verb, "in", "all", "?"]
        equation = ("+", example.equation[1], example.equation[2])
    else:
        found = _total_question(question)
        if found is None:
            return None
        counted, auxiliary, subject, verb, other = found
        numbers = {name: _number_of(story, name) for name in (subject, other)}
        if None in numbers.values() or {numbers[subject], numbers[other]} != {first, second}:
            return None
        larger, smaller = sorted((subject, other), key=lambda name: -number_value(example.numbers[numbers[name]]))
        new_question = [*how, "more", *counted, SINGLE_AUXILIARIES[auxiliary], larger, *verb, "than", smaller, "?"]
        equation = ("-", f"n{numbers[larger]}", f"n{numbers[smaller]}")
    return _changed(example, story, _capitalised(new_question), equation)


# name -> (example, the donor sentences of its file, a generator) -> the varied example or None
VARIATIONS: dict[str, Callable[[Example, Sequence[tuple[Example, list[str]]], random.Random], Example | None]] = {
    "question_removed": lambda example, donors, rng: question_removed(example),
    "irrelevant_sentence": irrelevant_sentence,
    "sentences_reordered": lambda example, donors, rng: sentences_reordered(example, rng),
    "numbers_resampled": lambda example, donors, rng: numbers_resampled(example, rng),
}
LOWER_IS_BETTER = {"question_removed"}
# every rule-made variation: those above and question_changed, which asks another question of the same story with its
# own equation and answer (a solver that reads only the story keeps the old answer)
RULE_VARIATIONS = {**VARIATIONS, "question_changed": lambda example, donors, rng: question_changed(example)}
LABEL_CHANGING = {"question_changed"}

# what training may add (data.augment, whose config rule reads the same names): the variations that keep a problem's
# answer, and question_changed
AUGMENTATIONS = AUGMENT_NAMES


def augment(examples: Sequence[Example], kinds: Sequence[str], copies: int = 1,
            seed: int = 0) -> tuple[list[Example], dict[str, int]]:
    """Up to ``copies`` variants of each problem of ``examples`` for each variation of ``kinds`` (some of
    ``AUGMENTATIONS``), the irrelevant sentences taken from ``examples`` themselves; a variant equal to its problem
    or to a variant already made (the one other order of a two-block story) is left out. Returns the variants, in
    order of kind, copy and problem (ids ``<id>#<kind><copy>``), and how many each kind added."""
    unknown = [kind for kind in kinds if kind not in AUGMENTATIONS]
    if unknown:
        raise NeuromathError(f"{', '.join(unknown)} is not a training variation; the variations are: "
                             f"{', '.join(AUGMENTATIONS)}")
    donors = donor_sentences(examples)
    seen = {(example.masked_text, example.numbers) for example in examples}
    added: list[Example] = []
    counts = {kind: 0 for kind in kinds}
    for kind in kinds:
        for copy in range(copies):
            for position, example in enumerate(examples):
                varied = RULE_VARIATIONS[kind](example, donors, random.Random(f"{seed}:{kind}:{copy}:{position}"))
                if varied is None or (varied.masked_text, varied.numbers) in seen:
                    continue
                seen.add((varied.masked_text, varied.numbers))
                added.append(replace(varied, id=f"{example.id}#{kind}{copy}"))
                counts[kind] += 1
    return added, counts


def vary(examples: Sequence[Example], name: str, seed: int = 0) -> list[tuple[int, Example]]:
    """(position in ``examples``, varied example) for each example that has the variation ``name``; the draws of
    each example come from its own generator (``seed`` and its position), so a subset varies the same way."""
    make = RULE_VARIATIONS[name]
    donors = donor_sentences(examples) if name == "irrelevant_sentence" else []
    varied = []
    for position, example in enumerate(examples):
        result = make(example, donors, random.Random(f"{seed}:{name}:{position}"))
        if result is not None:
            varied.append((position, replace(result, id=f"{example.id}#{name}")))
    return varied
