"""`gptoss-local tools [list] [--json]` and `gptoss-local tools call NAME JSON`."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import Any

from gptoss_local import config
from gptoss_local.config import Settings
from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.tools import Approvals, ToolInfo, ToolRegistry, browser_tool, open_tools
from gptoss_local.tools.browser_tool import NAME as BROWSER
from gptoss_local.tools.mcp_config import config_path
from gptoss_local.tools.python_tool import NAME as PYTHON


def run_tools(args: argparse.Namespace) -> int:
    """List the tools (exit 1 when some could not be offered), or call one."""
    settings = config.load()
    if args.tools_command == "call":
        return _call(args, settings)
    registry = open_tools(settings, label="call", browser=bool(settings.docs))
    try:
        if args.json:
            _print_json(registry, settings)
        else:
            _print_text(registry, settings)
        for problem in registry.problems:
            print(_("gptoss-local: error: {error}").format(error=problem), file=sys.stderr)
    finally:
        registry.close()
    return 1 if registry.problems else 0


def _print_text(registry: ToolRegistry, settings: Settings) -> None:
    approvals = Approvals(settings.allowed_tools)
    infos = registry.infos()
    width = max((len(info.name) for info in infos), default=0)
    for info in infos:
        where = (
            _("{source}; runs without asking")
            if approvals.allows(info.name)
            else _("{source}; asks first in chat")
        )
        print(f"{info.name:<{width}}  {_summary(info)}")
        print(f"{'':<{width}}  {where.format(source=info.source)}")
        if info.note:
            print(f"{'':<{width}}  {info.note}")
    servers = config_path()
    line = _("MCP servers: {path}") if servers.exists() else _("MCP servers: {path} (none yet)")
    print("\n" + line.format(path=servers))
    if not settings.allowed_tools:
        print(_('Allow tools without asking: allowed_tools = ["python"] in the settings file.'))


def _print_json(registry: ToolRegistry, settings: Settings) -> None:
    approvals = Approvals(settings.allowed_tools)
    doc = {
        "tools": [
            {
                "name": info.name,
                "kind": info.kind,
                "source": info.source,
                "description": info.description,
                "parameters": info.parameters,
                "note": info.note or None,
                "allowed": approvals.allows(info.name),
            }
            for info in registry.infos()
        ],
        "problems": registry.problems,
        "mcp_config": str(config_path()),
        "allowed_tools": list(settings.allowed_tools),
    }
    print(json.dumps(doc, indent=2, ensure_ascii=False))


def _summary(info: ToolInfo) -> str:
    line = info.description.strip().split("\n", 1)[0] or _("(no description)")
    first = line.split(". ", 1)[0].rstrip(".") + "."
    return first if len(first) <= 90 else first[:89] + "…"


def _call(args: argparse.Namespace, settings: Settings) -> int:
    arguments = _arguments(args.arguments)
    # The python tool costs nothing until called; MCP servers only start for their tools.
    browsing = args.name.split(".")[0] == BROWSER
    registry = open_tools(settings, label="call", mcp=args.name != PYTHON and not browsing)
    if browsing:  # one that cannot be offered (no folders, its index locked or damaged) says why
        try:
            registry.set_browser(browser_tool(settings))
        except BaseException:
            registry.close()
            raise
    cancel = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_args: cancel.set())
    try:
        tool = registry.get(args.name)
        if tool is None:
            known = ", ".join(info.name for info in registry.infos()) or _("none")
            hint = "; ".join(registry.problems)
            raise WishError(
                _("no tool named {name} (tools: {known})").format(
                    name=repr(args.name), known=known
                ),
                hint or _("see `gptoss-local tools`"),
            )
        output = registry.call(args.name, arguments, cancel)
    finally:
        signal.signal(signal.SIGINT, previous)
        registry.close()
    if getattr(args, "json", False):
        record = {"name": args.name, "content": output.content, "error": output.error,
                  "truncated": output.truncated, "note": output.note or None}  # fmt: skip
        print(json.dumps(record, ensure_ascii=False))
    else:
        sys.stdout.write(output.content if output.content.endswith("\n") else output.content + "\n")
        if output.note:
            print(_("note: {note}").format(note=output.note), file=sys.stderr)
    if cancel.is_set():
        return 130
    return 1 if output.error else 0


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise WishError(
            _("the arguments are not valid JSON ({error})").format(error=exc),
            _("give a JSON object, e.g. {example}").format(
                example="""gptoss-local tools call python '{"code": "print(1)"}'"""
            ),
        ) from None
    if not isinstance(value, dict):
        raise WishError(
            _("the arguments must be a JSON object, not {kind}").format(kind=type(value).__name__)
        )
    return value
