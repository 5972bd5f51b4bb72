"""Symbolic integration and first-order ODEs in prefix notation (Lample & Charton 2020): records, the released file
format, canonical forms and deduplication, and the task's scorers. No torch here.

A file holds one pair per line, ``count|input<TAB>output``: ``count`` is how many times the pair occurred, ``input``
and ``output`` are space-separated prefix tokens (``neuromath.expr.symbolic_prefix``). For integration the input is the
integrand f and the output an antiderivative F; for ODEs the input is an expression in ``x``, ``Y`` and ``Y'`` that is
0 along every solution and the output a solution in ``x`` and the constant ``c``. ``neuromath generate symbolic``
writes ``FILE.stats.json`` beside a file; its ``method`` (backward, forward, parts, ode1) names the generator of
every example read from that file, else the kind (integration or ode1) does.

A hypothesis is right when it verifies (``neuromath.tasks.symbolic.verify``): the derivative equals the integrand, or
the solution satisfies the equation, whatever its form. Exact match of the tokens is reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Sequence

from neuromath.errors import DataFormatError, ExpressionError
from neuromath.expr.symbolic_prefix import (
    ARITIES,
    FUNCTION_LEAVES,
    NUMBER_STARTS,
    PrefixNode,
    check_prefix,
    node_tokens,
    prefix_size,
)
from neuromath.fileio import check_published, write_text_atomic
from neuromath.safe_read import load_json, read_data_text
from neuromath.tasks.streams import RecordFiles
from neuromath.tasks.symbolic.verify import verdicts, verify_example, verify_examples

KINDS = ("integration", "ode1")
METHODS = ("backward", "forward", "parts", "ode1")
COMMUTATIVE = ("add", "mul")


@dataclass(frozen=True)
class SymbolicExample:
    source: tuple[str, ...]  # the integrand, or the ODE's left-hand side (= 0)
    target: tuple[str, ...]  # an antiderivative, or a solution
    count: int = 1  # how many times the pair occurred (the file's ``count|``)
    method: str = ""  # the generator that made it (backward, forward, parts, ode1), or the kind when unknown
    id: str = ""  # "FILE:LINE" for read pairs, "<method>#<k>" for generated ones

    @property
    def kind(self) -> str:
        return kind_of(self.source)

    @property
    def text(self) -> str:  # what held-out generated splits are deduplicated on
        return " ".join(self.source)

    @property
    def size(self) -> int:
        """Operators in the input: the size reports group by."""
        return prefix_size(self.source)


def kind_of(source: Sequence[str]) -> str:
    """"ode1" when the input holds the unknown function (``Y``, ``Y'``, ``Y''``), else "integration"."""
    return "ode1" if any(token in FUNCTION_LEAVES for token in source) else "integration"


# --- the file format ---------------------------------------------------------------------------------


def parse_line(line: str) -> tuple[int, list[str], list[str]]:
    """``count|input<TAB>output`` -> (count, input tokens, output tokens); ``ValueError`` with the reason."""
    count_text, bar, pair = line.partition("|")
    if not bar:
        raise ValueError("expected count|input<TAB>output (no '|')")
    try:
        count = int(count_text)
    except ValueError:
        raise ValueError(f"the count {count_text!r} is not an integer") from None
    if count < 1:
        raise ValueError(f"the count must be at least 1, not {count}")
    parts = pair.split("\t")
    if len(parts) != 2:
        raise ValueError(f"expected one tab between input and output, found {len(parts) - 1}")
    source, target = parts[0].split(), parts[1].split()
    for side, tokens in (("input", source), ("output", target)):
        try:
            check_prefix(tokens)
        except ExpressionError as error:
            raise ValueError(f"{side}: {error}") from None
    return count, source, target


def read_pairs(
    path: str | Path, format: str | None = None, *, lenient: bool = False, skipped: list | None = None,
    method: str | None = None,
) -> list[SymbolicExample]:
    """The pairs of a ``count|input<TAB>output`` file. A malformed line is a ``DataFormatError`` naming the file, the
    line and the reason; with ``lenient`` it is skipped and its error appended to ``skipped``."""
    path = Path(path)
    if format not in (None, "lample_charton"):
        raise DataFormatError(path, None, f"the symbolic task reads the Lample & Charton format, not {format!r}")
    if method is None:
        method = file_method(path)
    check_published(path)  # not a file of an interrupted multi-file write
    try:
        text = read_data_text(path)  # a FIFO or a device: refused before it is read
    except UnicodeDecodeError as error:
        raise DataFormatError(path, None, f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read the file ({error.strerror or error})") from None
    examples = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            count, source, target = parse_line(line.rstrip("\r"))
        except ValueError as error:
            if not lenient:
                raise DataFormatError(path, number, str(error)) from None
            if skipped is not None:
                skipped.append(DataFormatError(path, number, str(error)))
            continue
        examples.append(
            SymbolicExample(tuple(source), tuple(target), count, method or kind_of(source), f"{path}:{number}")
        )
    return examples


def parse_record(method: str | None, path: Path, line: int, lines: Sequence[str]) -> SymbolicExample | None:
    """One line of a pair file as ``read_pairs`` reads it, for readers that stream (``neuromath.tasks.streams``): None
    for a blank line, ``ValueError`` with the reason for a malformed one. ``method``: the file's generator, if known."""
    (text,) = lines
    if not text.strip():
        return None
    count, source, target = parse_line(text)
    return SymbolicExample(tuple(source), tuple(target), count, method or kind_of(source), f"{path}:{line}")


def record_files(path: str | Path, data, lenient: bool = False) -> RecordFiles:
    """A pair file as records to stream (``data.streaming``): one pair per line."""
    path = Path(path)
    if not path.is_file():
        raise DataFormatError(path, None, "no such file")
    return RecordFiles((path,), 1, partial(parse_record, file_method(path)), lenient)


def file_method(path: str | Path) -> str | None:
    """The generator named in ``FILE.stats.json`` (written by ``neuromath generate symbolic``), if any."""
    stats = Path(f"{path}.stats.json")
    try:
        method = load_json(read_data_text(stats), stats).get("method")
    except (OSError, ValueError, AttributeError):
        return None
    return method if method in METHODS else None


def format_pair(example: SymbolicExample) -> str:
    return f"{example.count}|{' '.join(example.source)}\t{' '.join(example.target)}"


def write_pairs(examples: Sequence[SymbolicExample], path: str | Path) -> None:
    """Write ``count|input<TAB>output`` lines atomically."""
    write_text_atomic(path, "".join(format_pair(example) + "\n" for example in examples))


# --- canonical forms and deduplication ---------------------------------------------------------------------


def canonical_node(node: PrefixNode) -> PrefixNode:
    """Chains of ``add`` (and of ``mul``) flattened, their operands in canonical form and sorted by their tokens,
    rebuilt right-nested: ``add x add INT+ 1 x`` and ``add add x x INT+ 1`` have the same canonical form."""
    if node.token not in COMMUTATIVE:
        return PrefixNode(node.token, tuple(canonical_node(child) for child in node.children), node.value)
    operands: list[PrefixNode] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.token == node.token:
            stack.extend(reversed(current.children))
        else:
            operands.append(canonical_node(current))
    operands.sort(key=lambda operand: node_tokens(operand))
    result = operands[-1]
    for operand in reversed(operands[:-1]):
        result = PrefixNode(node.token, (operand, result))
    return result


def canonical(tokens: Sequence[str]) -> str:
    """The canonical form of a prefix expression as one string (the key deduplication compares); a malformed
    sequence is its own key."""
    try:
        return " ".join(node_tokens(canonical_node(check_prefix(tokens))))
    except ExpressionError:
        return " ".join(tokens)


@dataclass
class DedupCounts:
    train_read: int = 0
    train_duplicates: int = 0  # lines of the training file whose canonical input occurred earlier in it
    test_read: int = 0
    test_duplicates: int = 0  # ... of the test file
    test_in_train: int = 0  # test lines whose canonical input occurs in the training file

    @property
    def train_kept(self) -> int:
        return self.train_read - self.train_duplicates

    @property
    def test_kept(self) -> int:
        return self.test_read - self.test_duplicates - self.test_in_train

    def as_dict(self) -> dict:
        return {**self.__dict__, "train_kept": self.train_kept, "test_kept": self.test_kept}


def unique_by_input(examples: Sequence[SymbolicExample]) -> tuple[list[SymbolicExample], int]:
    """The first example of every canonical input, its count the sum over the duplicates; and how many were merged."""
    kept: dict[str, SymbolicExample] = {}
    for example in examples:
        key = canonical(example.source)
        if key in kept:
            first = kept[key]
            kept[key] = SymbolicExample(first.source, first.target, first.count + example.count, first.method, first.id)
        else:
            kept[key] = example
    return list(kept.values()), len(examples) - len(kept)


def deduplicate(
    train: Sequence[SymbolicExample], test: Sequence[SymbolicExample]
) -> tuple[list[SymbolicExample], list[SymbolicExample], DedupCounts]:
    """Remove duplicates within each file and the test examples whose input occurs in train (canonical forms)."""
    counts = DedupCounts(train_read=len(train), test_read=len(test))
    train_kept, counts.train_duplicates = unique_by_input(train)
    test_unique, counts.test_duplicates = unique_by_input(test)
    seen = {canonical(example.source) for example in train_kept}
    test_kept = [example for example in test_unique if canonical(example.source) not in seen]
    counts.test_in_train = len(test_unique) - len(test_kept)
    return train_kept, test_kept, counts


# --- scoring ---------------------------------------------------------------------------------------------


def is_well_formed(tokens: Sequence[str]) -> bool:
    try:
        check_prefix(tokens)
    except ExpressionError:
        return False
    return True


def exact_match(tokens: Sequence[str], example: SymbolicExample) -> bool:
    return tuple(tokens) == example.target


def is_correct(tokens: Sequence[str], example: SymbolicExample) -> bool:
    """The hypothesis verifies (see ``neuromath.tasks.symbolic.verify``)."""
    return verify_example(tokens, example)


def verify_many(pairs: Sequence[tuple[Sequence[str], SymbolicExample]]) -> list[bool]:
    """``is_correct`` of many (hypothesis, example) pairs at once, in the verifier's worker pool."""
    return verify_examples(pairs)


def verdicts_many(pairs: Sequence[tuple[Sequence[str], SymbolicExample]]) -> list[str]:
    """The verifier's verdict (``neuromath.tasks.symbolic.verify.VERDICTS``) on many (hypothesis, example) pairs at
    once, in its worker pool: ``correct`` where ``verify_many`` says True, and ``timeout`` where the time limit ended
    the check."""
    return verdicts(pairs)


def describe_prediction(tokens: Sequence[str], example: SymbolicExample) -> dict:
    return {
        "id": example.id,
        "method": example.method,
        "input": " ".join(example.source),
        "target": " ".join(example.target),
        "predicted_equation": " ".join(tokens),
        "well_formed": is_well_formed(tokens),
        "correct": bool(is_correct(tokens, example)),
        "equation_correct": exact_match(tokens, example),
    }


SYMBOLIC_ARITIES = dict(ARITIES)
SYMBOLIC_NUMBER_STARTS = frozenset(NUMBER_STARTS)
