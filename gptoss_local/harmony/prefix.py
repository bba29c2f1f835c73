"""The part of the next prompt that is already known before the user writes it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gptoss_local.conversation import Message
from gptoss_local.harmony.render import render_prompt

_NEXT_USER = "<|start|>user<|message|>"


def render_next_turn_prefix(messages: Iterable[Message], **options: Any) -> str:
    """The text every prompt of the next turn starts with: the conversation as it will be
    rendered once the user adds a message, up to where that message begins.

    Rendering rules depend on what follows (reasoning of finished turns is dropped once a new
    user message comes), so this renders with a placeholder message and cuts it off, rather
    than rendering the history as it stands. `options` are `render_prompt`'s keyword
    arguments; pass the same ones the next prompt will use (`keep_past_tool_calls` included),
    or the two part ways where the last turn's calls are.
    """
    text = render_prompt([*messages, Message("user", "")], **options)
    return text[: text.rindex(_NEXT_USER)]
