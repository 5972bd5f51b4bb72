"""Equations of the identities task (Arabshahi, Singh, Anandkumar 2018; Mali et al. 2021): the example records, the
released JSON format (read and written) and the task's scorer. No torch here.

The trees themselves (``EquationNode``, its leaf kinds and tree utilities) are ``neuromath.expr.equation_tree``;
SymPy conversions are ``neuromath.expr.sympy_bridge``; numeric evaluation and the numeric check at random points
are ``numeric_evaluation``.

The released files are JSON lists indexed by tree depth (the height of the root, a leaf being 0). Each record holds
``equation`` = ``{func, vars, nodeNum, depth, numNodes, variables}``, where ``func`` and ``vars`` are comma-separated
pre-order lists in which every node is followed by its two child slots and ``#`` marks an empty slot. Verification
records add ``label`` ("1" true, "0" false), completion records ``blankNodeNum`` (the pre-order number of the
blanked node) and candidate records ``class`` (the value class of the candidate filler, ``label`` "-1").
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Iterator

from neuromath.errors import DataFormatError, ExpressionError
from neuromath.expr.equation_tree import ARITY, LEAF_KINDS, EquationNode, height, postorder, size, symbols_of
from neuromath.fileio import check_published, write_text_atomic
from neuromath.safe_read import read_data_text
from neuromath.tasks.json_text import check_text

EMPTY = "#"


@dataclass(frozen=True)
class EquationExample:
    """An equation to verify (``label`` True/False, None when unknown) or to complete (``blank`` set)."""

    tree: EquationNode
    label: bool | None
    blank: int | None = None  # pre-order number of the blanked node (completion files)
    source: str = ""  # "file:line" where the record starts, for messages
    extra: dict = field(default_factory=dict, compare=False)  # other record keys, kept for writing back

    @cached_property
    def depth(self) -> int:
        """The tree's height, computed once: reading, training and scoring each ask for it (the tree is frozen)."""
        return height(self.tree)


@dataclass(frozen=True)
class Candidate:
    """A completion candidate: a subtree and the class of values it belongs to."""

    tree: EquationNode
    value_class: str
    source: str = ""

    @cached_property
    def depth(self) -> int:
        return height(self.tree)


def is_correct(prediction: bool, example: EquationExample) -> bool:
    """The task's scorer: a verification prediction (is it an identity?) is right when it equals the label."""
    if example.label is None:
        raise ValueError(f"{example.source or 'the equation'} has no label to score against")
    return bool(prediction) == example.label


# ---------------------------------------------------------------------------------------------- file format


@lru_cache(maxsize=65536)
def check_leaf_value(func: str, value: str) -> str | None:
    """None when ``value`` is a valid text for a leaf of kind ``func``, else the reason. Remembered per pair: a file
    repeats a few leaf texts in every record, and each check of a number builds a ``Fraction``."""
    try:
        if func == "Symbol":
            return None if value and value.replace("_", "").isalnum() else f"bad symbol name {value!r}"
        if func == "Pi":
            return None if value == "pi" else f"Pi leaf with value {value!r}"
        if func == "Float":
            float(value)
            return None
        fraction = Fraction(value)
    except (ValueError, ZeroDivisionError):
        return f"{func} leaf with value {value!r} is not a number"
    expected = {"One": Fraction(1), "NegativeOne": Fraction(-1), "Half": Fraction(1, 2)}.get(func)
    if expected is not None and fraction != expected:
        return f"{func} leaf with value {value!r}"
    if func == "Integer" and fraction.denominator != 1:
        return f"Integer leaf with value {value!r}"
    return None


def parse_preorder(func: str, values: str) -> EquationNode:
    """Parse the ``func`` / ``vars`` strings of one record; ExpressionError with the reason when malformed."""
    funcs, texts = func.split(","), values.split(",")
    if len(funcs) != len(texts):
        raise ExpressionError(f"func has {len(funcs)} entries but vars has {len(texts)}")
    position = 0

    def take() -> tuple[str, str, int] | None:
        """The next entry as (func, value, its index), or None for an empty slot. The node is built once its
        children are (a node's fields are frozen)."""
        nonlocal position
        if position >= len(funcs):
            raise ExpressionError("the pre-order list ends in the middle of a node (a child slot is missing)")
        name, text = funcs[position].strip(), texts[position].strip()
        index = position
        position += 1
        if name == EMPTY:
            return None
        if name in LEAF_KINDS:
            reason = check_leaf_value(name, text)
            if reason:
                raise ExpressionError(f"entry {index}: {reason}")
            return name, text, index
        if name not in ARITY:
            raise ExpressionError(f"entry {index}: unknown function {name!r}")
        return name, "", index

    # An explicit stack instead of recursion: trees in generated files can be deep.
    root = take()
    if root is None:
        raise ExpressionError("the tree is empty (its first entry is '#')")
    # each open entry with its child slots so far: None for an empty slot, the finished child node otherwise
    stack: list[tuple[tuple[str, str, int], list]] = [(root, [])]
    result: EquationNode | None = None
    while stack:
        entry, children = stack[-1]
        if len(children) < 2:
            child = take()
            if child is None:
                children.append(None)
            else:
                stack.append((child, []))
            continue
        stack.pop()
        func, value, index = entry
        present = tuple(c for c in children if c is not None)
        if func in LEAF_KINDS:
            if present:
                raise ExpressionError(f"entry {index}: leaf {func} has a child")
        else:
            arity = ARITY[func]
            if arity == 2 and len(present) != 2:
                raise ExpressionError(f"entry {index}: {func} needs 2 children, has {len(present)}")
            if arity == 1 and (children[0] is None or children[1] is not None):
                raise ExpressionError(f"entry {index}: {func} takes one (left) child")
        finished = EquationNode(func, value, present)
        if stack:
            stack[-1][1].append(finished)  # the parent's next slot
        else:
            result = finished
    if position != len(funcs):
        raise ExpressionError(f"{len(funcs) - position} entries left over after the tree ends")
    assert result is not None
    return result


