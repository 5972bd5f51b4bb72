"""The model card of a run, ``RUN/README.md``, in the Hugging Face layout: a YAML front matter (library, licence,
tags, datasets, metrics and a ``model-index`` of the scores) and a body that says what the model is, how it was
trained and on what, its scores, the software and machine that made them, and what it is for and not for.

``train`` writes the card and ``RUN/environment.json`` (``neuromath.environment.describe``) once the summary with the
test scores is final; ``neuromath export`` copies the card, or writes it from the run folder's files when the run has
none. What the card says of a task comes from the task's description (``CardText``), so this module never branches
on a task's name, and it works for sequence runs and equation classifiers alike (their summaries differ: it reads
the scores it finds).

The card is the evidence that made the model: the command, the data files with the sha256 of their contents when
training ended (``train`` hashes them; a card written later from the run's files cannot know them), the scores of
summary.json and the software that trained it. ``neuromath push`` uploads it with the model, its usage rewritten
for the model's hub id (``hub_card``)."""

from __future__ import annotations

import json
import math
import shlex
import sys
from pathlib import Path

import yaml

from neuromath.config import Config, load_config
from neuromath.dataroot import data_root
from neuromath.environment import describe
from neuromath.errors import NeuromathError
from neuromath.extras import DISTRIBUTION, install_line
from neuromath.fileio import write_text_atomic
from neuromath.results.recipes import sha256_of
from neuromath.safe_read import SUMMARY_LIMIT, load_json, read_run_file
from neuromath.tasks import EquationTask, get_task
from neuromath.training.run import STOP_REASONS, limit_that_ended

CARD_FILE = "README.md"
ENVIRONMENT_FILE = "environment.json"
PYTHON_ENTRY = "neuromath.experiments.fit_then_test.train"  # the command of a run trained from Python
NOT_RECORDED = "not recorded"
GENERATED = "generated"  # the dataset of a run whose training data came from its task's built-in generator
LICENCE_NAME = "same-as-training-data"  # the front matter's license_name beside ``license: other``

# The scores of a summary that a card reports, in this order: key -> (label, shown in % (a fraction) or as it is).
# ``value_accuracy`` and ``equation_accuracy`` take the task's own labels (``accuracy_label``, ``equation_label``).
SCORES = {
    "value_accuracy": (None, True),
    "equation_accuracy": (None, True),
    "nbest_value_accuracy": ("n-best value accuracy", True),
    "bleu": ("equation BLEU (0-100)", False),
    "accuracy": ("accuracy", True),
    "precision": ("precision", True),
    "recall": ("recall", True),
}
# The best validation score of a summary, by the score it is: what a card reports when a run has no test split.
VALIDATION_SCORES = {"best_val_value_accuracy": "value_accuracy", "best_val_accuracy": "accuracy"}

COMMON_LIMITS = (
    "A research model: it was trained to study and compare architectures for mathematics problems. It is not a "
    "product, and it has not been evaluated for safety, fairness, or use in teaching or grading.",
    "Its scores say how it does on the test split of its own data (or on validation, where it had no test split); "
    "they do not promise anything about other corpora or about problems as people type them.",
    "Its size is the one config.yaml sets. neuromath's presets are sized to train on CPUs, so a preset run is "
    "smaller, and trained for less time, than the models of the papers it reproduces.",
)


def vocabulary_files(task) -> tuple[str, ...]:
    """The vocabulary files of a run of ``task``: the node vocabulary of an equation classifier, else the source
    and target vocabularies (a task with one vocabulary saves it as both)."""
    return ("node_vocab.json",) if isinstance(task, EquationTask) else ("source_vocab.json", "target_vocab.json")


def training_command() -> str:
    """The command that is training a run: ``neuromath ARGS`` when this process is the neuromath command (its console
    script, or ``python -m neuromath``), rebuilt from ``sys.argv``, else the Python entry point ``train``."""
    program = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    if program.name == "neuromath" or (program.name == "__main__.py" and program.parent.name == "neuromath"):
        return shlex.join(["neuromath", *sys.argv[1:]])
    return PYTHON_ENTRY


