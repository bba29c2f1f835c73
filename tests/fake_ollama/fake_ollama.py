#!/usr/bin/env python3
"""A stand-in `ollama` program: `ollama serve` with the HTTP API subset gptoss-local uses.

Chat answers come from the tiny random gpt-oss model through our LlamaCppBackend and Harmony
parser, steered by the tests' grammar, so thinking and content are real model output.

Environment: OLLAMA_HOST (address), FAKE_OLLAMA_GGUF (the model file), FAKE_OLLAMA_MODELS
(comma-separated tags present at start), FAKE_OLLAMA_VERSION (default 0.12.3),
FAKE_OLLAMA_EXIT_AT_START, FAKE_OLLAMA_NEVER_HEALTHY, FAKE_OLLAMA_DIE_ONCE (a marker path: the
first server to see it absent creates it and dies after two chat lines), FAKE_OLLAMA_PULL_FAIL,
FAKE_OLLAMA_VRAM (fraction of a loaded model in VRAM), FAKE_OLLAMA_PULL_LOG (a file each pull
request's model is appended to), FAKE_OLLAMA_RECORD (file that gets the
last chat request).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ENV = os.environ
SIZE = 13_000_000_000
_models = [m for m in ENV.get("FAKE_OLLAMA_MODELS", "").split(",") if m]
_loaded: list[str] = []
_engine: Any = None
_engine_lock = threading.Lock()


def _backend() -> Any:
    global _engine
    from engine_helpers import open_tiny

    with _engine_lock:
        if _engine is None:
            _engine = open_tiny(Path(ENV["FAKE_OLLAMA_GGUF"]))
        return _engine


def _conversation(request: dict[str, Any]) -> Any:
    from gptoss_local.conversation import (
        BUILTIN_TOOL_NAMES,
        BuiltinTool,
        Conversation,
        Message,
        Tool,
        ToolCallRecord,
    )

    messages, instructions = [], None
    for m in request.get("messages", []):
        if m["role"] == "system":
            instructions = m.get("content")
            continue
        calls = tuple(
            ToolCallRecord(c["function"]["name"], c["function"].get("arguments", {}))
            for c in m.get("tool_calls") or ()
        )
        messages.append(
            Message(m["role"], m.get("content", ""), reasoning=m.get("thinking") or "",
                    tool_calls=calls, tool_name=m.get("tool_name"))
        )  # fmt: skip
    functions = [t["function"] for t in request.get("tools") or ()]
    tools = tuple(
        Tool(f["name"], f.get("description", ""), f.get("parameters"))
        for f in functions
        if f["name"] not in BUILTIN_TOOL_NAMES
    )
    # Like Ollama's gpt-oss template: a function named `python` is the built-in tool.
    builtins = tuple(
        BuiltinTool(f["name"], f.get("description", ""))
        for f in functions
        if f["name"] in BUILTIN_TOOL_NAMES
    )
    return Conversation(tuple(messages), instructions=instructions, tools=tools,
                        builtin_tools=builtins)  # fmt: skip


# With tools offered (and no tool result yet) the model is steered into calling the first one.
CALL_GRAMMAR = (
    'root ::= <|channel|> "analysis" <|message|> "Need the weather" <|end|> '
    '<|start|> "assistant" <|channel|> "commentary to=functions.NAME" <|message|> '
    '"{\\"city\\": \\"Tokyo\\"}"'
)


# With a `format` the answer is this JSON (the stand-in does not read the schema).
FORMAT_ANSWER = '{"greeting": "Hello there"}'


def _settings(backend: Any, request: dict[str, Any], effort: str) -> tuple[Any, Any]:
    """The generation settings and the llama.cpp options that steer the tiny model's reply."""
    from dataclasses import replace

    from engine_helpers import REPLY_GRAMMAR, steered

    from gptoss_local.backends.base import GenerationSettings

    settings, options = GenerationSettings(effort=effort, seed=1), steered(backend)
    tools, messages = request.get("tools") or (), request.get("messages") or [{}]
    if request.get("format"):
        answer = json.dumps(FORMAT_ANSWER)  # a GBNF literal is a JSON string
        grammar = REPLY_GRAMMAR.replace('"Hello there"', answer)
        return settings, replace(options, grammar=grammar)
    if not tools or messages[-1].get("role") == "tool":
        return settings, options
    ban = tuple((backend.tokenize(t)[0], float("-inf")) for t in ("<|return|>", "<|endoftext|>"))
    grammar = CALL_GRAMMAR.replace("NAME", tools[0]["function"]["name"])
    return settings, replace(options, grammar=grammar, logit_bias=ban)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write("[GIN] " + format % args + "\n")

    def _json(self, data: Any, status: int = 200) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _begin_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _line(self, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode() + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(raw), raw))
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        if self.path == "/":
            body = b"Ollama is running"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/api/version":
            self._json({"version": ENV.get("FAKE_OLLAMA_VERSION", "0.12.3")})
        elif self.path == "/api/tags":
            details = {"family": "gptoss", "quantization_level": "MXFP4"}
            self._json({"models": [{"name": m, "model": m, "size": SIZE, "digest": "e7b273f9",
                                    "details": details} for m in _models]})  # fmt: skip
        elif self.path == "/api/ps":
            vram = int(SIZE * float(ENV.get("FAKE_OLLAMA_VRAM", "1")))
            self._json({"models": [{"name": m, "model": m, "size": SIZE, "size_vram": vram,
                                    "context_length": 8192} for m in _loaded]})  # fmt: skip
        else:
            self._json({"error": "404 page not found"}, 404)

    def do_POST(self) -> None:
        request = self._body()
        if self.path == "/api/show":
            if request.get("model") not in _models:
                self._json({"error": f"model '{request.get('model')}' not found"}, 404)
                return
            self._json({"capabilities": ["completion", "tools", "thinking"],
                        "model_info": {"gptoss.context_length": 131072}})  # fmt: skip
        elif self.path == "/api/pull":
            self._pull(str(request.get("model", "")))
        elif self.path == "/api/chat":
            self._chat(request)
        else:
            self._json({"error": "404 page not found"}, 404)

    def _pull(self, model: str) -> None:
        if log := ENV.get("FAKE_OLLAMA_PULL_LOG"):  # so tests can tell no pull was asked for
            with open(log, "a", encoding="utf-8") as f:
                f.write(model + "\n")
        self._begin_stream()
        self._line({"status": "pulling manifest"})
        total, step = 4_000_000, 1_000_000
        for done in range(0, total + 1, step):
            if ENV.get("FAKE_OLLAMA_PULL_FAIL") and done >= 2 * step:
                self._line({"error": "max retries exceeded: connection reset by peer"})
                self._end_stream()
                return
            line: dict[str, Any] = {"status": "pulling e7b273f96360",
                                    "digest": "sha256:e7b273f96360", "total": total}  # fmt: skip
            if done:  # early lines have no "completed", as Ollama's do
                line["completed"] = done
            self._line(line)
        for status in ("verifying sha256 digest", "writing manifest", "success"):
            self._line({"status": status})
        if model not in _models:
            _models.append(model)
        self._end_stream()

    def _chat(self, request: dict[str, Any]) -> None:
        from gptoss_local.backends.base import ReplyRequest
        from gptoss_local.events import AnswerDelta, ReasoningDelta, ToolCall

        if record := ENV.get("FAKE_OLLAMA_RECORD"):
            Path(record).write_text(json.dumps(request), encoding="utf-8")
        model = request.get("model", "")
        if model not in _models:
            self._json({"error": f"model '{model}' not found"}, 404)
            return
        backend = _backend()
        effort = request.get("think") if request.get("think") in ("low", "high") else "medium"
        die = ENV.get("FAKE_OLLAMA_DIE_ONCE")
        dying = bool(die) and not Path(str(die)).exists()
        if dying:
            Path(str(die)).write_text("died", encoding="utf-8")
        self._begin_stream()
        if model not in _loaded:
            _loaded.append(model)
        sent, started = 0, time.monotonic()
        base = {"model": model, "created_at": "2026-12-02T12:00:00Z"}
        with _engine_lock:  # one reply at a time, as one Ollama runner
            settings, options = _settings(backend, request, effort)
            reply = backend.stream(ReplyRequest(_conversation(request), settings), options=options)
            for item in reply:
                message: dict[str, Any] = {"role": "assistant", "content": ""}
                if isinstance(item, ToolCall):
                    call = {
                        "function": {"index": 0, "name": item.name, "arguments": item.arguments}
                    }
                    message["tool_calls"] = [call]
                elif isinstance(item, ReasoningDelta):
                    message["thinking"] = item.text
                elif isinstance(item, AnswerDelta):
                    message["content"] = item.text
                else:
                    continue
                self._line({**base, "message": message, "done": False})
                sent += 1
                if dying and sent == 2:
                    os._exit(9)  # the runner crashed mid-reply
            s = reply.stats
            assert s is not None
            self._line({**base, "message": {"role": "assistant", "content": ""}, "done": True,
                        "done_reason": "stop",
                        "total_duration": int((time.monotonic() - started) * 1e9),
                        "prompt_eval_count": s.prompt_tokens,
                        "prompt_eval_duration": int(s.prefill_seconds * 1e9),
                        "eval_count": s.generated_tokens,
                        "eval_duration": max(1, int(s.decode_seconds * 1e9))})  # fmt: skip
        self._end_stream()


def main() -> int:
    if sys.argv[1:2] != ["serve"]:
        sys.stderr.write("fake ollama: only `serve` is implemented\n")
        return 2
    print('time=2026-12-02T12:00:00 level=INFO msg="starting fake ollama"', flush=True)
    if ENV.get("FAKE_OLLAMA_EXIT_AT_START"):
        print("Error: listen tcp: bind: address already in use", flush=True)
        return 1
    if ENV.get("FAKE_OLLAMA_NEVER_HEALTHY"):
        print('level=INFO msg="waiting for GPU discovery"', flush=True)
        time.sleep(3600)
        return 0
    host, _, port = ENV.get("OLLAMA_HOST", "127.0.0.1:11434").rpartition(":")
    server = ThreadingHTTPServer((host or "127.0.0.1", int(port)), Handler)
    server.daemon_threads = True
    print(f'level=INFO msg="Listening on {host}:{port} (version fake)"', flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
