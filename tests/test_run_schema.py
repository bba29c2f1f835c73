"""`run --schema` and `--tool-choice` as `run` reads them: a schema file or inline JSON (a
refusal without a traceback for anything else), and the tool to call among those offered (the
tool loop asks them of the replies: tests/tools/test_tools_loop.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import chat
from installed_cli import assert_refused, gptoss

from gptoss_local.backends.base import ResponseFormat, ToolChoice
from gptoss_local.commands.run_request import answer_problem, response_format, tool_choice
from gptoss_local.conversation import Conversation, Message, Tool
from gptoss_local.errors import WishError

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def test_a_schema_file_or_inline_json(tmp_path: Path) -> None:
    path = tmp_path / "person.json"
    path.write_text(json.dumps(SCHEMA), encoding="utf-8")
    assert response_format(str(path)) == ResponseFormat(SCHEMA, name="person")
    odd = tmp_path / "my schema.v2.json"  # not a name OpenAI's API takes
    odd.write_text("{}", encoding="utf-8")
    assert response_format(str(odd)) == ResponseFormat({}, name="response")
    assert response_format(json.dumps(SCHEMA)) == ResponseFormat(SCHEMA)
    assert response_format(None) is None


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("missing.json", "missing.json: no such file"),
        ("[1, 2]", "a JSON schema is an object, not a list"),
        ('"object"', "not a string"),
        ('{"type": ', "--schema: not JSON"),
        ("[" * 100_000, "nested too deeply"),
    ],
)
def test_what_is_not_a_schema_is_refused(given: str, words: str) -> None:
    with pytest.raises(WishError, match="--schema") as refused:
        response_format(given)
    assert words in str(refused.value)


def test_a_file_that_is_not_json_is_refused_by_the_command(tmp_path: Path) -> None:
    bad = tmp_path / "schema.json"
    bad.write_bytes(b"\xff\xfe not text")
    assert_refused(gptoss("run", "--schema", str(bad), "hi"), f"--schema {bad}: not JSON")
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    assert_refused(gptoss("run", "--schema", str(listed), "hi"), "is an object, not a list")
    assert_refused(gptoss("run", "--schema", str(tmp_path / "nope.json"), "hi"), "no such file",
                   "--schema '{")  # fmt: skip


def test_the_tool_to_call_is_one_offered() -> None:
    offered = Conversation((Message("user", "hi"),), tools=(Tool("get_weather"), Tool("ask")))
    assert tool_choice(None, offered) == tool_choice("auto", chat("hi")) == ToolChoice()
    assert tool_choice("required", offered) == ToolChoice(required=True)
    assert tool_choice("ask", offered) == ToolChoice(name="ask")
    with pytest.raises(WishError, match=r"no function tool of that name .*get_weather, ask"):
        tool_choice("get_time", offered)
    with pytest.raises(WishError, match="no function tools are offered") as none:
        tool_choice("required", chat("hi"))
    assert "--tools FILE" in str(none.value)


def test_an_answer_is_held_to_its_schema() -> None:
    assert answer_problem('{"name": "Ada"}', ResponseFormat(SCHEMA)) is None
    assert answer_problem('{"name": 7}', ResponseFormat(SCHEMA))
    assert answer_problem("Ada", ResponseFormat(SCHEMA))
    assert (
        answer_problem("[1]", ResponseFormat()) and answer_problem("{}", ResponseFormat()) is None
    )


def test_a_schema_that_loops_with_no_way_out_is_refused(tmp_path: Path) -> None:
    """Before, the grammar reached llama.cpp, which refused it once the model was loaded."""
    loop = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    with pytest.raises(WishError, match="--schema") as refused:
        response_format(json.dumps(loop))
    assert "#/$defs/a refers only to itself" in str(refused.value)
    assert "way out" in str(refused.value)
    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
    assert response_format(json.dumps(tree)) == ResponseFormat(tree)
    path = tmp_path / "loop.json"
    path.write_text(json.dumps(loop), encoding="utf-8")
    assert_refused(gptoss("run", "--schema", str(path), "hi"), "refers only to itself")
