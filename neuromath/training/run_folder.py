"""A run folder's reading and writing: its checkpoints (``RunCheckpoint``, ``RunCheckpointIO``: written atomically
in the run's own folder, read back as plain data by ``read_checkpoint``), the folders a run writes into
(``own_folder``, ``new_session_folder``; ``check_run_folder``: what ``--out`` may name), the best weights
(``save_weights``: ``model.pt``), the metrics of its sessions (``merge_metrics`` into ``metrics.csv``,
``epoch_curves``, ``plot_learning_curves``: ``learning_curves.png``) and which settings of its saved
``config.yaml`` may change on resume (``config_differences``, ``check_resume_config``), and the seconds it has
trained (``TrainingClock``: kept in its checkpoints, so that a resumed run counts its earlier sessions)."""

from __future__ import annotations

import csv
import io
import logging
import os
import re
import time
from pathlib import Path

import torch
from lightning.pytorch.callbacks import Callback, ModelCheckpoint
from lightning.pytorch.plugins.io import TorchCheckpointIO

from neuromath.config import Config, config_to_dict
from neuromath.errors import ConfigError, DataFormatError, NeuromathError
from neuromath.extras import install_line
from neuromath.fileio import figure_text, save_figure, sync_folder, write_atomic, write_text_atomic
from neuromath.models.weights import read_plain
from neuromath.nn.distributed import is_rank_zero
from neuromath.safe_read import open_data

# Settings that change nothing a run computes.
COSMETIC_CHANGES = {("train", "progress")}
# Settings that may change when a run is resumed; anything else must match the saved config.
RESUMABLE_CHANGES = COSMETIC_CHANGES | {
    ("train", "max_epochs"), ("train", "max_steps"), ("train", "max_time_minutes"), ("train", "patience"),
}

log = logging.getLogger(__name__)


def config_differences(saved: Config, new: Config, allowed: set[tuple[str, str]]) -> list[str]:
    """``section.key: old -> new`` for each setting the saved run reads that differs, those in ``allowed`` aside."""
    saved_dict, new_dict = config_to_dict(saved, applicable_only=True), config_to_dict(new)  # what the run reads
    differences = []
    for section, keys in saved_dict.items():
        for key, old in keys.items():
            if key not in new_dict[section]:  # another model.name or data.task, whose class has other keys
                differences.append(f"{section}.{key}: {old!r} -> (not a key of the new model or task)")
            elif old != new_dict[section][key] and (section, key) not in allowed:
                differences.append(f"{section}.{key}: {old!r} -> {new_dict[section][key]!r}")
    return differences


def check_resume_config(saved: Config, new: Config) -> None:
    differences = config_differences(saved, new, RESUMABLE_CHANGES)
    if differences:
        raise ConfigError("cannot resume with a different config: " + "; ".join(differences))


class RunCheckpoint(ModelCheckpoint):
    """Lightning's ModelCheckpoint, except that the file paths a checkpoint stores are never followed: on resume
    they are replaced by this callback's own file inside this run's checkpoints folder. A ``last.ckpt`` edited to
    name another file (or a copied run folder, whose checkpoints name the original's files) can neither make
    training read that file as the best weights nor make Lightning delete it when a better score replaces it."""

    def load_state_dict(self, state_dict: dict) -> None:
        own = str(Path(self.dirpath) / f"{self.filename}{self.FILE_EXTENSION}")  # each keeps one file (top 1)
        state = dict(state_dict)
        state["dirpath"] = self.dirpath  # the folder this run writes, whatever folder the checkpoint was written in
        for key in ("best_model_path", "kth_best_model_path", "last_model_path"):
            state[key] = own if state.get(key) else ""
        scores = list((state.get("best_k_models") or {}).values())
        state["best_k_models"] = {own: scores[0]} if scores else {}
        super().load_state_dict(state)


