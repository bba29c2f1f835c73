"""The part of the next prompt that is already known before the user writes it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from gptoss_local.conversation import BuiltinTool, Message, Tool
from gptoss_local.harmony.render import ResponseFormatText, render_prompt

_NEXT_USER = "<|start|>user<|message|>"


def render_next_turn_prefix(
    messages: Iterable[Message],
    *,
    effort: str = "medium",
    instructions: str | None = None,
    tools: Iterable[Tool] = (),
    current_date: dt.date | None = None,
    knowledge_cutoff: str = "2024-06",
    keep_past_tool_calls: bool = False,
    builtin_tools: Iterable[BuiltinTool] = (),
    response_format: ResponseFormatText | None = None,
) -> str:
    """The text every prompt of the next turn starts with: the conversation as it will be
    rendered once the user adds a message, up to where that message begins.

    Rendering rules depend on what follows (reasoning of finished turns is dropped once a new
    user message comes), so this renders with a placeholder message and cuts it off, rather
    than rendering the history as it stands. Arguments are those of `render_prompt`; pass
    the same ones the next prompt will use (`keep_past_tool_calls` included), or the two part
    ways where the last turn's calls are.
    """
    text = render_prompt(
        [*messages, Message("user", "")],
        effort=effort,
        instructions=instructions,
        tools=tools,
        current_date=current_date,
        knowledge_cutoff=knowledge_cutoff,
        keep_past_tool_calls=keep_past_tool_calls,
        builtin_tools=builtin_tools,
        response_format=response_format,
    )
    return text[: text.rindex(_NEXT_USER)]
