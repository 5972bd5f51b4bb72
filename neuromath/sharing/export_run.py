"""``neuromath export RUN OUT``: a trained run as a self-contained folder that travels, and loads with
``neuromath.load(OUT)``, ``neuromath solve OUT ...`` and ``neuromath serve OUT`` like the run itself.

OUT holds the best weights as ``model.safetensors`` (tensors and a JSON header: nothing in it can run), the run's
``config.yaml``, its vocabularies, ``summary.json``, ``environment.json`` when the run has one, and ``README.md``,
the model card (the run's own, or written from its files when it has none). That is the layout the Hugging Face Hub
takes (a card with a YAML front matter, safetensors weights, a config), but nothing here talks to a network. No
checkpoint, log or pickle is copied.

The folder is staged beside OUT, checked (it loads, and holds exactly the run's weights), then renamed to OUT: a
reader sees no OUT or the whole of it. An OUT that exists and is not an empty folder is refused.

``export_for_hub`` writes what ``neuromath push`` uploads: the export of a run, or a copy of a folder that export
wrote, with the card's usage saying how to load the model by its hub id."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

from neuromath.api import check_run, load, run_task
from neuromath.errors import NeuromathError
from neuromath.fileio import current_umask, locked, remove_staging, sync_folder, write_atomic, write_text_atomic
from neuromath.models.weights import EXPORTED_WEIGHTS, RUN_WEIGHTS, read_weights, save_safetensors, weights_file
from neuromath.nn.pretrained import PRETRAINED_DIR, PRETRAINED_FILES
from neuromath.safe_read import CONFIG_LIMIT, SUMMARY_LIMIT, VOCABULARY_LIMIT, read_run_file
from neuromath.sharing.card import (
    CARD_FILE,
    ENVIRONMENT_FILE,
    card_of_run,
    hub_card,
    read_json,
    vocabulary_files,
)
from neuromath.sharing.portable import make_portable

PRETRAINED_FILE_LIMIT = VOCABULARY_LIMIT  # a tokenizer's tables: a few MB for the usual encoders
CARD_LIMIT = SUMMARY_LIMIT  # a model card is a page of text; a larger README.md is not one that train wrote


def check_out(out: Path) -> None:
    """Refuse an OUT that exists and is not an empty folder: an export never mixes with other files nor replaces
    them."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise NeuromathError(f"{out} exists and is not a folder: refusing to export there (choose a new folder)")
    if out.is_dir() and any(out.iterdir()):
        raise NeuromathError(f"{out} exists and is not empty: refusing to export into it (choose a new folder)")


def export_run(run_dir: str | Path, out: str | Path) -> list[str]:
    """Export the finished run ``run_dir`` to the new folder ``out`` (see the module's description); returns the
    names of the files written. A run without config.yaml, vocabularies, weights or summary.json is a
    NeuromathError naming what is missing, and so is a run whose files do not load together."""
    run_dir, out = Path(run_dir), Path(out)
    if not (run_dir / "config.yaml").exists():
        raise NeuromathError(f"{run_dir} is not a run directory (no config.yaml)")
    task = run_task(run_dir)
    weights = weights_file(run_dir)
    for name in (*vocabulary_files(task), "summary.json"):
        if not os.path.lexists(run_dir / name):
            raise NeuromathError(f"{run_dir}: no {name} (not a finished run folder of the {task.name} task)")
    check_run(run_dir)  # a config its weights or the memory limit cannot hold: refused before anything is written
    check_out(out)
    copies = copied_files(run_dir, task)
    read_json(run_dir / "summary.json", "summary")  # a summary that is not a JSON object is refused here
    with locked(out, is_folder=False):  # a second export to the same OUT is refused while this one writes it
        check_out(out)
        for leftover in out.parent.glob(f".{out.name}.export.*"):  # the staging of an export that was killed
            remove_staging(leftover)
        staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.export."))
        try:
            state = read_weights(weights)
            save_safetensors(state, staging / EXPORTED_WEIGHTS)
            for name, limit, what in copies:
                data = read_run_file(run_dir / name, limit, what)
                (staging / name).parent.mkdir(exist_ok=True)  # pretrained/
                write_atomic(staging / name, lambda stream, data=data: stream.write(data))
            if os.path.lexists(run_dir / CARD_FILE):
                card = read_run_file(run_dir / CARD_FILE, CARD_LIMIT, "model card")
                write_atomic(staging / CARD_FILE, lambda stream: stream.write(card))
            else:  # a run trained before train wrote cards
                write_text_atomic(staging / CARD_FILE, card_of_run(run_dir))
            make_portable(staging, run_dir)  # no absolute path of this machine travels with the export
            check_export(staging, state)
            os.chmod(staging, 0o777 & ~current_umask())  # mkdtemp makes a private folder; give it the usual mode
            check_out(out)
            if out.is_dir():
                out.rmdir()  # empty (checked): the staged folder takes its place
            os.rename(staging, out)
        except BaseException:
            remove_staging(staging)
            raise
        sync_folder(out.parent)
    return sorted(path.name for path in out.iterdir())


