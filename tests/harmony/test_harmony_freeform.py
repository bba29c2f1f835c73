"""Freeform tools (raw text input, as Codex's `apply_patch`) in the Harmony prompt.

openai-harmony has no such tools, so the oracle is handed their nearest form: a function of
one string whose description ends with the lines that say its input is raw text; a call in the
history is a message to the tool without a content type. Our prompt must equal that, byte for
byte, and function tools beside them must render as they always did.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import harmony_spec as spec
import openai_harmony as oh
import pytest
from harmony_cases import DATE, HELLO

from gptoss_local.conversation import Message, TextInput, Tool, ToolCallRecord
from gptoss_local.harmony import render_prompt
from gptoss_local.harmony.tools import custom_tool, namespace_tools

LARK = (
    'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\n\n%import common.LF\n'
)
PATCH = "*** Begin Patch\n*** Add File: x.txt\n+hello\n*** End Patch\n"
APPLY_PATCH = Tool(
    "apply_patch", "Edits files.\nFREEFORM: no JSON.", text_input=TextInput("lark", LARK)
)
WEATHER = Tool(
    "get_weather", "The weather.", {"type": "object", "properties": {"city": {"type": "string"}}}
)
NOTE = Tool("note", "", text_input=TextInput())
SAYS_TEXT = (
    "// Its input is plain text, not JSON: write the text itself as the message, not wrapped in "
    "quotes or an object.\n"
)
DEVELOPER = (
    "<|start|>developer<|message|># Tools\n\n## functions\n\nnamespace functions {\n\n"
    "// Edits files.\n// FREEFORM: no JSON.\n" + SAYS_TEXT
    + "// The text follows this lark grammar:\n"
    '// start: begin_patch hunk+ end_patch\n// begin_patch: "*** Begin Patch" LF\n// \n'
    "// %import common.LF\ntype apply_patch = (_: string) => any;\n\n"
    "// The weather.\ntype get_weather = (_: {\ncity?: string,\n}) => any;\n\n"
    + SAYS_TEXT + "type note = (_: string) => any;\n\n} // namespace functions<|end|>"
)  # fmt: skip
KEEP_ALL = oh.RenderConversationConfig(auto_drop_analysis=False)


def as_function(tool: Tool) -> Tool:
    """The function openai-harmony renders as our freeform tool: one string, the lines about
    its text at the end of its description."""
    if tool.text_input is None:
        return tool
    shown = render_prompt([], tools=[tool])
    start = shown.index("// ", shown.index(f"namespace {tool.namespace} {{"))
    lines = shown[start : shown.index(f"type {tool.name} =")].splitlines()
    description = "\n".join(line.removeprefix("// ") for line in lines)
    return replace(tool, description=description, text_input=None, parameters={"type": "string"})


def oracle_text(oracle: Any, found: list[oh.Message]) -> str:
    conversation = oh.Conversation.from_messages(found)
    tokens = oracle.encoding.render_conversation_for_completion(
        conversation, oh.Role.ASSISTANT, KEEP_ALL
    )
    return str(oracle.text(tokens))


def raw_call(text: str, recipient: str) -> oh.Message:
    """A call as openai-harmony writes one without a content type."""
    said = oh.Message.from_role_and_content(oh.Role.ASSISTANT, text).with_channel("commentary")
    return said.with_recipient(recipient)


def test_a_freeform_tool_is_a_function_of_text_that_says_so() -> None:
    prompt = render_prompt(HELLO, tools=[APPLY_PATCH, WEATHER, NOTE], current_date=DATE)
    assert DEVELOPER in prompt


@pytest.mark.parametrize(
    ("text_input", "said"),
    [
        (TextInput("regex", r"^\d+$"), "// The text matches this regular expression:\n// ^\\d+$\n"),
        (TextInput(), ""),
    ],
)  # fmt: skip
def test_a_regex_and_plain_text(text_input: TextInput, said: str) -> None:
    prompt = render_prompt(HELLO, tools=[Tool("count", "Counts.", text_input=text_input)])
    assert f"// Counts.\n{SAYS_TEXT}{said}type count = (_: string) => any;\n" in prompt


@pytest.mark.parametrize("namespace", ["functions", "codex"])
def test_freeform_tools_beside_functions_render_as_openai_harmony_renders_their_nearest(
    oracle: Any, namespace: str
) -> None:
    tools = [replace(APPLY_PATCH, namespace=namespace), WEATHER, NOTE]
    ours = render_prompt(HELLO, tools=tools, current_date=DATE)
    functions = [as_function(t) for t in tools]
    assert ours == oracle_text(oracle, spec.preamble(tools=functions, current_date=DATE)
                               + spec.history(HELLO))  # fmt: skip
    # The functions alone: exactly as before, the oracle's own rendering.
    alone = render_prompt(HELLO, tools=[WEATHER], current_date=DATE)
    expected = spec.preamble(tools=[WEATHER], current_date=DATE) + spec.history(HELLO)
    assert alone == oracle_text(oracle, expected)


@pytest.mark.parametrize("keep_past_tool_calls", [False, True])
def test_a_freeform_call_in_the_history_is_its_raw_text(
    oracle: Any, keep_past_tool_calls: bool
) -> None:
    weather = ToolCallRecord("get_weather", '{"city": "Oslo"}')
    patch = ToolCallRecord("apply_patch", PATCH)
    chain = [
        Message("user", "edit"),
        Message("assistant", reasoning="Patch it.", tool_calls=(patch,)),
        Message("tool", "Exit code: 0"),
        Message("assistant", tool_calls=(weather,)),
        Message("tool", "sunny"),
    ]  # fmt: skip
    tools = [APPLY_PATCH, WEATHER]
    ours = render_prompt(chain, tools=tools, current_date=DATE)
    assert "to=functions.apply_patch<|channel|>commentary<|message|>*** Begin Patch\n" in ours
    assert "apply_patch<|channel|>commentary <|constrain|>json" not in ours
    assert "to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{" in ours
    assert "<|start|>functions.apply_patch to=assistant<|channel|>commentary<|message|>Exit" in ours
    found = spec.history(chain)  # user, reasoning, the two calls and their answers
    assert len(found) == 6
    found[2] = raw_call(PATCH, "functions.apply_patch")
    preamble = spec.preamble(tools=[as_function(t) for t in tools], current_date=DATE)
    assert ours == oracle_text(oracle, preamble + found)
    # Once the turn is over, its calls are kept (or not) as any call is.
    later = [*chain, Message("assistant", "Done."), Message("user", "more")]
    kept = render_prompt(later, tools=tools, keep_past_tool_calls=keep_past_tool_calls)
    assert (f"commentary<|message|>{PATCH}<|call|>" in kept) is keep_past_tool_calls


def test_a_freeform_call_whose_tool_is_not_offered_is_a_json_call() -> None:
    """What a call is, the renderer learns from the tools offered with it."""
    call = ToolCallRecord("apply_patch", PATCH)
    chain = [Message("user", "edit"), Message("assistant", tool_calls=(call,))]
    assert "apply_patch<|channel|>commentary <|constrain|>json" in render_prompt(chain)


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        (None, TextInput()),
        ({"type": "text"}, TextInput()),
        ({"type": "grammar", "syntax": "lark", "definition": LARK}, TextInput("lark", LARK)),
        ({"type": "grammar", "syntax": "regex", "definition": "a+"}, TextInput("regex", "a+")),
    ],
)  # fmt: skip
def test_a_custom_tool_is_read_with_its_format(form: Any, expected: TextInput) -> None:
    item = {"type": "custom", "name": "apply_patch", "description": "Edits.", "format": form}
    assert custom_tool(item, 0) == Tool("apply_patch", "Edits.", text_input=expected)


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ({"format": {"type": "json_schema"}}, "format must be of type \"text\" or \"grammar\""),
        ({"format": {"type": "grammar", "syntax": "ebnf", "definition": "x"}},
         "syntax must be 'lark' or 'regex'"),
        ({"format": {"type": "grammar", "syntax": "lark"}}, 'lark grammar needs a "definition"'),
        ({"format": {"type": "grammar", "syntax": "lark", "definition": 7}}, '"definition"'),
        ({"name": "python"}, "built-in"),
        ({"name": "a.b"}, "identifier"),
        ({"name": None}, 'needs a "name"'),
        ({"description": 3}, '"description" must be text'),
    ],
)  # fmt: skip
def test_a_custom_tool_that_cannot_be_offered_is_refused_with_the_reason(
    item: dict[str, Any], words: str
) -> None:
    with pytest.raises(ValueError) as refused:
        custom_tool({"type": "custom", "name": "apply_patch", **item}, 0)
    assert words in str(refused.value)


def test_a_namespace_may_hold_custom_tools() -> None:
    item = {"type": "namespace", "name": "codex", "description": "Codex's tools.", "tools": [
        {"type": "custom", "name": "apply_patch"}, {"type": "function", "name": "ls"}]}  # fmt: skip
    found = namespace_tools(item, 0)
    assert [(t.namespace, t.name, t.text_input) for t in found] == [
        ("codex", "apply_patch", TextInput()), ("codex", "ls", None)
    ]  # fmt: skip


def test_a_freeform_tool_takes_text_only() -> None:
    with pytest.raises(ValueError, match="has no parameters"):
        Tool("apply_patch", parameters={"type": "object"}, text_input=TextInput())
    with pytest.raises(ValueError, match="needs its definition"):
        TextInput("lark")
    with pytest.raises(ValueError, match="no grammar definition"):
        TextInput("text", "a+")
    with pytest.raises(ValueError, match="one of text, lark, regex"):
        TextInput("ebnf", "x")
