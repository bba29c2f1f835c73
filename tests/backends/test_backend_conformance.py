"""The backend contract, checked the same way against every backend: the in-process llama.cpp
engine on the tiny model, Ollama (the stand-in daemon, answering with the same model), and the
OpenAI-compatible client (talking to `gptoss-local serve` on the same model).

Each backend is steered to think "The user says hi" and answer "Hello there".
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import chat, open_tiny, steered
from fake_ollama.helpers import install
from serve_helpers import running_server

from gptoss_local.backends.base import (
    Backend,
    BackendError,
    BackendInfo,
    Capabilities,
    GenerationSettings,
    Reply,
    ReplyRequest,
    ResponseFormat,
    UnsupportedRequest,
)
from gptoss_local.backends.ollama.backend import OllamaBackend
from gptoss_local.backends.ollama.daemon import OllamaDaemon
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.conversation import Attachment, Conversation, Message
from gptoss_local.events import AnswerDelta, ReasoningDelta, TurnEnded, merge_events
from gptoss_local.kinds import BACKENDS

NAMES = ["llamacpp", "ollama", "openai"]


def test_every_registered_backend_is_checked_here() -> None:
    assert set(NAMES) == set(BACKENDS)


@pytest.fixture(params=NAMES)
def backend(
    request: pytest.FixtureRequest,
    tiny_gguf: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Backend]:
    if request.param == "llamacpp":
        with open_tiny(tiny_gguf) as loaded:
            loaded.options = steered(loaded)  # the engine's own options, default for replies
            yield loaded
        return
    if request.param == "openai":
        with running_server(tiny_gguf) as served:
            yield OpenAIClientBackend(served.url)
        return
    if sys.platform == "win32":
        pytest.skip("the stand-in needs a shebang")
    install(tmp_path, monkeypatch, tiny_gguf)
    with OllamaBackend(OllamaDaemon(lambda _text: None), "gpt-oss:20b", context=2048) as served:
        yield served


def test_a_reply_streams_reasoning_then_the_answer_then_its_stats(backend: Backend) -> None:
    reply = backend.stream(ReplyRequest(chat("hi"), GenerationSettings(seed=1)))
    assert isinstance(reply, Reply) and reply.stats is None
    events = merge_events(list(reply))
    assert events == [
        ReasoningDelta("The user says hi"), AnswerDelta("Hello there"), TurnEnded("return"),
    ]  # fmt: skip
    stats = reply.stats
    assert stats is not None and stats.stop_reason == "return"
    assert stats.generated_tokens > 0 and stats.prompt_tokens > 0
    assert stats.ttft_seconds is not None and stats.context_size == 2048


def test_a_reply_cancelled_before_it_starts_says_so(backend: Backend) -> None:
    cancel = threading.Event()
    cancel.set()
    reply = backend.stream(ReplyRequest(chat("hi"), GenerationSettings(seed=1)), cancel)
    events = [e for e in reply if isinstance(e, AnswerDelta)]
    assert events == [] and reply.stats is not None
    assert reply.stats.stop_reason == "cancelled"


def test_info_and_capabilities_are_declared(backend: Backend) -> None:
    info = backend.info()
    assert isinstance(info, BackendInfo) and info.backend in BACKENDS
    assert info.context_size == 2048 and info.model
    assert isinstance(backend.capabilities, Capabilities)
    evaluated = backend.prefill(ReplyRequest(chat("hi"), GenerationSettings()))
    assert evaluated > 0 if backend.capabilities.prefill else evaluated == 0


def test_the_tokenizer_is_declared_and_counts_or_refuses(backend: Backend) -> None:
    asked = ReplyRequest(chat("hi"), GenerationSettings())
    if backend.capabilities.tokenizer:  # the model's own: the prompt, then a control token
        assert backend.count_prompt(asked) > len(backend.tokenize("hi", special=False)) > 0
        assert len(backend.tokenize("<|start|>")) == 1
        return
    for counting in (lambda: backend.count_prompt(asked), lambda: backend.tokenize("hi")):
        with pytest.raises(BackendError) as refused:
            counting()
        assert refused.value.kind == "unsupported"


def test_a_request_beyond_the_engine_is_refused_before_it_starts(backend: Backend) -> None:
    note = Attachment("notes.txt", "text/plain", text="x")
    asked = ReplyRequest(
        Conversation((Message("user", "hi", attachments=(note,)),)),
        response_format=ResponseFormat({"type": "object"}),
    )
    assert not backend.capabilities.attachments  # no engine reads attached files yet
    with pytest.raises(UnsupportedRequest) as refused:
        backend.stream(asked)  # at once, not on the first event
    # The first thing asked that the engine lacks is named.
    field = "attachments" if backend.capabilities.response_format else "response_format"
    assert refused.value.field == field


def test_settings_every_backend_shares_refuse_what_no_backend_can_use() -> None:
    with pytest.raises(TypeError):
        GenerationSettings(grammar="root ::= x")  # type: ignore[call-arg]  # llama.cpp's own
    for bad in ({"temperature": float("nan")}, {"top_p": -1.0}, {"max_tokens": 0}):
        with pytest.raises(ValueError):
            GenerationSettings(**bad)  # type: ignore[arg-type]
