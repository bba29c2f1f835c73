"""The Ollama backend: chat streaming, pull and placement through the official `ollama` client.

A stream that breaks mid-reply (the server died, the connection dropped, no final line) yields
`TurnEnded("truncated")` and then raises `BackendError(kind="stream_broken")`: the caller keeps
the text it has and marks the reply failed with the reason (the TUI's pump does). A daemon we own
that crashed is restarted before the error is raised, so the next turn works.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from typing import Any, Literal
from urllib.parse import urlsplit

from gptoss_local.backends.base import (
    BackendError,
    BackendInfo,
    Capabilities,
    Reply,
    ReplyRequest,
    ServedElsewhere,
    Stats,
    check_request,
)
from gptoss_local.backends.ollama.daemon import OllamaDaemon
from gptoss_local.backends.ollama.messages import chat_request
from gptoss_local.events import AnswerDelta, Event, ReasoningDelta, ToolCall, TurnEnded
from gptoss_local.i18n import _
from gptoss_local.store.offline import offline_reason
from gptoss_local.store.progress import Progress, ProgressFn, ignore_progress
from gptoss_local.urls import is_loopback_host


class OllamaBackend(ServedElsewhere):
    """One gpt-oss tag served by Ollama.

    Args:
        daemon: The server (adopted or started); `ensure()` is called here.
        model: The Ollama tag, e.g. "gpt-oss:20b".
        context: options.num_ctx for every request (the plan's context).
        keep_alive: How long Ollama keeps the model loaded after a reply ("5m", "-1" forever).
    """

    engine = "ollama"

    # No prefill: Ollama's API cannot evaluate a prompt without answering it, and the daemon
    # keeps its own prompt cache between requests. Its gpt-oss template renders a function
    # named python as the built-in. A response format is its `format` (a grammar on the
    # answer). No tool choice and no logit bias in its API; the penalties are options its
    # Go sampler, which runs gpt-oss, reads nowhere (ollama/ollama#15783: ignored in silence).
    capabilities = Capabilities(prefill=False, tools=True, builtin_tools=True, response_format=True)

    def __init__(
        self, daemon: OllamaDaemon, model: str, context: int = 8192, keep_alive: str = "10m"
    ) -> None:
        self.daemon, self.model, self.context, self.keep_alive = daemon, model, context, keep_alive
        self._client = client_for(daemon.ensure())

    def info(self) -> BackendInfo:
        """The tag, its placement as Ollama reports it, and the server's version."""
        details = {"ollama": self.daemon.version or "?", "server": self.daemon.url}
        return BackendInfo("ollama", self.model, self.placement(), self.context, details)

    def placement(self) -> str:
        """Where Ollama loaded the model, from /api/ps: size_vram against size."""
        try:
            loaded = self._client.ps().models
        except Exception:  # placement is informative; an unreachable server shows as unknown
            return "unknown"
        for entry in loaded:
            if entry.model == self.model or entry.name == self.model:
                return describe_placement(entry.size or 0, entry.size_vram or 0)
        return "not loaded"

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        """The assistant's next turn (see `Backend.stream`)."""
        check_request(self.capabilities, request, "ollama")
        return Reply(self._generate(request, cancel))

    def _generate(
        self, request: ReplyRequest, cancel: threading.Event | None
    ) -> Generator[Event, None, Stats]:
        settings = request.settings
        arguments = chat_request(
            request.conversation, settings, self.context, request.response_format
        )
        started, first, cancelled = time.monotonic(), None, False
        final: Any = None
        called = False
        try:
            # The think level goes with every request, a formatted one too: Ollama needs one
            # for gpt-oss to reason before an answer held to a `format`.
            for chunk in self._client.chat(
                model=self.model, stream=True, think=settings.effort,
                keep_alive=self.keep_alive, **arguments,
            ):  # fmt: skip
                message = chunk.message
                if message.thinking:
                    first = first or time.monotonic()
                    yield ReasoningDelta(message.thinking)
                if message.content:
                    first = first or time.monotonic()
                    yield AnswerDelta(message.content)
                for call in message.tool_calls or ():
                    called = True
                    yield _tool_call(call.function.name, call.function.arguments)
                if chunk.done:
                    final = chunk
                    break
                if cancel is not None and cancel.is_set():
                    cancelled = True  # closing the generator closes the HTTP stream
                    break
        except Exception as exc:
            yield from self._broken(exc)
        if final is None and not cancelled:
            yield from self._broken(None)
        ttft = first - started if first is not None else None
        end: Literal["call", "return"] = "call" if called else "return"
        yield TurnEnded("truncated" if cancelled else end)
        return self._stats(final, ttft, "cancelled" if cancelled else end)

    def _broken(self, exc: BaseException | None) -> Iterator[Event]:
        """End a reply the server stopped sending: truncated, then a `stream_broken` error."""
        _check_user_error(exc)
        why = f"{type(exc).__name__}: {exc}" if exc is not None else _("no final line")
        hint = _("The reply is incomplete.")
        try:
            if self.daemon.restart_if_crashed(wait=1.0):
                self._client = client_for(self.daemon.url)  # a restarted daemon has a new port
                hint += " " + _("The Ollama server crashed and was restarted; ask again.")
        except BackendError as again:  # out of restarts, or it would not start
            hint += " " + _("Restarting the Ollama server failed: {error}").format(error=again)
        yield TurnEnded("truncated")
        raise BackendError(_("the Ollama stream broke mid-reply ({why})").format(why=why), hint,
                           kind="stream_broken")  # fmt: skip

    def _stats(self, final: Any, ttft: float | None, reason: str) -> Stats:
        if final is None:
            return Stats(ttft_seconds=ttft, stop_reason=reason, context_size=self.context)  # type: ignore[arg-type]
        evals, nanos = final.eval_count or 0, final.eval_duration or 0
        prompt = final.prompt_eval_count or 0
        stop = "length" if final.done_reason == "length" else reason
        return Stats(
            prompt_tokens=prompt, evaluated_tokens=prompt, generated_tokens=evals,
            prefill_seconds=(final.prompt_eval_duration or 0) / 1e9, ttft_seconds=ttft,
            decode_seconds=nanos / 1e9,
            decode_tokens_per_second=evals / nanos * 1e9 if nanos else None,
            stop_reason=stop, context_size=self.context, context_used=prompt + evals,  # type: ignore[arg-type]
        )  # fmt: skip

    def pull(self, tag: str | None = None, progress: ProgressFn = ignore_progress) -> None:
        """Download a tag into Ollama's store, reporting through the store's callback."""
        pull_tag(self._client, tag or self.model, progress)

    def has_model(self) -> bool:
        """Whether Ollama's store holds the tag already (its /api/tags list)."""
        return has_tag(self._client, self.model)

    def close(self) -> None:
        """Stop a daemon we started; an adopted server is left running."""
        self.daemon.stop()

    def __enter__(self) -> OllamaBackend:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def client_for(url: str) -> Any:
    """The official client for the Ollama server at `url`.

    httpx sends through `http_proxy` / `all_proxy` whatever the host, so a chat with the
    daemon on this machine would travel to a proxy: for a loopback server the environment's
    proxy settings are ignored (a server elsewhere keeps them, as the user set them up).
    """
    import ollama  # lazily: it pulls in httpx and pydantic

    host = urlsplit(url if "://" in url else f"http://{url}").hostname
    return ollama.Client(host=url, trust_env=not is_loopback_host(host))


def _check_user_error(exc: BaseException | None) -> None:
    """An HTTP error from Ollama (unknown model, bad request) is not a broken stream.

    An error line in the middle of a stream (status -1 in the client, e.g. "model runner has
    unexpectedly stopped") is one, and is left to the caller.
    """
    import ollama

    if isinstance(exc, ollama.ResponseError) and exc.status_code >= 400:
        missing = exc.status_code == 404
        hint = _("Download it with `gptoss-local pull --backend ollama`.") if missing else None
        raise BackendError(_("Ollama refused the request: {error}").format(error=exc.error),
                           hint, kind="load_failed") from exc  # fmt: skip


def _tool_call(name: str, arguments: Any) -> ToolCall:
    import json

    if isinstance(arguments, dict):
        return ToolCall(name, dict(arguments), json.dumps(arguments))
    return ToolCall(name, {}, str(arguments), error="arguments are not a JSON object")


def describe_placement(size: int, size_vram: int) -> str:
    """Words for /api/ps numbers: all on the GPU, all on the CPU, or the split."""
    if size <= 0:
        return "unknown"
    if size_vram >= size:
        return "entirely on the GPU"
    if size_vram <= 0:
        return "on the CPU only"
    return f"{size_vram / size:.0%} on the GPU, the rest in system RAM"


def has_tag(client: Any, tag: str) -> bool:
    """Whether the Ollama behind `client` holds `tag` already (its /api/tags list)."""
    names = {m.model for m in client.list().models}
    return tag in names or f"{tag}:latest" in names


def pull_tag(
    client: Any, tag: str, progress: ProgressFn = ignore_progress, offline: bool = False
) -> None:
    """Pull `tag` through `client`, mapping /api/pull lines to `Progress("download", ...)`.

    Raises:
        BackendError: kind "offline" when offline mode is on (`offline` is `--offline`; the
            offline variables count too): nothing is asked of the server. Kind "pull_failed"
            for an error line, HTTP error or dropped connection.
    """
    reason = offline_reason(offline)
    if reason:
        raise BackendError(
            _("offline mode is on ({reason}), so Ollama is not asked to download {tag}").format(
                reason=reason, tag=tag
            ),
            _(
                "Bring the model from another PC with Ollama (`ollama pull {tag}` there, then "
                "copy its models folder), or run the pull without offline mode."
            ).format(tag=tag),
            kind="offline",
        )
    import ollama

    last_at, last_done, speed = time.monotonic(), 0, 0.0
    try:
        for line in client.pull(tag, stream=True):
            if line.total:
                done, now = line.completed or 0, time.monotonic()
                if now > last_at and done >= last_done:
                    speed = (done - last_done) / (now - last_at)
                last_at, last_done = now, done
                progress(Progress("download", tag, done, line.total, speed))
            elif line.status == "verifying sha256 digest":
                progress(Progress("verify", tag, last_done, last_done, 0.0))
    except ollama.ResponseError as exc:
        raise BackendError(
            _("Ollama could not pull {tag}: {error}").format(tag=tag, error=exc.error),
            kind="pull_failed",
        ) from exc
    except Exception as exc:  # httpx errors: the server went away mid-pull
        raise BackendError(
            _("the pull of {tag} broke off: {error}").format(tag=tag, error=exc),
            _("Run it again: Ollama resumes."),
            kind="pull_failed",
        ) from exc
