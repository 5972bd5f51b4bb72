"""Mathematical identities (Arabshahi, Singh, Anandkumar 2018; Mali et al. 2021): equations as trees, labelled true
or false, to verify or complete. The records and the released JSON format (``equations``), numeric evaluation and the
numeric check (``numeric_evaluation``: points may show the sides differ, only exact arithmetic or a proof shows
them equal), the exact check of a typed identity behind ``neuromath check identity`` (``exact_check``), the axioms
(``axioms``), how the generator makes true equations (``rewrites``) and false ones (``mutations``), how it checks
their labels (``identity_labels``), builds one chunk (``identity_chunks``) and balances the whole over workers
(``identity_generator``), a generated data set's splits and files (``dataset``; its ``generate_identity_files`` and
the generator's ``generate`` are importable from here), and the task ``identities`` (``identities_task``). No torch
here.

The trees are ``neuromath.expr.equation_tree`` (re-exported here with the names of ``equations`` and
``numeric_evaluation``, as the former single module had them); ``to_sympy`` and ``from_sympy`` are the identities'
side of ``neuromath.expr.sympy_bridge``.
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
    blank_ancestors,
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
    Candidate,
    EquationExample,
    check_leaf_value,
    equation_record,
    is_correct,
    iterate_records,
    parse_preorder,
    read_candidates,
    read_equations,
    slots,
    to_preorder,
    write_candidates,
    write_equations,
)
from neuromath.tasks.identities.identities_task import IDENTITIES
from neuromath.tasks.identities.identity_generator import generate
from neuromath.tasks.identities.numeric_evaluation import (
    MAGNITUDE_LIMIT,
    REAL_FUNCTIONS,
    NumericCheck,
    OutsideDomain,
    apply_to_arrays,
    evaluate,
    evaluate_arrays,
    leaf_float,
    leaf_value,
    numeric_check,
)

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
    "apply_to_arrays",
    "blank_ancestors",
    "check_leaf_value",
    "equation_record",
    "evaluate",
    "evaluate_arrays",
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
