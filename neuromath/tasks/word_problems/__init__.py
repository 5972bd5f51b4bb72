"""Word problems (English or Chinese problem -> equation -> number): records and number masking, equations (infix
with real numbers -> prefix over masked numbers), scoring, readers and the writer, spans for group attention,
equation normalisation, the synthetic templates, and the two tasks ``word_problems`` and
``word_problems_normalized``. No torch here.

Notation used throughout: significant numbers of a problem are masked as ``n0, n1, ...`` in
order of appearance; the target equation is a list of tokens in *prefix* notation over those
tokens, constants (``1``, ``100``, ``3.14``, ...) and the operators ``+ - * / ^`` (and ``neg``,
unary minus, where a data set writes one, e.g. MAWPS ``x=(-11.0-7.0)/5``).

Modules: ``records`` (``Example``, ``mask_numbers``, ``prepare_problem``), ``equations`` (``example_from_equation``),
``scoring``, ``files`` (``read_examples`` and the readers of each format, ``write_jsonl``), ``spans``,
``normalisation``, ``templates`` (the synthetic generator), ``preparation`` (what a run adds to its splits, how it
reads source words) and ``task`` (the task descriptions). Every public name
is importable from this package.
"""

from neuromath.tasks.word_problems.answer_scoring import (
    describe_prediction,
    equation_matches,
    equation_value,
    fill_numbers,
    is_correct,
    is_well_formed,
)
from neuromath.tasks.word_problems.equation_targets import example_from_equation
from neuromath.tasks.word_problems.files import (
    MWPTOOLKIT_KEYS,
    SVAMP_COLUMNS,
    SVAMP_JSON_KEYS,
    read_jsonl,
    read_mwptoolkit_json,
    read_question_equation_csv,
    read_svamp_csv,
    read_svamp_json,
    write_jsonl,
)
from neuromath.tasks.word_problems.formats import FORMATS, detect_format, read_examples
from neuromath.tasks.word_problems.normalisation import (
    ADDITIVE_OPERATORS,
    MULTIPLICATIVE_OPERATORS,
    describe_postfix_prediction,
    equation_matches_normalized,
    is_correct_postfix,
    is_well_formed_postfix,
    normalize_equation,
    normalize_tree,
    normalized_target_tokens,
    postfix_to_prefix,
    prefix_of_postfix_hypothesis,
    template_counts,
    term_order_key,
)
from neuromath.tasks.word_problems.records import (
    MASK_REGEX,
    SMALLEST_MASKED_NUMBER_WORD,
    Example,
    NumberSpan,
    mask_numbers,
    number_node,
    number_value,
    prepare_problem,
    read_numbers,
    words_to_number,
    written_power_value,
)
from neuromath.tasks.word_problems.spans import SPAN_BREAKS, span_roles, split_spans
from neuromath.tasks.word_problems.word_problem_task import WORD_PROBLEMS, WORD_PROBLEMS_NORMALIZED, generate

__all__ = [
    "ADDITIVE_OPERATORS",
    "FORMATS",
    "MASK_REGEX",
    "MULTIPLICATIVE_OPERATORS",
    "MWPTOOLKIT_KEYS",
    "SMALLEST_MASKED_NUMBER_WORD",
    "SPAN_BREAKS",
    "SVAMP_COLUMNS",
    "SVAMP_JSON_KEYS",
    "WORD_PROBLEMS",
    "WORD_PROBLEMS_NORMALIZED",
    "Example",
    "NumberSpan",
    "describe_postfix_prediction",
    "describe_prediction",
    "detect_format",
    "equation_matches",
    "equation_matches_normalized",
    "equation_value",
    "example_from_equation",
    "fill_numbers",
    "generate",
    "is_correct",
    "is_correct_postfix",
    "is_well_formed",
    "is_well_formed_postfix",
    "mask_numbers",
    "normalize_equation",
    "normalize_tree",
    "normalized_target_tokens",
    "number_node",
    "number_value",
    "postfix_to_prefix",
    "prefix_of_postfix_hypothesis",
    "prepare_problem",
    "read_examples",
    "read_jsonl",
    "read_mwptoolkit_json",
    "read_numbers",
    "read_question_equation_csv",
    "read_svamp_csv",
    "read_svamp_json",
    "span_roles",
    "split_spans",
    "template_counts",
    "term_order_key",
    "words_to_number",
    "write_jsonl",
    "written_power_value",
]
