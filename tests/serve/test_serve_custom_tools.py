"""Freeform (`custom`) tools on `/v1/responses`, as Codex CLI offers `apply_patch`: a call comes
back as a `custom_tool_call` whose `input` is the raw text (unwrapped when the model wrapped it
in JSON anyway), in the response object and in its stream; the call and its output come back
in the next request and go into the prompt as raw text. The real server on the tiny model,
steered here to call the first tool with a patch (`PatchSteering`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai
import pytest
from serve_helpers import CALL_GRAMMAR, Running, Steering, running_server

from gptoss_local.backends.base import (
    BackendInfo,
    Capabilities,
    GenerationSettings,
    Reply,
    ReplyRequest,
    UnsupportedRequest,
    check_request,
)
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.ollama.backend import OllamaBackend
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.conversation import Conversation, Message, TextInput, Tool
from gptoss_local.harmony import render_prompt
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.responses_reply import unwrapped
from gptoss_local.serve.service import Service

PATCH = "*** Begin Patch\n*** Add File: x.txt\n+hello\n*** End Patch\n"
LARK = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\n%import common.LF\n'
APPLY_PATCH = {
    "type": "custom", "name": "apply_patch",
    "description": "The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, "
                   "so do not wrap the patch in JSON.",
    "format": {"type": "grammar", "syntax": "lark", "definition": LARK},
}  # fmt: skip
SHELL = {"type": "function", "name": "shell", "parameters": {"type": "object"}}
# What the steered model writes to the tool, by the user's first word.
WRITTEN = {
    "raw": PATCH,
    "quoted": json.dumps(PATCH),
    "wrapped": json.dumps({"input": PATCH}),
}


def gbnf(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


class PatchSteering(Steering):
    """Steering that calls a freeform first tool with the text the user's first word names."""

    def _options(self, conversation: Conversation) -> LlamaOptions:
        last, tools = conversation.messages[-1], conversation.tools
        if not (tools and tools[0].text_input and last.role == "user"):
            return super()._options(conversation)
        body = WRITTEN[last.content.split()[0]]
        recipient = f"{tools[0].namespace}.{tools[0].name}"
        grammar = CALL_GRAMMAR.replace("RECIPIENT", recipient)
        grammar = grammar[: grammar.rindex("<|message|>")] + f"<|message|> {gbnf(body)}"
        return replace(self._call, grammar=grammar)


def patch_server(gguf: Path) -> AbstractContextManager[Running]:
    """As serve_helpers.running_server, steered by `PatchSteering`."""
    return running_server(gguf, steer=PatchSteering)


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with patch_server(tiny_gguf) as running:
        yield running


@pytest.fixture
def client(served: Running) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=60)


def ask(client: openai.OpenAI, given: Any, tools: list[Any], **extra: Any) -> Any:
    """The response to `given` (the input: text, or items)."""
    return client.responses.create(model="tiny", input=given, tools=tools, **extra)


@pytest.mark.parametrize("written", sorted(WRITTEN))
def test_a_call_to_a_custom_tool_is_a_custom_tool_call_of_the_raw_text(
    client: openai.OpenAI, served: Running, written: str
) -> None:
    response = ask(client, f"{written} add x.txt", [APPLY_PATCH, SHELL])
    assert [item.type for item in response.output] == ["reasoning", "custom_tool_call"]
    call = response.output[1].model_dump(exclude_none=True)
    assert call.pop("id").startswith("ctc_") and call.pop("call_id").startswith("call_")
    assert call == {"type": "custom_tool_call", "name": "apply_patch", "input": PATCH,
                    "status": "completed"}  # fmt: skip
    assert response.tools[0].model_dump(exclude_none=True) == APPLY_PATCH
    tool = served.seen.conversations[-1].tools[0]
    assert tool.text_input == TextInput("lark", LARK)


def test_the_stream_gives_the_custom_call_in_its_events_in_order(client: openai.OpenAI) -> None:
    events = list(ask(client, "wrapped add x.txt", [APPLY_PATCH], stream=True))
    at = next(i for i, e in enumerate(events) if e.type == "response.custom_tool_call_input.delta")
    added, delta, done, item_done = events[at - 1 : at + 3]
    assert [added.type, done.type, item_done.type] == [
        "response.output_item.added", "response.custom_tool_call_input.done",
        "response.output_item.done",
    ]  # fmt: skip
    assert (added.item.type, added.item.input) == ("custom_tool_call", "")
    assert delta.item_id == done.item_id == added.item.id == item_done.item.id
    assert delta.output_index == done.output_index == added.output_index == 1
    assert delta.delta == done.input == item_done.item.input == PATCH
    final = events[-1]
    assert final.type == "response.completed" and events[at + 3].type == "response.completed"
    assert final.response.output[1].input == PATCH
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(len(events)))