def write_environment(run_dir: str | Path) -> dict:
    """Write ``RUN/environment.json``: the software and machine of this process (``describe``); returns it."""
    environment = describe()
    write_text_atomic(Path(run_dir) / ENVIRONMENT_FILE, json.dumps(environment, indent=2) + "\n")
    return environment


def write_card(run_dir: str | Path, config: Config, summary: dict, environment: dict | None,
               command: str | None) -> Path:
    """Write ``RUN/README.md``, the model card of the run trained by ``command`` (see ``model_card``), with the
    sha256 of each data file the run read, hashed now (``data_digests``)."""
    path = Path(run_dir) / CARD_FILE
    write_text_atomic(path, model_card(config, summary, environment, command, data_digests(config)))
    return path


def data_digests(config: Config) -> dict[str, str]:
    """The sha256 of each data file config.yaml names that is a regular file now, by its path as config.yaml has it
    (a folder, as the Mathematics Dataset's, or a file that is gone has none)."""
    digests = {}
    for _, path in named_data_files(config):
        if Path(path).is_file():
            digests[path] = sha256_of(Path(path))
    return digests


def card_of_run(run_dir: str | Path) -> str:
    """The model card of a finished run folder, written from its files: config.yaml, summary.json and, when it is
    there, environment.json. The training command is not among them, so the card says it was not recorded."""
    run_dir = Path(run_dir)
    config = load_config(run_dir / "config.yaml")
    summary = read_json(run_dir / "summary.json", "summary")
    environment_path = run_dir / ENVIRONMENT_FILE
    environment = read_json(environment_path, "environment file") if environment_path.exists() else None
    return model_card(config, summary, environment, None)


def read_json(path: Path, what: str) -> dict:
    """A JSON object from a run folder's file (a regular file within the summary size limit), or a NeuromathError
    naming the file and what is wrong with it."""
    if not path.exists():
        raise NeuromathError(f"{path.parent}: no {path.name} (not a run folder, or its training has not finished)")
    data = read_run_file(path, SUMMARY_LIMIT, what)
    try:
        value = load_json(data, path)  # nested too deep: a DataFormatError naming the file
    except UnicodeDecodeError as error:
        raise NeuromathError(f"{path}: not UTF-8 text at byte {error.start}") from None
    except json.JSONDecodeError as error:
        raise NeuromathError(f"{path}: not valid JSON (line {error.lineno}: {error.msg})") from None
    if not isinstance(value, dict):
        raise NeuromathError(f"{path}: not a JSON object but {type(value).__name__}")
    return value


# ------------------------------------------------------------------------------------------ what the card says


def model_card(config: Config, summary: dict, environment: dict | None, command: str | None,
               digests: dict[str, str] | None = None) -> str:
    """The card of a run: its resolved ``config``, its ``summary`` (summary.json, with the test scores where it was
    tested), the ``environment`` it was trained in (None: not recorded), the ``command`` that trained it (None:
    not recorded) and the sha256 of its data files by path as config.yaml names them (``data_digests``; None or a
    path it lacks: not recorded)."""
    task = get_task(config.data.task)
    split, scores = reported_scores(summary, task)
    header = front_matter(config, task, split, scores)
    front = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=1000)
    sections = [
        f"# {config.model.name} for {task.name} (neuromath)",
        what_it_is(config, summary, task),
        f"{USAGE_HEADING}\n\n" + usage(task),
        "## Training\n\n" + training(config, summary, command, digests or {}),
        "## Scores\n\n" + scores_text(summary, split, scores),
        "## Software and machine\n\n" + environment_text(environment, summary),
        "## Intended use and limits\n\n" + limits(config, summary, task),
        "## Licence\n\n" + licence(config),
    ]
    return f"---\n{front}---\n\n" + "\n\n".join(section.rstrip() for section in sections) + "\n"


