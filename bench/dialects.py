"""One streamed reply in each API dialect `serve` speaks, timed the same way (bench/serve.py).

Each function sends the conversation `messages` (OpenAI-style role/content pairs) asking for
exactly `tokens` tokens with the full vocabulary sampled (temperature 1, top-p 1, no top-k or
min-p), low reasoning effort, and reads the stream: the time from sending to the first text
(reasoning or answer), the text, and the token counts the dialect reports. llama-server is
asked in Chat Completions only (with `ignore_eos`, which our server refuses: it bans the end
tokens itself in the benchmark).
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

Result = dict[str, Any]
SAMPLING = {"temperature": 1.0, "top_p": 1.0}


def _post(port: int, path: str, body: dict) -> tuple[http.client.HTTPConnection, Any, float]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    sent = time.perf_counter()
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    answer = connection.getresponse()
    assert answer.status == 200, answer.read()
    return connection, answer, sent


def _sse(answer: Any) -> Iterator[dict]:
    for raw in answer:
        line = raw.decode().strip()
        if line.startswith("data: ") and line != "data: [DONE]":
            yield json.loads(line[6:])


def _result(sent: float, first: float | None, text: list[str], out: int, prompt: int,
            cached: int) -> Result:  # fmt: skip
    return {"ttft": (first or time.perf_counter()) - sent, "text": "".join(text),
            "tokens": out, "prompt": prompt, "cached": cached}  # fmt: skip


def chat(port: int, messages: list[dict], tokens: int, llama_server: bool = False) -> Result:
    """POST /v1/chat/completions (ours and llama-server's)."""
    body = {"model": "bench", "messages": messages, "max_tokens": tokens, "stream": True,
            "stream_options": {"include_usage": True}, **SAMPLING, "top_k": 0, "min_p": 0.0,
            "reasoning_effort": "low"}  # fmt: skip
    if llama_server:
        body["ignore_eos"] = True
    connection, answer, sent = _post(port, "/v1/chat/completions", body)
    first, text, usage = None, [], {}
    for chunk in _sse(answer):
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            piece = (delta.get("reasoning_content") or "") + (delta.get("content") or "")
            if piece:
                first = first or time.perf_counter()
                text.append(piece)
    connection.close()
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return _result(sent, first, text, usage.get("completion_tokens", 0),
                   usage.get("prompt_tokens", 0), cached)  # fmt: skip


def responses(port: int, messages: list[dict], tokens: int) -> Result:
    """POST /v1/responses."""
    body = {"model": "bench", "input": messages, "max_output_tokens": tokens, "stream": True,
            **SAMPLING, "reasoning": {"effort": "low"}, "store": False}  # fmt: skip
    connection, answer, sent = _post(port, "/v1/responses", body)
    first, text, usage = None, [], {}
    for event in _sse(answer):
        if event.get("type", "").endswith(".delta") and isinstance(event.get("delta"), str):
            first = first or time.perf_counter()
            text.append(event["delta"])
        if event.get("type") in ("response.completed", "response.incomplete"):
            usage = event["response"].get("usage") or {}
    connection.close()
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0
    return _result(sent, first, text, usage.get("output_tokens", 0),
                   usage.get("input_tokens", 0), cached)  # fmt: skip


def messages_api(port: int, messages: list[dict], tokens: int) -> Result:
    """POST /v1/messages (Anthropic's); input_tokens leave out what the cache read."""
    body = {"model": "bench", "messages": messages, "max_tokens": tokens, "stream": True,
            **SAMPLING, "thinking": {"type": "enabled", "budget_tokens": 1024}}  # fmt: skip
    connection, answer, sent = _post(port, "/v1/messages", body)
    first, text, usage = None, [], {}
    for event in _sse(answer):
        delta = event.get("delta") or {}
        piece = delta.get("text") or delta.get("thinking")
        if event.get("type") == "content_block_delta" and piece:
            first = first or time.perf_counter()
            text.append(piece)
        usage.update((event.get("message") or {}).get("usage") or {})
        usage.update(event.get("usage") or {})
    connection.close()
    cached = usage.get("cache_read_input_tokens") or 0
    return _result(sent, first, text, usage.get("output_tokens", 0),
                   usage.get("input_tokens", 0) + cached, cached)  # fmt: skip


def ollama(port: int, messages: list[dict], tokens: int) -> Result:
    """POST /api/chat (Ollama's, NDJSON); it reports no cached tokens."""
    body = {
        "model": "bench",
        "messages": messages,
        "stream": True,
        "think": "low",
        "options": {"num_predict": tokens, **SAMPLING, "top_k": 0, "min_p": 0.0},
    }
    connection, answer, sent = _post(port, "/api/chat", body)
    first, text, last = None, [], {}
    for raw in answer:
        line = json.loads(raw)
        message = line.get("message") or {}
        piece = (message.get("thinking") or "") + (message.get("content") or "")
        if piece:
            first = first or time.perf_counter()
            text.append(piece)
        last = line
    connection.close()
    return _result(sent, first, text, last.get("eval_count", 0),
                   last.get("prompt_eval_count", 0), 0)  # fmt: skip


DIALECTS: dict[str, Callable[[int, list[dict], int], Result]] = {
    "chat": chat, "responses": responses, "messages": messages_api, "ollama": ollama,
}  # fmt: skip
