"""Our prompts against openai-harmony's renderer, the one OpenAI's reference inference uses.

openai-harmony is handed the messages the spec keeps (harmony_spec.py) and renders them with
its own dropping switched off; every prompt must then equal its tokens as text, byte for
byte (control-token look-alikes neutralised on both sides, see `Oracle.text`), and, where
the texts hold no look-alikes, tokenize to exactly its tokens.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import harmony_generate as gen
import harmony_spec as spec
import openai_harmony as oh
import pytest
from harmony_cases import CASES, DATE, HELLO
from harmony_schemas import DESCRIPTIONS, SCHEMAS

from gptoss_local.conversation import Message, Tool, ToolCallRecord
from gptoss_local.harmony import WORD_JOINER, render_next_turn_prefix, render_prompt

KEEP_ALL = oh.RenderConversationConfig(auto_drop_analysis=False)


def oracle_prompt(oracle: Any, messages: list[Message], **options: Any) -> tuple[str, list[int]]:
    """openai-harmony's prompt for the next assistant turn, as text and as tokens."""
    keep = options.pop("keep_past_tool_calls", False)
    found = spec.preamble(**options) + spec.history(messages, keep)
    conversation = oh.Conversation.from_messages(found)
    tokens = oracle.encoding.render_conversation_for_completion(
        conversation, oh.Role.ASSISTANT, KEEP_ALL
    )
    return oracle.text(tokens), list(tokens)


def oracle_prefix(oracle: Any, messages: list[Message], **options: Any) -> str:
    """openai-harmony's rendering of the history once a user message follows it."""
    keep = options.pop("keep_past_tool_calls", False)
    kept = spec.history([*messages, Message("user", "")], keep)[:-1]
    conversation = oh.Conversation.from_messages(spec.preamble(**options) + kept)
    return oracle.text(oracle.encoding.render_conversation(conversation, KEEP_ALL))


def check(oracle: Any, messages: list[Message], **options: Any) -> None:
    """Our prompt and next-turn prefix equal openai-harmony's; so do the prompt's tokens
    when nothing in it had to be neutralised."""
    ours = render_prompt(messages, **options)
    text, expected = oracle_prompt(oracle, messages, **options)
    assert ours == text
    if WORD_JOINER not in ours:
        assert oracle.encode(ours) == expected
    prefix = render_next_turn_prefix(messages, **options)
    assert prefix == oracle_prefix(oracle, messages, **options)
    assert render_prompt([*messages, Message("user", "next")], **options).startswith(prefix)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_feature(oracle: Any, name: str) -> None:
    tools = [Tool("f", "Does f.", SCHEMAS[name]), Tool("g", "", {"type": "object"})]
    check(oracle, HELLO, tools=tools, current_date=DATE)


