"""The README and the documentation site: short, free of working history, and naming only presets that exist.
(`.ci/run` builds the site with `mkdocs build --strict`, which fails on a broken link.)"""

import dataclasses
import re
import sys
from pathlib import Path

import pytest

from neuromath.config.presets import preset_names

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
TEXTS = [README, *PAGES, ROOT / "CHANGELOG.md"]
TUTORIALS = ("solve", "train-graph2tree", "own-data", "compare", "serve")
CELL_WORDS = 30  # a table cell holds a phrase or a short sentence, never a paragraph
METAPHORS = re.compile(r"\brooms?\b", re.IGNORECASE)  # the code's subpackages are subpackages

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
                 "safety.md", "design.md", "reference/cli.md", "reference/api.md", "reference/config.md",
                 "results/index.md", "guides/word-problems.md", "guides/mathematics-dataset.md", "guides/symbolic.md",
                 "guides/identities.md", *(f"tutorials/{name}.md" for name in TUTORIALS)):
        assert page in names, page
    assert not any(name.startswith("investigations/") for name in names)  # notes are evidence or results, not pages


def test_the_nav_opens_with_the_tutorials():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1]
    pages = re.findall(r"([\w/.-]+\.md)\s*$", nav, re.MULTILINE)
    assert pages[:1 + len(TUTORIALS)] == ["index.md", *(f"tutorials/{name}.md" for name in TUTORIALS)]


def test_the_readme_links_are_absolute_and_lead_to_pages_that_exist():
    """The README is the package's long description on the index, where a relative link leads nowhere."""
    site = re.search(r"^site_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE).group(1)
    repo = re.search(r"^repo_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE).group(1)
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text(encoding="utf-8"))
    assert links
    for link in links:
        address = link.split("#")[0]
        if address.startswith(site):
            page = address[len(site):].rstrip("/")
            assert (ROOT / "docs" / f"{page or 'index'}.md").is_file() or \
                (ROOT / "docs" / page / "index.md").is_file(), link
        else:
            assert address.startswith(repo + "/blob/main/"), link
            assert (ROOT / address[len(repo + "/blob/main/"):]).is_file(), link


def test_no_results_table_cell_holds_a_paragraph():
    for page in sorted((ROOT / "docs" / "results").glob("*.md")):
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("|"):
                longest = max(len(cell.split()) for cell in line.strip().strip("|").split("|"))
                assert longest <= CELL_WORDS, f"{page.name}:{number}: a cell of {longest} words"


def test_the_config_reference_lists_every_key():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        from config_reference import config_reference
    finally:
        sys.path.pop(0)
    from neuromath.config import Config, DecodeConfig, OptimConfig, TrainConfig
    from neuromath.config.models import ModelConfig
    from neuromath.config.tasks import DataConfig

    text = config_reference()
    assert dataclasses.fields(Config)
    for section in (DataConfig, ModelConfig, OptimConfig, TrainConfig, DecodeConfig):
        classes = section.members.values() if "members" in section.__dict__ else [section]
        for klass in classes:
            for item in dataclasses.fields(klass):
                assert f"| `{item.name}` |" in text, (section.section, item.name)
    assert "did you mean train.max_epochs?" in (ROOT / "docs" / "reference" / "config.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", TEXTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_no_working_history_or_machine_paths(path):
    found = [(number, line.strip()) for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if HISTORY.search(line)]
    assert not found, f"{path.relative_to(ROOT)}: {found[:5]}"


@pytest.mark.parametrize("path", TEXTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_no_private_metaphors(path):
    found = [number for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if METAPHORS.search(line)]
    assert not found, f"{path.relative_to(ROOT)}: lines {found[:5]}"


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
