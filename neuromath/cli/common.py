"""Options and output shared by several commands, and argument types that refuse values out of range at parsing.

Every count, size, worker and time argument has an upper bound (``integer_in``, ``float_in``), so that a typo fails
at once with the allowed range instead of running out of memory or time: the bounds below are far above real use.
"""

from __future__ import annotations

import argparse
import math
import sys
import textwrap
from pathlib import Path

from neuromath.config.rules import MAX_BATCH, MAX_BEAM, MAX_LENGTH, MAX_LENGTH_PENALTY, PROTOCOLS, SEED
from neuromath.dataroot import corpus_of, find_data
from neuromath.environment import usable_cpus
from neuromath.errors import DataNotFoundError, NeuromathError
from neuromath.expr.numbers import shorten


def escape_unencodable_output() -> None:
    """Let stdout print any text: a character it cannot encode (a lone surrogate, from a byte of argv that was not
    UTF-8, echoed in an answer) is written as a backslash escape instead of raising UnicodeEncodeError."""
    stream = sys.stdout
    if hasattr(stream, "reconfigure") and getattr(stream, "errors", "strict") == "strict":
        stream.reconfigure(errors="backslashreplace")


# Upper bounds of the command line's counts
MAX_SEED = SEED.high  # a seed, as train.seed takes it (what numpy accepts)
MAX_SEEDS = 100  # runs of --seeds: each a whole training
MAX_FOLDS = 100  # folds of cv --k
MAX_WORKERS = max(16, 4 * usable_cpus())  # processes or threads: 4 per CPU (at least 16); more only add memory
WORKERS_NOTE = "4 per CPU of this machine, at least 16"
MAX_BOOTSTRAP_SAMPLES = 1_000_000  # paired bootstrap resamples: 8 MB of means; the interval is stable long before
MAX_EXAMPLES = 10_000_000  # examples, questions or token occurrences read from a file ("at most this many")
MAX_GENERATED = 1_000_000  # problems a generator keeps in memory (word problems, identities, evaluations, blanks)
MAX_STREAMED = 10_000_000  # pairs or questions a generator writes as it goes (symbolic, per module and split)
MAX_TIME_LIMIT = 3600.0  # seconds per attempt of a generator

HELP_WIDTH = 79  # the columns a description is filled to; examples are kept as written


def fill(text: str) -> str:
    """One paragraph of help text filled to ``HELP_WIDTH`` columns, never breaking a word or a hyphenated name."""
    return textwrap.fill(" ".join(text.split()), HELP_WIDTH, break_long_words=False, break_on_hyphens=False)


def documented(description: str, *examples: str) -> dict:
    """Keyword arguments of ``add_parser`` that make a command's ``--help`` self-explanatory: ``description`` (what
    the command does, reads and writes; paragraphs separated by a blank line) filled to ``HELP_WIDTH`` columns, and an
    epilog ``examples:`` of command lines kept as written (a line break inside one continues it), under
    ``RawDescriptionHelpFormatter`` so that argparse does not run the examples together."""
    paragraphs = [fill(paragraph) for paragraph in description.split("\n\n")]
    lines = [f"  {line}" for example in examples for line in example.splitlines()]
    return {"description": "\n\n".join(paragraphs), "epilog": "\n".join(["examples:", *lines]),
            "formatter_class": argparse.RawDescriptionHelpFormatter}


