"""Function tools given as OpenAI-style JSON, checked before they reach a prompt.

`run --tools FILE` and the server's `tools` parameter both take this shape: the Chat
Completions form `{"type": "function", "function": {"name", "description", "parameters"}}` or
the flat form of the Responses API and of a tools file, `{"name", "description", "parameters"}`.
"""

from __future__ import annotations

from typing import Any

from gptoss_local.conversation import Tool
from gptoss_local.harmony.render import render_prompt
from gptoss_local.harmony.schema import check


def function_tool(item: Any, index: int) -> Tool:
    """The tool `item` describes (`index`: its place in the list, for messages).

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
        tool = Tool(name, description, parameters)
        if parameters is not None:
            check(parameters)  # rendering takes anything; a person's mistake is told here
        render_prompt([], tools=[tool])
    except ValueError as exc:  # a name that is not an identifier, or a built-in's
        raise ValueError(f"tool {name!r} cannot be offered: {exc}") from None
    except (TypeError, AttributeError, KeyError, RecursionError) as exc:
        raise ValueError(f'tool {name!r}: its "parameters" schema is malformed ({exc})') from None
    return tool
