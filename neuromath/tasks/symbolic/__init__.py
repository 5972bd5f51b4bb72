"""Symbolic integration and first-order ODEs in prefix notation (Lample & Charton 2020, "Deep learning for symbolic
mathematics"): pairs and their file format, canonical forms and deduplication (``pairs``), random expressions
(``random_expressions``), one attempt of each backward / forward / parts / ode1 method (``symbolic_methods``) and the
driver that runs them (``symbolic_generator``), the verifier that decides whether a hypothesis is right (``verify``,
with its numbers in ``numeric_points`` and its proof in ``proof``), typed input (``typed_problems``, and
``typed_check`` for ``neuromath check``) and the task ``symbolic`` (``symbolic_task``). No torch here.

The names of ``pairs``, the task's ``generate`` and ``generate_options``, and ``generate_symbolic_file`` (``neuromath
generate symbolic``) are importable from this package.
"""

from neuromath.tasks.symbolic.pairs import (
    COMMUTATIVE,
    KINDS,
    METHODS,
    SYMBOLIC_ARITIES,
    SYMBOLIC_NUMBER_STARTS,
    DedupCounts,
    SymbolicExample,
    canonical,
    canonical_node,
    deduplicate,
    describe_prediction,
    exact_match,
    file_method,
    format_pair,
    is_correct,
    is_well_formed,
    kind_of,
    parse_line,
    read_pairs,
    unique_by_input,
    verdicts_many,
    verify_many,
    write_pairs,
)
from neuromath.tasks.symbolic.symbolic_generator import generate, generate_symbolic_file
from neuromath.tasks.symbolic.symbolic_task import SYMBOLIC, generate_options

__all__ = [
    "COMMUTATIVE",
    "KINDS",
    "METHODS",
    "SYMBOLIC",
    "SYMBOLIC_ARITIES",
    "SYMBOLIC_NUMBER_STARTS",
    "DedupCounts",
    "SymbolicExample",
    "canonical",
    "canonical_node",
    "deduplicate",
    "describe_prediction",
    "exact_match",
    "file_method",
    "format_pair",
    "generate",
    "generate_options",
    "generate_symbolic_file",
    "is_correct",
    "is_well_formed",
    "kind_of",
    "parse_line",
    "read_pairs",
    "unique_by_input",
    "verdicts_many",
    "verify_many",
    "write_pairs",
]
