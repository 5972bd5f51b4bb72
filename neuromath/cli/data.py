"""neuromath data: inspect and prepare data files (equation templates of word problems, their training variations
and rule-made test variations, deduplication of symbolic pairs)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from neuromath.cli.common import (
    add_format_option,
    add_json_option,
    add_lenient_option,
    add_seed_option,
    check_outputs,
    data_path,
    documented,
    integer_in,
    unit_interval,
)
from neuromath.corpora.catalogue import CATALOGUE
from neuromath.corpora.download import get_corpora, summary
from neuromath.dataroot import data_root
from neuromath.errors import DataFormatError, ExpressionError
from neuromath.experiments.folds import RANDOM_FOLD_FILES, find_folds
from neuromath.fileio import locked, publish_together
from neuromath.tasks.json_text import lone_surrogate_in
from neuromath.tasks.symbolic import deduplicate, read_pairs, write_pairs
from neuromath.tasks.word_problems import FORMATS, read_examples, read_numbers, template_counts, write_jsonl
from neuromath.tasks.word_problems.overlap import unseen
from neuromath.tasks.word_problems.variations import AUGMENTATIONS, RULE_VARIATIONS, augment, vary

WORD_PROBLEM_FILES = f"word-problem data files ({', '.join(FORMATS)})"


def command_data_templates(args: argparse.Namespace) -> int:
    """How many equation templates the normalisation of Wang et al. 2018a merges in each word-problem file."""
    rows = []
    for path in args.files:
        skipped: list = []
        contradicting: list = []
        examples = read_examples(path, args.format, lenient=args.lenient, skipped=skipped,
                                 contradicting=contradicting, strict=args.strict)
        rows.append({"file": path, **template_counts(examples), "skipped": len(skipped),
                     "contradicting": len(contradicting)})
        for error in skipped:
            print(f"skipped: {error}", file=sys.stderr)
        report_contradicting(path, contradicting)
    if args.json:
        print(json.dumps(rows))
        return 0
    print("| file | problems | templates | normalised templates | merged | skipped | contradicting |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(f"| {row['file']} | {row['examples']} | {row['templates']} | {row['normalised_templates']} "
              f"| {row['merged']} | {row['skipped']} | {row['contradicting']} |")
    return 0


def report_contradicting(path: str, contradicting: list) -> None:
    """One line on stderr for the rows of ``path`` whose answer contradicts their own equation (kept)."""
    if contradicting:
        print(f"{path}: {len(contradicting)} rows whose answer contradicts their own equation, kept (neuromath data "
              f"check {path} lists them; --strict refuses them)", file=sys.stderr)


def error_json(error) -> dict:
    return {"line": error.line, "reason": error.reason}


def command_data_check(args: argparse.Namespace) -> int:
    """Read word-problem files and list their malformed rows and the rows whose answer contradicts their equation."""
    results = []
    for path in args.files:
        skipped: list = []
        contradicting: list = []
        examples = read_examples(path, args.format, lenient=not args.strict, skipped=skipped,
                                 contradicting=contradicting, strict=args.strict)
        results.append({"file": path, "problems": len(examples), "skipped": skipped, "contradicting": contradicting})
    if args.json:
        print(json.dumps([{**result, "skipped": [error_json(error) for error in result["skipped"]],
                           "contradicting": [error_json(error) for error in result["contradicting"]]}
                          for result in results], ensure_ascii=False))
        return 0
    for result in results:
        print(f"{result['file']}: {result['problems']} problems read, {len(result['skipped'])} malformed rows "
              f"skipped, {len(result['contradicting'])} rows whose answer contradicts their own equation (kept)")
        for error in result["skipped"]:
            print(f"  malformed: {error}")
        for error in result["contradicting"]:
            print(f"  contradicts: {error}")
    return 0


def number_json(number) -> dict:
    """One quantity of ``data numbers --json``: its text, its value (an int when whole, else the nearest float) and
    its span, character offsets into the text (``text[start:end]``)."""
    value = number.value
    shown = value.numerator if value.denominator == 1 else float(value)
    return {"text": number.text, "value": shown, "start": number.start, "end": number.end}


def command_data_numbers(args: argparse.Namespace) -> int:
    """The quantities a word problem's text holds, as masking reads them."""
    if lone_surrogate_in(args.text) is not None:  # a byte that is not UTF-8, kept by Python as a lone surrogate
        raise DataFormatError(None, None, "TEXT is not UTF-8 text (it holds an undecodable byte or a lone surrogate)")
    try:
        numbers = [number_json(number) for number in read_numbers(args.text)]
    except ExpressionError as error:  # a power too large to compute
        raise DataFormatError(None, None, str(error)) from None
    if args.json:
        print(json.dumps({"numbers": numbers}, ensure_ascii=False))
        return 0
    if not numbers:
        print("no numbers read", file=sys.stderr)
    for number in numbers:
        print(f"{number['value']}\t{number['text']}\t{number['start']}-{number['end']}")
    return 0


