"""An export that names no path of the machine that trained it.

A run folder keeps its data paths as they were given, absolute ones included, so that it can be resumed where it
was made. What ``neuromath export`` writes travels: each data path in ``config.yaml`` becomes relative to the data
root when the file lies under it (``mawps-cv/fold0/train.csv``, as the presets name files), else the file's name;
``summary.json`` names the run by its folder's name; the model card says the same in its text."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from neuromath.dataroot import data_root
from neuromath.fileio import write_text_atomic

DATA_PATH_KEYS = ("train", "valid", "test", "train_extra", "candidates")  # train_extra: comma-separated files


def portable_path(value: str, root: Path) -> str:
    """``value`` relative to the data root when it is an absolute path under it, else its file name; a relative
    path as it is."""
    path = Path(value)
    if not path.is_absolute():
        return value
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


def make_portable(folder: Path, run_dir: Path) -> None:
    """Rewrite the config, summary and card of an export's (staging) ``folder`` so that no absolute path of the
    training machine remains in them."""
    replacements: dict[str, str] = {str(run_dir.resolve()): run_dir.resolve().name, str(run_dir): run_dir.name}
    config_path = folder / "config.yaml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    before = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    data = config.get("data") or {}
    root = data_root(data.get("root"))
    for key in DATA_PATH_KEYS:
        if isinstance(data.get(key), str):
            parts = [part.strip() for part in data[key].split(",")] if key == "train_extra" else [data[key]]
            for part in parts:
                replacements[part] = portable_path(part, root)
            data[key] = ",".join(replacements[part] for part in parts)
    if isinstance(data.get("root"), str) and Path(data["root"]).is_absolute():
        data["root"] = None  # the files are named relative to the data root of whoever loads the export
    train = config.get("train") or {}
    if isinstance(train.get("init_from"), str) and Path(train["init_from"]).is_absolute():
        replacements[train["init_from"]] = train["init_from"] = Path(train["init_from"]).name
    model = config.get("model") or {}
    if isinstance(model.get("pretrained"), str) and Path(model["pretrained"]).is_absolute():  # a local encoder
        replacements[model["pretrained"]] = model["pretrained"] = Path(model["pretrained"]).name  # (pretrained/ has it)
    after = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    if after != before:  # a config without absolute paths stays byte for byte the run's
        write_text_atomic(config_path, after)
    summary_path = folder / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    moved = {key: replace_all(summary[key], replacements) for key in ("run_dir", "best_checkpoint")
             if isinstance(summary.get(key), str) and Path(summary[key]).is_absolute()}
    if moved:
        write_text_atomic(summary_path, json.dumps({**summary, **moved}, indent=2) + "\n")
    card = folder / "README.md"
    if card.is_file():
        write_text_atomic(card, replace_all(card.read_text(encoding="utf-8"), replacements))


def replace_all(text: str, replacements: dict[str, str]) -> str:
    """``text`` with each absolute path of ``replacements`` replaced, the longest first (a file under the run
    folder before the folder)."""
    for old in sorted(replacements, key=len, reverse=True):
        if Path(old).is_absolute() and old != replacements[old]:
            text = text.replace(old, replacements[old])
    return text
