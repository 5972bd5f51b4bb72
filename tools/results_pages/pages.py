"""The results pages of the docs, written from ``results/`` (``python -m tools.results_pages build``).

A page's prose lives in ``results/pages/<page>.md``; its numbers come only from evidence, through directives on a
line of their own:

- ``{{ table EXPERIMENT.TABLE }}``: a table the recipe declares under ``tables``;
- ``{{ recipe EXPERIMENT }}``: how the experiment was made: its commands, data files with sha256, protocol, what the
  evidence leaves out, and each run's measured compute;
- ``{{ published EXPERIMENT }}``: the papers' numbers the recipe lists, with their own protocols;
- ``{{ curve EXPERIMENT.RUN METRIC }}``: a plot of a validation metric per epoch of every fold or seed (SVG);
- ``{{ leaderboard }}``: task x model over every recipe;
- ``{{ gpu_check FILE [FILE ...] [PART ...] }}``: JSONs of ``benchmarks/gpu_check.py`` under ``results/`` as
  tables (parts: see ``gpu_pages``);
- ``{{ decode_compile FILE [PART ...] }}``: a JSON of ``benchmarks/decode_compile.py`` under ``results/`` as tables;
- ``{{ robustness DIR [pooled] }}``: the ``neuromath evaluate --robustness`` reports kept in ``DIR`` under
  ``results/`` (``pooled``: each row's folds pooled, in two tables of five columns);

and inline, ``{{ value EXPERIMENT.RUN.METRIC }}`` (mean ± std in the page's units), ``{{ runs METRIC
EXPERIMENT.RUN ... }}`` (mean ± std over whole runs) and ``{{ paired EXPERIMENT.RUN EXPERIMENT.RUN }}``
(the second run against the first on the same test problems, as ``neuromath compare`` pairs them). A run without
evidence shows "recipe only, not re-run here" and no number.
``results/pages/readme-table.md`` fills the block of the repository's
README between ``<!-- results:begin -->`` and ``<!-- results:end -->``.

A table in a recipe:

    tables:
      main:
        metrics: [value_accuracy, equation_accuracy]    # rows of runs: one cell per run, "a / b"
        columns: [MAWPS, ASDiv-A]
        rows: {"`graph2tree`": [graph2tree-mawps, graph2tree-asdiv]}
      depths:
        columns: {test: accuracy, "depth 8": depth8}    # rows of one run: one cell per metric
        rows: {"`tree_lstm`": tree_lstm-paper}
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from neuromath.errors import NeuromathError
from neuromath.evaluation.scoring import counted
from neuromath.evaluation.spread import mean_std
from neuromath.fileio import write_text_atomic
from neuromath.results.evidence import Evidence, metric_values, read_evidence
from neuromath.results.recipe_configs import command_settings
from neuromath.results.recipes import Recipe, command_line, find_recipes
from neuromath.safe_read import open_data
from tools.results_pages.gpu_pages import render_decode_compile, render_gpu_check
from tools.results_pages.paired_pages import paired_line, render_robustness

PAGES_DIR = "pages"  # results/pages: the page templates
DOCS_RESULTS = Path("results")  # under the docs folder
README_BEGIN, README_END = "<!-- results:begin -->", "<!-- results:end -->"
README_TEMPLATE = "readme-table.md"  # results/pages/readme-table.md: the README's block, not a docs page
RECIPE_ONLY = "recipe only, not re-run here"
HEADER = ("<!-- written by `python -m tools.results_pages build` from results/{source}: "
          "edit that file, not this one -->\n\n")
DIRECTIVE = re.compile(
    r"\{\{\s*(table|recipe|published|curve|leaderboard|value|runs|cpu|paired|robustness|gpu_check|decode_compile)\b\s*([^}]*)"
    r"\}\}")
PRIMARY = {"word_problems": "value_accuracy", "identities": "accuracy", "symbolic": "dedup verified@10"}
PRIMARY_OF_SUBCOMMAND = {"import": "top1"}  # an imported model is scored by completion
TASK_TITLES = {"word_problems": "Word problems", "identities": "Identities", "symbolic": "Symbolic integration",
               "mathematics_dataset": "Mathematics Dataset"}


def is_count(metric: str) -> bool:
    return metric in ("epochs", "steps")


def format_metric(evidence: Evidence | None, metric: str, digits: int = 1) -> str:
    """``85.7 ± 1.5`` (percent, mean ± sample std over folds or seeds), ``85.7`` for one, or the recipe-only mark."""
    if evidence is None:
        return RECIPE_ONLY
    values = metric_values(evidence, metric)
    if not values:
        return "n/a"
    spread = mean_std(values)
    mean, std = spread["mean"], (spread["std"] if len(values) > 1 else None)
    if is_count(metric):
        return f"{mean:.0f}"
    if metric == "wall_seconds":  # the training's own wall time (summary.json), without the test
        return duration(mean)
    if metric == "mrr":
        return f"{mean:.3f}" if std is None else f"{mean:.3f} ± {std:.3f}"
    if metric == "seconds":
        return f"{mean:.1f} s"
    scale = 100.0
    text = f"{scale * mean:.{digits}f}"
    return text if std is None else f"{text} ± {scale * std:.{digits}f}"


LITERATURE = "literature"  # a run whose epochs were chosen on its test split (Run.protocol): labelled wherever shown
LITERATURE_SELECTION = "Selected on the test fold (literature protocol)"


def labelled(text: str, run, label: str = LITERATURE) -> str:
    """A number of a literature-protocol run carries ``label`` beside it, on every page and in every table."""
    if run.protocol != LITERATURE or text in (RECIPE_ONLY, "n/a", ""):
        return text
    return f"{text} ({label})"


def mean_of(evidence: Evidence, metric: str) -> float | None:
    values = metric_values(evidence, metric)
    return mean_std(values)["mean"] if values else None


PRECISION_WORDS = {"32-true": "float32", "bf16-mixed": "bf16", "16-mixed": "float16", "auto": "precision auto"}


def precision_label(overrides: list[str]) -> str:
    """What a leaderboard row adds to its preset's name: `` (float32)`` and the like where the run's command sets
    ``train.precision`` (a run setting, not part of the preset; the last one counts), else nothing."""
    values = [value.strip() for key, _, value in (override.partition("=") for override in overrides)
              if key.strip() == "train.precision"]
    return f" ({PRECISION_WORDS.get(values[-1], values[-1])})" if values else ""


class Book:
    """Every recipe of a results folder, and the evidence of their runs, read once."""

    def __init__(self, results: str | Path):
        self.results = Path(results)
        self.recipes = {recipe.name: recipe for recipe in find_recipes(self.results)}
        self.evidence = {(name, run): read_evidence(recipe, recipe.runs[run])
                         for name, recipe in self.recipes.items() for run in recipe.runs}
        self.images: dict[str, str] = {}  # file name -> SVG text, written beside the pages

    def recipe(self, name: str, where: str) -> Recipe:
        if name not in self.recipes:
            raise NeuromathError(f"{where}: no experiment {name!r} in {self.results} "
                                 f"(known: {', '.join(self.recipes)})")
        return self.recipes[name]

    def run_evidence(self, recipe: Recipe, run: str, where: str) -> Evidence | None:
        if run not in recipe.runs:
            raise NeuromathError(f"{where}: {recipe.name} has no run {run!r} (runs: {', '.join(recipe.runs)})")
        return self.evidence[(recipe.name, run)]

    def named_evidence(self, name: str, where: str) -> Evidence | None:
        """The evidence of ``EXPERIMENT.RUN`` (None for a run with a recipe only); the caller checked the form."""
        experiment, run = name.split(".")
        return self.run_evidence(self.recipe(experiment, where), run, where)

    # -- directives ---------------------------------------------------------------------------------------------------

    def table(self, argument: str, where: str) -> str:
        experiment, _, name = argument.partition(".")
        recipe = self.recipe(experiment, where)
        spec = recipe.tables.get(name)
        if not isinstance(spec, dict) or "rows" not in spec or "columns" not in spec:
            raise NeuromathError(f"{where}: {recipe.path} declares no table {name!r} with rows and columns")
        columns = spec["columns"]
        header = [spec.get("corner", "model"), *(columns if isinstance(columns, list) else list(columns))]
        lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
        for label, runs in spec["rows"].items():
            if isinstance(runs, list):  # one run per column, the metrics of each joined by " / "
                cells = []
                for run in runs:
                    evidence = self.run_evidence(recipe, run, where)
                    if evidence is None:
                        cells.append(RECIPE_ONLY)
                    else:
                        text = " / ".join(format_metric(evidence, m) for m in spec.get("metrics", []))
                        cells.append(labelled(text, recipe.runs[run]))
            else:  # one run, one metric per column
                evidence = self.run_evidence(recipe, runs, where)
                cells = [labelled(format_metric(evidence, metric), recipe.runs[runs]) if evidence is not None else ""
                         for metric in columns.values()]
                if evidence is None:
                    cells[0] = RECIPE_ONLY
            lines.append("| " + " | ".join([label, *cells]) + " |")
        note = spec.get("note")
        return "\n".join(lines) + (f"\n\n{note.strip()}" if note else "")

    def value(self, argument: str, where: str) -> str:
        parts = argument.split(".")
        if len(parts) != 3:
            raise NeuromathError(f"{where}: value takes EXPERIMENT.RUN.METRIC, not {argument!r}")
        recipe = self.recipe(parts[0], where)
        evidence = self.run_evidence(recipe, parts[1], where)
        text = format_metric(evidence, parts[2])
        if evidence is None:
            return f"({RECIPE_ONLY})"
        text = text if is_count(parts[2]) or parts[2] == "wall_seconds" or text == "n/a" else f"{text} %"
        return labelled(text, recipe.runs[parts[1]], f"{LITERATURE} protocol")

    def runs(self, argument: str, where: str) -> str:
        """``{{ runs METRIC EXPERIMENT.RUN EXPERIMENT.RUN ... }}``: mean ± sample std of the runs' own means of a
        metric, over runs that repeat one setting with other seeds or code (each run counts once)."""
        metric, *names = argument.split()
        if len(names) < 2 or any(len(name.split(".")) != 2 for name in names):
            raise NeuromathError(f"{where}: runs takes METRIC EXPERIMENT.RUN EXPERIMENT.RUN ..., not {argument!r}")
        means = []
        for name in names:
            evidence = self.named_evidence(name, where)
            mean = None if evidence is None else mean_of(evidence, metric)
            if mean is None:
                raise NeuromathError(f"{where}: {name} has no evidence of {metric}")
            means.append(mean)
        spread = mean_std(means)
        return f"{100 * spread['mean']:.1f} ± {100 * spread['std']:.1f} % ({len(means)} runs)"

    def cpu(self, argument: str, where: str) -> str:
        """``{{ cpu EXPERIMENT.RUN }}``: the CPU time its evidence took to train (every fold or seed, by threads)."""
        if len(argument.strip().split(".")) != 2:
            raise NeuromathError(f"{where}: cpu takes EXPERIMENT.RUN, not {argument!r}")
        evidence = self.named_evidence(argument.strip(), where)
        seconds = None if evidence is None else cpu_seconds(evidence)
        return "not recorded" if seconds is None else duration(seconds)

    def paired(self, argument: str, where: str) -> str:
        words = argument.split()
        names, metric = words[:2], " ".join(words[2:]) or None  # a beam metric: runs scored by evaluate --beams
        if len(names) != 2 or any(len(name.split(".")) != 2 for name in names):
            raise NeuromathError(f"{where}: paired takes EXPERIMENT.RUN EXPERIMENT.RUN [BEAM METRIC], not "
                                 f"{argument!r}")
        runs = [self.named_evidence(name, where) for name in names]
        if any(evidence is None for evidence in runs):
            return f"({RECIPE_ONLY})"
        return paired_line(runs[0], runs[1], where, metric)

    def recipe_block(self, argument: str, where: str) -> str:
        recipe = self.recipe(argument, where)
        first = next(iter(recipe.runs.values()))
        lines = [f"**{recipe.title}.** {recipe.description}".rstrip(), "", "```bash",
                 f"neuromath results run results/{recipe.name}   # every run: {counted(len(recipe.runs), 'run')}",
                 f"# or one run, {first.name}:"]
        lines += [command_line(["neuromath", *argv]) for argv in recipe.setup]
        lines += [*first.commands, "```", ""]
        if recipe.setup:
            lines += ["`{work}` is the folder that the setup commands write to (`results run --work`).", ""]
        if len(recipe.runs) > 1:
            lines += [f"The other runs' commands are in `results/{recipe.name}/recipe.yaml`.", ""]
        lines.append(f"- **Protocol.** {recipe.protocol}")
        if recipe.compute:
            lines.append(f"- **Compute.** {recipe.compute}")
        lines.append(f"- **Recipe and evidence.** `results/{recipe.name}/` (`neuromath results run "
                     f"results/{recipe.name}` re-creates it; `neuromath results verify` checks it)."
                     + (f" Left out: {recipe.left_out}" if recipe.left_out else ""))
        measured, only, seconds = [], [], []
        for name, run in recipe.runs.items():
            evidence = self.evidence[(recipe.name, name)]
            if evidence is None:
                only.append(f"`{name}`" + (f" ({run.cost})" if run.cost else ""))
            else:
                measured.append(f"`{name}`: {describe_compute(evidence)}")
                seconds.append(cpu_seconds(evidence))
        if measured and None not in seconds and len(seconds) > 1:  # each run's time is on the leaderboard
            lines.append(f"- **Measured cost.** {duration(sum(seconds))} CPU for {counted(len(seconds), 'run')}.")
        elif measured:
            lines.append("- **Measured cost.** " + "; ".join(measured) + ".")
        if only:
            lines.append(f"- **{RECIPE_ONLY.capitalize()}:** " + ", ".join(only) + ".")
        if recipe.data:  # the files and their digests are in the recipe, which verify checks them against
            lines.append(f"- **Data.** {counted(len(recipe.data), 'file')}, each pinned by its sha256 in "
                         f"`results/{recipe.name}/recipe.yaml`.")
        return "\n".join(lines)

    def published(self, argument: str, where: str) -> str:
        recipe = self.recipe(argument, where)
        if not recipe.published:
            return ""
        lines = ["| model | data | published | source | their protocol |", "| --- | --- | ---: | --- | --- |"]
        for entry in recipe.published:
            lines.append(f"| `{entry.get('model')}` | {entry.get('dataset')} | {entry.get('value')} | "
                         f"{entry.get('source')} | {entry.get('protocol')} |")
        return "\n".join(lines)

    def curve(self, argument: str, where: str) -> str:
        target, _, metric = argument.strip().partition(" ")
        experiment, _, run = target.partition(".")
        recipe = self.recipe(experiment, where)
        evidence = self.run_evidence(recipe, run, where)
        metric = metric.strip() or "val_value_accuracy"
        if evidence is None:
            return f"*{run}: {RECIPE_ONLY}; no curve.*"
        series = {}
        for unit in sorted(evidence.units):
            path = evidence.folders[unit] / "metrics.csv"
            if path.is_file():
                series[unit] = epoch_series(path, metric)
        series = {name: points for name, points in series.items() if points}
        if not series:
            return f"*{run}: no {metric} per epoch in the evidence.*"
        name = f"{experiment}-{run}-{metric}.svg"
        self.images[name] = line_chart(series, metric)
        return f"![{metric} per epoch, {run}](images/{name})"

    def leaderboard(self, argument: str, where: str) -> str:
        """A table of five columns per task, best score first, then where each row's evidence lies."""
        rows, missing = [], {}
        for name, recipe in self.recipes.items():
            selection = re.split(r"[.:]", recipe.protocol, maxsplit=1)[0]
            for run in recipe.runs.values():
                evidence = self.evidence[(name, run.name)]
                if evidence is None:
                    missing.setdefault(name, []).append(run)
                    continue
                metric = PRIMARY_OF_SUBCOMMAND.get(run.subcommand) or PRIMARY.get(run.task, "value_accuracy")
                preset, overrides = command_settings(run.argv)
                chosen = (LITERATURE_SELECTION if run.protocol == LITERATURE else selection) + self.protocol_gap(
                    recipe, run, metric)
                seconds = cpu_seconds(evidence)
                sets = len(evidence.units)
                score = f"{format_metric(evidence, metric)} ({metric.replace('_', ' ')}" + (
                    f", {counted(sets, 'fold' if run.subcommand == 'cv' else 'seed')})" if sets > 1 else ")")
                label = f"`{preset or run.model}`" + precision_label(overrides)
                rows.append((run.task, run.dataset, label, score, chosen,
                             "not recorded" if seconds is None else f"{duration(seconds)} CPU",
                             f"`{name}/{run.name}`"))
        rows.sort(key=lambda row: (row[0], row[1], -leading_number(row[3])))
        lines: list[str] = []
        for task in dict.fromkeys(row[0] for row in rows):
            lines += [f"### {TASK_TITLES.get(task, task)}", "", "| data | preset | score | selection | "
                      "training time |", "| --- | --- | ---: | --- | --- |"]
            lines += ["| " + " | ".join(row[1:6]) + " |" for row in rows if row[0] == task]
            lines.append("")
        lines += ["### Evidence of each row", "", "`neuromath results run results/EXPERIMENT` re-creates a row; "
                  "its evidence is `results/EXPERIMENT/runs/RUN/`. In the order of the tables above:", "",
                  "| preset | experiment/run |", "| --- | --- |"]
        lines += [f"| {row[2]} | {row[6]} |" for row in rows]
        if missing:
            lines += ["", f"### {RECIPE_ONLY.capitalize()}", "", "No number until someone runs them.", "",
                      "| experiment | runs | what one run takes |", "| --- | --- | --- |"]
            for name, runs in missing.items():
                costs = sorted({run.cost for run in runs if run.cost})
                lines.append(f"| `{name}` | {', '.join(f'`{run.name}`' for run in runs)} | {'; '.join(costs)} |")
        published = [(recipe, entry) for recipe in self.recipes.values() for entry in recipe.published]
        if published:
            lines += ["", "### Published numbers", "", "Each with the protocol of its source, not ours.", "",
                      "| data | model | published | source | their protocol |", "| --- | --- | ---: | --- | --- |"]
            for recipe, entry in published:
                lines.append(f"| {entry.get('dataset')} | `{entry.get('model')}` | {entry.get('value')} | "
                             f"{entry.get('source')} | {entry.get('protocol')} |")
        return "\n".join(lines).rstrip()

    def protocol_gap(self, recipe: Recipe, run, metric: str) -> str:
        """"; literature +1.2" (a clean run) or "; +1.2 over clean" (a literature one): the points between a run and
        its twin under the other protocol (same task, data and preset in the same recipe), where both have evidence."""
        preset = command_settings(run.argv)[0]
        twin = next((other for other in recipe.runs.values() if other.protocol != run.protocol
                     and (other.task, other.dataset, command_settings(other.argv)[0]) == (run.task, run.dataset,
                                                                                          preset)), None)
        if twin is None or self.evidence[(recipe.name, twin.name)] is None:
            return ""
        ours, theirs = (mean_of(self.evidence[(recipe.name, name)], metric) for name in (run.name, twin.name))
        if ours is None or theirs is None:
            return ""
        literature, clean = (ours, theirs) if run.protocol == LITERATURE else (theirs, ours)
        gap = f"{100 * (literature - clean):+.1f}"
        return f"; {gap} over clean" if run.protocol == LITERATURE else f"; {LITERATURE} {gap}"

    def gpu_check(self, argument: str, where: str) -> str:
        return render_gpu_check(self.results / argument, where)

    def robustness(self, argument: str, where: str) -> str:
        folder, _, mode = argument.partition(" ")
        if mode.strip() not in ("", "pooled"):
            raise NeuromathError(f"{where}: robustness takes DIR [pooled], not {argument!r}")
        return render_robustness(self.results / folder, where, pooled_only=mode.strip() == "pooled")

    def decode_compile(self, argument: str, where: str) -> str:
        return render_decode_compile(self.results / argument, where)

    # -- pages --------------------------------------------------------------------------------------------------------

    def render(self, template: Path, text: str | None = None) -> str:
        text = template.read_text(encoding="utf-8") if text is None else text
        out = []
        for number, line in enumerate(text.splitlines(), start=1):
            where = f"{template}:{number}"

            def replace(match: re.Match) -> str:
                kind, argument = match.group(1), match.group(2).strip()
                handler = {"table": self.table, "recipe": self.recipe_block, "published": self.published,
                           "curve": self.curve, "leaderboard": self.leaderboard, "value": self.value, "runs": self.runs,
                           "cpu": self.cpu,
                           "paired": self.paired, "gpu_check": self.gpu_check,
                           "decode_compile": self.decode_compile, "robustness": self.robustness}[kind]
                return handler(argument, where)

            out.append(DIRECTIVE.sub(replace, line))
        return "\n".join(out).rstrip("\n") + "\n"