def command_data_dedup(args: argparse.Namespace) -> int:
    """Remove duplicate inputs within TRAIN and TEST and the TEST pairs whose input occurs in TRAIN."""
    skipped: list = []
    train = read_pairs(args.train, lenient=args.lenient, skipped=skipped)
    test = read_pairs(args.test, lenient=args.lenient, skipped=skipped)
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    train_out = Path(args.train_out) if args.train_out else dedup_path(args.train)
    test_out = Path(args.test_out) if args.test_out else dedup_path(args.test)
    check_outputs({"--train-out": train_out, "--test-out": test_out}, {"TRAIN": args.train, "TEST": args.test},
                  hint="name distinct outputs with --train-out and --test-out")
    train_kept, test_kept, counts = deduplicate(train, test)
    with locked(train_out, is_folder=False), locked(test_out, is_folder=False):
        # both files or neither: a kill between two renames would leave a new training file beside an old test file
        # that the new one no longer excludes
        with publish_together([train_out, test_out]) as (staged_train, staged_test):
            write_pairs(train_kept, staged_train)
            write_pairs(test_kept, staged_test)
    result = {**counts.as_dict(), "skipped": len(skipped), "train_out": str(train_out), "test_out": str(test_out)}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.train}: {counts.train_read} pairs, {counts.train_duplicates} duplicate inputs removed, "
          f"{counts.train_kept} written to {train_out}")
    print(f"{args.test}: {counts.test_read} pairs, {counts.test_duplicates} duplicate inputs removed, "
          f"{counts.test_in_train} inputs found in the training file removed, {counts.test_kept} written to {test_out}")
    return 0


def command_data_augment(args: argparse.Namespace) -> int:
    """Write the label-preserving variations of a word-problem file that training with data.augment adds."""
    kinds = [name.strip() for name in args.variations.split(",") if name.strip()] if args.variations else \
        list(AUGMENTATIONS)
    skipped: list = []
    examples = read_examples(args.file, args.format, lenient=args.lenient, skipped=skipped, strict=args.strict)
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    out = Path(args.out)
    check_outputs({"--out": out}, {"FILE": args.file}, hint="choose another --out")
    added, counts = augment(examples, kinds, args.copies, args.seed)
    with locked(out, is_folder=False):
        write_jsonl(added, out)
    result = {"file": args.file, "problems": len(examples), "added": len(added), "by_variation": counts,
              "copies": args.copies, "seed": args.seed, "out": str(out), "skipped": len(skipped)}
    if args.json:
        print(json.dumps(result))
        return 0
    per_kind = ", ".join(f"{kind} {count}" for kind, count in counts.items())
    print(f"{args.file}: {len(examples)} problems; {len(added)} variants written to {out} ({per_kind}; at most "
          f"{args.copies} of each kind per problem)")
    return 0