def test_a_custom_tool_in_a_namespace_is_called_with_its_namespace(
    client: openai.OpenAI, served: Running
) -> None:
    codex = {"type": "namespace", "name": "codex", "description": "Codex's tools.",
             "tools": [APPLY_PATCH, SHELL]}  # fmt: skip
    response = ask(client, "raw add x.txt", [codex])
    call = response.output[1]
    assert (call.type, call.namespace, call.name, call.input) == (
        "custom_tool_call", "codex", "apply_patch", PATCH
    )  # fmt: skip
    assert response.tools[0].model_dump(exclude_none=True)["tools"][0] == APPLY_PATCH
    found = [(t.namespace, t.name) for t in served.seen.conversations[-1].tools]
    assert found == [("codex", "apply_patch"), ("codex", "shell")]


@pytest.mark.parametrize(
    "output", ["Exit code: 0\nOutput:\nDone!", [{"type": "input_text", "text": "Exit code: 0"}]]
)
def test_the_call_and_its_output_come_back_and_the_prompt_holds_the_raw_text(
    client: openai.OpenAI, served: Running, output: Any
) -> None:
    follow = [
        {"type": "message", "role": "user", "content": "raw add x.txt"},
        {"type": "custom_tool_call", "id": "ctc_1", "status": "completed", "call_id": "call_1",
         "name": "apply_patch", "input": PATCH},
        {"type": "custom_tool_call_output", "id": "ctco_1", "call_id": "call_1", "output": output},
    ]  # fmt: skip
    response = ask(client, follow, [APPLY_PATCH, SHELL])
    assert response.output_text == "Hello there"
    sent = served.seen.conversations[-1]
    assistant, result = sent.messages[1:]
    assert [(c.namespace, c.name, c.arguments) for c in assistant.tool_calls] == [
        ("functions", "apply_patch", PATCH)
    ]  # fmt: skip
    assert result.role == "tool" and result.content.startswith("Exit code: 0")
    prompt = render_prompt(list(sent.messages), tools=sent.tools)
    call = "<|start|>assistant to=functions.apply_patch<|channel|>commentary<|message|>"
    assert f"{call}{PATCH}<|call|>" in prompt
    assert (
        "<|start|>functions.apply_patch to=assistant<|channel|>commentary<|message|>Exit" in prompt
    )


@pytest.mark.parametrize(
    ("tool", "words"),
    [
        ({**APPLY_PATCH, "format": {"type": "grammar", "syntax": "ebnf", "definition": "x"}},
         "syntax must be 'lark' or 'regex'"),
        ({**APPLY_PATCH, "format": {"type": "grammar", "syntax": "lark"}}, '"definition"'),
        ({**APPLY_PATCH, "format": {"type": "json"}}, 'of type "text" or "grammar"'),
        ({**APPLY_PATCH, "name": "python"}, "built-in"),
    ],
)  # fmt: skip
def test_a_custom_tool_that_cannot_be_offered_is_a_400_naming_it(
    client: openai.OpenAI, tool: dict[str, Any], words: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        ask(client, "raw add x.txt", [SHELL, tool])
    assert refused.value.param == "tools[1]" and words in refused.value.message


def test_chat_completions_refuses_custom_tools_by_name(client: openai.OpenAI) -> None:
    nested = {"type": "custom", "custom": {"name": "apply_patch"}}
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": "hi"}], tools=[nested]
        )  # type: ignore[list-item]
    assert refused.value.param == "tools[0]" and "/v1/responses only" in refused.value.message


class _JsonToolsOnly:
    """An engine that takes JSON-schema functions only (as Ollama and a server elsewhere)."""

    capabilities = Capabilities(tools=True, namespaces=True)

    def info(self) -> BackendInfo:
        return BackendInfo("json-only", "gpt-oss-20b", "CPU", 4096)

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        raise AssertionError("a refused request never reaches the engine")


def test_an_engine_without_freeform_tools_refuses_them_before_the_queue() -> None:
    service = Service(_JsonToolsOnly(), ("20b",), GenerationSettings())  # type: ignore[arg-type]
    body = {"model": "20b", "input": "hi", "tools": [APPLY_PATCH]}
    with pytest.raises(ApiError) as refused:
        service.post("/v1/responses", body, threading.Event())
    assert refused.value.status == 400 and refused.value.param == "tools"
    assert "freeform tools" in refused.value.message


def test_only_the_engine_that_renders_harmony_offers_freeform_tools() -> None:
    assert LlamaCppBackend.capabilities.freeform_tools
    assert not OllamaBackend.capabilities.freeform_tools
    assert not OpenAIClientBackend.capabilities.freeform_tools
    tools = (Tool("apply_patch", text_input=TextInput()),)
    asked = ReplyRequest(Conversation((Message("user", "hi"),), tools=tools))
    with pytest.raises(UnsupportedRequest) as refused:
        check_request(OllamaBackend.capabilities, asked, "ollama")
    assert refused.value.field == "tools"
    assert "the ollama engine cannot offer freeform tools" in str(refused.value)
    check_request(LlamaCppBackend.capabilities, asked)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (PATCH, PATCH), ('  "a\\nb"\n', "a\nb"), ('{"patch": "a"}', "a"), ("", ""),
        ('{"a": "x", "b": "y"}', '{"a": "x", "b": "y"}'), ('{"a": 1}', '{"a": 1}'), ("7", "7"),
    ],
)  # fmt: skip
def test_only_text_wrapped_whole_in_json_is_unwrapped(raw: str, text: str) -> None:
    assert unwrapped(raw) == text
