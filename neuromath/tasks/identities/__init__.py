"""Mathematical identities (Arabshahi, Singh, Anandkumar 2018; Mali et al. 2021): equations as trees, labelled true
or false, to verify or complete. The records, the released JSON format and numeric evaluation (``equations``), the
axioms (``axioms``), how the generator makes equations (``rewrites``), how it checks their labels and balances them
(``generator``), a generated data set's splits and files (``dataset``; its ``generate_identity_files`` and the
generator's ``generate`` are importable from here), and the task ``identities`` (``task``). No torch here.

The trees are ``neuromath.expr.equation_tree`` (re-exported here with the names of ``equations``, as the former
single module had them); ``to_sympy`` and ``from_sympy`` are the identities' side of ``neuromath.expr.sympy_bridge``.
"""

from neuromath.expr.equation_tree import (
    ARITY,
    BINARY_FUNCTIONS,
    LEAF_KINDS,
    NUMBER_KINDS,
    PI,
    SYMBOL_NAMES,
    SYMBOLS,
    UNARY_FUNCTIONS,
    EquationNode,
    apply,
    format_infix,
    height,
    leaf,
    leaf_token,
    number,
    path_to,
    postorder,
    replace_at,
    replace_path,
    size,
    subtree_at,
    symbol,
    symbols_of,
)
from neuromath.expr.sympy_bridge import equation_to_sympy as to_sympy
from neuromath.expr.sympy_bridge import sympy_to_equation as from_sympy
from neuromath.expr.tree import preorder
from neuromath.tasks.identities.dataset import generate_identity_files
from neuromath.tasks.identities.equations import (
    EMPTY,
    MAGNITUDE_LIMIT,
    REAL_FUNCTIONS,
    Candidate,
    EquationExample,
    NumericCheck,
    OutsideDomain,
    check_leaf_value,
    equation_record,
    evaluate,
    is_correct,
    iterate_records,
    leaf_float,
    leaf_value,
    numeric_check,
    parse_preorder,
    read_candidates,
    read_equations,
    slots,
    to_preorder,
    write_candidates,
    write_equations,
)
from neuromath.tasks.identities.generator import generate
from neuromath.tasks.identities.task import IDENTITIES

__all__ = [
    "ARITY",
    "BINARY_FUNCTIONS",
    "EMPTY",
    "IDENTITIES",
    "LEAF_KINDS",
    "MAGNITUDE_LIMIT",
    "NUMBER_KINDS",
    "PI",
    "REAL_FUNCTIONS",
    "SYMBOLS",
    "SYMBOL_NAMES",
    "UNARY_FUNCTIONS",
    "Candidate",
    "EquationExample",
    "EquationNode",
    "NumericCheck",
    "OutsideDomain",
    "apply",
    "check_leaf_value",
    "equation_record",
    "evaluate",
    "format_infix",
    "from_sympy",
    "generate",
    "generate_identity_files",
    "height",
    "is_correct",
    "iterate_records",
    "leaf",
    "leaf_float",
    "leaf_token",
    "leaf_value",
    "number",
    "numeric_check",
    "parse_preorder",
    "path_to",
    "postorder",
    "preorder",
    "read_candidates",
    "read_equations",
    "replace_at",
    "replace_path",
    "size",
    "slots",
    "subtree_at",
    "symbol",
    "symbols_of",
    "to_preorder",
    "to_sympy",
    "write_candidates",
    "write_equations",
]