def command_data_vary(args: argparse.Namespace) -> int:
    """Write one robustness variation of a word-problem file, or of every fold of a folder of folds."""
    if args.folds:
        out = Path(args.out)
        jobs = [(path, out / name / file_name)
                for name, *paths in find_folds(args.input) for path, file_name in zip(paths, RANDOM_FOLD_FILES)]
    else:
        jobs = [(Path(args.input), Path(args.out))]
    check_outputs({f"--out ({target.parent.name}/{target.name})": target for _, target in jobs},
                  {str(source): str(source) for source, _ in jobs}, hint="choose another --out")
    results = []
    for source, target in jobs:
        skipped: list = []
        examples = read_examples(source, args.format, lenient=args.lenient, skipped=skipped, strict=args.strict)
        for error in skipped:
            print(f"skipped: {error}", file=sys.stderr)
        varied = [example for _, example in vary(examples, args.variation, args.seed)]
        target.parent.mkdir(parents=True, exist_ok=True)
        with locked(target, is_folder=False):
            write_jsonl(varied, target)
        results.append({"file": str(source), "problems": len(examples), "varied": len(varied),
                        "without_it": len(examples) - len(varied), "out": str(target), "skipped": len(skipped)})
    if args.json:
        print(json.dumps({"variation": args.variation, "seed": args.seed, "files": results}))
        return 0
    for result in results:
        print(f"{result['file']}: {result['problems']} problems; {result['varied']} with {args.variation} written to "
              f"{result['out']} ({result['without_it']} have no such variation and are left out)")
    return 0


def command_data_unseen(args: argparse.Namespace) -> int:
    """Write the problems of the TEST files whose story is in no TRAIN file, each story once."""
    out = Path(args.out)
    check_outputs({"--out": out}, {path: path for path in [*args.test, *args.train]}, hint="choose another --out")
    skipped: list = []
    # each kept problem's id is prefixed by its file's place among TEST (0:5, 1:5): folds of one corpus reuse ids, and
    # the written file must read back as one set of problems
    test = [replace(example, id=f"{place}:{example.id}") for place, path in enumerate(args.test)
            for example in read_examples(path, args.format, lenient=args.lenient, skipped=skipped,
                                         strict=args.strict)]
    train = [example for path in args.train
             for example in read_examples(path, args.format, lenient=args.lenient, skipped=skipped,
                                          strict=args.strict)]
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    kept, counts = unseen(test, train, args.similarity)
    out.parent.mkdir(parents=True, exist_ok=True)
    with locked(out, is_folder=False):
        write_jsonl(kept, out)
    result = {**counts, "train": len(train), "skipped": len(skipped), "out": str(out)}
    if args.json:
        print(json.dumps(result))
        return 0
    near = f", {counts['near_train']} are near copies of one" if args.similarity < 1 else ""
    print(f"{counts['read']} test problems: {counts['in_train']} have a story of the {len(train)} training problems"
          f"{near}, {counts['repeated']} repeat an earlier test problem; {counts['kept']} written to {out}")
    return 0


def command_data_list(args: argparse.Namespace) -> int:
    """The public corpora that data get fetches: name, source, licence, size, files and whether they are pinned."""
    if args.json:
        print(json.dumps([corpus.as_json() for corpus in CATALOGUE]))
        return 0
    print("| corpus | source | licence | size | files | sha256 |\n| --- | --- | --- | --- | ---: | --- |")
    for corpus in CATALOGUE:
        pinned = {"all": "pinned", "some": "partly pinned", "none": "not pinned"}[corpus.pinned]
        print(f"| {corpus.name} | {corpus.source} | {corpus.licence} | {corpus.size} | {len(corpus.files)} "
              f"| {pinned} |")
    return 0


