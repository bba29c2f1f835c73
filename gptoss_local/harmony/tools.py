"""Tools given as OpenAI-style JSON, checked before they reach a prompt.

`run --tools FILE` and the server's `tools` parameter both take this shape: the Chat
Completions form `{"type": "function", "function": {"name", "description", "parameters"}}` or
the flat form of the Responses API and of a tools file, `{"name", "description", "parameters"}`.
The Responses API also groups tools in namespaces (`namespace_tools`) and has freeform tools,
whose input is raw text (`custom_tool`: Codex's ``apply_patch``). Given the request's
`ToolNames`, a tool's name is the client's, and the `Tool` has the model's name for it. Our own
client writes the built-in tools and namespaced functions in these shapes too (`builtin_json`,
`namespace_json`), for our engine to read back (`builtin_tool`, `namespace_tools`) and render as
it would here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from gptoss_local.conversation import TEXT_SYNTAXES, BuiltinTool, TextInput, Tool
from gptoss_local.harmony.names import ToolNames
from gptoss_local.harmony.render import render_prompt
from gptoss_local.harmony.schema import check


def offered_namespaces(items: Any) -> list[str]:
    """The names of the namespaces in a `tools` array, in order."""
    found = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and item.get("type") == "namespace":
            found.append(item.get("name"))
    return [name for name in found if isinstance(name, str)]


def offered_names(items: Any) -> list[str]:
    """The names of the tools in a `tools` array, in order, inside namespaces too (what is
    not a tool of a known shape is skipped: reading it refuses it)."""
    found: list[str] = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        if item.get("type") == "namespace":
            found += offered_names(item.get("tools"))
            continue
        spec = item.get("function", item)
        name = spec.get("name") if isinstance(spec, dict) else None
        if isinstance(name, str):
            found.append(name)
    return found


def namespace_tools(item: dict[str, Any], index: int, names: ToolNames | None = None) -> list[Tool]:
    """The tools of a namespace, `{"type": "namespace", "name", "description", "tools":
    [function or custom tools]}`, which the model calls as ``NAME.TOOL``.

    Raises:
        ValueError: no name, a name that is not an identifier (or a built-in's), no tools,
            or a tool `function_tool` or `custom_tool` refuses.
    """
    name, description = item.get("name"), item.get("description") or ""
    inside = item.get("tools")
    if not isinstance(name, str) or not isinstance(description, str):
        raise ValueError(f'namespace tool {index} needs a "name" and a text "description"')
    try:
        space = name if names is None else names.namespaces.model(name)
    except ValueError as exc:
        raise ValueError(f"namespace {name!r} cannot be offered: {exc}") from None
    if not isinstance(inside, list) or not inside:
        raise ValueError(f'namespace {name!r} needs "tools", an array of function or custom tools')
    tools = []
    for place, spec in enumerate(inside):
        custom = isinstance(spec, dict) and spec.get("type") == "custom"
        tool = custom_tool(spec, place, names) if custom else function_tool(spec, place, names)
        try:
            tools.append(replace(tool, namespace=space, namespace_description=description))
        except ValueError as exc:
            raise ValueError(f"namespace {name!r} cannot be offered: {exc}") from None
    return tools


def function_tool(item: Any, index: int, names: ToolNames | None = None) -> Tool:
    """The tool `item` describes (`index`: its place in the list, for messages; `names`: the
    request's, which give the tool the model's name for it).

    Raises:
        ValueError: the item is not a function tool, has no name, a name that is not an
            identifier or collides with a built-in tool, or a malformed `parameters` schema.
    """
    kind = item.get("type", "function") if isinstance(item, dict) else "function"
    if kind != "function":
        raise ValueError(f"tool {index} is of type {kind!r}: only function tools are offered")
    spec = item.get("function", item) if isinstance(item, dict) else item
    name = spec.get("name") if isinstance(spec, dict) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f'tool {index} needs a "name" (a JSON object with one)')
    description, parameters = spec.get("description") or "", spec.get("parameters")
    if not isinstance(description, str) or not isinstance(parameters, (dict, type(None))):
        raise ValueError(
            f'tool {name!r}: "description" must be text and "parameters" a JSON schema object'
        )
    try:
        tool = Tool(_named(name, names), description, parameters)
        if parameters is not None:
            check(parameters)  # rendering takes anything; a person's mistake is told here
        render_prompt([], tools=[tool])
    except ValueError as exc:  # a name that is not an identifier, or a built-in's
        raise ValueError(f"tool {name!r} cannot be offered: {exc}") from None
    except (TypeError, AttributeError, KeyError, RecursionError) as exc:
        raise ValueError(f'tool {name!r}: its "parameters" schema is malformed ({exc})') from None
    return tool


def custom_tool(item: dict[str, Any], index: int, names: ToolNames | None = None) -> Tool:
    """The freeform tool `item` describes, `{"type": "custom", "name", "description",
    "format"}` (`index`: its place in the list, for messages): the model writes its input as
    raw text. `format` is `{"type": "text"}` (the same when absent) or `{"type": "grammar",
    "syntax": "lark" or "regex", "definition"}`; the grammar is shown to the model, not
    enforced while it writes (see `TextInput`).

    Raises:
        ValueError: no name, a name that is not an identifier or a built-in's, a description
            that is not text, or a format of another type or syntax, or a grammar without
            its definition.
    """
    name, description = item.get("name"), item.get("description") or ""
    if not isinstance(name, str) or not name:
        raise ValueError(f'custom tool {index} needs a "name"')
    if not isinstance(description, str):
        raise ValueError(f'tool {name!r}: "description" must be text')
    try:
        tool = Tool(_named(name, names), description, text_input=_text_input(item.get("format")))
        render_prompt([], tools=[tool])
    except ValueError as exc:
        raise ValueError(f"tool {name!r} cannot be offered: {exc}") from None
    return tool


def _named(name: str, names: ToolNames | None) -> str:
    """The model's name for the tool the client names `name` (without `names`, `name`)."""
    return name if names is None else names.model(name)


def _text_input(given: Any) -> TextInput:
    """A custom tool's `format` as the text it takes."""
    kind = given.get("type") if isinstance(given, dict) else given
    if given is None or kind == "text":
        return TextInput()
    if kind != "grammar":
        raise ValueError(f'its format must be of type "text" or "grammar", not {kind!r}')
    syntax, definition = given.get("syntax"), given.get("definition")
    grammars = " or ".join(repr(s) for s in TEXT_SYNTAXES if s != "text")
    if syntax not in TEXT_SYNTAXES or syntax == "text":
        raise ValueError(f"its grammar's syntax must be {grammars}, not {syntax!r}")
    if not isinstance(definition, str) or not definition.strip():
        raise ValueError(f'its {syntax} grammar needs a "definition" (text)')
    return TextInput(syntax, definition)


def tool_json(tool: Tool) -> dict[str, Any]:
    """A function tool in the flat form `function_tool` reads (its namespace left out)."""
    out: dict[str, Any] = {"type": "function", "name": tool.name, "description": tool.description}
    if tool.parameters is not None:  # left out, the function takes no arguments
        out["parameters"] = tool.parameters
    return out


def namespace_json(namespace: str, tools: Sequence[Tool]) -> dict[str, Any]:
    """The functions of one namespace as the item `namespace_tools` reads (the namespace's
    description is the first one its tools give, as the renderer takes it)."""
    described = next((t.namespace_description for t in tools if t.namespace_description), "")
    return {"type": "namespace", "name": namespace, "description": described,
            "tools": [tool_json(t) for t in tools]}  # fmt: skip


def builtin_json(tool: BuiltinTool) -> dict[str, Any]:
    """A built-in tool as the JSON `builtin_tool` reads: its name, its description as the
    system message shows it, and the browser's functions."""
    return {"name": tool.name, "description": tool.description,
            "functions": [tool_json(f) for f in tool.functions]}  # fmt: skip


def builtin_tool(item: Any, index: int) -> BuiltinTool:
    """The built-in tool `item` describes (`builtin_json`'s shape; `index`: its place).

    Raises:
        ValueError: no name or description, a name that is no built-in's, functions for
            python or none for the browser, or a function `function_tool` refuses.
    """
    name = item.get("name") if isinstance(item, dict) else None
    description = item.get("description") if isinstance(item, dict) else None
    if not isinstance(name, str) or not isinstance(description, str):
        raise ValueError(f'built-in tool {index} needs a "name" and a text "description"')
    functions = item.get("functions") or []
    if not isinstance(functions, list):
        raise ValueError(f'built-in tool {name!r}: "functions" must be an array')
    inside = tuple(function_tool(spec, place) for place, spec in enumerate(functions))
    return BuiltinTool(name, description, inside)
