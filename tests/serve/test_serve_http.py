"""The server's rules at the HTTP level: key, Host, CORS, bodies, errors; a client that hangs
up cancels its generation (and, while it waits its turn, leaves the queue at once); concurrent
clients all get answers; a full queue answers 503; the log has no content."""

from __future__ import annotations

import http.client
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest
from serve_helpers import Running, running_server, until


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf) as running:
        yield running


def request(
    served: Running, method: str, path: str, body: bytes | None = None, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        sent = {"Content-Type": "application/json", **headers}
        connection.request(method, path, body=body, headers=sent)
        answer = connection.getresponse()
        return answer.status, dict(answer.getheaders()), answer.read()
    finally:
        connection.close()


def chat_body(text: str = "hi", **extra: object) -> bytes:
    messages = [{"role": "user", "content": text}]
    return json.dumps({"model": "tiny", "messages": messages, **extra}).encode()


def error_of(raw: bytes) -> dict:
    error = json.loads(raw)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def test_a_key_is_required_when_set(tiny_gguf: Path) -> None:
    with running_server(tiny_gguf, api_key="s3cret") as served:
        wrong = openai.OpenAI(base_url=served.url, api_key="guess", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as refused:
            wrong.models.list()
        assert refused.value.code == "invalid_api_key"
        right = openai.OpenAI(base_url=served.url, api_key="s3cret", max_retries=0)
        assert right.models.list().data[0].id == "gpt-oss-tiny"
        status, _, _ = request(served, "GET", "/health")  # health needs no key
        assert status == 200


def test_bad_requests_get_openai_style_errors(served: Running) -> None:
    status, _, raw = request(served, "POST", "/v1/chat/completions", b"{not json")
    assert status == 400 and error_of(raw)["code"] == "invalid_json"
    status, _, raw = request(served, "POST", "/v1/chat/completions", b"[1, 2]")
    assert status == 400 and "JSON object" in error_of(raw)["message"]
    status, _, raw = request(served, "POST", "/v1/chat/completions", chat_body(n=2))
    assert status == 400 and error_of(raw)["param"] == "n"
    status, _, raw = request(served, "POST", "/v1/chat/completions", chat_body(temperature="x"))
    assert status == 400 and error_of(raw)["param"] == "temperature"
    status, _, raw = request(served, "POST", "/v1/nope", chat_body())
    assert status == 404 and error_of(raw)["code"] == "unknown_route"
    status, _, raw = request(served, "POST", "/v1/chat/completions", b"hi",
                             **{"Content-Type": "text/plain"})  # fmt: skip
    assert status == 415
    status, _, raw = request(served, "POST", "/v1/chat/completions", b"",
                             **{"Content-Length": str(2**30)})  # fmt: skip
    assert status == 413 and error_of(raw)["code"] == "body_too_large"


def test_unknown_models_and_bad_tools_through_the_client(served: Running) -> None:
    client = openai.OpenAI(base_url=served.url, api_key="x", max_retries=0)
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert missing.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError, match="collides with gpt-oss's built-in"):
        client.responses.create(
            model="tiny", input="hi", tools=[{"type": "function", "name": "python"}]
        )
    with pytest.raises(openai.BadRequestError, match=r"answers no call|needs tool_name"):
        client.chat.completions.create(
            model="tiny", messages=[{"role": "tool", "tool_call_id": "x", "content": "1"}]
        )


def test_only_the_bound_address_may_be_named_in_host(served: Running) -> None:
    for host in (f"127.0.0.1:{served.port}", f"localhost:{served.port}"):
        assert request(served, "GET", "/v1/models", Host=host)[0] == 200
    for host in (
        f"evil.example:{served.port}",
        "127.0.0.1:1",
        f"localhost.evil.example:{served.port}",
    ):
        status, _, raw = request(served, "GET", "/v1/models", Host=host)
        assert status == 403 and error_of(raw)["code"] == "invalid_host"


def test_no_cors_unless_asked(served: Running, tiny_gguf: Path) -> None:
    origin = {"Origin": "http://localhost:3000"}
    _, headers, _ = request(served, "GET", "/v1/models", **origin)
    assert not any(h.lower().startswith("access-control") for h in headers)
    assert request(served, "OPTIONS", "/v1/chat/completions", **origin)[0] == 405
    with running_server(tiny_gguf, cors=("http://localhost:3000",)) as cors:
        status, headers, _ = request(cors, "OPTIONS", "/v1/chat/completions", **origin)
        assert status == 204 and headers["Access-Control-Allow-Origin"] == origin["Origin"]
        _, headers, _ = request(cors, "POST", "/v1/chat/completions", chat_body(), **origin)
        assert headers["Access-Control-Allow-Origin"] == origin["Origin"]
        _, headers, _ = request(cors, "GET", "/v1/models", Origin="http://elsewhere")
        assert "Access-Control-Allow-Origin" not in headers


def test_a_non_loopback_address_needs_a_key_before_anything_loads(tmp_path: Path) -> None:
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "gptoss_local", "serve", "--host", "0.0.0.0",
               "--model-path", str(tmp_path / "absent.gguf")]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert "needs a key: add --api-key KEY" in done.stderr and "Traceback" not in done.stderr