def command_data_get(args: argparse.Namespace) -> int:
    """Download corpora of the catalogue into the data root, each file checked against its sha256 first."""
    root = Path(args.root).expanduser() if args.root else data_root()
    outcomes = get_corpora(args.names, root, mirror=args.mirror, force=args.force, unpinned=args.unpinned)
    if args.json:
        print(json.dumps({"root": str(root), "files": [outcome.as_json() for outcome in outcomes]}))
    else:
        print("\n".join(summary(outcomes, root)))
    return 0


def dedup_path(path: str) -> Path:
    """FILE.txt -> FILE.dedup.txt (FILE -> FILE.dedup)."""
    path = Path(path)
    return path.with_name(f"{path.stem}.dedup{path.suffix}") if path.suffix else path.with_name(f"{path.name}.dedup")


def add_reading_options(parser: argparse.ArgumentParser, files: str) -> None:
    """--format, --lenient and --strict of the commands that read word-problem files."""
    add_format_option(parser, files)
    add_lenient_option(parser, "records")
    parser.add_argument("--strict", action="store_true",
                        help="refuse rows whose answer contradicts their own equation (default: keep and count them)")


def register(commands) -> None:
    data = commands.add_parser(
        "data", help="inspect and prepare data files",
        **documented(
            "Inspect and prepare data files: count the equation templates of word-problem files and how many the "
            "normalisation merges (templates), list their malformed rows and the rows whose answer contradicts "
            "their equation (check), write the variations that data.augment trains on (augment) or a "
            "robustness variation of a test file or of every fold (vary), write the test problems whose story is "
            "in no training file (unseen), print the quantities read from a word problem's text (numbers), or "
            "remove duplicate inputs from symbolic pair files (dedup); list the public corpora (list) and download "
            "them into the data root, checked (get). Run neuromath data COMMAND --help for each one's options.",
            "neuromath data get mawps-cv asdiv-a-cv",
            "neuromath data templates mawps-json/MAWPS.json --lenient",
            "neuromath data dedup data/train.txt data/test.txt",
        ),
    )
    data_commands = data.add_subparsers(dest="data_command", required=True, metavar="COMMAND",
                                        help="what to do with the files")
    listed = data_commands.add_parser(
        "list", help="the public corpora that data get downloads: source, licence, size, files",
        **documented(
            "List the public corpora that neuromath data get downloads: each one's name (its folder under the data "
            "root), source, licence, size, number of files and whether their sha256 is pinned. --json prints a list "
            "of {name, title, source, licence, size, files: [{url, sha256, path, size}]}; a path is relative to the "
            "data root, a sha256 null where none is pinned.",
            "neuromath data list",
            "neuromath data list --json",
        ),
    )
    add_json_option(listed, "one JSON list")
    listed.set_defaults(handler=command_data_list)
    get = data_commands.add_parser(
        "get", help="download corpora into the data root, each file checked against its sha256",
        **documented(
            "Download the corpora NAME (neuromath data list names them; symbolic/prim_bwd.tar.gz names one file) "
            "into the data root ($NEUROMATH_DATA, else ./data; or --root), in the layout the presets read. A file "
            "comes into FILE.part; a cut download resumes where it stopped when the command runs again. Its sha256 "
            "is checked before it is renamed into place: a mismatch deletes the download and leaves the file there "
            "as it was. A file already there with the right sha256 is skipped; one with another is refused unless "
            "--force. An archive is unpacked after its check; one with a member outside its folder, a link or a "
            "device file is refused whole. Files with no pinned sha256 (SVAMP, Lample & Charton, the Mathematics "
            "Dataset) need --unpinned, which prints the sha256 received.",
            "neuromath data get mawps-cv asdiv-a-cv",
            "neuromath data get identities --root ~/neuromath-data",
            "neuromath data get mawps-cv --mirror http://mirror.example.org:8080/corpora",
            "neuromath data get symbolic/prim_bwd.tar.gz --unpinned",
        ),
    )
    get.add_argument("names", nargs="+", metavar="NAME", help="corpora of neuromath data list, or files of one")
    get.add_argument("--root", metavar="DIR", help="the data root (default: $NEUROMATH_DATA, else ./data)")
    get.add_argument("--mirror", default=None, metavar="BASE",
                     help="fetch each URL's path from BASE (http://host:port/prefix) instead of its own host")
    get.add_argument("--force", action="store_true",
                     help="replace files whose sha256 is not the catalogue's, and archives unpacked before")
    get.add_argument("--unpinned", action="store_true", help="also fetch files with no pinned sha256")
    add_json_option(get, "each file's outcome as one JSON object")
    get.set_defaults(handler=command_data_get)
    for add in (add_inspecting, add_dedup_and_augment, add_test_sets):  # in the order --help lists them
        add(data_commands)