def slots(node: EquationNode) -> Iterator[EquationNode | None]:
    """Pre-order over the nodes and their empty child slots (None), the order of the released strings: every node
    is followed by its two child slots."""
    stack: list[EquationNode | None] = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is not None:
            stack.extend(reversed(list(current.children) + [None] * (2 - len(current.children))))


def to_preorder(node: EquationNode) -> tuple[str, str]:
    """The ``func`` and ``vars`` strings of a tree (inverse of parse_preorder)."""
    entries = [(EMPTY, EMPTY) if n is None else (n.func, n.value) for n in slots(node)]
    return ",".join(func for func, _ in entries), ",".join(value for _, value in entries)


def equation_record(node: EquationNode) -> dict:
    """The ``equation`` object of a record, with the same derived fields as the released files (nodes numbered in
    pre-order)."""
    funcs, values = to_preorder(node)
    heights: dict[int, int] = {}
    for current in postorder(node):
        heights[id(current)] = 1 + max((heights[id(c)] for c in current.children), default=-1)
    numbers, depths = [], []
    counter = 0
    for current in slots(node):
        if current is None:
            numbers.append(EMPTY)
            depths.append(EMPTY)
        else:
            numbers.append(str(counter))
            depths.append(str(heights[id(current)]))
            counter += 1
    return {
        "vars": values,
        "numNodes": str(counter),
        "variables": {name: index for index, name in enumerate(symbols_of(node))},
        "depth": ",".join(depths),
        "nodeNum": ",".join(numbers),
        "func": funcs,
    }


def iterate_records(text: str, path: str | Path) -> Iterator[tuple[int, int, dict]]:
    """Yield ``(list_index, line, record)`` for each record of a depth-indexed JSON list, with the line where the
    record starts, so that errors can point at it."""
    decoder = json.JSONDecoder()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise DataFormatError(path, error.lineno, f"not valid JSON: {error.msg}") from None
    except RecursionError:  # Python's JSON decoder recurses once per level of brackets
        raise DataFormatError(path, None, "JSON nested too deeply to read (thousands of levels of brackets)") from None
    except ValueError as error:  # an integer of more than 4,300 digits (Python's limit on converting them)
        raise DataFormatError(path, None, f"not valid JSON: {str(error).split(';')[0]}") from None
    if not isinstance(data, list) or not all(isinstance(group, list) for group in data):
        raise DataFormatError(path, 1, "expected a JSON list of lists (records grouped by depth)")
    position = 0

    def skip(chars: str) -> None:
        nonlocal position
        while position < len(text) and text[position] in chars:
            position += 1

    skip(" \t\r\n")
    position += 1  # the outer '['
    line, counted_to = 1, 0  # line numbers are counted incrementally: one pass over the text in all
    for group_index, group in enumerate(data):
        skip(" \t\r\n,")
        position += 1  # this group's '['
        for record in group:
            skip(" \t\r\n,")
            line += text.count("\n", counted_to, position)
            counted_to = position
            _, position = decoder.raw_decode(text, position)
            yield group_index, line, record
        skip(" \t\r\n,")
        position += 1  # the group's ']'


def _record_tree(record: object, path: str | Path, line: int) -> EquationNode:
    if not isinstance(record, dict) or not isinstance(record.get("equation"), dict):
        raise DataFormatError(path, line, "a record needs an 'equation' object")
    check_text(record, path, line)
    equation = record["equation"]
    if not isinstance(equation.get("func"), str) or not isinstance(equation.get("vars"), str):
        raise DataFormatError(path, line, "'equation' needs string fields 'func' and 'vars'")
    try:
        return parse_preorder(equation["func"], equation["vars"])
    except ExpressionError as error:
        raise DataFormatError(path, line, f"bad tree: {error}") from None


# The files read last in this process, by path, leniency and content: a run over seeds (``train --seeds``) reads the
# same three files once per seed, and parsing a 40,000-equation set takes seconds, reading and hashing its text
# milliseconds. Keyed by a digest of the text, not by the file's modification time, whose clock is too coarse to tell
# two quick writes apart. The examples are frozen, so a copy of the list is all a caller gets.
_RECENT_FILES: OrderedDict[tuple, tuple[tuple[EquationExample, ...], tuple[DataFormatError, ...]]] = OrderedDict()
_RECENT_LIMIT = 4


