"""The answer's format in the prompt: Harmony's "# Response Formats" section closes the developer
message (docs/format.md of openai/harmony, "Structured output"), so the model reasons knowing
the shape of the answer the engine will hold it to."""

from __future__ import annotations

import datetime as dt

from gptoss_local.backends.base import ResponseFormat
from gptoss_local.conversation import Message, Tool
from gptoss_local.harmony.prefix import render_next_turn_prefix
from gptoss_local.harmony.render import render_prompt

DATE = dt.date(2026, 1, 1)
SHAPE = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}}
FORMAT = ResponseFormat(SHAPE, "shopping_list", description="Entries on the list.\nOne per item.")


def developer(prompt: str) -> str:
    start = prompt.index("<|start|>developer<|message|>") + len("<|start|>developer<|message|>")
    return prompt[start : prompt.index("<|end|>", start)]


def test_the_format_closes_the_developer_message() -> None:
    prompt = render_prompt([Message("user", "list")], instructions="Be brief.",
                           current_date=DATE, response_format=FORMAT.prompt_text())  # fmt: skip
    assert developer(prompt) == (
        "# Instructions\n\nBe brief.\n\n# Response Formats\n\n## shopping_list\n\n"
        "// Entries on the list.\n// One per item.\n"
        '{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"}}}}'
    )


def test_after_the_tools_and_alone() -> None:
    tool = Tool("look", "Look up.", {"type": "object", "properties": {}})
    shown = FORMAT.prompt_text()
    with_tools = developer(
        render_prompt(
            [Message("user", "x")], tools=[tool], current_date=DATE, response_format=shown
        )
    )
    assert with_tools.index("# Tools") < with_tools.index("# Response Formats")
    alone = developer(render_prompt([Message("user", "x")], current_date=DATE,
                                    response_format=ResponseFormat().prompt_text()))  # fmt: skip
    assert alone == '# Response Formats\n\n## response\n\n{"type":"object"}'


def test_without_a_format_nothing_changes_and_the_prefix_follows() -> None:
    plain = render_prompt([Message("user", "x")], current_date=DATE)
    assert "<|start|>developer" not in plain
    asked = render_prompt([Message("user", "x")], current_date=DATE,
                          response_format=FORMAT.prompt_text())  # fmt: skip
    prefix = render_next_turn_prefix([], current_date=DATE, response_format=FORMAT.prompt_text())
    assert asked.startswith(prefix) and "# Response Formats" in prefix