def add_inspecting(data_commands) -> None:
    """templates, check and numbers: read word problems and print what they find; they write nothing."""
    templates = data_commands.add_parser(
        "templates", help="word problems: distinct equation templates before and after normalisation",
        **documented(
            "Read word-problem files and count, for each, the problems, their distinct equation templates, the "
            "distinct templates after the normalisation of Wang et al. 2018a (operands of + and * ordered by their "
            "numbers' positions, chains rebuilt left-deep) and how many templates it merged. Prints a Markdown "
            "table (--json: a JSON list); writes nothing.",
            "neuromath data templates mawps-json/MAWPS.json --lenient",
            "neuromath data templates mawps-cv/fold0/train.csv asdiv-a-cv/fold0/train.csv --json",
        ),
    )
    templates.add_argument("files", nargs="+", type=data_path, metavar="FILE", help=WORD_PROBLEM_FILES)
    add_reading_options(templates, "each file")
    add_json_option(templates, "one JSON list")
    templates.set_defaults(handler=command_data_templates)
    check = data_commands.add_parser(
        "check", help="word problems: list the malformed rows and the rows whose answer contradicts their equation",
        **documented(
            "Read word-problem files and list, for each, the malformed rows (skipped when training with "
            "data.lenient) and the rows whose gold answer contradicts their own equation: the equation's value "
            "and the answer are further apart than the answer's rounding (half a unit of its last decimal place: "
            "3.333 agrees with 10/3) and value accuracy's relative tolerance of 1e-4. Such rows are kept and counted "
            "by every command that reads the file (a warning); a model that writes the row's own equation is "
            "scored wrong on them. --strict stops at the first malformed or contradicting row with an error naming "
            "the file, the line and the reason (exit status 1). Prints one summary line per file and a line per "
            "row (--json: a JSON list); writes nothing.",
            "neuromath data check mawps-json/MAWPS.json",
            "neuromath data check mawps-cv/fold0/train.csv mawps-cv/fold0/dev.csv --json",
            "neuromath data check asdiv-a-cv/fold0/train.csv --strict",
        ),
    )
    check.add_argument("files", nargs="+", type=data_path, metavar="FILE", help=WORD_PROBLEM_FILES)
    add_format_option(check, "each file")
    check.add_argument("--strict", action="store_true",
                       help="stop at the first malformed or contradicting row with an error")
    add_json_option(check, "one JSON list")
    check.set_defaults(handler=command_data_check)
    numbers = data_commands.add_parser(
        "numbers", help="word problems: the quantities read from a text, with their spans and values",
        **documented(
            "Print the quantities that masking reads from a word problem's TEXT (what becomes n0, n1, ... for "
            "train, evaluate and solve): one line per quantity with its value, the text as written and its span "
            "(character offsets START-END into TEXT). Read are digits, decimals, thousands separators (1,200), "
            "percentages (25% is 0.25), fractions (3/4) and mixed numbers (2 1/2), negative numbers (-5, minus 5, "
            "negative 5; not 10-5 or 10 minus 5, which are subtraction), powers (2^10) and number words from two "
            "upwards (twelve hundred, two thousand five hundred, two point five). Number words the reader cannot "
            "read for sure (twelve hundredths, two thirds) stay text. --json prints {\"numbers\": [{\"text\", "
            "\"value\", \"start\", \"end\"}, ...]}; a value is an integer when whole, else the nearest float "
            "(1/3 is 0.3333333333333333).",
            'neuromath data numbers "Jerry had twelve hundred pens and it was -5 degrees."',
            'neuromath data numbers "Add 2 1/2 cups, 25% more." --json',
        ),
    )
    numbers.add_argument("text", metavar="TEXT", help="the text of a word problem")
    add_json_option(numbers)
    numbers.set_defaults(handler=command_data_numbers)


