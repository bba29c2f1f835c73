"""The commands as `cli.py` collects them from `commands/specs/`: each name declared once, each
handler found where its spec says, and building the parser loads no handler and no heavy
library (so `--help` stays fast)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

from gptoss_local.cli import BY_NAME, COMMANDS, HANDLERS

HEAVY = {"llama_cpp", "textual", "rich", "pynvml", "psutil", "platformdirs", "ollama"}
PROBE = """
import json, sys
from gptoss_local import cli
for words in (["--help"], ["doctor"], ["chats", "export", "1"], ["codex", "exec", "hi"]):
    try:
        cli._parse(words)
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def test_each_name_is_declared_once() -> None:
    names = [name for command in COMMANDS for name in (command.name, *command.aliases)]
    assert len(names) == len(set(names)) == len(BY_NAME)


def test_every_handler_is_a_function_of_its_command_module() -> None:
    for name, target in HANDLERS.items():
        module, _colon, function = target.partition(":")
        assert module.startswith("gptoss_local.commands.") and ".specs" not in module, name
        assert callable(getattr(importlib.import_module(module), function)), name


def test_the_parser_loads_no_handler_and_no_heavy_library() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    handlers = {target.partition(":")[0] for target in HANDLERS.values()}
    assert loaded & handlers == set()
    assert {name.split(".")[0] for name in loaded} & HEAVY == set()