class TrainingClock(Callback):
    """The seconds a run has trained, kept in its checkpoints: each checkpoint stores the seconds of the sessions
    before this one plus this session's up to the checkpoint, and a resume reads them back (``before``), so that a
    resumed run's ``wall_seconds`` counts its earlier sessions. The seconds an interrupted session spent after its
    last checkpoint are not counted: the work they did was lost with them. A checkpoint written before the clock
    existed holds no such state and counts as 0 seconds."""

    def __init__(self) -> None:
        self.before = 0.0  # seconds trained by the sessions before this one, up to the checkpoint resumed from
        self.started: float | None = None

    def on_fit_start(self, trainer, pl_module) -> None:
        self.started = time.perf_counter()

    def state_dict(self) -> dict:
        session = time.perf_counter() - self.started if self.started is not None else 0.0
        return {"seconds": self.before + session}

    def load_state_dict(self, state_dict: dict) -> None:
        self.before = float(state_dict.get("seconds", 0.0))


class RunCheckpointIO(TorchCheckpointIO):
    """Lightning's checkpoint I/O, writing each checkpoint atomically in the run's own folder: into a new temporary
    file of a unique name beside the target (``fileio.open_atomic``), synced to disk, then renamed over it.

    Lightning's own writes a temporary file wherever fsspec puts it (``/tmp``) and copies it over the target when the
    rename crosses filesystems, truncating ``last.ckpt`` first: a kill during the copy left an empty ``last.ckpt``
    (a run that could never resume), a full disk a truncated ``best.ckpt``. Here a kill or a full disk leaves the
    previous checkpoint whole. A target that is not a regular file (a planted link) is refused, not written through,
    and removing a checkpoint removes only a file or link, never what a link points to."""

    def save_checkpoint(self, checkpoint: dict, path, storage_options=None) -> None:
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__} takes no storage_options")
        write_atomic(path, lambda stream: torch.save(checkpoint, stream))

    def remove_checkpoint(self, path) -> None:
        path = Path(path)
        if path.is_symlink() or path.is_file():
            path.unlink()
            sync_folder(path.parent)


def remove_stale_temporaries(checkpoints: Path) -> None:
    """Remove the temporary files a killed write of ``RunCheckpointIO`` left in ``checkpoints`` (``.NAME.ckpt.*.tmp``;
    the run folder is locked, so no other process is writing them). A link is removed, never what it points to."""
    for path in checkpoints.glob(".*.ckpt.*.tmp"):
        if path.is_symlink() or path.is_file():
            path.unlink(missing_ok=True)


def own_folder(path: Path) -> Path:
    """``path`` as a folder of the run: created when missing, refused (``NeuromathError``) when it is a link or not
    a folder, so that no write meant for the run folder goes through a link planted in it to a folder outside."""
    if not path.is_symlink() and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            path.mkdir()
        except FileExistsError:  # made (or planted) meanwhile: checked below like one found there
            pass
    if path.is_symlink() or not path.is_dir():
        raise NeuromathError(f"{path} is {'a link' if path.is_symlink() else 'not a folder'}: a run writes only "
                             "into folders of its own (remove it, or train into another folder)")
    return path


SESSION = re.compile(r"session(\d+)")  # the name of a session's log folder, logs/session<N>


# What a run folder holds: the files and folders that train writes, and those the commands run on a run write into
# it (evaluate's evaluations/ and report/, evaluate --report, complete --out and --scores as the results recipes
# name them, sweep's train.log); seed<S>/ are the runs of train --seeds, refit/ a cv fold's refit.
RUN_FILES = frozenset({
    "config.yaml", "source_vocab.json", "target_vocab.json", "node_vocab.json", "data.json", "metrics.csv",
    "learning_curves.png", "model.pt", "summary.json", "predictions.jsonl", "environment.json", "README.md",
    "train.log", "seeds.json", "seeds.md", "completion.json", "scores.jsonl", ".neuromath.lock",
})
RUN_FOLDERS = frozenset({"checkpoints", "logs", "evaluations", "evaluation", "report"})
RUNS_INSIDE = re.compile(r"seed\d+|refit")  # runs of their own, checked like the folder that holds them
LEFTOVERS = re.compile(r"\..+\.(tmp|lock)|\..+\.staging\..+|\..+\.publish\.json")  # of atomic writes and locks
# What a cv folder holds: the random folds, a run per fold (or per seed, then per fold) and the report
CV_FILES = frozenset({"report.md", "report.json", ".neuromath.lock"})
CV_FOLDERS = re.compile(r"folds|fold\d+|seed\d+")