def leading_number(text: str) -> float:
    match = re.match(r"[0-9.]+", text)
    return float(match.group()) if match else -1.0


def duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 5400 else f"{seconds / 60:.0f} min" if seconds >= 90 else \
        f"{seconds:.0f} s"


def cpu_seconds(evidence: Evidence) -> float | None:
    """The training time of a run's folds or seeds times the threads each used: CPU time (None: not recorded or a
    GPU run). A run that set no thread count (a retrieval baseline, which trains nothing) counts one."""
    seconds, threads = evidence.wall_seconds, evidence.environment.get("threads") or 1
    if seconds is None or evidence.environment.get("gpu") or not isinstance(threads, int) or threads < 1:
        return None
    return seconds * threads


def describe_compute(evidence: Evidence) -> str:
    environment = evidence.environment
    seconds = evidence.wall_seconds
    time_text = "time not recorded" if seconds is None else duration(seconds)
    threads = environment.get("threads")
    where = environment.get("gpu") or "CPU"
    return f"{time_text} on {where}" + (f", {threads} thread{'s' if threads != 1 else ''}" if threads else "")


def epoch_series(path: Path, metric: str) -> list[tuple[float, float]]:
    """(epoch, value) of a metric from a metrics.csv (the last value of each epoch)."""
    points: dict[float, float] = {}
    with open_data(path, encoding="utf-8", newline="") as stream:  # a FIFO: refused
        for row in csv.DictReader(stream):
            value, epoch = row.get(metric), row.get("epoch")
            if value not in (None, "") and epoch not in (None, ""):
                try:
                    points[float(epoch)] = float(value)
                except ValueError:
                    continue
    return sorted(points.items())