def front_matter(config: Config, task, split: str | None, scores: list[tuple[str, str, float, bool]]) -> dict:
    """The YAML header: what the Hugging Face Hub reads of a model card (library, licence, tags, datasets, metrics,
    and the scores as a ``model-index``)."""
    header: dict = {
        "library_name": "neuromath",
        "license": "other",  # the weights follow the training data's licence, which the card names
        "license_name": LICENCE_NAME,
        "tags": ["neuromath", task.name, config.model.name],
        "datasets": dataset_names(config),
    }
    if scores:
        header["metrics"] = [key for key, _, _, _ in scores]
        dataset = split_dataset(config, split)
        header["model-index"] = [{
            "name": f"{config.model.name}-{task.name}",
            "results": [{
                "task": {"type": task.card.pipeline, "name": task.name},
                "dataset": {"type": dataset, "name": dataset, "split": split},
                "metrics": [{"type": key, "name": f"{label} ({split})", "value": value}
                            for key, label, value, _ in scores],
            }],
        }]
    return header


def reported_scores(summary: dict, task) -> tuple[str | None, list[tuple[str, str, float, bool]]]:
    """The split a card reports (``test``, else ``validation``, else None) and its scores: (key, label, value,
    whether a fraction), values exactly as summary.json holds them."""
    test = summary.get("test")
    if isinstance(test, dict):
        return "test", [(key, label, test[key], fraction) for key, label, fraction in score_labels(task)
                        if is_number(test.get(key))]
    for key, score in VALIDATION_SCORES.items():
        if is_number(summary.get(key)):
            label, fraction = next((label, fraction) for name, label, fraction in score_labels(task) if name == score)
            return "validation", [(score, label, summary[key], fraction)]
    return None, []


def score_labels(task) -> list[tuple[str, str, bool]]:
    """(key, label, whether a fraction) of each score in ``SCORES``, labelled as the task names them; the token-exact
    match is left out where the task has no separate name for it (it is the value accuracy)."""
    labels = []
    for key, (label, fraction) in SCORES.items():
        if key == "value_accuracy":
            label = task.accuracy_label
        elif key == "equation_accuracy":
            label = getattr(task, "equation_label", None)
            if label is None:
                continue
        labels.append((key, label, fraction))
    return labels


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def shown_path(path: str, config: Config) -> str:
    """A data file as a card names it: relative to the data root when it lies under it (as the presets name the
    benchmark files), else as config.yaml has it."""
    root = data_root(config.data.root).expanduser().resolve()
    try:
        return Path(path).expanduser().resolve().relative_to(root).as_posix()
    except ValueError:
        return path


def named_data_files(config: Config) -> list[tuple[str, str]]:
    """(role, path as config.yaml has it) of every data file config.yaml names: train, valid, test, each extra
    training file and the candidates of the completion ranking loss."""
    data = config.data
    files = [(role, getattr(data, role)) for role in ("train", "valid", "test") if getattr(data, role)]
    files += [("train_extra", name.strip()) for name in (data.option("train_extra") or "").split(",") if name.strip()]
    files += [("candidates", data.option("candidates"))] if data.option("candidates") else []
    return files


def data_files(config: Config) -> list[tuple[str, str]]:
    """(role, file as shown) of every data file config.yaml names (``named_data_files``)."""
    return [(role, shown_path(path, config)) for role, path in named_data_files(config)]


def dataset_names(config: Config) -> list[str]:
    """The front matter's datasets: the data files config.yaml names, and ``generated`` when the task's generator
    made the training data."""
    names = [] if config.data.train else [GENERATED]
    return names + list(dict.fromkeys(shown for _, shown in data_files(config)))


def split_dataset(config: Config, split: str | None) -> str:
    """The dataset the reported split came from: its file, else the held-out part of the training file, else the
    generator."""
    data = config.data
    named = data.test if split == "test" else data.valid
    if named:
        return shown_path(named, config)
    if data.train:
        return f"{shown_path(data.train, config)} (held out)"
    return GENERATED