def read_equations(path: str | Path, *, lenient: bool = False, skipped: list | None = None) -> list[EquationExample]:
    """Read a verification or completion file (records with ``label`` and optionally ``blankNodeNum``).

    Each record's tree is checked (arity, known functions, leaf values) and must have the depth of the list it is
    in; with ``lenient`` a bad record is skipped and its error appended to ``skipped``. The parsed examples of the
    last few files are remembered (``_RECENT_FILES``): the same text at the same path is not parsed again.
    """
    path = Path(path)
    text = _read_text(path)
    key = (str(path), str(path.resolve()), lenient, hashlib.blake2b(text.encode("utf-8", "surrogatepass")).digest())
    if key in _RECENT_FILES:
        _RECENT_FILES.move_to_end(key)
        examples, errors = _RECENT_FILES[key]
    else:
        found: list[DataFormatError] = []
        examples = tuple(_parse_equations(path, text, lenient, found))
        errors = tuple(found)
        _RECENT_FILES[key] = (examples, errors)
        while len(_RECENT_FILES) > _RECENT_LIMIT:
            _RECENT_FILES.popitem(last=False)
    if skipped is not None:
        skipped.extend(errors)
    return list(examples)


def _parse_equations(path: Path, text: str, lenient: bool, skipped: list) -> list[EquationExample]:
    examples: list[EquationExample] = []
    for depth, line, record in iterate_records(text, path):
        try:
            tree = _record_tree(record, path, line)
            if tree.func != "Equality":
                raise DataFormatError(path, line, f"the root is {tree.func}, not Equality")
            if height(tree) != depth:
                raise DataFormatError(path, line, f"tree of depth {height(tree)} in the list of depth {depth}")
            label_text = str(record.get("label", ""))
            if label_text not in ("1", "0", "-1", "True", "False"):
                raise DataFormatError(path, line, f"label must be 1 or 0, got {record.get('label')!r}")
            label = {"1": True, "True": True, "0": False, "False": False}.get(label_text)
            blank = None
            if "blankNodeNum" in record:
                # nodeNum may number the nodes in another order than pre-order (some released records count
                # breadth-first); the blank is stored as its pre-order position.
                numbers = [n for n in str(record["equation"].get("nodeNum", "")).split(",") if n.strip() != EMPTY]
                wanted = str(record["blankNodeNum"]).strip()
                if len(numbers) != size(tree):
                    numbers = [str(i) for i in range(size(tree))]
                if wanted not in [n.strip() for n in numbers]:
                    raise DataFormatError(
                        path, line, f"blankNodeNum {record['blankNodeNum']!r} is not a node of the tree"
                    )
                blank = [n.strip() for n in numbers].index(wanted)
            extra = {key: value for key, value in record.items() if key not in ("equation", "label", "blankNodeNum")}
            examples.append(EquationExample(tree, label, blank, f"{path}:{line}", extra))
        except DataFormatError as error:
            if not lenient:
                raise
            skipped.append(error)
    return examples


def read_candidates(path: str | Path) -> list[Candidate]:
    """Read a candidate-classes file: records ``{equation, class, label}`` grouped by depth."""
    path = Path(path)
    candidates = []
    for depth, line, record in iterate_records(_read_text(path), path):
        tree = _record_tree(record, path, line)
        if height(tree) != depth:
            raise DataFormatError(path, line, f"candidate of depth {height(tree)} in the list of depth {depth}")
        if "class" not in record:
            raise DataFormatError(path, line, "a candidate record needs a 'class'")
        candidates.append(Candidate(tree, str(record["class"]), f"{path}:{line}"))
    return candidates


def _read_text(path: Path) -> str:
    check_published(path)  # not a file of an interrupted multi-file write
    try:
        return read_data_text(path)  # a FIFO or a device: refused before it is read
    except FileNotFoundError:
        raise DataFormatError(path, None, "no such file") from None
    except UnicodeDecodeError as error:
        raise DataFormatError(path, None, f"not UTF-8 ({error.reason})") from None


def _grouped(items: list, record) -> str:
    groups: list[list[dict]] = []
    for item in items:
        depth = height(item.tree)
        while len(groups) <= depth:
            groups.append([])
        groups[depth].append(record(item))
    return json.dumps(groups, indent=1) + "\n"


def write_equations(examples: list[EquationExample], path: str | Path) -> None:
    """Write examples in the released format (atomically), grouped by depth."""

    def record(example: EquationExample) -> dict:
        result = {"equation": equation_record(example.tree)}
        result.update(example.extra)
        result["label"] = {True: "1", False: "0", None: "-1"}[example.label]
        if example.blank is not None:
            result["blankNodeNum"] = str(example.blank)
        return result

    write_text_atomic(path, _grouped(examples, record))


def write_candidates(candidates: list[Candidate], path: str | Path) -> None:
    write_text_atomic(
        path,
        _grouped(candidates, lambda c: {"equation": equation_record(c.tree), "class": c.value_class, "label": "-1"}),
    )
