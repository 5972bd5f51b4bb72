"""The README and the documentation site: short, free of working history, and naming only presets that exist.
(`.ci/run` builds the site with `mkdocs build --strict`, which fails on a broken link.)"""

import re
from pathlib import Path

import pytest

from neuromath.config_presets import preset_names

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
TEXTS = [README, *PAGES, ROOT / "CHANGELOG.md"]

# a path of one machine, a session's diary, a commit as a reference point, numbers still to come
HISTORY = re.compile(r"/tmp/|/work/|\.\./shared|\bstops? \d|\bcommit [0-9a-f]{7}|not measured yet|no result yet|"
                     r"\bissue #?\d|\bsession \d", re.IGNORECASE)
DEMO = "python3 -m venv .venv && . .venv/bin/activate && pip install -c constraints.txt -e . && neuromath demo"
TESTS = ('python3 -m venv .venv && . .venv/bin/activate && pip install -q -c constraints.txt -e ".[dev]" && '
         "ruff check && python -m pytest -q -n auto")


def test_the_readme_is_short_and_holds_both_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    lines = text.splitlines()
    assert DEMO in lines and TESTS in lines
    assert TESTS in (ROOT / ".ci" / "run").read_text(encoding="utf-8")  # CI runs what the README says


def test_the_site_has_its_pages():
    names = {page.relative_to(ROOT / "docs").as_posix() for page in PAGES}
    for page in ("index.md", "getting-started.md", "training.md", "data.md", "evaluate.md", "solve-and-serve.md",
                 "safety.md", "design.md", "reference/cli.md", "reference/api.md", "results/index.md",
                 "investigations/index.md", "guides/word-problems.md", "guides/mathematics-dataset.md",
                 "guides/symbolic.md", "guides/identities.md"):
        assert page in names, page


@pytest.mark.parametrize("path", TEXTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_no_working_history_or_machine_paths(path):
    found = [(number, line.strip()) for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if HISTORY.search(line)]
    assert not found, f"{path.relative_to(ROOT)}: {found[:5]}"


@pytest.mark.parametrize("path", TEXTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_preset_named_exists(path):
    known = set(preset_names())
    named = set(re.findall(r"--config ([a-z_]+/[a-z_0-9]+)(?![\w./])", path.read_text(encoding="utf-8")))  # no files
    named |= set(re.findall(r"`((?:word_problems|identities|symbolic|mathematics_dataset)/[a-z_0-9]+)`",
                            path.read_text(encoding="utf-8")))
    assert named <= known, sorted(named - known)


def test_the_history_pattern_catches_what_it_should():
    for line in ("run from /tmp/runs", "stop 41-45", "since commit 6486a0a", "../shared/data/mawps-cv",
                 "numbers: not measured yet"):
        assert HISTORY.search(line), line
    for line in ("each process stops at epoch 3", "data.root, else $NEUROMATH_DATA", "a commit of the run"):
        assert not HISTORY.search(line), line
