"""Recipes of ``results/``: what an experiment runs, on which data, and how its evidence is kept.

``results/<experiment>/recipe.yaml`` says, for one experiment:

- ``title``, ``page`` (the results page of the docs it feeds) and ``protocol`` (how a number was selected);
- ``data``: every file the runs read, relative to the data root (``neuromath.dataroot``), with its sha256; a file that
  is missing or differs stops ``results run`` before anything trains;
- ``setup``: commands that make data for the runs (``neuromath generate ...``), run once, writing under ``{work}``;
- ``runs``: name -> ``command`` (one ``neuromath`` command line; the runner adds ``--out``), ``model``, ``dataset``
  and optionally ``cost`` (a sentence on what it takes; the measured wall time is in the evidence anyway);
- ``left_out``: what the evidence does not keep (weights, logs), said once per experiment;
- ``published``: the papers' numbers with their own protocols, shown beside ours on the pages;
- ``tables``: the tables the results pages show (``tools.results_pages.pages``).

``results run RECIPE`` runs every run whose evidence is missing into a work folder (``{work}/<run>``, resumable: a
cross-validation reuses its finished folds and a training resumes from its last checkpoint) and copies the compact
evidence into ``results/<experiment>/runs/<run>/`` (``neuromath.results.evidence``). A run whose evidence is
there is skipped, so the command picks up where it stopped."""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from neuromath.errors import ConfigError, NeuromathError
from neuromath.safe_read import open_data, read_run_file

RECIPE_FILE = "recipe.yaml"
RUNS_DIR = "runs"  # results/<experiment>/runs/<run>: the evidence of each run
RECIPE_LIMIT = 1 << 20
RUN_SUBCOMMANDS = ("cv", "train", "import")  # the commands whose folders the evidence collector knows
TOP_KEYS = {"title", "page", "description", "protocol", "data", "setup", "runs", "left_out", "published", "tables",
            "compute"}
RUN_KEYS = {"command", "model", "dataset", "cost", "task", "then", "made_by"}


SAFE_ARGUMENT = re.compile(r"[\w@%+=:,./{}<>-]+")


def command_line(argv: list[str]) -> str:
    """A command as a reader types it: arguments quoted only where a shell needs it (``{work}`` stays bare)."""
    return " ".join(arg if SAFE_ARGUMENT.fullmatch(arg) else shlex.quote(arg) for arg in argv)


@dataclass
class Run:
    name: str
    argv: list[str]  # the neuromath arguments, without the program name and without --out
    model: str
    dataset: str
    task: str
    cost: str | None = None
    then: list[list[str]] = field(default_factory=list)  # commands run after it ({out}: its folder), e.g. evaluate
    # the command that made the evidence, where it was written before a preset took over its --set values: results
    # verify accepts it only while today's command gives the config every unit trained with
    made_by: list[str] | None = None

    @property
    def subcommand(self) -> str:
        """The neuromath command of the run: ``train``, ``cv`` or ``import``."""
        return self.argv[0]

    @property
    def protocol(self) -> str:
        """How the run's kept epochs are chosen: ``literature`` when its command says ``--protocol literature``
        (on the test split; labelled wherever its numbers are shown), else ``clean``."""
        for flag, value in zip(self.argv, self.argv[1:]):
            if flag == "--protocol":
                return value
        return "clean"

    @property
    def command(self) -> str:
        """The command line as a reader types it, with ``--out`` pointing at a runs folder."""
        return command_line(["neuromath", *self.argv, "--out", f"runs/{self.name}"])

    @property
    def evidence_command(self) -> str:
        """The command line the evidence must name: ``made_by`` where the recipe keeps one, else ``command``."""
        return command_line(["neuromath", *(self.made_by or self.argv), "--out", f"runs/{self.name}"])

    @property
    def commands(self) -> list[str]:
        """The run's command and the ones after it, as a reader types them."""
        after = [command_line(["neuromath", *argv]).replace("{out}", f"runs/{self.name}") for argv in self.then]
        return [self.command, *after]


@dataclass
class Recipe:
    path: Path
    title: str
    page: str
    protocol: str
    data: dict[str, str]  # path (relative to the data root, or {work}/...) -> sha256
    runs: dict[str, Run]
    setup: list[list[str]] = field(default_factory=list)
    left_out: str = ""
    description: str = ""
    compute: str = ""
    published: list[dict] = field(default_factory=list)
    tables: dict[str, dict] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def name(self) -> str:
        return self.folder.name

    def evidence_dir(self, run: str) -> Path:
        return self.folder / RUNS_DIR / run


def recipe_error(path: Path, where: str, reason: str) -> ConfigError:
    return ConfigError(f"{path}: {where}: {reason}")


def parse_command(path: Path, where: str, text: object, subcommands=RUN_SUBCOMMANDS) -> list[str]:
    """One ``neuromath ...`` command line as arguments without the program name; ``--out`` is the runner's."""
    if not isinstance(text, str) or not text.strip():
        raise recipe_error(path, where, "a command is one line of text starting with 'neuromath'")
    try:
        argv = shlex.split(text)
    except ValueError as error:
        raise recipe_error(path, where, f"cannot split the command: {error}") from None
    if argv[0] != "neuromath" or len(argv) < 2:
        raise recipe_error(path, where, f"a command starts with 'neuromath COMMAND', not {argv[0]!r}")
    if subcommands is not None and argv[1] not in subcommands:
        raise recipe_error(path, where, f"a run is a 'neuromath {' or '.join(subcommands)}' command, not {argv[1]!r}")
    if subcommands is not None and any(arg == "--out" or arg.startswith("--out=") for arg in argv):
        raise recipe_error(path, where, "leave --out out: the runner chooses each run's folder")
    return argv[1:]


