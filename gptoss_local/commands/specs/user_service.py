"""`gptoss-local service install|uninstall`: the engine as a user service started at login."""

from __future__ import annotations

import argparse

from gptoss_local.commands.arg_types import keep_alive, port_number
from gptoss_local.commands.specs.command import Command
from gptoss_local.i18n import N_, _
from gptoss_local.serve.keep_alive import DEFAULT_KEEP_ALIVE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The subcommands of `service`."""
    actions = parser.add_subparsers(dest="service_command", metavar="{install,uninstall}")
    actions.required = True
    install = actions.add_parser(
        "install",
        help=_("start the engine at login (a systemd user unit on Linux)"),
        description=_("Write a user service that runs `gptoss-local serve` on loopback at "
                      "login, loading the model on the first request, and start it."),
    )  # fmt: skip
    install.add_argument("--port", type=port_number, default=8080, help=_("default 8080"))
    install.add_argument(
        "--keep-alive", type=keep_alive, default=DEFAULT_KEEP_ALIVE, metavar="DURATION",
        help=_("how long the model stays loaded with no request (default 5m)"),
    )  # fmt: skip
    install.add_argument(
        "--api-key", metavar="KEY",
        help=_("key clients must send (default: $GPTOSS_LOCAL_API_KEY; none on loopback); "
               "kept in a file only you can read, not in the unit"),
    )  # fmt: skip
    actions.add_parser(
        "uninstall",
        help=_("stop the user service and remove it"),
        description=_("Stop the user service `service install` wrote, and remove its files."),
    )


COMMAND = Command(
    name="service",
    help=N_("run the engine as a user service started at login"),
    description=N_(
        "Install or remove a user service that runs `gptoss-local serve` on loopback, so that "
        "every program finds one engine ready: a systemd user unit on Linux; on Windows it says "
        "which scheduled task would do it."
    ),
    add_arguments=add_arguments,
    handler="gptoss_local.commands.user_service:run_service",
)