def stream_slow(served: Running, read_events: int, max_tokens: int = 1500) -> None:
    """Start a streamed reply that never stops by itself, read a few events, hang up."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    body = chat_body("slow reply", stream=True, max_tokens=max_tokens)
    connection.request("POST", "/v1/chat/completions", body=body,
                       headers={"Content-Type": "application/json"})  # fmt: skip
    answer = connection.getresponse()
    assert answer.status == 200
    for _ in range(read_events):
        line = answer.readline()
        if not line or line.startswith(b"data: [DONE]"):  # the reply ended first
            break
        assert line.startswith(b"data: ")
        answer.readline()
    connection.sock.close()  # type: ignore[union-attr]
    connection.close()


def test_a_client_that_hangs_up_mid_stream_cancels_its_generation(served: Running) -> None:
    served.seen.ended.clear()
    count = len(served.seen.stats)
    stream_slow(served, read_events=3)
    assert served.seen.ended.wait(10)
    stats = served.seen.stats[count]
    assert stats.stop_reason == "cancelled" and stats.generated_tokens < 300


def hold_the_model(served: Running) -> http.client.HTTPConnection:
    """Start a "slow" streamed reply (1,500 events, at least 15 s) and read its first event:
    from then on it holds the model, until `hang_up`."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    body = chat_body("slow reply", stream=True, max_tokens=1500)
    connection.request("POST", "/v1/chat/completions", body=body,
                       headers={"Content-Type": "application/json"})  # fmt: skip
    answer = connection.getresponse()
    assert answer.status == 200 and answer.readline().startswith(b"data: ")
    return connection


def hang_up(connection: http.client.HTTPConnection) -> None:
    connection.sock.close()  # type: ignore[union-attr]
    connection.close()


def test_a_client_that_hangs_up_while_waiting_leaves_the_queue_and_never_runs(
    served: Running,
) -> None:
    scheduler = served.server.service.scheduler
    before, ended = len(served.seen.conversations), len(served.seen.stats)
    holder = hold_the_model(served)
    waiting = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    waiting.request("POST", "/v1/chat/completions", body=chat_body("queued"),
                    headers={"Content-Type": "application/json"})  # fmt: skip
    until(lambda: scheduler.waiting == 1, "the second request to wait its turn")
    waiting.sock.close()  # type: ignore[union-attr]
    until(lambda: scheduler.waiting == 0, "the request whose client hung up to leave the queue")
    # The model is still held: the request left while it waited, not once its turn came.
    assert len(served.seen.stats) == ended, "the held reply ended before the queue was seen"
    hang_up(holder)
    until(lambda: len(served.seen.stats) > ended, "the held reply to end")
    asked = [c.messages[-1].content for c in served.seen.conversations[before:]]
    assert asked == ["slow reply"]


def test_concurrent_clients_all_get_answers(served: Running) -> None:
    client = openai.OpenAI(base_url=served.url, api_key="x", max_retries=0, timeout=60)

    def ask(number: int) -> str:
        messages = [{"role": "user", "content": f"hi {number}"}]
        if number % 2:
            chunks = client.chat.completions.create(model="tiny", messages=messages, stream=True)
            return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        done = client.chat.completions.create(model="tiny", messages=messages)
        return done.choices[0].message.content or ""

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(ask, range(8)))
    assert answers == ["Hello there"] * 8


def test_with_two_sequences_a_short_reply_is_not_held_behind_a_long_one(
    tiny_gguf: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.INFO, logger="gptoss_local.serve"),
        running_server(tiny_gguf, sequences=2) as served,
    ):
        assert served.server.service.scheduler.running == 2
        # ~2 s of slowed events; the decoder is not held back by its reader, so it may finish
        # the 600 tokens first, and the hung-up request then drains the rest.
        holder = threading.Thread(target=stream_slow, args=(served, 200, 600))
        holder.start()
        while not served.seen.conversations:
            time.sleep(0.01)
        client = openai.OpenAI(base_url=served.url, api_key="x", max_retries=0, timeout=60)
        hi = [{"role": "user", "content": "hi"}]
        done = client.chat.completions.create(model="tiny", messages=hi)  # type: ignore[arg-type]
        assert done.choices[0].message.content == "Hello there"
        assert holder.is_alive()  # one sequence, a queue, would have answered after it
        holder.join(30)
        deadline = time.monotonic() + 30  # both log lines, before the next test's capture
        while sum("completion=" in r.getMessage() for r in caplog.records) < 2:
            assert time.monotonic() < deadline, "the hung-up request was never logged"
            time.sleep(0.05)