def load_recipe(path: str | Path) -> Recipe:
    """Read and check a recipe (a folder holding recipe.yaml, or the file); errors name the file and the key."""
    path = Path(path)
    if path.is_dir():
        path = path / RECIPE_FILE
    if not path.is_file():
        raise NeuromathError(f"{path}: no such recipe (a results/<experiment> folder holds {RECIPE_FILE})")
    try:
        raw = yaml.safe_load(read_run_file(path, RECIPE_LIMIT))
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a recipe is a YAML mapping")
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        raise recipe_error(path, unknown[0], f"unknown key (known: {', '.join(sorted(TOP_KEYS))})")
    for key in ("title", "page", "protocol", "runs"):
        if not raw.get(key):
            raise recipe_error(path, key, "missing")
    data = raw.get("data") or {}
    if not isinstance(data, dict):
        raise recipe_error(path, "data", "a mapping of file -> sha256")
    for name, digest in data.items():
        if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise recipe_error(path, f"data.{name}", f"a sha256 is 64 lowercase hex digits, not {digest!r}")
    runs = {}
    if not isinstance(raw["runs"], dict):
        raise recipe_error(path, "runs", "a mapping of run name -> {command, model, dataset}")
    for name, spec in raw["runs"].items():
        where = f"runs.{name}"
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            raise recipe_error(path, where, "a run name is a plain folder name")
        if not isinstance(spec, dict):
            raise recipe_error(path, where, "a mapping with command, model and dataset")
        unknown = sorted(set(spec) - RUN_KEYS)
        if unknown:
            raise recipe_error(path, f"{where}.{unknown[0]}", f"unknown key (known: {', '.join(sorted(RUN_KEYS))})")
        for key in ("command", "model", "dataset", "task"):
            if not spec.get(key):
                raise recipe_error(path, f"{where}.{key}", "missing")
        then = spec.get("then") or []
        if not isinstance(then, list):
            raise recipe_error(path, f"{where}.then", "a list of neuromath commands run after the run")
        runs[name] = Run(name, parse_command(path, f"{where}.command", spec["command"]), str(spec["model"]),
                         str(spec["dataset"]), str(spec["task"]), spec.get("cost"),
                         [parse_command(path, f"{where}.then[{i}]", line, None) for i, line in enumerate(then)],
                         parse_command(path, f"{where}.made_by", spec["made_by"]) if "made_by" in spec else None)
    setup = [parse_command(path, f"setup[{i}]", line, None) for i, line in enumerate(raw.get("setup") or [])]
    text = {key: str(raw.get(key) or "").strip() for key in ("left_out", "description", "compute")}
    return Recipe(path, str(raw["title"]), str(raw["page"]), str(raw["protocol"]).strip(), dict(data), runs, setup,
                  text["left_out"], text["description"], text["compute"], list(raw.get("published") or []),
                  dict(raw.get("tables") or {}))


def find_recipes(results: str | Path) -> list[Recipe]:
    """Every recipe under a results folder, in the order of their folder names."""
    results = Path(results)
    if not results.is_dir():
        raise NeuromathError(f"{results}: no results folder")
    return [load_recipe(path) for path in sorted(results.glob(f"*/{RECIPE_FILE}"))]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open_data(path) as stream:  # a FIFO or a device: refused before it is read
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def expand(text: str, work: Path, out: Path | None = None) -> str:
    text = text.replace("{work}", str(work))
    return text.replace("{out}", str(out)) if out is not None else text


def pinned_file(recipe: Recipe, name: str, root: Path, work: Path) -> Path:
    """The recipe's data file ``name`` (under ``{work}`` when its setup writes it, else under the data root ``root``),
    checked against the sha256 the recipe pins: a missing file (with the setup commands that make a generated one)
    or a different digest is an error naming both."""
    generated = name.startswith("{work}")
    path = Path(expand(name, work)) if generated else root / name
    if not path.is_file():
        where = f"data root {root}; set $NEUROMATH_DATA or see docs/data.md"
        if generated and recipe.setup:
            where = "the recipe's setup makes it:\n  " + "\n  ".join(
                expand(command_line(["neuromath", *argv]), work) for argv in recipe.setup)
        raise NeuromathError(f"{recipe.path}: data file {name} is not at {path} ({where})")
    digest = recipe.data.get(name)
    if digest is None:
        raise NeuromathError(f"{recipe.path}: data file {name} has no sha256 in the recipe")
    actual = sha256_of(path)
    if actual != digest:
        raise NeuromathError(f"{recipe.path}: data file {path} has sha256 {actual}, the recipe says {digest}: "
                             f"not the data the evidence was made from")
    return path


def check_data(recipe: Recipe, root: Path, work: Path, generated: bool = False) -> list[str]:
    """Check the recipe's data files against their sha256: those under the data root (``generated`` False) or those
    its setup writes under ``{work}`` (``generated`` True). Returns the files checked; a missing file or a different
    digest is an error naming both, raised before anything trains."""
    checked = [name for name in recipe.data if name.startswith("{work}") == generated]
    for name in checked:
        pinned_file(recipe, name, root, work)
    return checked