def what_it_is(config: Config, summary: dict, task) -> str:
    kind = "an equation classifier" if isinstance(task, EquationTask) else "a sequence-to-sequence model"
    parameters = summary.get("parameters")
    size = f" with {parameters:,} parameters" if is_number(parameters) else ""
    return (f"A `{config.model.name}` model{size}, {kind} trained with neuromath on the `{task.name}` "
            f"task: it {task.card.purpose}. config.yaml holds every setting of the run (the model's "
            f"sizes, the data, the training), and summary.json what training and testing measured.")


def usage(task) -> str:
    example = task.card.example
    vocabularies = vocabulary_files(task)
    named = " and ".join(f"`{name}`" for name in vocabularies)
    return (f"With neuromath installed (`pip install {DISTRIBUTION}`), in the folder that holds this card:\n\n"
            f"```bash\nneuromath solve . {shlex.quote(example)}\n```\n\n"
            f"```python\nimport neuromath\n\nmodel = neuromath.load(\".\")\nprint(model.solve({example!r}))\n```\n\n"
            "`neuromath serve .` answers the same over HTTP. The weights are `model.pt` in a run folder and "
            "`model.safetensors` in a folder written by `neuromath export`; both load as plain tensors, never as "
            f"code. {named} map{'s' if len(vocabularies) == 1 else ''} tokens to the model's ids.")


USAGE_HEADING = "## How to use it"


def hub_usage(task, repo_id: str) -> str:
    """How to use a model from the hub by its id ``repo_id``: the usage section of the card ``neuromath push``
    uploads."""
    example = task.card.example
    return (f"With neuromath and its `hub` extra installed (`{install_line('hub')}`):\n\n"
            f"```bash\nneuromath solve {repo_id} {shlex.quote(example)}\n```\n\n"
            f"```python\nimport neuromath\n\nmodel = neuromath.load(\"{repo_id}\")\nprint(model.solve({example!r}))\n"
            "```\n\n"
            f"`neuromath serve {repo_id}` answers the same over HTTP, and `{repo_id}@REVISION` names a branch, tag or "
            "commit. The first use downloads the model into the Hugging Face cache; later uses read it from there, "
            "also with `HF_HUB_OFFLINE=1`. neuromath loads only the files of an export and the weights only from "
            "`model.safetensors`: plain tensors, never code.")


def hub_card(card: str, task, repo_id: str) -> str:
    """The model card ``card`` with its usage section (``## How to use it``) saying how to use the model by its hub
    id ``repo_id``; a card without one gets the section after its title. The rest, the evidence, is kept as it is."""
    section = f"{USAGE_HEADING}\n\n{hub_usage(task, repo_id)}"
    start = card.find(f"\n{USAGE_HEADING}\n")
    if start >= 0:
        end = card.find("\n## ", start + 1)
        return card[:start + 1] + section + ("\n" + card[end:] if end >= 0 else "\n")
    title = card.find("\n# ")
    after = card.find("\n\n", title + 1) if title >= 0 else -1
    if after < 0:
        return card.rstrip("\n") + "\n\n" + section + "\n"
    return card[:after] + "\n\n" + section + card[after:]


def training(config: Config, summary: dict, command: str | None, digests: dict[str, str]) -> str:
    lines = [f"Command: `{command or NOT_RECORDED}` (seed {config.train.seed}).", "", "Data:", ""]
    test = summary.get("test") if isinstance(summary.get("test"), dict) else {}
    counts = {"train": summary.get("train_examples"), "valid": summary.get("valid_examples"), "test": test.get("n")}
    if not config.data.train:
        lines.append(f"- train: generated by the task's built-in generator (seed {config.data.generate_seed})")
    for (role, shown), (_, path) in zip(data_files(config), named_data_files(config)):
        digest = f"sha256 `{digests[path]}`" if path in digests else f"sha256 {NOT_RECORDED}"
        lines.append(f"- {role}: `{shown}` ({digest})")
    lines += ["", "Examples: " + ", ".join(f"{count:,} {role}" for role, count in counts.items()
                                           if is_number(count)) + ".", ""]
    stopped_by = summary.get("stopped_by")
    stopped = f", ended by {STOP_REASONS.get(stopped_by, stopped_by)}" if stopped_by else ""
    epochs, steps = summary.get("epochs"), summary.get("steps")
    if is_number(epochs):
        counted = f" ({steps:,} steps)" if is_number(steps) else ""
        lines.append(f"Training: {epochs} epoch{'' if epochs == 1 else 's'}{counted}{stopped}, precision "
                     f"{summary.get('precision', config.train.precision)}.")
    return "\n".join(lines)


