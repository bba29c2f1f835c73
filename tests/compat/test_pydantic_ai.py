"""pydantic-ai's OpenAI models against `serve`: `OpenAIChatModel` (Chat Completions) and
`OpenAIResponsesModel` (Responses), each with an `OpenAIProvider` at the server: chat,
streaming, a tool round trip, structured output (a tool forced with tool_choice "required", and
`NativeOutput`'s JSON schema) and where the reasoning shows; and oterm's way in: the Ollama
provider with thinking switched off.

Where the reasoning shows: a `ThinkingPart` in the response's parts. Over Chat Completions its
`content` is the message's `reasoning` or `reasoning_content` field (deltas alike). Over
Responses its `content` is the reasoning item's `summary` text (events
`response.reasoning_summary_text.delta`); the raw chain (`content: [{type: reasoning_text}]`,
events `response.reasoning_text.delta`) goes to `provider_details["raw_content"]`, one string
per part, and the part's `content` stays empty.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from compat_helpers import (
    ANSWER,
    CALL_REASONING,
    HI,
    QUESTION,
    REASONING,
    STRUCTURED,
    City,
    assert_city_schema_reached,
    assert_round_trip,
    get_weather,
    last_request,
)
from openai import AsyncOpenAI
from pydantic_ai import Agent, NativeOutput
from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.openai import OpenAIProvider
from serve_helpers import Running

Kind = type[OpenAIChatModel] | type[OpenAIResponsesModel]
MakeModel = Callable[[Kind], OpenAIChatModel | OpenAIResponsesModel]
KINDS = pytest.mark.parametrize(
    "kind", [OpenAIChatModel, OpenAIResponsesModel], ids=["chat-completions", "responses"]
)


@pytest.fixture
async def model_for(served: Running) -> AsyncIterator[MakeModel]:
    """`model_for(kind)`: that kind of model on `serve`, with a client of its own."""
    clients: list[AsyncOpenAI] = []

    def make(kind: Kind) -> OpenAIChatModel | OpenAIResponsesModel:
        client = AsyncOpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=60)
        clients.append(client)
        return kind("gpt-oss-tiny", provider=OpenAIProvider(openai_client=client))

    yield make
    for client in clients:  # in this test's event loop, before it closes
        await client.close()


def thinking(messages: list[Any]) -> list[ThinkingPart]:
    """The thinking parts of the last response among `messages`."""
    (last,) = [m for m in messages[-1:] if isinstance(m, ModelResponse)]
    return [p for p in last.parts if isinstance(p, ThinkingPart)]


@KINDS
async def test_chat(model_for: MakeModel, kind: Kind) -> None:
    result = await Agent(model_for(kind)).run(HI)
    assert result.output == ANSWER


@KINDS
async def test_streaming(model_for: MakeModel, kind: Kind) -> None:
    async with Agent(model_for(kind)).run_stream(HI) as run:
        deltas = [d async for d in run.stream_text(delta=True, debounce_by=None)]
        assert "".join(deltas) == ANSWER and len(deltas) > 1
        parts = run.all_messages()[-1].parts
    assert [type(p) for p in parts] == [ThinkingPart, TextPart]


@KINDS
async def test_a_tool_round_trip(model_for: MakeModel, kind: Kind, served: Running) -> None:
    result = await Agent(model_for(kind), tools=[get_weather]).run(QUESTION)
    assert result.output == ANSWER
    # The thinking goes back with the call: as `reasoning_content` over Chat Completions (the
    # field it came in), as the reasoning item (its raw content) over Responses.
    assert_round_trip(served, CALL_REASONING)


@KINDS
async def test_structured_output_through_a_required_tool(
    model_for: MakeModel, kind: Kind, served: Running
) -> None:
    result = await Agent(model_for(kind), output_type=City).run(STRUCTURED)
    assert isinstance(result.output, City)
    assert last_request(served).tool_choice.required  # its output tool, and no text allowed


@KINDS
async def test_structured_output_as_a_json_schema(
    model_for: MakeModel, kind: Kind, served: Running
) -> None:
    result = await Agent(model_for(kind), output_type=NativeOutput(City)).run(STRUCTURED)
    assert isinstance(result.output, City)
    assert_city_schema_reached(served)


async def test_chat_completions_reasoning_is_a_thinking_part(model_for: MakeModel) -> None:
    result = await Agent(model_for(OpenAIChatModel)).run(HI)
    (part,) = thinking(result.all_messages())
    assert (part.content, part.id) == (REASONING, "reasoning_content")  # the field it came in


async def test_responses_reasoning_is_raw_content_of_an_empty_thinking_part(
    model_for: MakeModel,
) -> None:
    result = await Agent(model_for(OpenAIResponsesModel)).run(HI)
    (part,) = thinking(result.all_messages())
    assert part.content == ""  # the summary's text; serve sends none
    assert part.provider_details == {"raw_content": [REASONING]}
    assert part.id is not None and part.id.startswith("rs_")


@KINDS
async def test_streamed_reasoning_lands_where_the_whole_one_does(
    model_for: MakeModel, kind: Kind
) -> None:
    async with Agent(model_for(kind)).run_stream(HI) as run:
        await run.get_output()
        (part,) = thinking(run.all_messages())
    if kind is OpenAIChatModel:
        assert part.content == REASONING
    else:
        assert (part.content, part.provider_details) == ("", {"raw_content": [REASONING]})


async def test_thinking_switched_off_as_oterm_asks_ollama_is_the_least_effort(
    served: Running,
) -> None:
    # oterm's Ollama provider: pydantic-ai's Ollama profile, told the model thinks (as
    # /api/show says), with its thinking switch off; pydantic-ai then sends
    # reasoning_effort "none", which Ollama takes, and gpt-oss's least effort answers.
    from pydantic_ai.profiles import ModelProfile, merge_profile
    from pydantic_ai.providers.ollama import OllamaProvider

    provider = OllamaProvider(base_url=served.url)
    profile = merge_profile(
        provider.model_profile("gpt-oss-tiny"), ModelProfile(supports_thinking=True)
    )
    model = OpenAIChatModel("gpt-oss-tiny", provider=provider, profile=profile)
    result = await Agent(model).run(HI, model_settings={"thinking": False})
    assert result.output == ANSWER
    assert last_request(served).settings.effort == "low"
