"""The package's layout (docs/design.md): every module imports in a fresh interpreter, no import circle,
and imports only go down the layers."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "neuromath"

# Top to bottom; a module may import from its own subpackage or from a lower layer. Subpackages of one layer do not
# import each other, except the pairs in SIBLING_IMPORTS.
LAYERS = (
    ("__main__",),  # python -m neuromath: the command line
    ("cli",),
    ("experiments",),  # what a user runs: train, cv, sweep, evaluate, compare, analyze, demo
    ("sharing",),  # what travels with a trained model: its card, export, import of released weights
    ("results",),  # the evidence behind `neuromath results run` and `verify`
    ("serve",),
    ("api",),
    ("training", "decoding", "evaluation"),
    ("models",),
    ("nn",),
    ("tasks",),
    ("text",),
    ("expr",),
    ("config",),  # typed configs, read and written as files
    ("dataroot",),  # where data paths resolve; a missing corpus names the command that fetches it
    ("registry", "fileio", "timelimit", "extras", "environment", "corpora"),
    ("safe_read",),  # every reader of a file someone else may have written
    ("errors",),
)
SIBLING_IMPORTS = {
    ("training", "decoding"),  # validation decodes greedily
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The package module an imported name refers to (``neuromath.tasks.word_problems`` for a name defined in it)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(modules: dict[str, Path], top_level_only: bool = False) -> dict[str, set[str]]:
    """module -> the package modules it imports by name (parent packages Python imports on the way are not edges):
    ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = tree.body if top_level_only else list(ast.walk(tree))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in nodes:
            if isinstance(node, ast.Import):
                targets.update(resolve(alias.name, modules) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{anchor}.{base}" if base else anchor
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    targets.add(submodule if submodule in modules else resolve(base, modules))
        graph[name] = {target for target in targets if target and target.startswith("neuromath") and target != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, iterators = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while path:
            child = next(iterators[-1], None)
            if child is None:
                state[path.pop()] = 2
                iterators.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                iterators.append(iter(sorted(graph.get(child, ()))))
    return None


def subpackage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_of(module: str) -> int | None:
    for index, names in enumerate(LAYERS):
        if subpackage(module) in names:
            return index
    return None


def test_find_cycle_finds_a_circle_and_only_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) in (["a", "b", "c", "a"],)
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"a"}}) == ["a", "a"]


def test_import_graph_reads_absolute_relative_and_function_level_imports(tmp_path):
    root = tmp_path / "neuromath"
    (root / "tasks").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "errors.py").write_text("")
    (root / "tasks" / "__init__.py").write_text("from neuromath.tasks import base\n")
    (root / "tasks" / "base.py").write_text("from ..errors import X\n\ndef f():\n    from neuromath.tasks import get\n")
    modules = {module_name_in(path, tmp_path): path for path in sorted(root.rglob("*.py"))}
    graph = import_graph(modules)
    assert graph["neuromath.tasks"] == {"neuromath.tasks.base"}
    assert graph["neuromath.tasks.base"] == {"neuromath.errors", "neuromath.tasks"}
    assert find_cycle(graph) == ["neuromath.tasks", "neuromath.tasks.base", "neuromath.tasks"]
    assert import_graph(modules, top_level_only=True)["neuromath.tasks.base"] == {"neuromath.errors"}


def module_name_in(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_circle_anywhere_in_the_package():
    cycle = find_cycle(import_graph(all_modules()))  # imports inside functions count too
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_imports_go_down_the_layers():
    wrong = []
    for module, targets in import_graph(all_modules()).items():
        here = layer_of(module)
        for target in targets:
            there = layer_of(target)
            if here is None or there is None or subpackage(module) == subpackage(target):
                continue
            if there < here or (there == here and (subpackage(module), subpackage(target)) not in SIBLING_IMPORTS):
                wrong.append(f"{module} -> {target}")
    assert not wrong, "imports against the layers:\n" + "\n".join(sorted(wrong))


def test_every_subpackage_has_a_layer():
    found = {subpackage(name) for name in all_modules()} - {""}
    assert found <= {name for layer in LAYERS for name in layer}


@pytest.mark.slow
@pytest.mark.parametrize("order", ["sorted", "reversed"])
def test_every_module_imports_in_a_fresh_interpreter(order):
    names = sorted(all_modules())
    if order == "reversed":
        names.reverse()
    script = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_cli_starts_without_torch():
    """The command modules import torch and lightning inside their handlers: `neuromath --help` and the data
    commands do not pay seconds of start-up for them."""
    script = "import sys, neuromath.cli; print(sorted(m for m in ('torch', 'lightning') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]"


def test_using_trained_runs_does_not_load_lightning():
    """Only training needs Lightning (seconds to import): solve, evaluate, complete and compare load runs without it."""
    script = ("import sys, neuromath.api, neuromath.experiments.evaluate_runs, neuromath.experiments.paired_compare, "
              "neuromath.cli.complete; print('lightning' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "False"


def test_module_names_are_unique_outside_the_command_line():
    """A module's file name says what it holds, once: two ``evaluate.py`` in different subpackages mean different things
    and collide in tracebacks, coverage and test names. The modules of ``cli/`` are named after the command they add
    (``cli/config.py`` adds ``neuromath config``), so only they may repeat a name found elsewhere."""
    seen: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in ("__init__.py", "__main__.py") or path.parent.name == "cli":
            continue
        seen.setdefault(path.name, []).append(str(path.relative_to(PACKAGE)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


def test_test_files_have_unique_names():
    """pytest's default import mode puts each test folder on sys.path, so two test files of one name would shadow
    each other; unique names keep it (and no importlib mode is needed)."""
    tests = Path(__file__).resolve().parent
    names = [path.name for path in tests.rglob("test_*.py")]
    assert sorted({name for name in names if names.count(name) > 1}) == []


def test_command_modules_are_named_after_their_commands():
    """Each ``cli/<name>.py`` but the shared helpers adds the command ``neuromath <name>`` (``imports`` adds
    ``import``, a Python keyword)."""
    from neuromath.cli import build_parser

    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command").choices
    modules = {path.stem for path in (PACKAGE / "cli").glob("*.py")} - {"__init__", "common"}
    assert {name if name != "imports" else "import" for name in modules} <= set(commands)


def test_no_tracker_history_in_code_or_presets():
    """Docstrings cite papers and equations, not the numbers of an issue tracker that is not in the repository, and
    preset comments carry no measured scores (those live in results/, written by ``tools.results_pages``)."""
    import re

    root = PACKAGE.parent
    issue = re.compile(r"\b[Ii]ssues? #?\d+")
    score = re.compile(r"#.*(\d+\.\d ± |\b(validation|valid|test|accuracy) \d+\.\d)")
    found = []
    for folder in ("neuromath", "tests", "benchmarks"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".py", ".yaml", ".md") or path == Path(__file__).resolve():
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if issue.search(line) or (path.suffix == ".yaml" and score.search(line)):
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert found == []


def test_no_module_is_over_500_lines_but_data_tables():
    """A module that grows past 500 lines hides a second concern; the one exception is a data table (the word-problem
    templates are a list of problem shapes, not logic)."""
    tables = {"tasks/word_problems/templates.py"}
    long = {str(path.relative_to(PACKAGE)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 500}
    assert set(long) <= tables, long
