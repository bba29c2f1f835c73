"""`gptoss-local serve` driving the OpenAI Agents SDK (`openai-agents`), on the tiny model: an
agent with one function tool runs to its answer over the Responses API (streamed and not) and
over Chat Completions, the tool's output going back to the model in between. Tracing is off,
and any try to reach past loopback fails the test."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    Model,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    flush_traces,
    function_tool,
)
from offline_guard import refuse_the_network
from openai import AsyncOpenAI
from serve_helpers import Running, running_server

INSTRUCTIONS = "You tell the weather."
QUESTION = "What is the weather in Tokyo?"
ONLY_HERE = RunConfig(tracing_disabled=True)  # no traces uploaded to OpenAI

Kind = type[OpenAIResponsesModel] | type[OpenAIChatCompletionsModel]
MakeAgent = Callable[[Kind], Agent[Any]]

cities: list[str] = []  # get_weather's calls, by city


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city's name.
    """
    cities.append(city)
    return f"sunny in {city}"


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf) as running:
        yield running


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any try to look up or reach a host past loopback, from any thread: a trace upload,
    say, which the flush at the end would make (with a key, as a user's shell has one) were
    tracing on."""
    tries = refuse_the_network(monkeypatch)
    yield
    flush_traces()
    assert tries == []


@pytest.fixture
async def agent_for(served: Running) -> AsyncIterator[MakeAgent]:
    """`agent_for(kind)`: an agent on `serve` through that kind of model, a client of its own;
    the backend's record and the tool's calls start empty."""
    served.seen.conversations.clear()
    cities.clear()
    clients: list[AsyncOpenAI] = []

    def make(kind: Kind) -> Agent[Any]:
        client = AsyncOpenAI(base_url=served.url, api_key="unused", max_retries=0, timeout=60)
        clients.append(client)
        model: Model = kind(model="gpt-oss-tiny", openai_client=client)
        return Agent(name="weather", instructions=INSTRUCTIONS, model=model, tools=[get_weather])

    yield make
    for client in clients:  # in this test's event loop, before it closes
        await client.close()


def assert_round_trip(served: Running, reasoning: str) -> None:
    """The model called the tool once, for Tokyo, then answered with its output in view, and
    with `reasoning` as the call's."""
    assert cities == ["Tokyo"]
    first, second = served.seen.conversations  # two model turns, no more
    assert first.instructions == second.instructions == INSTRUCTIONS
    assert [t.name for t in second.tools] == ["get_weather"]
    assert [m.role for m in first.messages] == ["user"]
    assert first.messages[0].content == QUESTION
    user, call, output = second.messages
    assert (user.role, user.content) == ("user", QUESTION)
    assert (call.role, call.reasoning) == ("assistant", reasoning)
    assert [c.name for c in call.tool_calls] == ["get_weather"]
    assert json.loads(str(call.tool_calls[0].arguments)) == {"city": "Tokyo"}  # as sent: text
    assert (output.role, output.tool_name) == ("tool", "get_weather")
    assert output.content == "sunny in Tokyo"  # what the tool returned


# The chain's reasoning goes back as a Responses item; the Chat Completions model drops it
# unless told otherwise (its `should_replay_reasoning_content` replays it for DeepSeek only).
@pytest.mark.parametrize(
    ("kind", "reasoning"),
    [(OpenAIResponsesModel, "Need the weather"), (OpenAIChatCompletionsModel, "")],
    ids=["responses", "chat-completions"],
)
async def test_an_agent_calls_its_tool_and_answers(
    kind: Kind, reasoning: str, agent_for: MakeAgent, served: Running
) -> None:
    result = await Runner.run(agent_for(kind), QUESTION, run_config=ONLY_HERE)
    assert result.final_output == "Hello there"
    assert_round_trip(served, reasoning)


async def test_a_streamed_agent_run_over_responses(agent_for: MakeAgent, served: Running) -> None:
    result = Runner.run_streamed(agent_for(OpenAIResponsesModel), QUESTION, run_config=ONLY_HERE)
    kinds = [event.type async for event in result.stream_events()]
    assert result.is_complete and result.final_output == "Hello there"
    assert "raw_response_event" in kinds and "run_item_stream_event" in kinds
    assert_round_trip(served, "Need the weather")
