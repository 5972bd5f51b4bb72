"""neuromath config show: print the resolved config of a preset (its keys over the defaults, with overrides), so
nothing is hidden by presets that name only what differs."""

from __future__ import annotations

import argparse

from neuromath.config import show_config


def command_config_show(args: argparse.Namespace) -> int:
    print(show_config(args.config, args.set or []), end="")
    return 0


def register(commands) -> None:
    config = commands.add_parser("config", help="inspect configs")
    config_commands = config.add_subparsers(dest="config_command", required=True, metavar="COMMAND")
    show = config_commands.add_parser("show", help="print the resolved config: defaults, the file's keys, overrides")
    show.add_argument("config", metavar="CONFIG", help="a preset or config file (YAML)")
    show.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    show.set_defaults(handler=command_config_show)
