"""`harmony.names`: the safe names a request's tools get in the prompt, and the way back.

Identifiers keep their names (their prompt is unchanged); every other name gets an identifier
of its own, the same for each use in the request, never another tool's; the model's calls map
back to the client's exact name. What each API refuses is refused with the rule's words.
"""

from __future__ import annotations

import pytest

from gptoss_local.harmony import render_prompt
from gptoss_local.harmony.names import (
    ANTHROPIC_NAMES,
    ANY_NAME,
    OPENAI_NAMES,
    ToolNames,
    safe_name,
)
from gptoss_local.harmony.tools import (
    function_tool,
    namespace_tools,
    offered_names,
    offered_namespaces,
)


@pytest.mark.parametrize(
    ("given", "safe"),
    [
        ("mcp__my-server__do_thing", "mcp__my_server__do_thing"),
        ("get-weather", "get_weather"),
        ("fs.read", "fs_read"),
        ("2fa-check", "_2fa_check"),
        ("naïve tool", "na_ve_tool"),
    ],
)
def test_a_name_becomes_an_identifier_readably(given: str, safe: str) -> None:
    assert safe_name(given) == safe
    names = ToolNames([given])
    assert names.model(given) == safe and names.client(safe) == given


def test_identifiers_keep_their_names_and_others_step_aside_whatever_the_order() -> None:
    given = ["get-weather", "get.weather", "get_weather", "get_weather_2"]
    names = ToolNames(given, OPENAI_NAMES)
    found = [names.model(n) for n in given]
    assert found == ["get_weather_3", "get_weather_4", "get_weather", "get_weather_2"]
    assert [names.client(n) for n in found] == given
    again = ToolNames(given, OPENAI_NAMES)  # the same request, the same names
    assert [again.model(n) for n in given] == found


def test_a_name_first_met_in_the_history_takes_no_offered_tools_name() -> None:
    names = ToolNames(["fs-read"])
    assert names.model("fs-read") == "fs_read"
    assert names.model("fs_read") == "fs_read_2"  # an identifier, but taken: its own name
    assert names.model("other") == "other" and names.client("other") == "other"
    assert names.known("fs-read") == "fs_read" and names.known("unseen") is None


def test_calls_map_back_by_namespace() -> None:
    names = ToolNames(["get-weather"])
    assert names.called("get_weather") == names.called("functions.get_weather") == "get-weather"
    assert names.call("functions.get_weather") == ("functions", "get-weather")
    assert names.called("browser.search") == "browser.search"  # no tool of the request's
    assert names.called("maths.get_weather") == "maths.get-weather"


@pytest.mark.parametrize(
    ("rule", "name", "words"),
    [
        (OPENAI_NAMES, "get weather", "letters, digits"),
        (OPENAI_NAMES, "", "letters, digits"),
        (ANTHROPIC_NAMES, "a/b", "letters, digits"),
        (ANY_NAME, "", "a non-empty string"),
    ],
)
def test_names_an_api_refuses_are_refused_by_its_rule(rule: object, name: str, words: str) -> None:
    names = ToolNames([name], rule)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=words):
        names.model(name)


def test_names_an_api_takes_are_served() -> None:
    assert ToolNames(["x" * 300], OPENAI_NAMES).model("x" * 300) == "x" * 300
    assert ToolNames([], ANTHROPIC_NAMES).model("a-" * 64) == "a_" * 64
    assert ToolNames([], ANY_NAME).model("read file") == "read_file"


def test_a_tool_read_with_the_names_has_the_safe_name_and_renders_as_an_identifiers_would() -> None:
    items = [{"type": "function", "function": {"name": "get-weather", "description": "W."}},
             {"type": "namespace", "name": "ns", "tools": [{"name": "a.b"}]}, 7]  # fmt: skip
    assert offered_names(items) == ["get-weather", "a.b"]
    names = ToolNames(offered_names(items), OPENAI_NAMES)
    tool = function_tool(items[0], 0, names)
    plain = function_tool({"name": "get_weather", "description": "W."}, 0)
    assert tool == plain
    assert render_prompt([], tools=[tool]) == render_prompt([], tools=[plain])
    with pytest.raises(ValueError, match="cannot be offered: tool name 'a b' must be letters"):
        function_tool({"name": "a b"}, 0, names)


def test_namespaces_are_named_apart_from_tools() -> None:
    names = ToolNames(["read-file"], OPENAI_NAMES, ["my-server", "my_server"])
    assert names.namespaces.model("my-server") == "my_server_2"
    assert names.namespaces.model("functions") == "functions"
    assert names.call("my_server_2.read_file") == ("my-server", "read-file")
    assert names.called("my_server.read_file") == "my_server.read-file"
    with pytest.raises(ValueError, match="namespace name 'a b' must be"):
        names.namespaces.model("a b")
    space = {"type": "namespace", "name": "my-server", "tools": [{"name": "read-file"}]}
    assert offered_namespaces([space, {"name": "x"}]) == ["my-server"]
    (tool,) = namespace_tools(space, 0, names)
    assert (tool.namespace, tool.name) == ("my_server_2", "read_file")
