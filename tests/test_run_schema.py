"""`run --schema` and `--tool-choice` as `run` reads them: a schema file or inline JSON (a
refusal without a traceback for anything else), the tool to call among those offered, and the
backend wrapper that asks them of the replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from engine_helpers import chat
from installed_cli import assert_refused, gptoss

from gptoss_local.backends.base import (
    BackendInfo,
    Capabilities,
    Reply,
    ReplyRequest,
    ResponseFormat,
    Stats,
    ToolChoice,
)
from gptoss_local.commands.run_request import (
    AskedBackend,
    answer_problem,
    response_format,
    tool_choice,
)
from gptoss_local.conversation import Conversation, Message, Tool
from gptoss_local.errors import WishError
from gptoss_local.events import Event

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


@dataclass
class _Recording:
    """A backend that records the requests it is asked to stream."""

    asked: list[ReplyRequest] = field(default_factory=list)
    capabilities: Capabilities = field(
        default_factory=lambda: Capabilities(response_format=True, tool_choice=True)
    )
    closed: bool = False

    def info(self) -> BackendInfo:
        return BackendInfo("llamacpp", "m", "cpu", 2048)

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        self.asked.append(request)

        def nothing() -> Generator[Event, None, Stats]:
            return Stats()
            yield  # a generator that ends at once

        return Reply(nothing())

    def prefill(self, request: ReplyRequest, cancel: threading.Event | None = None) -> int:
        return 0

    def keep_conversations(self, max_bytes: int) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def test_the_format_goes_with_every_turn_and_the_forced_call_with_the_first() -> None:
    inner = _Recording()
    fmt = ResponseFormat(SCHEMA)
    asked = AskedBackend(inner, fmt, ToolChoice(required=True))
    for _turn in range(2):
        list(asked.stream(ReplyRequest(chat("hi"))))
    first, second = inner.asked
    assert first.response_format == second.response_format == fmt
    assert first.tool_choice == ToolChoice(required=True) and not second.tool_choice.forced
    assert asked.capabilities is inner.capabilities and asked.info().model == "m"
    asked.close()
    assert inner.closed


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
