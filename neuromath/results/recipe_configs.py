"""A recipe's command and the presets: a result's row runs its preset as shipped.

A recipe's run may set, beside its preset, only what says where and how a run happens (``RUN_SETTINGS``: data paths,
threads, seeds, device, numeric precision); every other value lives in a preset, so that the preset beside a number is
the recipe that made it. ``results verify`` resolves each run's command against today's presets and compares it with
the config every scored unit of its evidence trained with (``config_differences``): every value but the paths,
threads, seeds and device, so a row made in float32 says ``--set train.precision=32-true`` once its preset says
``auto``."""

from __future__ import annotations

import yaml

from neuromath.config import config_to_dict, load_config
from neuromath.results.recipes import Run

# data paths, threads, seeds and device: the keys a recipe's --set may name, and that verify does not compare
NOT_COMPARED = frozenset({
    "data.root", "data.train", "data.valid", "data.test", "data.train_extra", "data.candidates",
    "train.seed", "train.num_threads", "train.accelerator", "train.devices", "train.num_nodes", "train.strategy",
    "train.progress",
})
# ... and the numeric precision, which a recipe may also set (auto gives bf16 only where the machine has it) and
# which verify compares: a row's command says the precision its evidence trained in
RUN_SETTINGS = NOT_COMPARED | {"train.precision"}
COMPARED = ("data", "model", "optim", "train", "decode")


def command_settings(argv: list[str]) -> tuple[str | None, list[str]]:
    """The ``--config`` and the ``--set key=value`` overrides of a command's arguments (``--protocol P`` is
    ``train.protocol=P``, last, as the command applies it)."""
    config, overrides, protocol = None, [], []
    for flag, value in zip(argv, argv[1:]):
        if flag == "--config":
            config = value
        elif flag == "--set":
            overrides.append(value)
        elif flag == "--protocol":
            protocol = [f"train.protocol={value}"]
    return config, overrides + protocol


def extra_settings(run: Run) -> list[str]:
    """The overrides of a run's command beyond data paths, threads, seeds, device and precision: each belongs in a
    preset."""
    return [override for override in command_settings(run.argv)[1]
            if override.split("=", 1)[0].strip() not in RUN_SETTINGS | {"train.protocol"}]


def command_config(run: Run) -> dict | None:
    """The config a run's command gives with today's presets (None: a command without a config, e.g. import)."""
    preset, overrides = command_settings(run.argv)
    if preset is None:
        return None
    config = config_to_dict(load_config(preset, overrides, strict=True), applicable_only=True)
    return yaml.safe_load(yaml.safe_dump(config))  # tuples as lists, as a config.yaml reads back


def config_differences(label: str, today: dict, trained: dict) -> list[str]:
    """The values that the command gives today and that differ from a unit's config.yaml (``trained``), except the
    paths, threads, seeds and device (``NOT_COMPARED``); a key the unit's config lacks is newer than the run and is
    left out."""
    problems = []
    for section in COMPARED:
        ours, theirs = today.get(section) or {}, trained.get(section) or {}
        for key, value in ours.items():
            if f"{section}.{key}" in NOT_COMPARED or key not in theirs:
                continue
            if theirs[key] != value:
                problems.append(f"{label}: {section}.{key} is {theirs[key]!r} in the evidence, the recipe's command "
                                f"gives {value!r} with today's presets")
    return problems