def foreign_entries(folder: Path, files: frozenset, folders: frozenset | re.Pattern,
                    runs: re.Pattern | None) -> list[str]:
    """The entries of ``folder`` that are none of ``files`` (regular files) and ``folders`` (folders, by name or
    pattern), nor a leftover of an atomic write or lock; runs inside (``runs``) are looked into the same way."""
    foreign = []
    for entry in sorted(os.scandir(folder), key=lambda item: item.name):
        name, path = entry.name, Path(entry.path)
        is_folder = entry.is_dir(follow_symlinks=False)
        if entry.is_file(follow_symlinks=False) and (name in files or LEFTOVERS.fullmatch(name)):
            continue
        named = folders.fullmatch(name) if isinstance(folders, re.Pattern) else name in folders
        if is_folder and named:
            continue
        if is_folder and runs is not None and runs.fullmatch(name):
            foreign += [f"{name}/{inner}" for inner in foreign_entries(path, files, folders, runs)]
            continue
        foreign.append(name + ("/" if is_folder else ""))
    return foreign


def not_a_link(path: str | Path) -> Path:
    """``path`` as a Path, refused (``NeuromathError``) when it is a symbolic link, even to a folder: what is
    written there would go through the link to a folder elsewhere."""
    path = Path(path)
    if path.is_symlink():
        raise NeuromathError(f"{path} is a symbolic link: a run is written only into a folder of its own, never "
                             "through a link (give the folder it points to, or another --out)")
    return path


def check_run_folder(path: str | Path, cv: bool = False) -> Path:
    """``path`` as the folder that ``train``, ``demo`` (or, with ``cv``, ``cv``) writes into, refused with a
    ``NeuromathError`` when it is a symbolic link (even to a folder: the run would be written through it, to a
    folder elsewhere), something other than a folder, or a folder that holds files the run did not write (a user's
    own ``config.yaml`` beside ``notes.txt`` would be replaced). An absent or empty folder, and a run folder of its
    own (``RUN_FILES``, ``RUN_FOLDERS``, runs of ``--seeds``; for ``cv`` its folds, fold runs and report), are fine:
    a resume, or a new run where an earlier one stopped before its first checkpoint."""
    path = not_a_link(path)
    if not path.exists():
        return path
    if not path.is_dir():
        raise NeuromathError(f"{path} exists and is not a folder: --out names the run folder to write")
    if cv:
        foreign = foreign_entries(path, CV_FILES, CV_FOLDERS, None)
    else:
        foreign = foreign_entries(path, RUN_FILES, RUN_FOLDERS, RUNS_INSIDE)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        what = "a cross-validation" if cv else "a run"
        raise NeuromathError(f"{path} holds files that {what} does not write ({shown}): it writes only into an "
                             "empty folder or a folder of its own runs; choose another --out, or move those files")
    return path


def new_session_folder(run_dir: Path) -> Path:
    """A new, empty folder ``RUN_DIR/logs/session<N>`` for this session's CSV log, created here (numbered after
    every session entry there, whatever it is): a folder or link already there under that name is never reused,
    so a planted ``logs/session2`` link cannot make a resume write its metrics outside the run.

    Only rank zero writes logs: the other processes of a multi-process run (started once rank zero has made its
    folder) get the latest session's name without creating anything."""
    logs = own_folder(run_dir / "logs") if is_rank_zero() else run_dir / "logs"
    names = os.listdir(logs) if logs.is_dir() else []
    taken = [int(match.group(1)) for name in names if (match := SESSION.fullmatch(name))]
    if not is_rank_zero():
        return logs / f"session{max(taken, default=0)}"
    number = max(taken, default=-1) + 1
    while True:
        try:
            (logs / f"session{number}").mkdir()  # mkdir never follows a link: one already there is refused
            return logs / f"session{number}"
        except FileExistsError:
            number += 1


def read_checkpoint(path: Path) -> dict:
    """A Lightning checkpoint of a run, loaded as plain data (``weights_only=True``): never code."""
    checkpoint = read_plain(path)
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("state_dict"), dict):
        raise DataFormatError(path, None, "not a Lightning checkpoint (no state_dict)")
    return checkpoint


