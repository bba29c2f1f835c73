"""The Ollama backend through the real `ollama` client, against the stand-in daemon.

The stand-in answers with the tiny llama.cpp model, steered to think "The user says hi" and
answer "Hello there", so what streams back is real model output run through Harmony twice.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest
from engine_helpers import DATE, chat
from fake_ollama.helpers import gone, install

from gptoss_local.backends.base import BackendError, GenerationSettings, ReplyRequest
from gptoss_local.backends.ollama.backend import OllamaBackend, describe_placement
from gptoss_local.backends.ollama.daemon import OllamaDaemon
from gptoss_local.backends.ollama.messages import options
from gptoss_local.conversation import Conversation, Message, Tool, ToolCallRecord
from gptoss_local.events import AnswerDelta, ReasoningDelta, ToolCall, TurnEnded, merge_events
from gptoss_local.store.progress import Progress

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in needs a shebang")


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_gguf: Path) -> Path:
    install(tmp_path, monkeypatch, tiny_gguf)
    path = tmp_path / "last-request.json"
    monkeypatch.setenv("FAKE_OLLAMA_RECORD", str(path))
    return path


def _open(notices: list[str] | None = None, model: str = "gpt-oss:20b") -> OllamaBackend:
    daemon = OllamaDaemon((notices if notices is not None else []).append)
    return OllamaBackend(daemon, model, context=4096, keep_alive="7m")


def test_thinking_and_content_stream_as_our_events_with_stats(record: Path) -> None:
    with _open() as backend:
        items, stats = backend.stream(
            ReplyRequest(chat("hi"), GenerationSettings(effort="high", seed=3))
        ).drain()
        placement = backend.placement()
    events = merge_events(items)
    assert events == [
        ReasoningDelta("The user says hi"), AnswerDelta("Hello there"), TurnEnded("return"),
    ]  # fmt: skip
    assert stats.stop_reason == "return" and stats.generated_tokens > 0
    assert stats.prompt_tokens > 0 and stats.decode_tokens_per_second
    assert stats.ttft_seconds is not None and stats.context_size == 4096
    sent = json.loads(record.read_text())
    assert sent["think"] == "high" and sent["keep_alive"] == "7m" and sent["stream"] is True
    assert sent["options"]["num_ctx"] == 4096 and sent["options"]["seed"] == 3
    assert sent["messages"] == [{"role": "user", "content": "hi"}]
    assert placement == "entirely on the GPU"


def test_placement_comes_from_api_ps(record: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_OLLAMA_VRAM", "0.5")
    with _open() as backend:
        assert backend.placement() == "not loaded"
        list(backend.stream(ReplyRequest(chat("hi"), GenerationSettings())))
        info = backend.info()
    assert info.placement == "50% on the GPU, the rest in system RAM"
    assert info.backend == "ollama" and info.details["ollama"] == "0.12.3"
    assert describe_placement(10, 0) == "on the CPU only"


def test_a_daemon_dying_mid_stream_marks_the_reply_partial_and_is_restarted(
    record: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OLLAMA_DIE_ONCE", str(tmp_path / "died"))
    notices: list[str] = []
    with _open(notices) as backend:
        assert backend.daemon.process is not None
        first_pid = backend.daemon.process.pid
        got = []
        with pytest.raises(BackendError) as caught:
            for item in backend.stream(ReplyRequest(chat("hi"), GenerationSettings())):
                got.append(item)
        assert caught.value.kind == "stream_broken" and "incomplete" in str(caught.value)
        assert "restarted" in str(caught.value)
        assert got[-1] == TurnEnded("truncated") and isinstance(got[0], ReasoningDelta)
        assert any("crashed" in n and "restarting" in n for n in notices)
        assert gone(first_pid) and backend.daemon.process is not None
        assert backend.daemon.process.pid != first_pid
        again = merge_events(list(backend.stream(ReplyRequest(chat("hi"), GenerationSettings()))))
        assert again[-1] == TurnEnded("return")


def test_cancel_between_chunks_ends_the_turn(record: Path) -> None:
    cancel = threading.Event()
    with _open() as backend:
        items = []
        reply = backend.stream(ReplyRequest(chat("hi"), GenerationSettings()), cancel)
        for item in reply:
            items.append(item)
            cancel.set()
    assert items[-1] == TurnEnded("truncated")
    assert reply.stats is not None and reply.stats.stop_reason == "cancelled"
    assert len(items) == 2


def test_an_unknown_tag_is_a_clear_error(record: Path) -> None:
    with _open(model="gpt-oss:120b") as backend, pytest.raises(BackendError) as caught:
        list(backend.stream(ReplyRequest(chat("hi"), GenerationSettings())))
    assert "not found" in str(caught.value) and "pull --backend ollama" in str(caught.value)


def test_pull_reports_progress_to_completion(record: Path) -> None:
    seen: list[Progress] = []
    with _open(model="gpt-oss:120b") as backend:
        backend.pull(progress=seen.append)
        tags = [m.model for m in backend._client.list().models]
    downloads = [p for p in seen if p.phase == "download"]
    assert [p.done for p in downloads] == [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]
    assert all(p.total == 4_000_000 and p.name == "gpt-oss:120b" for p in downloads)
    assert seen[-1].phase == "verify" and "gpt-oss:120b" in tags


def test_a_failed_pull_is_an_error_after_partial_progress(
    record: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OLLAMA_PULL_FAIL", "1")
    seen: list[Progress] = []
    with _open() as backend, pytest.raises(BackendError) as caught:
        backend.pull("gpt-oss:120b", seen.append)
    assert caught.value.kind == "pull_failed" and "max retries exceeded" in str(caught.value)
    assert seen and seen[-1].done == 1_000_000


WEATHER = Tool("get_weather", "Weather in a city", {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
})  # fmt: skip


def test_a_tool_call_and_its_result_round_trip(record: Path) -> None:
    asked = Conversation(chat("weather in Tokyo?").messages, tools=(WEATHER,), current_date=DATE)
    with _open() as backend:
        first = merge_events(list(backend.stream(ReplyRequest(asked, GenerationSettings()))))
        assert first[0] == ReasoningDelta("Need the weather")
        assert first[1:] == [
            ToolCall("get_weather", {"city": "Tokyo"}, '{"city": "Tokyo"}'), TurnEnded("call"),
        ]  # fmt: skip
        call = ToolCallRecord("get_weather", {"city": "Tokyo"})
        answered = Conversation(
            (
                *asked.messages,
                Message("assistant", reasoning="Need the weather", tool_calls=(call,)),
                Message("tool", '{"sky": "clear"}', tool_name="get_weather"),
            ),
            tools=(WEATHER,),
            instructions="Be brief.",
        )
        second = merge_events(list(backend.stream(ReplyRequest(answered, GenerationSettings()))))
    assert second[-2:] == [AnswerDelta("Hello there"), TurnEnded("return")]
    sent = json.loads(record.read_text())
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "weather in Tokyo?"},
        {"role": "assistant", "thinking": "Need the weather",  # the client drops empty content
         "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}]},
        {"role": "tool", "content": '{"sky": "clear"}', "tool_name": "get_weather"},
    ]  # fmt: skip
    assert sent["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather in a city", "parameters": WEATHER.parameters,
    }}]  # fmt: skip


def test_options_leave_out_what_is_off() -> None:
    assert options(GenerationSettings(), 8192) == {
        "num_ctx": 8192,
        "temperature": 1.0,
        "top_p": 1.0,
    }
    tuned = options(GenerationSettings(max_tokens=5, top_k=40, min_p=0.05), 4096)
    assert tuned["num_predict"] == 5 and tuned["top_k"] == 40 and tuned["min_p"] == 0.05