def line_chart(series: dict[str, list[tuple[float, float]]], metric: str, width: int = 640,
               height: int = 320) -> str:
    """A small SVG line chart, written by hand so that the same evidence gives the same bytes on every machine."""
    colours = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
    left, right, top, bottom = 50, 110, 20, 40
    xs = [x for points in series.values() for x, _ in points]
    ys = [y for points in series.values() for _, y in points]
    x_max = max(xs) or 1.0
    y_min, y_max = min(ys), max(ys)
    if y_max == y_min:
        y_max = y_min + 1.0

    def sx(x: float) -> float:
        return left + (width - left - right) * x / x_max

    def sy(y: float) -> float:
        return height - bottom - (height - top - bottom) * (y - y_min) / (y_max - y_min)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
             f'<text x="{(width - right + left) / 2:.0f}" y="{height - 8}" text-anchor="middle">epoch</text>',
             f'<text x="{left - 4}" y="{sy(y_max) + 4:.1f}" text-anchor="end">{y_max:.3f}</text>',
             f'<text x="{left - 4}" y="{sy(y_min) + 4:.1f}" text-anchor="end">{y_min:.3f}</text>',
             f'<text x="{sx(x_max):.1f}" y="{height - bottom + 14}" text-anchor="middle">{x_max:.0f}</text>',
             f'<text x="{left}" y="{top - 6}">{metric}</text>']
    for index, (name, points) in enumerate(series.items()):
        colour = colours[index % len(colours)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{path}"/>')
        parts.append(f'<text x="{width - right + 8}" y="{top + 14 * (index + 1)}" fill="{colour}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def build_pages(results: str | Path, docs: str | Path, readme: str | Path | None = None) -> dict[Path, str]:
    """path -> text of every file ``build`` writes: the docs' results pages, their images, and the README's
    results block. Nothing is written here."""
    book = Book(results)
    templates = sorted((Path(results) / PAGES_DIR).glob("*.md"))
    if not templates:
        raise NeuromathError(f"{Path(results) / PAGES_DIR}: no page templates")
    files: dict[Path, str] = {}
    for template in templates:
        source = template.relative_to(Path(results)).as_posix()
        if template.name == README_TEMPLATE:
            if readme is None:
                continue
            readme = Path(readme)
            text = readme.read_text(encoding="utf-8")
            if README_BEGIN not in text or README_END not in text:
                raise NeuromathError(f"{readme}: no {README_BEGIN} ... {README_END} block for the results")
            head, rest = text.split(README_BEGIN, 1)
            _, tail = rest.split(README_END, 1)
            files[readme] = f"{head}{README_BEGIN}\n{book.render(template)}{README_END}{tail}"
        else:
            files[Path(docs) / DOCS_RESULTS / template.name] = HEADER.format(source=source) + book.render(template)
    for name, svg in book.images.items():
        files[Path(docs) / DOCS_RESULTS / "images" / name] = svg
    return files


def stale_pages(files: dict[Path, str]) -> list[Path]:
    """The files whose committed text differs from what the build writes."""
    return [path for path, text in files.items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text]


def write_pages(files: dict[Path, str]) -> list[Path]:
    written = []
    for path, text in files.items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, text)
            written.append(path)
    return written