def merge_metrics(run_dir: Path) -> list[dict]:
    """Join the metrics of every session into RUN_DIR/metrics.csv, and return its rows.

    A resumed session restarts from the last checkpoint, so rows an earlier session logged at
    or after the step where the later one starts were redone and are replaced.

    Only session folders of the run are read (not links), and a row whose step is not a whole number (an edited or
    damaged log) is skipped with a warning naming the file and line: a bad row must not fail every later resume.
    """
    sessions = []
    logs = run_dir / "logs"
    if logs.is_dir() and not logs.is_symlink():
        for entry in logs.iterdir():
            match = SESSION.fullmatch(entry.name)
            path = entry / "metrics.csv"
            if match and not entry.is_symlink() and entry.is_dir() and path.is_file() and not path.is_symlink():
                sessions.append((int(match.group(1)), path))
    rows: list[dict] = []
    for _, path in sorted(sessions):
        new_rows = read_metric_rows(path)
        if new_rows:
            first_step = min(int(row["step"]) for row in new_rows)
            rows = [row for row in rows if int(row["step"]) < first_step] + new_rows
    if not rows:
        return rows
    fields = sorted({key for row in rows for key in row}, key=lambda k: (k not in ("epoch", "step"), k))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(run_dir / "metrics.csv", buffer.getvalue())
    return rows


def read_metric_rows(path: Path) -> list[dict]:
    """The rows of one session's metrics.csv whose ``step`` is a whole number; the others are skipped with a warning
    (file, line and value). An unreadable file gives no rows, with a warning."""
    rows, bad = [], []
    try:
        with open_data(path, encoding="utf-8", newline="") as raw:  # a FIFO planted there: refused, never waited on
            raw.reconfigure(errors="replace")
            for line, row in enumerate(csv.DictReader(raw), start=2):
                step = str(row.get("step") or "").strip()
                if re.fullmatch(r"[+-]?\d+", step) and None not in row:
                    rows.append(row)
                else:
                    bad.append(f"line {line} (step {step!r})")
    except (OSError, csv.Error, DataFormatError) as error:
        logging.getLogger("neuromath").warning("%s: not read (%s); its metrics are left out of metrics.csv", path,
                                               error)
        return []
    if bad:
        logging.getLogger("neuromath").warning("%s: skipped %d malformed rows: %s", path, len(bad),
                                               ", ".join(bad[:5]) + (", ..." if len(bad) > 5 else ""))
    return rows


def epoch_curves(rows: list[dict]) -> dict[str, list[tuple[int, float]]]:
    """Per metric logged once per epoch or validation (``train_loss_epoch``, the completion ranking loss
    ``rank_loss``, ``val_*``): (epoch, value) points in order, from the rows of metrics.csv."""
    curves: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        for key, value in row.items():
            if (key in ("train_loss_epoch", "rank_loss") or key.startswith("val_")) and value not in ("", None):
                curves.setdefault(key, []).append((int(row["epoch"]), float(value)))
    return curves


def plot_learning_curves(rows: list[dict], path: Path) -> None:
    """RUN_DIR/learning_curves.png: the training loss per epoch and every validation metric against the epoch,
    one panel each (matplotlib's object API with the Agg canvas: no display needed). Without the ``plots`` extra the
    figure is left out and a log line says how to get it: the curves stay in metrics.csv."""
    curves = epoch_curves(rows)
    if not curves:
        return
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        log.warning("learning_curves.png not drawn (the curves are in metrics.csv): %s", install_line("plots"))
        return

    figure = Figure(figsize=(4.2 * len(curves), 3.4))
    FigureCanvasAgg(figure)
    for index, (name, points) in enumerate(sorted(curves.items()), start=1):
        axes = figure.add_subplot(1, len(curves), index)
        axes.plot([epoch for epoch, _ in points], [value for _, value in points], marker=".")
        axes.set_xlabel("epoch")
        axes.set_title(figure_text(name))  # a column name of an edited metrics.csv is drawn as it is
        axes.grid(alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path, dpi=100)


def save_weights(weights: dict, path: Path) -> None:
    """Save ``weights`` to ``path`` atomically (``open_atomic``): torch writes into a new temporary file of a unique
    name, never through a link planted in the run folder, and a regular file is the only thing it replaces."""
    write_atomic(path, lambda stream: torch.save(weights, stream))
