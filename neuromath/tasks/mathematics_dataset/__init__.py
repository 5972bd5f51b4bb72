"""DeepMind's Mathematics Dataset (Saxton et al. 2019): the question record, the release reader and writer and the
exact-match scorer (``release``), the driver of DeepMind's own generator with its import and determinism shims
(``generator``), and the task ``mathematics_dataset`` with its in-process default data (``task``). No torch here.

The names of the former single module (``release`` and ``task``) and ``generate_directory`` (``neuromath generate
mathematics_dataset``) are importable from this package.
"""

from neuromath.tasks.mathematics_dataset.mathematics_generator import generate_directory
from neuromath.tasks.mathematics_dataset.mathematics_task import (
    DEFAULT_MODULES,
    MATHEMATICS_DATASET,
    generate,
    generate_options,
    read_options,
)
from neuromath.tasks.mathematics_dataset.release import (
    MathQuestion,
    describe_prediction,
    is_correct,
    module_files,
    parse_record,
    read_examples,
    read_module_file,
    record_files,
    split_list,
    write_release,
)

__all__ = [
    "DEFAULT_MODULES",
    "MATHEMATICS_DATASET",
    "MathQuestion",
    "describe_prediction",
    "generate",
    "generate_directory",
    "generate_options",
    "is_correct",
    "module_files",
    "parse_record",
    "read_examples",
    "read_module_file",
    "record_files",
    "read_options",
    "split_list",
    "write_release",
]
