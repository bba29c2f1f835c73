"""What the client compatibility tests share: the steered exchanges of the tiny model, the tool
every client runs, the schema every client asks its answer in, and the checks on what `serve`'s
backend was asked.

Plain prompts are steered to think `REASONING` and answer `ANSWER`; with a tool offered, and no
tool result yet, the model calls the first tool with {"city": "Tokyo"} after thinking
`CALL_REASONING` (tests/serve_helpers.py). A prompt starting with "free" is not steered: the
structured-output tests leave the answer's shape to the engine's own schema constraint, so they
check the shape, never the (random) values.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from serve_helpers import Running, Steering

from gptoss_local.backends.base import Reply, ReplyRequest
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.options import LlamaOptions

HI = "hi"
REASONING = "The user says hi"
ANSWER = "Hello there"
QUESTION = "What is the weather in Tokyo?"
CALL_REASONING = "Need the weather"
STRUCTURED = "free: name a city and its population"  # "free": not steered

cities: list[str] = []  # get_weather's calls, by city; emptied before each test (conftest)


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city's name.
    """
    cities.append(city)
    return f"sunny in {city}"


WEATHER_PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "The city's name."}},
    "required": ["city"],
}
WEATHER_TOOL = {  # get_weather for a client that takes Chat Completions' tools as they are
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": WEATHER_PARAMETERS,
    },
}


class City(BaseModel):
    """A city and its population."""

    name: str
    population: int


# The random model almost never writes a final header itself: a reply asked for a format is
# steered through an analysis message to the final header, and from there every token is the
# model's, held to the schema by the engine's own grammar alone (`.*` here).
TO_THE_ANSWER = (
    'root ::= <|channel|> "analysis" <|message|> "Name a city." <|end|> '
    '<|start|> "assistant" <|channel|> "final" <|message|> .*'
)
# A forced call likewise: a short analysis, then the call's header is begun and every token
# after it is the model's, held to the tool's parameters by the engine.
TO_THE_CALL = (
    'root ::= <|channel|> "analysis" <|message|> "Call the tool." <|end|> '
    '<|start|> "assistant" <|channel|> "commentary to=" .*'
)


class Recording(Steering):
    """The tests' steering, keeping each whole request too: the format and tool choice it
    asked of the reply are what the structured-output tests check reached the backend."""

    def __init__(self, backend: LlamaCppBackend) -> None:
        super().__init__(backend)
        self.requests: list[ReplyRequest] = []

    def __call__(self, request: ReplyRequest, cancel: threading.Event) -> Reply:
        self.requests.append(request)
        held = TO_THE_CALL if request.tool_choice.forced else TO_THE_ANSWER
        if request.response_format is not None or request.tool_choice.forced:
            self.seen.conversations.append(request.conversation)
            # seeded: what the random model writes inside the held part is then always the same
            seeded = replace(request, settings=replace(request.settings, seed=7))
            return self.backend.stream(seeded, cancel, options=LlamaOptions(grammar=held))
        return super().__call__(request, cancel)


def last_request(served: Running) -> ReplyRequest:
    assert isinstance(served.steering, Recording)
    return served.steering.requests[-1]


def assert_city_schema_reached(served: Running) -> None:
    """The last request held its answer to City's JSON schema (the fields, by name)."""
    response_format = last_request(served).response_format
    assert response_format is not None and response_format.schema is not None
    assert set(response_format.schema["properties"]) == {"name", "population"}


def assert_city_json(text: str) -> City:
    """`text` is the answer as JSON City accepts, and nothing else (no reasoning before it)."""
    return City.model_validate(json.loads(text))


def assert_round_trip(served: Running, reasoning: str) -> None:
    """The model called get_weather once, for Tokyo, then answered with its output in view;
    the client sent the call back with `reasoning` as its chain of thought."""
    assert cities == ["Tokyo"]
    first, second = served.seen.conversations  # two model turns, no more
    assert [(m.role, m.content) for m in first.messages] == [("user", QUESTION)]
    assert [t.name for t in first.tools] == [t.name for t in second.tools] == ["get_weather"]
    user, call, output = second.messages
    assert (user.role, user.content) == ("user", QUESTION)
    assert (call.role, call.reasoning) == ("assistant", reasoning)
    assert [c.name for c in call.tool_calls] == ["get_weather"]
    assert json.loads(str(call.tool_calls[0].arguments)) == {"city": "Tokyo"}
    assert (output.role, output.tool_name) == ("tool", "get_weather")
    assert output.content == "sunny in Tokyo"  # what the tool returned


CLIENTS = Path(__file__).resolve().parents[1] / "clients"
NODE_OPENAI = CLIENTS / "node_modules" / "openai" / "package.json"
NODE_SCRIPT = Path(__file__).resolve().parent / "node_openai.mjs"


def node_program() -> str:
    """Node, where the pinned `openai` package is installed; or skip (fail in CI)."""
    node = shutil.which("node")
    why = None
    if node is None:
        why = "node is not installed"
    elif not NODE_OPENAI.exists():
        why = f"the openai package is not installed in {CLIENTS} (scripts/test installs it)"
    if why is not None:
        if os.environ.get("GPTOSS_LOCAL_REQUIRE_CLIENTS"):
            pytest.fail(why)
        pytest.skip(why)
    assert node is not None
    return node


def run_node(served: Running, scenario: str) -> Any:
    """What node_openai.mjs's `scenario` printed (JSON), run against `served`."""
    command = [node_program(), str(NODE_SCRIPT), scenario, served.url, str(CLIENTS)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
