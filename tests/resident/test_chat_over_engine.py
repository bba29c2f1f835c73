"""The chat over the machine's engine: the OpenAI client, talking to our `serve`, prefills and
counts through the engine's own routes (so the chat keeps its prefill and its compaction by the
model's tokenizer), a prefill gives way to replies and never loads a let-go model, the chat
tells whom its reply waits for, and two chats and a `run` share the one copy loaded."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from resident_helpers import Served, resident_server
from serve_helpers import serve_process, until

from gptoss_local import config
from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.openai.backend import OpenAIClientBackend
from gptoss_local.chat.engine_queue import QueueWatch
from gptoss_local.cli import build_parser
from gptoss_local.commands.chat import shared
from gptoss_local.conversation import Conversation, Message
from gptoss_local.launch.prepare import prepare
from gptoss_local.plan.wishes import wishes_from

Cli = Callable[..., tuple[int, str, str]]


def _request(text: str) -> ReplyRequest:
    conversation = Conversation(messages=(Message("user", text),))
    return ReplyRequest(conversation, GenerationSettings(max_tokens=4, seed=1))


def _client(served: Served, name: str) -> OpenAIClientBackend:
    return OpenAIClientBackend(f"http://127.0.0.1:{served.port}/v1", "tiny", None, name)


def test_the_client_prefills_and_counts_through_our_engine(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=-1) as served:
        chat = _client(served, "chat-a")
        assert chat.capabilities.prefill and chat.capabilities.tokenizer
        assert chat.info().placement.startswith("shared engine at")
        request = _request("tell me about the sea")
        assert chat.count_prompt(request) == served.resident.count_prompt(request)
        assert chat.tokenize("hello sea", False) == served.resident.tokenize("hello sea", False)
        evaluated = chat.prefill(request)
        assert evaluated > 0
        _events, stats = chat.stream(request).drain()
        assert stats.cached_tokens >= evaluated  # the reply reused what the prefill evaluated
        assert stats.ttft_seconds is not None and stats.prompt_tokens > evaluated - 1


def test_a_prefill_never_loads_a_let_go_model(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=0, load_now=False) as served:
        chat = _client(served, "chat-a")
        assert served.state()["loaded"] is False
        assert chat.prefill(_request("hello")) == 0
        state = served.state()
        assert state["loaded"] is False and state["loads"] == 1  # the one look at its shape


def test_a_prefill_leaves_the_keep_alive_as_the_last_request_set_it(tiny_gguf: Path) -> None:
    with resident_server(tiny_gguf, keep_alive=300) as served:
        served.resident.preload(keep_alive=-1)  # as an Ollama client's keep_alive -1 asks
        assert _client(served, "chat-a").prefill(_request("hello")) > 0
        assert served.state()["keep_alive"] == -1


def test_a_prefill_gives_way_to_a_reply_and_the_chat_tells_whom_it_waits_for(
    tiny_gguf: Path,
) -> None:
    with resident_server(tiny_gguf, keep_alive=-1) as served:
        other = threading.Thread(target=lambda: served.chat("gate", client="codex"))
        other.start()
        assert served.gate.started.wait(60)
        chat = _client(served, "chat-a")
        assert chat.prefill(_request("hello")) == 0  # the engine is busy: no prefill now
        told: list[str] = []
        ended = threading.Event()

        def reply() -> None:
            with QueueWatch(chat, told.append) as queue:
                for _event in chat.stream(_request("hello")):
                    queue.stop()
            ended.set()

        threading.Thread(target=reply).start()
        until(lambda: told == ["codex"], "the chat to hear that codex is ahead")
        served.gate.open.set()
        assert ended.wait(60)
        other.join(60)
        assert told == ["codex", ""]  # and nothing once its turn came


def test_two_chats_and_a_run_share_one_engine(
    tiny_gguf: Path, isolated_home: Path, cli: Cli
) -> None:
    args = build_parser().parse_args(["chat", "--model-path", str(tiny_gguf)])
    settings = config.load()
    with serve_process(tiny_gguf, isolated_home) as served:
        backends = []
        for _ in range(2):  # as `gptoss-local chat` opens its model
            wishes = wishes_from(args, settings)
            ready = shared(prepare(wishes, settings, ask_first=True).ready, wishes, settings)
            assert ready is not None
            backends.append(ready.open(lambda _fraction, _what: True))
        for backend in backends:
            assert isinstance(backend, OpenAIClientBackend) and backend.ours is not None
            backend.stream(_request("hi")).drain()
        code, _out, err = cli("run", "--model-path", str(tiny_gguf), "--max-tokens", "4", "hi")
        assert code == 0, err
        state = backends[0].ours.state() if backends[0].ours else None
        assert state is not None and state["loads"] == 1
        assert "POST /gptoss-local/prefill" not in served.log()  # none was asked here


def test_our_client_gets_the_same_reply_in_fewer_pieces(tiny_gguf: Path) -> None:
    """Over our engine the client's text comes joined (`serve.coalesce`), the same text and
    counts as the model in process writes, and the first text still alone."""
    request = ReplyRequest(Conversation(messages=(Message("user", "tell me about the sea"),)),
                           GenerationSettings(max_tokens=200, temperature=0.0, seed=1))  # fmt: skip
    with resident_server(tiny_gguf, keep_alive=-1) as served:
        here = served.resident.stream(request).drain()
        there = _client(served, "chat-a").stream(request).drain()
    text = [[e.text for e in events if hasattr(e, "text")] for events, _stats in (here, there)]
    assert "".join(text[1]) == "".join(text[0]) and text[1][0] == text[0][0]
    assert here[1].generated_tokens == there[1].generated_tokens == 200
    assert len(text[1]) < len(text[0])
