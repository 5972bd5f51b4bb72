"""The presets shipped with the package (``neuromath/configs/<task>/<model>.yaml``): their names, descriptions, and
which file a ``--config`` name means."""

from __future__ import annotations

import difflib
from pathlib import Path

from neuromath.errors import ConfigError

PRESETS = Path(__file__).resolve().parents[1] / "configs"  # neuromath/configs: the presets, shipped as package data


def preset_names() -> list[str]:
    """The shipped presets' names, ``<task>/<model>`` (``word_problems/graph2tree``), sorted."""
    return sorted(path.relative_to(PRESETS).with_suffix("").as_posix() for path in PRESETS.rglob("*.yaml"))


def preset_description(name: str) -> str:
    """The one-line description of a preset: the first line of its file, a comment."""
    first = (PRESETS / f"{name}.yaml").read_text(encoding="utf-8").splitlines()[0]
    return first.lstrip("#").strip()


def find_config(name: str | Path) -> Path:
    """The config file that ``name`` means: a YAML file when one is there, else the shipped preset of that name
    (``word_problems/graph2tree``; ``.yaml`` and the ``configs/`` folder of the repository's older layout may be
    written too). Neither is a ConfigError that lists the closest preset names."""
    path = Path(name)
    if path.exists() and not path.is_dir():  # a file there, read as a config (load_config refuses a FIFO unread)
        return path
    key = path.as_posix().removesuffix(".yaml").removeprefix("configs/")
    names = preset_names()
    if key in names:
        return PRESETS / f"{key}.yaml"
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise ConfigError(f"{name}: no such config file and no preset of that name{hint} (`neuromath config list` "
                      "lists the presets)")