def test_a_full_queue_answers_503(tiny_gguf: Path) -> None:
    with running_server(tiny_gguf, max_waiting=1) as served:
        holder = hold_the_model(served)
        waiter = threading.Thread(target=request, args=(served, "POST", "/v1/chat/completions",
                                                        chat_body()))  # fmt: skip
        waiter.start()
        until(lambda: served.server.service.scheduler.waiting == 1, "a request to wait its turn")
        status, headers, raw = request(served, "POST", "/v1/chat/completions", chat_body())
        hang_up(holder)
        waiter.join(30)
    assert status == 503 and headers["Retry-After"] == "1"
    assert error_of(raw)["code"] == "server_busy"


def test_the_log_has_counts_but_no_content(
    served: Running, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="gptoss_local.serve"):
        request(served, "POST", "/v1/chat/completions", chat_body("my secret question"))
        deadline = time.monotonic() + 5
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)  # written once the answer has gone out
    lines = [r.getMessage() for r in caplog.records if r.name == "gptoss_local.serve"]
    assert len(lines) == 1 and "POST /v1/chat/completions 200" in lines[0]
    assert "prompt=" in lines[0] and "completion=" in lines[0]
    assert "secret" not in lines[0] and "Hello" not in lines[0]


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in needs a shebang")
def test_the_ollama_engine_can_be_served_too(
    tiny_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fake_ollama.helpers import install

    from gptoss_local.backends.base import GenerationSettings
    from gptoss_local.backends.ollama.backend import OllamaBackend
    from gptoss_local.backends.ollama.daemon import OllamaDaemon
    from gptoss_local.serve.guard import Guard
    from gptoss_local.serve.server import make_server
    from gptoss_local.serve.service import Service

    install(tmp_path, monkeypatch, tiny_gguf)
    with OllamaBackend(OllamaDaemon(lambda _text: None), "gpt-oss:20b", context=2048) as backend:
        service = Service(backend, ("gpt-oss:20b",), GenerationSettings(seed=1))
        server = make_server(service, Guard("127.0.0.1", 0))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            client = openai.OpenAI(base_url=server.url, api_key="x", max_retries=0)
            done = client.chat.completions.create(
                model="gpt-oss:20b", messages=[{"role": "user", "content": "hi"}]
            )
        finally:
            server.stop()
    message = done.choices[0].message
    assert message.content == "Hello there"
    assert message.model_extra["reasoning_content"] == "The user says hi"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_the_command_serves_and_stops_cleanly_on_a_signal(tiny_gguf: Path, tmp_path: Path) -> None:
    import signal

    from gptoss_local.backends.ollama.probe import free_port

    port = free_port()
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "gptoss_local", "serve", "--model-path", str(tiny_gguf),
               "--context", "2048", "--port", str(port)]  # fmt: skip
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("serving"):
                break
        assert f"at http://127.0.0.1:{port}/v1" in line
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        assert client.models.list().data[0].id == "tiny"
        process.send_signal(signal.SIGTERM)
        rest = process.stderr.read()
        assert process.wait(30) == 0
    assert "GET /v1/models 200" in rest and "stopping" in rest


def cached_on_return(tiny_gguf: Path, home: Path, *flags: str) -> tuple[int, int]:
    """Conversation A, then B, then A's second turn through the command: the tokens of that
    turn's prompt cached, and the length of A's first prompt."""
    from gptoss_local.backends.ollama.probe import free_port

    port = free_port()
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(home)}
    command = [sys.executable, "-m", "gptoss_local", "serve", "--model-path", str(tiny_gguf),
               "--context", "2048", "--port", str(port), *flags]  # fmt: skip
    with subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True) as process:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("serving"):
                break
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)

        def ask(messages: list[dict]) -> openai.types.chat.ChatCompletion:
            return client.chat.completions.create(
                model="tiny",
                messages=messages,
                max_tokens=8,
                seed=1,  # type: ignore[arg-type]
            )

        picnic = "conversation A: plan a picnic by the river for four friends, with games. " * 4
        a = [{"role": "user", "content": picnic}]
        first = ask(a)
        ask([{"role": "user", "content": "conversation B: how do tides work?"}])
        a += [{"role": "assistant", "content": first.choices[0].message.content or "ok"},
              {"role": "user", "content": "and if it rains?"}]  # fmt: skip
        usage = ask(a).usage
        process.terminate()
        process.wait(30)
    assert first.usage is not None and usage is not None and usage.prompt_tokens_details
    return usage.prompt_tokens_details.cached_tokens or 0, first.usage.prompt_tokens


def test_each_conversation_keeps_its_prefix_between_its_turns(
    tiny_gguf: Path, tmp_path: Path
) -> None:
    cached, first_prompt = cached_on_return(tiny_gguf, tmp_path / "home")
    assert cached >= first_prompt
    cached, first_prompt = cached_on_return(tiny_gguf, tmp_path / "home", "--cache-ram", "0")
    assert cached < first_prompt  # B's turn evicted A's