def add_dedup_and_augment(data_commands) -> None:
    """dedup and augment: write cleaned symbolic pairs, and the training variations of word problems."""
    dedup = data_commands.add_parser(
        "dedup", help="symbolic: remove duplicate inputs within TRAIN and TEST, and TEST pairs whose input is in TRAIN",
        **documented(
            "Deduplicate a training and a test file of symbolic pairs (count|input<TAB>output lines): remove lines "
            "whose input already occurred in the same file, and test lines whose input occurs in TRAIN, comparing "
            "canonical forms (chains of add and of mul flattened, their operands sorted); merged duplicates add "
            "their counts. Writes the kept pairs to new files (the inputs are never overwritten) and prints the "
            "counts.",
            "neuromath data dedup data/train.txt data/test.txt   # -> data/train.dedup.txt, data/test.dedup.txt",
            "neuromath data dedup data/train.txt data/test.txt --train-out data/train.clean.txt \\\n"
            "    --test-out data/test.clean.txt --json",
        ),
    )
    dedup.add_argument("train", metavar="TRAIN", help="the training pairs (count|input<TAB>output lines)")
    dedup.add_argument("test", metavar="TEST", help="the test pairs, checked against TRAIN as well")
    dedup.add_argument("--train-out", dest="train_out", default=None,
                       help="file for the kept training pairs (default TRAIN with .dedup before the suffix)")
    dedup.add_argument("--test-out", dest="test_out", default=None,
                       help="file for the kept test pairs (default TEST with .dedup before the suffix)")
    add_lenient_option(dedup, "lines")
    add_json_option(dedup, "the counts as one JSON object")
    dedup.set_defaults(handler=command_data_dedup)
    augmented = data_commands.add_parser(
        "augment", help="word problems: write the variations that training with data.augment adds",
        **documented(
            "Read a word-problem file and write, as JSON lines, the variations of its problems that training adds "
            "with data.augment: the story's sentences reordered where it allows, the numbers drawn again with the "
            "answer computed again, an irrelevant sentence with a number taken from another problem of the file, "
            "and (question_changed) another question about the same story with its own equation, where the "
            "equation's form makes that safe: 'how many more X does A have than B' becomes 'how many X do A and B "
            "have in all', and the other way round; other totals and comparisons of two numbers ask for the "
            "difference or the sum of 'the larger amount' and 'the smaller'. Each variant's id is its problem's id, "
            "the variation and the copy "
            "(gen-000001#numbers_resampled0); a variant equal to its problem or to another variant is left out. "
            "The same seed writes the same variants.",
            "neuromath data augment mawps-cv/fold0/train.csv --out runs/aug.jsonl",
            "neuromath data augment train.jsonl --variations numbers_resampled --copies 3 --out aug.jsonl --json",
        ),
    )
    augmented.add_argument("file", type=data_path, metavar="FILE", help="a word-problem data file")
    augmented.add_argument("--out", required=True, help="the JSON-lines file to write the variants to")
    augmented.add_argument("--variations", default=None,
                           help="comma list of sentences_reordered, numbers_resampled, irrelevant_sentence, "
                                "question_changed (default: all four)")
    augmented.add_argument("--copies", type=integer_in(1, 100), default=1,
                           help="variants of each kind per problem, at most (default 1)")
    add_seed_option(augmented, "the seed of the draws")
    add_reading_options(augmented, "the file")
    add_json_option(augmented, "the counts as one JSON object")
    augmented.set_defaults(handler=command_data_augment)


