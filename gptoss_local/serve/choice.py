"""`tool_choice`, in either API's spelling, as the tools offered and the backend's `ToolChoice`.

- `"auto"` (or nothing): the model decides; `"none"`: no tools are offered at all.
- `"required"`: the reply must call one of the tools.
- One tool by name: Chat Completions `{"type": "function", "function": {"name"}}`, the
  Responses API `{"type": "function", "name"}` (or `"custom"` for a freeform tool, and a
  `namespace` where two namespaces have a tool of that name).
- `{"type": "allowed_tools", ...}` (`allowed_tools: {mode, tools}` in Chat Completions, `mode`
  and `tools` beside the type in the Responses API): only the tools listed are offered, and
  `mode` is "auto" or "required". The prompt then lists fewer tools, so it does not share the
  cached prefix of a request offering them all (OpenAI keeps the cache; this server cannot).

The engine holds a forced choice (`Capabilities.tool_choice`) with a grammar over the call's
arguments, so a tool whose parameters it cannot express cannot be forced (a 400 here); an
engine that cannot force calls at all is refused by `check_request`, naming `tool_choice`.
Hosted tools (web search, MCP) cannot be chosen: the server offers none.
"""

from __future__ import annotations

from typing import Any

from gptoss_local import schemas
from gptoss_local.backends.base import ToolChoice
from gptoss_local.conversation import Tool
from gptoss_local.harmony.names import ToolNames
from gptoss_local.serve.errors import bad_request

PARAM = "tool_choice"
MODES = ("auto", "required")


def tool_choice(
    value: Any, offered: tuple[Tool, ...], responses: bool, names: ToolNames | None = None
) -> tuple[tuple[Tool, ...], ToolChoice]:
    """The tools to offer and the choice, from the request's `tool_choice` (`value`).

    Args:
        value: The field as sent (None when absent).
        offered: The tools the request offers, by the model's names for them.
        responses: The Responses API's spelling (else Chat Completions').
        names: The client's names of the tools and the model's (a choice names a tool as
            the client does).
    """
    names = names or ToolNames()
    if value is None or value == "auto":
        return offered, ToolChoice()
    if value == "none":
        return (), ToolChoice()
    if value == "required":
        _need_tools(offered, PARAM)
        return _held(offered, names), ToolChoice(required=True)
    if not isinstance(value, dict):
        raise bad_request('tool_choice must be "auto", "none", "required" or an object',
                          PARAM)  # fmt: skip
    kind = value.get("type")
    if kind == "allowed_tools":
        return _allowed(value, offered, responses, names)
    if kind in ("function", "custom"):
        tool = _named(value, offered, responses, PARAM, names)
        _held((tool,), names)
        return offered, ToolChoice(name=tool.name, namespace=tool.namespace)
    raise bad_request(
        f"tool_choice of type {kind!r} is not supported: choose a function the request offers",
        f"{PARAM}.type", "unsupported_value",
    )  # fmt: skip


def choice_as_given(choice: ToolChoice, names: ToolNames) -> str | dict[str, Any]:
    """The choice as the Responses API echoes it in its response object (the tool by the
    client's name, `names`)."""
    if choice.name is not None:
        return {"type": "function", "name": names.client(choice.name)}
    return "required" if choice.required else "auto"


def _allowed(
    value: dict[str, Any], offered: tuple[Tool, ...], responses: bool, names: ToolNames
) -> tuple[tuple[Tool, ...], ToolChoice]:
    where = PARAM if responses else f"{PARAM}.allowed_tools"
    spec = value if responses else value.get("allowed_tools")
    if not isinstance(spec, dict):
        raise bad_request("allowed_tools must be an object with mode and tools", where)
    mode, listed = spec.get("mode", "auto"), spec.get("tools")
    if mode not in MODES:
        raise bad_request(f"mode must be auto or required, not {mode!r}", f"{where}.mode")
    if not isinstance(listed, list) or not listed:
        raise bad_request("allowed_tools needs a non-empty list of tools", f"{where}.tools")
    chosen: list[Tool] = []
    for index, entry in enumerate(listed):
        tool = _named(entry, offered, responses, f"{where}.tools[{index}]", names)
        if tool not in chosen:
            chosen.append(tool)
    kept = tuple(t for t in offered if t in chosen)  # in the order offered
    if mode == "required":
        return _held(kept, names), ToolChoice(required=True)
    return kept, ToolChoice()


def _named(
    entry: Any, offered: tuple[Tool, ...], responses: bool, where: str, names: ToolNames
) -> Tool:
    """The offered tool an entry names, by the client's name for it: `{"type": "function",
    "name"}` (Responses) or `{"type": "function", "function": {"name"}}` (Chat
    Completions)."""
    kind = entry.get("type") if isinstance(entry, dict) else None
    if kind not in ("function", "custom"):
        raise bad_request('a tool is chosen as {"type": "function", ...}', where)
    spec = entry if responses else entry.get(kind)
    name = spec.get("name") if isinstance(spec, dict) else None
    if not isinstance(name, str) or not name:
        field = "name" if responses else f"{kind}.name"
        raise bad_request("the chosen tool needs a name", f"{where}.{field}")
    namespace = spec.get("namespace") if isinstance(spec, dict) else None
    _need_tools(offered, where)
    model = names.known(name) or name
    if isinstance(namespace, str):
        namespace = names.namespaces.known(namespace) or namespace
    found = [t for t in offered if t.name == model and namespace in (None, t.namespace)]
    if not found:
        listed = ", ".join(sorted({names.client(t.name) for t in offered}))
        raise bad_request(f"tool_choice names {name!r}, which the request does not offer "
                          f"(it offers {listed})", where)  # fmt: skip
    if len(found) > 1:
        spaces = ", ".join(names.namespaces.client(t.namespace) for t in found)
        raise bad_request(f"{name!r} is a tool of several namespaces ({spaces}): say which "
                          "with namespace", where)  # fmt: skip
    return found[0]


def _held(tools: tuple[Tool, ...], names: ToolNames) -> tuple[Tool, ...]:
    """`tools`, once each one a forced call may go to can be held to its parameters (the
    engine's grammar writes the arguments; `schemas.check_schema` refuses what it cannot
    express, and that is this 400 rather than a failure once the request has waited)."""
    for tool in tools:
        if tool.parameters is None or tool.text_input is not None:
            continue  # no arguments, or raw text: nothing to hold
        name = names.client(tool.name)  # as the client knows it
        try:
            schemas.check_schema(tool.parameters)
        except schemas.SchemaLoop as exc:
            raise bad_request(f"the parameters of {name!r} cannot be answered: {exc}",
                              PARAM) from None  # fmt: skip
        except schemas.SchemaError as exc:
            raise bad_request(f"a call to {name!r} cannot be forced: its parameters "
                              f"cannot be enforced ({exc})", PARAM,
                              "unsupported_value") from None  # fmt: skip
    return tools


def _need_tools(offered: tuple[Tool, ...], where: str) -> None:
    if not offered:
        raise bad_request("tool_choice asks for a tool call, but the request offers no tools",
                          where)  # fmt: skip
