"""A Messages request (`POST /v1/messages`) as an `ApiRequest`.

It is read in `RequestReader`'s order, once the fields only Anthropic names are put as that
order reads them: `stop_sequences` as the stop strings, `tool_choice` ({type: auto | any |
tool | none}) as the Responses API's spelling of the same choice, `top_k` over the sampling
settings. `max_tokens` is required, as in Anthropic's API. A field the server does not know
is refused by name, unless it changes nothing a local model could honour and clients send it
anyway (`IGNORED`: `metadata`, `service_tier`, `cache_control`, `context_management`,
...). `anthropic-beta`
headers are not read: what a beta adds comes as fields, and those are held to the same rule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gptoss_local.backends.base import GenerationSettings, ResponseFormat
from gptoss_local.conversation import Message, Tool
from gptoss_local.harmony.names import ANTHROPIC_NAMES, ToolNames
from gptoss_local.harmony.tools import function_tool
from gptoss_local.serve.anthropic import blocks, thinking
from gptoss_local.serve.api_request import ApiRequest, RequestReader
from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.fields import MAX_STOPS, Body
from gptoss_local.serve.limits import Limits, check_stops, check_tools

READ = frozenset({"model", "max_tokens", "messages", "system", "tools", "tool_choice",
                  "stop_sequences", "temperature", "top_p", "top_k", "thinking", "stream",
                  "output_config"})  # fmt: skip
# Claude Code sends `context_management` (clear old thinking or tool results): the prompt is
# then longer than it asked, never other; the rest change nothing here.
IGNORED = frozenset({"metadata", "service_tier", "cache_control", "inference_geo", "speed",
                     "context_management"})  # fmt: skip
# Read by `RequestReader.read` under the names it knows, once put so (`MessagesReader.translated`).
PASSED = ("model", "max_tokens", "messages", "system", "tools", "temperature", "top_p", "stream")
CHOICES = {"auto": "auto", "any": "required", "none": "none"}
MAX_TOP_K = 1_000_000


@dataclass(frozen=True)
class MessagesRequest(ApiRequest):
    """An `ApiRequest` from the Messages API: `carry_reasoning` is True when the client asked
    for thinking blocks (they come anyway in a reply that calls tools, see `reply`), and
    `omit_thinking` when it asked for them without their text (`display: "omitted"`)."""

    omit_thinking: bool = False


class MessagesReader(RequestReader):
    """Reads a Messages request (see the module's docstring). `counting`: the request of
    `count_tokens`, which has no `max_tokens`."""

    param = "messages"
    effort_param = "thinking"
    format_param = "output_config.format"
    max_keys = ("max_tokens",)
    responses = True  # the tool choice is put in the Responses API's spelling
    name_rule = ANTHROPIC_NAMES

    def __init__(self, counting: bool = False) -> None:
        self.counting = counting

    def translated(
        self, sent: Body, defaults: GenerationSettings, limits: Limits
    ) -> tuple[dict[str, Any], GenerationSettings]:
        _refuse_unknown(sent)
        if not self.counting and not sent.present("max_tokens"):
            raise bad_request("max_tokens is required", "max_tokens")
        data = sent.data
        stops = _stop_sequences(data.get("stop_sequences"))
        put = {key: data[key] for key in PASSED if key in data}
        put.update(tool_choice=_choice(data.get("tool_choice")), stop=stops or None)
        put.update(thinking=data.get("thinking"), output_config=data.get("output_config"))
        return put, defaults

    def completed(
        self, asked: ApiRequest, sent: Body, defaults: GenerationSettings
    ) -> MessagesRequest:
        settings = replace(asked.request.settings, top_k=_top_k(sent, defaults.top_k))
        _, shown, omitted = thinking.read_thinking(sent.data.get("thinking"))
        fields = {**vars(asked), "request": replace(asked.request, settings=settings)}
        return MessagesRequest(**{**fields, "carry_reasoning": shown}, omit_thinking=omitted)

    def refuse(self, body: Body) -> None:
        pass  # done on the request as sent (`_refuse_unknown`)

    def history(
        self, body: Body, limits: Limits, names: ToolNames
    ) -> tuple[list[Message], str | None]:
        items = body.items("messages")
        limits.check_count(items or [], "messages")  # before reading them one by one
        messages, system = blocks.conversation(items, names)
        given = [blocks.instructions(body.data.get("system")), *system]
        return messages, "\n\n".join(filter(None, given)) or None

    def effort(self, body: Body) -> Any:
        asked, _, _ = thinking.read_thinking(body.data.get("thinking"))
        named = thinking.read_output_effort(body.data.get("output_config"))
        return named or asked

    def response_format(self, body: Body) -> ResponseFormat | None:
        return None  # `output_config.format` is refused (`_refuse_unknown`)

    def include_usage(self, body: Body) -> bool:
        return True

    def tools(self, body: Body, names: ToolNames) -> tuple[Tool, ...]:
        items = body.items("tools") or []
        check_tools(items)
        return tuple(_tool(item, index, names) for index, item in enumerate(items))


def _refuse_unknown(body: Body) -> None:
    for key in body.data:
        if key not in READ and key not in IGNORED:
            raise bad_request(f"{key} is not supported by this server", key,
                              "unsupported_parameter")  # fmt: skip
    config = body.mapping("output_config") or {}
    for key in config:
        if key != "effort":
            raise bad_request(f"output_config.{key} is not supported by this server",
                              f"output_config.{key}", "unsupported_parameter")  # fmt: skip


def _tool(item: Any, index: int, names: ToolNames) -> Tool:
    """A client tool ({name, description, input_schema}); Anthropic's own tools (bash, web
    search, ...) have a `type` and are refused."""
    where = f"tools.{index}"
    kind = item.get("type", "custom") if isinstance(item, dict) else None
    if kind != "custom":
        raise bad_request(f"tools of type {kind!r} are not supported: offer tools with a name, "
                          "a description and an input_schema", where)  # fmt: skip
    spec = {"type": "function", "name": item.get("name"),
            "description": item.get("description") or "",
            "parameters": item.get("input_schema")}  # fmt: skip
    try:
        return function_tool(spec, index, names)
    except ValueError as exc:
        raise bad_request(str(exc), where) from None


def _choice(value: Any) -> Any:
    """Anthropic's `tool_choice` in the Responses API's spelling (`choice.tool_choice`)."""
    if value is None:
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if isinstance(value, dict) and not isinstance(
        value.get("disable_parallel_tool_use", False), bool
    ):
        raise bad_request("disable_parallel_tool_use must be true or false", "tool_choice")
    if kind in CHOICES:
        return CHOICES[kind]
    if kind == "tool":
        return {"type": "function", "name": value.get("name")}
    raise bad_request('tool_choice.type must be "auto", "any", "tool" or "none"',
                      "tool_choice.type")  # fmt: skip


def _stop_sequences(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        raise bad_request("stop_sequences must be an array of non-empty strings",
                          "stop_sequences")  # fmt: skip
    if len(value) > MAX_STOPS:
        raise bad_request(f"stop_sequences takes at most {MAX_STOPS} strings", "stop_sequences")
    check_stops(value)
    return value


def _top_k(body: Body, default: int) -> int:
    value = body.whole("top_k", 0)
    if value is not None and value > MAX_TOP_K:
        raise bad_request(f"top_k must be at most {MAX_TOP_K:,}", "top_k")
    return default if value is None else value
