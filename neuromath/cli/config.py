"""neuromath config: list the shipped presets, and print the resolved config of a preset or file (its keys over the
defaults, with overrides), so nothing is hidden by presets that name only what differs."""

from __future__ import annotations

import argparse
import json

from neuromath.cli.common import add_json_option, documented
from neuromath.config import load_config, show_config
from neuromath.config.presets import preset_description, preset_names


def command_config_show(args: argparse.Namespace) -> int:
    print(show_config(args.config, args.set or []), end="")
    return 0


def command_config_list(args: argparse.Namespace) -> int:
    names = [name for name in preset_names() if args.task is None or name.split("/", 1)[0] == args.task]
    if args.json:  # each preset resolved (extends: included) for its task and model
        rows = []
        for name in names:
            config = load_config(name)
            rows.append({"name": name, "task": config.data.task, "model": config.model.name,
                         "description": preset_description(name)})
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    width = max((len(name) for name in names), default=0)
    for name in names:
        print(f"{name:<{width}}  {preset_description(name)}")
    return 0


def register(commands) -> None:
    config = commands.add_parser(
        "config", help="list the presets, show a resolved config",
        **documented(
            "Inspect configs. A config is a YAML file or a preset shipped with neuromath, named without a path as "
            "<task>/<model> (word_problems/graph2tree); a preset names only what differs from the defaults.",
            "neuromath config list",
            "neuromath config list --task identities",
            "neuromath config show word_problems/graph2tree --set model.encoder_hidden=512",
        ),
    )
    config_commands = config.add_subparsers(dest="config_command", required=True, metavar="COMMAND",
                                            help="list or show")
    listing = config_commands.add_parser(
        "list", help="print every shipped preset with a one-line description",
        **documented(
            "Print the name of every preset shipped with neuromath and what it trains, one per line. A preset's name "
            "is what --config takes (train, sweep, cv, config show).",
            "neuromath config list",
            "neuromath config list --task word_problems",
            "neuromath config list --json",
        ),
    )
    listing.add_argument("--task", choices=sorted({name.split("/", 1)[0] for name in preset_names()}),
                         help="only the presets of this task family")
    add_json_option(listing, 'a JSON list: {"name", "task", "model", "description"} for each preset')
    listing.set_defaults(handler=command_config_list)
    show = config_commands.add_parser(
        "show", help="print the resolved config: defaults, the file's keys, overrides",
        **documented(
            "Print the config a run would use, as YAML: every key that applies to its task and model, the defaults "
            "included, with the preset's or file's keys and the --set overrides applied. Keys that do not apply, "
            "unknown keys, unknown model or task names and values out of range are errors, as for train.",
            "neuromath config show word_problems/graph2tree",
            "neuromath config show identities/tree_lstm --set model.d_model=100",
            "neuromath config show my_config.yaml",
        ),
    )
    show.add_argument("config", metavar="CONFIG", help="a preset name (word_problems/graph2tree) or a YAML file")
    show.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    show.set_defaults(handler=command_config_show)
