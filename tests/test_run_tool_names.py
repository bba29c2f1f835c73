"""`run --tools FILE` with function names that are no identifiers (``get-weather``, an MCP
tool's ``fs.read``): the prompt declares them by safe names, `--tool-choice` takes the file's
name, and a call comes back by the file's name, here through `serve` on the tiny model (which
is steered to call the first tool offered, tests/serve_helpers.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from serve_helpers import Running, running_server

from gptoss_local.backends.base import ToolChoice
from gptoss_local.commands.run_request import tool_choice
from gptoss_local.conversation import Conversation, Message, Tool
from gptoss_local.errors import WishError
from gptoss_local.harmony import render_prompt
from gptoss_local.harmony.names import OPENAI_NAMES, ToolNames

Cli = Callable[..., tuple[int, str, str]]
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}}


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf) as running:
        yield running


def tools_file(tmp_path: Path, *names: str) -> Path:
    path = tmp_path / "tools.json"
    functions = [{"name": n, "description": "The weather.", "parameters": PARAMETERS}
                 for n in names]  # fmt: skip
    path.write_text(json.dumps(functions), encoding="utf-8")
    return path


def test_the_prompt_declares_the_files_names_as_identifiers(cli: Cli, tmp_path: Path) -> None:
    tools = tools_file(tmp_path, "get-weather", "fs.read", "get_weather")
    code, out, err = cli("run", "--tools", str(tools), "--print-prompt", "hi")
    assert code == 0, err
    declared = [Tool(n, "The weather.", PARAMETERS)
                for n in ("get_weather_2", "fs_read", "get_weather")]  # fmt: skip
    assert out == render_prompt([Message("user", "hi")], tools=declared) + "\n"
    assert "get-weather" not in out and "fs.read" not in out


def test_a_call_comes_back_by_the_files_name(cli: Cli, served: Running, tmp_path: Path) -> None:
    tools = tools_file(tmp_path, "get-weather")
    code, out, err = cli("run", "--base-url", served.url, "--tools", str(tools), "--json", "hi")
    assert code == 0, err
    (call,) = [r for r in map(json.loads, out.splitlines()) if r["type"] == "tool_call"]
    assert call == {"type": "tool_call", "name": "get-weather", "arguments": {"city": "Tokyo"}}
    assert [t.name for t in served.seen.conversations[-1].tools] == ["get_weather"]


def test_tool_choice_takes_the_files_name() -> None:
    names = ToolNames(["get-weather"], OPENAI_NAMES)
    conversation = Conversation((Message("user", "hi"),), tools=(Tool("get_weather"),))
    assert tool_choice("get-weather", conversation, names) == ToolChoice(name="get_weather")
    with pytest.raises(WishError, match=r"is offered \(get-weather\)"):
        tool_choice("get_time", conversation, names)


def test_a_name_no_api_takes_is_refused_with_the_rule(cli: Cli, tmp_path: Path) -> None:
    tools = tools_file(tmp_path, "get weather")
    code, _out, err = cli("run", "--tools", str(tools), "--print-prompt", "hi")
    assert code == 2 and "must be letters, digits, underscores, hyphens or dots" in err