def integer_in(low: int, high: int | None = None, why: str = ""):
    """An argparse type: an integer from ``low`` to ``high``; anything else is refused with the allowed range (and
    ``why``, what the bound is, in brackets): ``argument --workers: must be an integer from 1 to 16 (4 per CPU of
    this machine, at least 16), got 200``. Every count of the command line gives a ``high``; without one the type
    is an integer >= ``low`` (``bounded`` is False, which ``tests/test_paths_and_bounds.py`` refuses)."""
    allowed = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
    if why:
        allowed += f" ({why})"

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:  # also an integer of more digits than Python converts
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {shorten(text, 40)!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {value}")
        return value

    parse.__name__ = allowed  # what argparse names the type in its own messages
    parse.bounded = high is not None
    return parse


seed_int = integer_in(0, MAX_SEED)  # a seed, as train.seed takes it
batch_size = integer_in(1, MAX_BATCH)  # examples per forward pass
worker_count = integer_in(1, MAX_WORKERS, WORKERS_NOTE)  # --workers, --jobs, --threads
bootstrap_samples = integer_in(1, MAX_BOOTSTRAP_SAMPLES)  # --samples
seed_runs = integer_in(1, MAX_SEEDS)  # --seeds of train and sweep


def add_json_option(parser: argparse.ArgumentParser, what: str = "one JSON object") -> None:
    """--json: print ``what`` (the help reads "print WHAT") instead of the text output."""
    parser.add_argument("--json", action="store_true", help=f"print {what}")


def add_seed_option(parser: argparse.ArgumentParser, what: str, default: int | None = 0) -> None:
    """--seed, from 0 to ``MAX_SEED``; the help reads "WHAT (default 0)". A ``default`` of None leaves the seed to
    the command, which takes 0 where it needs one."""
    parser.add_argument("--seed", type=seed_int, default=default, help=f"{what} (default 0)")


def add_protocol_option(parser: argparse.ArgumentParser) -> None:
    """--protocol: how the kept epoch is chosen (train.protocol), written into the run's config and summary."""
    parser.add_argument("--protocol", choices=PROTOCOLS, default=None,
                        help="clean: choose the epoch on validation data carved out of training (the default); "
                             "literature: choose it on the test split, as MWPToolkit's and SVAMP's k-fold code do "
                             "(an optimistic number, labelled as such wherever it is shown)")


def protocol_overrides(args: argparse.Namespace) -> list[str]:
    """The --set overrides of a command, then --protocol's (so that it wins)."""
    return [*(args.set or []), *([f"train.protocol={args.protocol}"] if args.protocol else [])]


def add_format_option(parser: argparse.ArgumentParser, files: str = "the file") -> None:
    """--format: the data format of the files read, detected from ``files`` ("each file") when not given."""
    parser.add_argument("--format", default=None, help=f"data format (default: detected from {files})")


def add_lenient_option(parser: argparse.ArgumentParser, what: str = "records") -> None:
    """--lenient: skip the malformed ``what`` (rows, records, lines) of a data file and report them."""
    parser.add_argument("--lenient", action="store_true", help=f"skip malformed {what} and report them")


def integer_set(low: int, high: int):
    """An argparse type: a set of integers from ``low`` to ``high`` written as ``8``, ``8-13`` or ``8,10-11``."""
    allowed = f"integers from {low} to {high}, written like 8, 8-13 or 8,10-11"

    def parse(text: str) -> set[int]:
        values: set[int] = set()
        for part in text.split(","):
            first, dash, last = part.strip().partition("-")
            try:
                start, stop = int(first), int(last if dash else first)
            except ValueError:
                raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}") from None
            if not low <= start <= stop <= high:
                raise argparse.ArgumentTypeError(f"must be {allowed}, got {part.strip()!r}")
            values.update(range(start, stop + 1))
        return values

    parse.__name__ = allowed
    parse.bounded = True
    return parse


def check_outputs(outputs: dict[str, Path], inputs: dict[str, str], hint: str) -> None:
    """Refuse output files that are one file with each other or with an input: the second write would replace the
    first, or an input would be overwritten while it is still the only copy of its data. ``hint`` says what to do
    instead."""
    seen: dict[Path, str] = {}
    for name, path in inputs.items():
        seen.setdefault(Path(path).resolve(), name)
    for name, path in outputs.items():
        resolved = path.resolve()
        if resolved in seen:
            raise NeuromathError(f"{name} {path} is the same file as {seen[resolved]}; {hint}")
        seen[resolved] = f"{name} {path}"


def data_path(text: str) -> str:
    """An argparse type: a data file or folder, read from the working directory when it is there, else from the data
    root ($NEUROMATH_DATA, else ./data; ``neuromath.dataroot``). Found in neither, a path into a known corpus
    (``mawps-cv/fold0/dev.csv``) is refused with the corpus and where to get it; any other path is passed on as
    written, for the command to report with the rest of its checks when it reads it. A path that is neither a file
    nor a folder (a FIFO, a device, a socket, a link to one) is refused here, before anything waits on it."""
    try:
        return str(find_data(text))
    except DataNotFoundError as error:
        if corpus_of(text) is not None and not Path(text).is_absolute():
            raise argparse.ArgumentTypeError(str(error)) from None
        return text
    except NeuromathError as error:  # found, but not a file or folder (neuromath.safe_read.check_data_path)
        raise argparse.ArgumentTypeError(str(error)) from None


