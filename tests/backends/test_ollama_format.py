"""A response format through the Ollama backend: what arrives at /api/chat (the schema as
`format`, the think level beside it), what Ollama cannot be asked, and `run --schema` with the
Ollama backend, against the stand-in daemon (which answers a formatted request with
`{"greeting": "Hello there"}` after its usual reasoning)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from engine_helpers import chat
from fake_ollama.helpers import install
from installed_cli import Cli

from gptoss_local.backends.base import (
    GenerationSettings,
    ReplyRequest,
    ResponseFormat,
    ToolChoice,
    UnsupportedRequest,
    check_request,
)
from gptoss_local.backends.ollama.backend import OllamaBackend
from gptoss_local.backends.ollama.daemon import OllamaDaemon
from gptoss_local.backends.ollama.messages import chat_request
from gptoss_local.events import AnswerDelta, ReasoningDelta, TurnEnded, merge_events

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in needs a shebang")

GREETING = {
    "type": "object",
    "properties": {"greeting": {"type": "string"}},
    "required": ["greeting"],
    "additionalProperties": False,
}


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_gguf: Path) -> Path:
    install(tmp_path, monkeypatch, tiny_gguf)
    path = tmp_path / "last-request.json"
    monkeypatch.setenv("FAKE_OLLAMA_RECORD", str(path))
    return path


def test_a_schema_goes_as_format_with_the_think_level(record: Path) -> None:
    asked = ReplyRequest(
        chat("hi"), GenerationSettings(effort="high"), response_format=ResponseFormat(GREETING)
    )
    with OllamaBackend(OllamaDaemon(lambda _text: None), "gpt-oss:20b", context=4096) as backend:
        events = merge_events(list(backend.stream(asked)))
        sent = json.loads(record.read_text())
        list(backend.stream(ReplyRequest(chat("hi"), response_format=ResponseFormat())))
        any_json = json.loads(record.read_text())
    assert events == [
        ReasoningDelta("The user says hi"),
        AnswerDelta('{"greeting": "Hello there"}'),
        TurnEnded("return"),
    ]
    assert sent["format"] == GREETING and sent["think"] == "high"
    assert any_json["format"] == "json" and any_json["think"] == "medium"


def test_no_format_is_sent_when_none_is_asked() -> None:
    assert "format" not in chat_request(chat("hi"), GenerationSettings(), 4096)


@pytest.mark.parametrize(
    ("settings", "choice", "field"),
    [
        (GenerationSettings(frequency_penalty=0.5), ToolChoice(), "penalties"),
        (GenerationSettings(presence_penalty=0.5), ToolChoice(), "penalties"),
        (GenerationSettings(logit_bias=((7, -5.0),)), ToolChoice(), "logit_bias"),
        (GenerationSettings(), ToolChoice(required=True), "tool_choice"),
    ],
)
def test_what_ollama_cannot_honour_is_refused(
    settings: GenerationSettings, choice: ToolChoice, field: str
) -> None:
    caps = OllamaBackend.capabilities
    assert caps.response_format
    with pytest.raises(UnsupportedRequest) as refused:
        check_request(caps, ReplyRequest(chat("hi"), settings, tool_choice=choice), "ollama")
    assert refused.value.field == field
    assert "frequency_penalty" not in chat_request(chat("hi"), settings, 4096)["options"]


@pytest.fixture
def program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_gguf: Path, rtx_4090: None
) -> Path:
    path = tmp_path / "last-request.json"
    monkeypatch.setenv("FAKE_OLLAMA_RECORD", str(path))
    install(tmp_path, monkeypatch, tiny_gguf)
    return path


def test_run_schema_prints_the_json_answer_alone(program: Path, cli: Cli, tmp_path: Path) -> None:
    schema = tmp_path / "greeting.json"
    schema.write_text(json.dumps(GREETING))
    code, out, err = cli("run", "--backend", "ollama", "--schema", str(schema), "--show-reasoning",
                         "--effort", "low", "hi")  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == {"greeting": "Hello there"} and out.endswith("}\n")
    assert "The user says hi" in err
    sent = json.loads(program.read_text())
    assert sent["format"] == GREETING and sent["think"] == "low"


def test_run_schema_exits_1_when_the_answer_does_not_match(program: Path, cli: Cli) -> None:
    wants_name = {"type": "object", "required": ["name"]}
    code, out, err = cli("run", "--backend", "ollama", "--schema", json.dumps(wants_name), "hi")
    assert code == 1
    assert json.loads(out) == {"greeting": "Hello there"}  # printed all the same
    assert "the answer does not match the schema" in err and "'name'" in err
    assert "Traceback" not in err


def test_run_json_lines_with_a_schema(program: Path, cli: Cli) -> None:
    code, out, err = cli("run", "--backend", "ollama", "--schema", '{"type": "object"}',
                         "--json", "hi")  # fmt: skip
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    answer = "".join(r["text"] for r in records if r["type"] == "answer")
    assert json.loads(answer) == {"greeting": "Hello there"} and records[-1]["type"] == "done"