def add_test_sets(data_commands) -> None:
    """vary and unseen: write test sets of word problems, varied or unseen in training."""
    varied = data_commands.add_parser(
        "vary", help="word problems: write a rule-made variation of a test file (or of every fold of a folder)",
        **documented(
            "Read a word-problem file and write, as JSON lines, one variation of its problems that neuromath "
            "evaluate --robustness asks a solver: question_removed (the story without its question, the gold answer "
            "kept), irrelevant_sentence, sentences_reordered, numbers_resampled or question_changed (another "
            "question, its own answer). Problems without that variation "
            "(a question that holds a number of the equation cannot go) are left out, and counted. With --folds, "
            "INPUT is a folder of folds (fold0/train.csv and dev.csv, ...) and OUT gets fold0/train.jsonl and "
            "test.jsonl, ..., a folder neuromath cv --folds reads: a model trained and tested on question_removed "
            "folds shows how much of a benchmark the story alone answers (Patel et al. 2021).",
            "neuromath data vary mawps-cv/fold0/dev.csv --variation irrelevant_sentence --out runs/irrelevant.jsonl",
            "neuromath data vary asdiv-a-cv --folds --variation question_removed --out runs/asdiv-a-no-question",
        ),
    )
    varied.add_argument("input", type=data_path, metavar="INPUT", help="a word-problem data file (or, with --folds, "
                        "a folder of folds)")
    varied.add_argument("--variation", required=True, choices=list(RULE_VARIATIONS), help="the variation to write")
    varied.add_argument("--out", required=True, help="the JSON-lines file (with --folds: the folder) to write")
    varied.add_argument("--folds", action="store_true", help="INPUT is a folder of folds: vary every file of it")
    add_seed_option(varied, "the seed of the draws")
    add_reading_options(varied, "the file")
    add_json_option(varied, "the counts as one JSON object")
    varied.set_defaults(handler=command_data_vary)
    fresh = data_commands.add_parser(
        "unseen", help="word problems: the test problems whose story is in no training file",
        **documented(
            "Read word-problem TEST files (from another corpus, say) and TRAIN files, and write, as one JSON-lines "
            "file, the test problems whose story no training problem has, each story once: a test set of problems "
            "a model trained on TRAIN has not seen, to measure how it carries over. Stories are compared by their "
            "masked text lower-cased and reduced to letters (numbers, punctuation and spacing do not count), so a "
            "problem copied from one corpus into another is left out even with its numbers changed. Copies with a "
            "name changed or a word edited differ as stories: --similarity 0.8 leaves out a test problem whose "
            "story's words share at least 0.8 of their union with a training story's (Jaccard). Prints how "
            "many were read, seen in training, near copies, repeated and kept.",
            "neuromath data unseen asdiv-a-cv/fold0/train.csv asdiv-a-cv/fold0/dev.csv "
            "--train mawps-cv/fold0/train.csv --out runs/asdiv-a-unseen-by-mawps.jsonl",
        ),
    )
    fresh.add_argument("test", nargs="+", type=data_path, metavar="TEST", help="word-problem files to keep problems of")
    fresh.add_argument("--train", nargs="+", type=data_path, required=True, metavar="TRAIN",
                       help="word-problem files whose stories are left out")
    fresh.add_argument("--out", required=True, help="the JSON-lines file to write the kept problems to")
    add_reading_options(fresh, "each file")
    fresh.add_argument("--similarity", type=unit_interval, default=1.0, metavar="S",
                       help="also leave out a test problem whose story's word set shares at least S of its union "
                            "with a training story's (at most 1; default 1: only the same story)")
    add_json_option(fresh, "the counts as one JSON object")
    fresh.set_defaults(handler=command_data_unseen)