def finite_float(text: str) -> float:
    """An argparse type: a finite number (not nan or inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a finite number, got {shorten(text, 40)!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def float_in(low: float, high: float, low_open: bool = False):
    """An argparse type: a finite number from ``low`` to ``high`` (above ``low`` when ``low_open``: a duration that
    must be positive); anything else, nan and inf included, is refused with the allowed range."""
    allowed = f"a number above {low:g} and at most {high:g}" if low_open else f"a number from {low:g} to {high:g}"

    def parse(text: str) -> float:
        value = finite_float(text)
        if not (low < value if low_open else low <= value) or value > high:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {value:g}")
        return value

    parse.__name__ = allowed  # what argparse names the type in its own messages
    parse.bounded = True
    return parse


def integer_list(low: int, high: int, most: int = 20):
    """An argparse type: a comma list of at most ``most`` integers from ``low`` to ``high`` (``1,10,50``), returned
    as written without spaces; anything else is refused with the allowed range."""
    allowed = f"a comma list of at most {most} integers from {low} to {high}, like 1,10,50"

    def parse(text: str) -> str:
        parts = [part.strip() for part in text.split(",") if part.strip()]
        try:
            values = [int(part) for part in parts]
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {shorten(text, 40)!r}") from None
        if not values or len(values) > most or not all(low <= value <= high for value in values):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {shorten(text, 40)!r}")
        return ",".join(map(str, values))

    parse.__name__ = allowed
    parse.bounded = True
    return parse


finite_float.bounded = False  # no range of its own: for a new number, give float_in its range
unit_interval = float_in(0.0, 1.0)  # a share or probability


def add_decode_options(parser: argparse.ArgumentParser) -> None:
    """--beam, --nbest, --length-penalty, --constrained and --verify, within the ranges of the decode keys
    (the ranges ``DecodeConfig``'s fields declare)."""
    parser.add_argument("--beam", type=integer_in(1, MAX_BEAM), default=None, metavar="K",
                        help="beam width (default: the run's, greedy = 1)")
    parser.add_argument("--nbest", type=integer_in(1, MAX_BEAM), default=None, metavar="N",
                        help="keep the N best hypotheses (N <= beam)")
    parser.add_argument("--length-penalty", dest="length_penalty", default=None, metavar="ALPHA",
                        type=float_in(-MAX_LENGTH_PENALTY, MAX_LENGTH_PENALTY),
                        help="rank hypotheses by score / length^ALPHA")
    parser.add_argument("--constrained", action=argparse.BooleanOptionalAction, default=None,
                        help="only decode tokens that can still complete a well-formed expression")
    parser.add_argument("--verify", action=argparse.BooleanOptionalAction, default=None,
                        help="answer with the first n-best hypothesis the task's verifier accepts (default on)")


MAX_MEMORY_GB = 100_000.0  # far above any machine: --max-memory is a limit, not a request


def add_cost_limits(parser: argparse.ArgumentParser, decoding: bool = True) -> None:
    """--max-memory GB (and, with ``decoding``, --max-decode-len N): the limits a run folder is loaded under, its
    weights and one batch of decoding estimated from its config before the model is built
    (``neuromath.models.cost``)."""
    parser.add_argument("--max-memory", dest="max_memory", type=float_in(0.0, MAX_MEMORY_GB, low_open=True),
                        default=None, metavar="GB",
                        help="refuse a run whose weights and one batch of decoding are estimated to need more than "
                             "GB gigabytes (default: half of this machine's memory, of the GPU's on a GPU)")
    if decoding:
        parser.add_argument("--max-decode-len", dest="max_decode_len", type=integer_in(1, MAX_LENGTH), default=None,
                            metavar="N", help="refuse a run whose decode.max_len is above N tokens (default 4096)")


def cost_limits_of(args: argparse.Namespace):
    """The context (``neuromath.models.cost.cost_limits``) in which a command loads runs with the limits of
    ``add_cost_limits``."""
    from neuromath.models.cost import cost_limits  # torch: only the commands that load a run come here

    return cost_limits(getattr(args, "max_memory", None), getattr(args, "max_decode_len", None))
