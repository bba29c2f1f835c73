"""The OpenAI-compatible client backend against `gptoss-local serve` on the tiny model, and
`run --backend openai --base-url` end to end; the URL rule and the model choice."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import DATE, chat
from serve_helpers import Running, running_server

from gptoss_local import cli
from gptoss_local.backends.base import BackendError, GenerationSettings, ReplyRequest
from gptoss_local.backends.openai.backend import OpenAIClientBackend, choose_model
from gptoss_local.backends.openai.messages import chat_body
from gptoss_local.conversation import Conversation, Message, Tool, ToolCallRecord
from gptoss_local.events import ReasoningDelta, ToolCall, TurnEnded, merge_events
from gptoss_local.urls import is_lan_host, server_url_problem

WEATHER = Tool("get_weather", "The weather in a city.", {"type": "object", "properties": {}})


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf, api_key="k") as running:
        yield running


def test_run_answers_through_a_server(
    served: Running, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    code = cli.main(["run", "--base-url", served.url, "--show-reasoning", "--effort", "high",
                     "--seed", "3", "hi"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0 and out == "Hello there\n" and "The user says hi" in err
    assert served.seen.settings[-1].effort == "high" and served.seen.settings[-1].seed == 3


def test_run_json_from_openai_base_url(
    served: Running, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", served.url)
    code = cli.main(["run", "--backend", "openai", "--api-key", "k", "--json", "hi"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and lines[-1]["type"] == "done"
    assert "".join(x["text"] for x in lines if x["type"] == "answer") == "Hello there"
    stats = lines[-1]["stats"]
    assert stats["stop_reason"] == "return" and stats["generated_tokens"] > 0
    assert stats["context_size"] == 2048 and stats["ttft_seconds"] is not None


def test_a_wrong_key_or_no_server_is_a_plain_error(
    served: Running, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert cli.main(["run", "--base-url", served.url, "--api-key", "bad", "hi"]) == 2
    assert "refused the key" in capsys.readouterr().err
    assert cli.main(["run", "--base-url", "http://127.0.0.1:9/v1", "hi"]) == 2
    err = capsys.readouterr().err
    assert "cannot reach the chat server at http://127.0.0.1:9/v1" in err
    assert "gptoss-local serve" in err and "Traceback" not in err


def test_the_url_rule_is_checked_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "--base-url", "http://example.com/v1", "hi"]) == 2
    err = capsys.readouterr().err
    assert "unencrypted" in err and "--allow-http" in err
    assert cli.main(["run", "--backend", "openai", "hi"]) == 2
    assert "--base-url URL" in capsys.readouterr().err
    assert cli.main(["pull", "--backend", "openai"]) == 2
    assert "nothing to pull" in capsys.readouterr().err


def test_a_tool_call_and_its_result(served: Running) -> None:
    backend = OpenAIClientBackend(served.url, api_key="k")
    asked = Conversation((Message("user", "weather?"),), tools=(WEATHER,), current_date=DATE)
    reply = backend.stream(ReplyRequest(asked, GenerationSettings()))
    events = merge_events(list(reply))
    assert events == [
        ReasoningDelta("Need the weather"),
        ToolCall("get_weather", {"city": "Tokyo"}, '{"city": "Tokyo"}'),
        TurnEnded("call"),
    ]
    assert reply.stats is not None and reply.stats.stop_reason == "call"
    call = ToolCallRecord("get_weather", '{"city": "Tokyo"}')
    answered = Conversation(
        (*asked.messages, Message("assistant", reasoning="Need the weather", tool_calls=(call,)),
         Message("tool", '{"sky": "clear"}', tool_name="get_weather")),
        tools=(WEATHER,),
    )  # fmt: skip
    text = [
        e
        for e in backend.stream(ReplyRequest(answered, GenerationSettings()))
        if not isinstance(e, ReasoningDelta)
    ]
    assert merge_events(text)[0].text == "Hello there"  # type: ignore[union-attr]
    seen = served.seen.conversations[-1].messages
    assert seen[-1].tool_name == "get_weather" and seen[-2].reasoning == "Need the weather"


def test_a_cancel_mid_reply_stops_the_servers_generation(served: Running) -> None:
    backend = OpenAIClientBackend(served.url, api_key="k")
    cancel = threading.Event()
    served.seen.ended.clear()
    count = len(served.seen.stats)
    reply = backend.stream(
        ReplyRequest(chat("slow, please"), GenerationSettings(max_tokens=1500)), cancel
    )
    for number, _event in enumerate(reply):
        if number == 5:
            cancel.set()
    assert reply.stats is not None and reply.stats.stop_reason == "cancelled"
    assert served.seen.ended.wait(10)
    assert served.seen.stats[count].stop_reason == "cancelled"
    assert served.seen.stats[count].generated_tokens < 300


def test_the_model_is_chosen_among_the_servers() -> None:
    assert choose_model(["gpt-oss:20b"], None, "u") == "gpt-oss:20b"
    assert choose_model(["gpt-oss:20b", "gpt-oss:120b"], "20b", "u") == "gpt-oss:20b"
    assert choose_model(["openai/gpt-oss-120b", "llama3"], None, "u") == "openai/gpt-oss-120b"
    assert choose_model(["a", "gpt-oss-20b"], "gpt-oss-20b", "u") == "gpt-oss-20b"
    with pytest.raises(BackendError, match=r"(?s)serves several models.*Name one with --model"):
        choose_model(["gpt-oss:20b", "gpt-oss:120b"], None, "u")
    with pytest.raises(BackendError, match="no single model matching '7b'"):
        choose_model(["gpt-oss:20b"], "7b", "u")


def test_the_request_names_each_call_and_keeps_the_chains_reasoning() -> None:
    call = ToolCallRecord("get_weather", {"city": "Tokyo"})
    conversation = Conversation(
        (Message("user", "weather?"),
         Message("assistant", "Checking.", reasoning="Need it", tool_calls=(call,)),
         Message("tool", "sunny", tool_name="get_weather")),
        instructions="Be brief.", tools=(WEATHER, Tool("noargs")),
    )  # fmt: skip
    settings = GenerationSettings(effort="low", max_tokens=9, seed=2)
    body = chat_body("m", ReplyRequest(conversation, settings))
    system, user, assistant, tool = body["messages"]
    assert system == {"role": "system", "content": "Be brief."} and user["content"] == "weather?"
    assert assistant["reasoning_content"] == "Need it" and assistant["content"] == "Checking."
    ident = assistant["tool_calls"][0]["id"]
    assert assistant["tool_calls"][0]["function"]["arguments"] == '{"city": "Tokyo"}'
    assert tool == {"role": "tool", "content": "sunny", "tool_call_id": ident}
    assert body["reasoning_effort"] == "low" and body["max_tokens"] == 9 and body["seed"] == 2
    assert "parameters" not in body["tools"][1]["function"]  # () => any on the server too
    assert body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize(
    ("url", "allow", "ok"),
    [
        ("https://gpu.example.com/v1", False, True),
        ("http://127.0.0.1:8080/v1", False, True),
        ("http://192.168.1.20:8080/v1", False, True),
        ("http://[fd00::5]:8080/v1", False, True),
        ("http://gpu-box:8080/v1", False, True),
        ("http://gpu-box.lan:8080/v1", False, True),
        ("http://gpu.example.com/v1", False, False),
        ("http://8.8.8.8/v1", False, False),
        ("http://gpu.example.com/v1", True, True),
        ("ftp://gpu-box/v1", True, False),
        ("http://gpu-box:port/v1", True, False),
    ],
)
def test_the_servers_url_rule(url: str, allow: bool, ok: bool) -> None:
    assert (server_url_problem(url, allow) is None) is ok


def test_lan_hosts() -> None:
    assert is_lan_host("10.0.0.2") and is_lan_host("fe80::1") and is_lan_host("nas.local")
    assert not is_lan_host("0.0.0.0") and not is_lan_host("example.com")
