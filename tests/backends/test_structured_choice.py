"""A forced tool choice on the tiny real model: the reply always ends in a call of an offered
tool (or the one named), its arguments held to that tool's parameters, never in an answer;
reasoning and preambles before the call stay possible."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from engine_helpers import chat, ran, text_of

from gptoss_local.backends.base import (
    GenerationSettings,
    ReplyRequest,
    ResponseFormat,
    ToolChoice,
    UnsupportedRequest,
)
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.conversation import TextInput, Tool
from gptoss_local.events import AnswerDelta, ReasoningDelta, ToolCall
from gptoss_local.schemas import check_arguments

WEATHER = Tool("get_weather", "The weather in a city.", {
    "type": "object", "properties": {"city": {"type": "string", "maxLength": 10},
                                     "days": {"type": "integer", "minimum": 1, "maximum": 7}},
    "required": ["city"], "additionalProperties": False})  # fmt: skip
LOOKUP = Tool("lookup", "Looks a word up.", {
    "type": "object", "properties": {"word": {"enum": ["cat", "dog"]}}, "required": ["word"]},
    namespace="dictionary")  # fmt: skip
CLOCK = Tool("now", "The time; takes nothing.")
PATCH = Tool("apply_patch", "Applies a patch.", text_input=TextInput())
TOOLS = (WEATHER, LOOKUP, CLOCK)
BY_NAME = {"get_weather": WEATHER, "dictionary.lookup": LOOKUP, "now": CLOCK}
# Reasoning first, then left to the model (and the engine's grammar).
THINK_FIRST = 'root ::= <|channel|> "analysis" <|message|> "I should call a tool." <|end|> .*'


def forced(backend: LlamaCppBackend, choice: ToolChoice, seed: int, tools=TOOLS, **kw: Any):
    conversation = replace(chat("What is the weather in Oslo?"), tools=tools)
    # The random model ends a message only by chance: a nudge toward <|end|> keeps the
    # analysis short (the grammar, not this, makes the reply end in a call).
    nudge = ((backend.tokenize("<|end|>")[0], 3.0),)
    options = LlamaOptions(logit_bias=nudge, **kw)
    asked = ReplyRequest(conversation, GenerationSettings(seed=seed, max_tokens=400),
                         tool_choice=choice)  # fmt: skip
    return ran(backend.stream(asked, options=options))


def the_call(events: Any, json: bool = True) -> ToolCall:
    assert events.stats.stop_reason == "call"
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert len(calls) == 1 and (calls[0].error is None or not json), calls
    assert not text_of(events, AnswerDelta)  # the final channel is closed
    return calls[0]


@pytest.mark.parametrize("seed", range(8))
def test_a_required_call_goes_to_an_offered_tool_with_valid_arguments(
    backend: LlamaCppBackend, seed: int
) -> None:
    call = the_call(forced(backend, ToolChoice(required=True), seed))
    tool = BY_NAME[call.name]
    check_arguments(call.raw, tool.parameters)


@pytest.mark.parametrize("seed", range(4))
def test_a_named_call_goes_to_that_tool(backend: LlamaCppBackend, seed: int) -> None:
    call = the_call(forced(backend, ToolChoice(name="lookup", namespace="dictionary"), seed))
    assert call.name == "dictionary.lookup" and call.arguments["word"] in ("cat", "dog")
    call = the_call(forced(backend, ToolChoice(name="now"), seed))
    assert call.name == "now" and call.arguments == {}


@pytest.mark.parametrize("seed", range(3))
def test_reasoning_may_come_before_the_call(backend: LlamaCppBackend, seed: int) -> None:
    events = forced(backend, ToolChoice(required=True), seed, grammar=THINK_FIRST)
    call = the_call(events)
    assert text_of(events, ReasoningDelta).startswith("I should call a tool.")
    kinds = [type(e) for e in events if isinstance(e, (ReasoningDelta, ToolCall))]
    assert kinds[0] is ReasoningDelta and kinds[-1] is ToolCall
    check_arguments(call.raw, BY_NAME[call.name].parameters)


def test_a_freeform_tool_takes_free_text(backend: LlamaCppBackend) -> None:
    call = the_call(forced(backend, ToolChoice(name="apply_patch"), 2, tools=(PATCH,)), False)
    assert call.name == "apply_patch" and call.raw and "<|" not in call.raw


def test_a_choice_no_offered_tool_meets_is_refused(backend: LlamaCppBackend) -> None:
    asked = ReplyRequest(replace(chat("hi"), tools=TOOLS), tool_choice=ToolChoice(name="nope"))
    with pytest.raises(UnsupportedRequest, match=r"functions\.nope") as refused:
        backend.stream(asked)
    assert refused.value.field == "tool_choice"
    with pytest.raises(UnsupportedRequest, match="no tool is offered"):
        backend.stream(ReplyRequest(chat("hi"), tool_choice=ToolChoice(required=True)))
    bad = Tool("f", parameters={"type": "object", "properties": {"a": {"not": {}}}})
    with pytest.raises(UnsupportedRequest, match="'not' at") as refused:
        backend.stream(ReplyRequest(replace(chat("hi"), tools=(bad,)),
                                    tool_choice=ToolChoice(required=True)))  # fmt: skip
    assert refused.value.field == "tool_choice"


def test_a_forced_call_wins_over_a_response_format(backend: LlamaCppBackend) -> None:
    """The format holds the answer of a later turn; this one must call."""
    conversation = replace(chat("weather?"), tools=TOOLS)
    asked = ReplyRequest(conversation, GenerationSettings(seed=4, max_tokens=400),
                         response_format=ResponseFormat({"type": "object"}),
                         tool_choice=ToolChoice(name="get_weather"))  # fmt: skip
    nudge = ((backend.tokenize("<|end|>")[0], 3.0),)
    call = the_call(ran(backend.stream(asked, options=LlamaOptions(logit_bias=nudge))))
    check_arguments(call.raw, WEATHER.parameters)