def scores_text(summary: dict, split: str | None, scores: list[tuple[str, str, float, bool]]) -> str:
    if not scores:
        return "None: the run had neither a test split nor validation."
    shown = [(label, f"{100 * value:.1f}%" if fraction else f"{value:.1f}") for _, label, value, fraction in scores]
    test = summary.get("test") if split == "test" else None
    where = (f"on the {test['n']:,} examples of the test split, scored once with the best weights"
             if isinstance(test, dict) and is_number(test.get("n"))
             else "best validation score (the run had no test split)")
    if summary.get("protocol") == "literature" and test is not None:
        where += (", **literature protocol**: the kept epoch was the one with the best score on this same test split, "
                  "as MWPToolkit's and SVAMP's k-fold code choose it, so these scores are optimistic")
    lines = [f"The {split} scores ({where}):", "", "| score | value |", "| --- | ---: |"]
    lines += [f"| {label} | {value} |" for label, value in shown]
    by_depth = test.get("by_depth") if isinstance(test, dict) else None
    if isinstance(by_depth, dict) and by_depth:
        lines += ["", "By depth of the equation:", "", "| depth | n | accuracy | precision | recall |",
                  "| ---: | ---: | ---: | ---: | ---: |"]
        for depth, row in sorted(by_depth.items(), key=lambda item: int(item[0])):
            cells = [f"{100 * row[key]:.1f}%" if is_number(row.get(key)) else "–"
                     for key in ("accuracy", "precision", "recall")]
            lines.append(f"| {depth} | {row.get('n', '–')} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def environment_text(environment: dict | None, summary: dict) -> str:
    if not environment:
        return f"The software and machine of the training: {NOT_RECORDED} (no environment.json)."
    packages = environment.get("packages") or {}
    listed = ", ".join(f"{name} {version}" for name, version in packages.items() if version)
    cores = f" ({environment['cpu_count']} cores)" if environment.get("cpu_count") else ""
    commit = environment.get("commit") or "unknown (an installed package, or no git)"
    return "\n".join([
        f"- neuromath {environment.get('neuromath')}, commit {commit}",
        f"- Python {environment.get('python')} on {environment.get('platform')}",
        f"- {listed}",
        f"- CPU: {environment.get('cpu')}{cores}; GPU: {environment.get('gpu') or 'none'}; torch threads: "
        f"{environment.get('threads')}",
        "",
        "environment.json holds the same, as recorded when training ended.",
    ])


def data_in_words(config: Config) -> str:
    """The training data in a phrase: its files (data.train and data.train_extra), or the generator when it made the
    training examples."""
    names = [f"`{shown}`" for role, shown in data_files(config) if role in ("train", "train_extra")]
    if not config.data.train:
        names.insert(0, "examples made by the task's built-in generator")
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def limits(config: Config, summary: dict, task) -> str:
    items = [*COMMON_LIMITS[:1], f"Trained on {data_in_words(config)} only. {COMMON_LIMITS[1]}", *COMMON_LIMITS[2:],
             *task.card.limits]
    limit = limit_that_ended(summary)
    if limit is not None:
        items.append(f"Training was ended by {STOP_REASONS[limit]} before early stopping: validation may still have "
                     "been improving, so these are not the scores of a converged run.")
    return "\n".join(f"- {item}" for item in items)


def licence(config: Config) -> str:
    source = ("examples made by the task's built-in generator, which is part of neuromath (MIT)"
              if not config.data.train else
              "the data files named above, each under its corpus's own licence (neuromath's Data page says where "
              "each corpus comes from)")
    return ("neuromath's code is under the MIT licence. The weights were learned from the training data, so their "
            f"licence follows the data's; this model learned from {source}. Hence `license: other` in the header.")