@pytest.mark.parametrize("name", sorted(DESCRIPTIONS))
def test_tool_description_lines(oracle: Any, name: str) -> None:
    tools = [Tool("f", DESCRIPTIONS[name], SCHEMAS["empty_properties"]), Tool("g", "G.")]
    check(oracle, HELLO, tools=tools, current_date=DATE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_cases(oracle: Any, name: str) -> None:
    check(oracle, current_date=DATE, **CASES[name])


@pytest.mark.parametrize("effort", ["low", "medium", "high"])
@pytest.mark.parametrize("instructions", [None, "", "One line.", "Two\nlines.\n", " "])
def test_efforts_and_instructions(oracle: Any, effort: str, instructions: str | None) -> None:
    for date in (dt.date(2024, 2, 29), dt.date(2031, 12, 31)):
        check(oracle, HELLO, effort=effort, instructions=instructions, current_date=date)
        check(oracle, [], effort=effort, instructions=instructions, current_date=date)


def test_knowledge_cutoff(oracle: Any) -> None:
    check(oracle, HELLO, knowledge_cutoff="2025-01", current_date=DATE)


@pytest.mark.parametrize("seed", range(30))
def test_generated_schemas(oracle: Any, seed: int) -> None:
    rng = random.Random(f"schema-{seed}")
    for _ in range(10):
        params = gen.object_schema(rng) if rng.random() < 0.7 else gen.schema(rng)
        tool = Tool("f", gen.text(rng), params if isinstance(params, dict) else None)
        check(oracle, HELLO, tools=[tool], current_date=DATE)


@pytest.mark.parametrize("seed", range(40))
def test_generated_conversations(oracle: Any, seed: int) -> None:
    rng = random.Random(f"conversation-{seed}")
    markers = seed % 2 == 1  # even seeds: no look-alikes in messages, so tokens compare too
    for _ in range(25):
        messages, options = gen.conversation(rng, markers)
        try:
            check(oracle, messages, **options)
        except AssertionError:
            print(gen.describe(messages, options))
            raise


def _said(role: oh.Role, text: str, channel: str | None = None) -> oh.Message:
    msg = oh.Message.from_role_and_content(role, text)
    return msg.with_channel(channel) if channel else msg


def _full_history(*turns: tuple[str, str, str]) -> list[oh.Message]:
    """(question, reasoning, answer) turns with their analysis, as openai-harmony takes them."""
    out = spec.preamble(current_date=DATE)
    for question, reasoning, answer in turns:
        out.append(_said(oh.Role.USER, question))
        out.append(_said(oh.Role.ASSISTANT, reasoning, "analysis"))
        out.append(_said(oh.Role.ASSISTANT, answer, "final"))
    return out


def _our_history(*turns: tuple[str, str, str]) -> list[Message]:
    """The same turns as our messages."""
    out = []
    for question, reasoning, answer in turns:
        out += [Message("user", question), Message("assistant", answer, reasoning=reasoning)]
    return out


def _their_prompt(oracle: Any, found: list[oh.Message]) -> str:
    """openai-harmony's prompt for the next assistant turn, dropping as it does by default."""
    conversation = oh.Conversation.from_messages(found)
    return oracle.text(
        oracle.encoding.render_conversation_for_completion(conversation, oh.Role.ASSISTANT)
    )


def test_openai_harmony_keeps_analysis_after_the_first_final(oracle: Any) -> None:
    """openai-harmony drops analysis only before the first final answer; the spec (and we)
    drop the analysis of every finished turn. The prompts differ by exactly that message."""
    turns = (("q1", "r1", "a1"), ("q2", "r2", "a2"))
    theirs = _their_prompt(oracle, [*_full_history(*turns), _said(oh.Role.USER, "q3")])
    ours = render_prompt([*_our_history(*turns), Message("user", "q3")], current_date=DATE)
    kept = "<|start|>assistant<|channel|>analysis<|message|>r2<|end|>"
    assert "r1" not in theirs and kept in theirs
    assert theirs.replace(kept, "") == ours


def test_openai_harmony_keeps_old_analysis_while_a_chain_runs(oracle: Any) -> None:
    """With a tool call last, openai-harmony drops no analysis at all; we drop the finished
    turn's and keep the running chain's, as the spec says."""
    found = _full_history(("q1", "r1", "a1"))
    found += [_said(oh.Role.USER, "q2"), _said(oh.Role.ASSISTANT, "r2", "analysis")]
    call = _said(oh.Role.ASSISTANT, "{}", "commentary").with_recipient("functions.f")
    found.append(call.with_content_type("<|constrain|>json"))
    theirs = _their_prompt(oracle, found)
    history = [
        *_our_history(("q1", "r1", "a1")),
        Message("user", "q2"),
        Message("assistant", reasoning="r2", tool_calls=(ToolCallRecord("f", "{}"),)),
    ]
    ours = render_prompt(history, current_date=DATE)
    dropped = "<|start|>assistant<|channel|>analysis<|message|>r1<|end|>"
    assert dropped in theirs and "r2" in ours
    assert theirs.replace(dropped, "") == ours


TEXT_ARGUMENT = {"type": "object", "properties": {"id": {"type": "string"}}}
NAMESPACED = [
    Tool("run", "Runs a command.", TEXT_ARGUMENT),
    Tool("stop_helper", "Stops a helper.", TEXT_ARGUMENT,
         namespace="helpers", namespace_description="Helpers that work beside you.\nTwo lines."),
    Tool("list_helpers", "", None, namespace="helpers"),
    Tool("note", "Writes a note.", None, namespace="aaa_notes"),
]  # fmt: skip


@pytest.mark.parametrize("tools", [NAMESPACED, NAMESPACED[1:], NAMESPACED[3:]],
                         ids=["with-functions", "without-functions", "undescribed"])  # fmt: skip
def test_namespaces_render_as_openai_harmony_renders_them(oracle: Any, tools: list[Tool]) -> None:
    """Tools of other namespaces than `functions`, ordered by namespace as openai-harmony
    orders them; the system message names `functions` only when it holds tools."""
    check(oracle, HELLO, tools=tools, instructions="Be brief.", current_date=DATE)
    call = ToolCallRecord("stop_helper", '{"id": "7"}', namespace="helpers")
    chain = [
        Message("user", "stop it"),
        Message("assistant", reasoning="Stop helper 7.", tool_calls=(call,)),
        Message("tool", "stopped", tool_name="stop_helper"),
    ]
    check(oracle, chain, tools=tools, current_date=DATE)
    check(oracle, [*chain, Message("assistant", "Done."), Message("user", "and?")], tools=tools,
          current_date=DATE, keep_past_tool_calls=True)  # fmt: skip