def copied_files(folder: Path, task) -> list[tuple[str, int, str]]:
    """(name, size limit, what it is) of the files an export copies from ``folder``, a run or an export: the
    config, the summary, the vocabularies and the environment file when there is one."""
    copies = [("config.yaml", CONFIG_LIMIT, "config file"), ("summary.json", SUMMARY_LIMIT, "summary"),
              *((name, VOCABULARY_LIMIT, "vocabulary") for name in vocabulary_files(task))]
    if os.path.lexists(folder / ENVIRONMENT_FILE):
        copies.append((ENVIRONMENT_FILE, SUMMARY_LIMIT, "environment file"))
    pretrained = folder / PRETRAINED_DIR  # a pretrained encoder's config and tokenizer (its weights are the model's)
    if pretrained.is_dir() and not pretrained.is_symlink():
        copies += [(f"{PRETRAINED_DIR}/{name}", PRETRAINED_FILE_LIMIT, "pretrained encoder file")
                   for name in PRETRAINED_FILES if os.path.lexists(pretrained / name)]
    return copies


def is_export(folder: str | Path) -> bool:
    """Whether ``folder`` is one that ``neuromath export`` wrote: a config and safetensors weights, no model.pt."""
    folder = Path(folder)
    return (os.path.lexists(folder / "config.yaml") and os.path.lexists(folder / EXPORTED_WEIGHTS)
            and not os.path.lexists(folder / RUN_WEIGHTS))


def export_for_hub(source: str | Path, out: str | Path, repo_id: str) -> list[str]:
    """Write to the new folder ``out`` what ``neuromath push`` uploads as the model ``repo_id``: the export of the
    run ``source`` (``export_run``), or a checked copy of ``source`` when it is a folder that export wrote; its card
    keeps the evidence of the run and says how to load the model by ``repo_id`` (``hub_card``). Returns the names
    of the files written."""
    source, out = Path(source), Path(out)
    if is_export(source):
        copy_export(source, out)
    else:
        export_run(source, out)
    card = read_run_file(out / CARD_FILE, CARD_LIMIT, "model card")
    try:
        text = card.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NeuromathError(f"{source / CARD_FILE}: not UTF-8 text at byte {error.start}") from None
    write_text_atomic(out / CARD_FILE, hub_card(text, run_task(out), repo_id))
    return sorted(path.name for path in out.iterdir())


def copy_export(source: Path, out: Path) -> None:
    """Copy the exported folder ``source`` to the new folder ``out``, file by file within the size limits of a run's
    files, and check that the copy loads and holds the same weights (``check_export``)."""
    task = run_task(source)
    for name in (*vocabulary_files(task), "summary.json", CARD_FILE):
        if not os.path.lexists(source / name):
            raise NeuromathError(f"{source}: no {name} (not a folder written by neuromath export)")
    check_run(source)
    read_json(source / "summary.json", "summary")
    check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    state = read_weights(source / EXPORTED_WEIGHTS)
    save_safetensors(state, out / EXPORTED_WEIGHTS)
    for name, limit, what in [*copied_files(source, task), (CARD_FILE, CARD_LIMIT, "model card")]:
        data = read_run_file(source / name, limit, what)
        write_atomic(out / name, lambda stream, data=data: stream.write(data))
    check_export(out, state)


def check_export(folder: Path, state: dict[str, torch.Tensor]) -> None:
    """The staged export loads as a run does (``neuromath.load``: config, vocabularies and weights that fit them),
    and its model holds exactly the run's weights: the same names, shapes, types and values."""
    loaded = load(folder).model.state_dict()
    if loaded.keys() != state.keys():
        raise NeuromathError(f"{folder / EXPORTED_WEIGHTS}: the exported weights do not name the run's tensors")
    for name, tensor in state.items():
        if loaded[name].dtype != tensor.dtype or not torch.equal(loaded[name].cpu(), tensor.cpu()):
            raise NeuromathError(f"{folder / EXPORTED_WEIGHTS}: {name} does not load back as the run's tensor")
