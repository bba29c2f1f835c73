"""MCP servers over stdio, through the official `mcp` SDK, for callers that are not async.

The SDK is async (anyio). `McpHub` runs one event loop on a background thread for all servers,
each in a task of its own (`mcp_server.ServerTask`). Calls are scheduled on that loop from any
thread and waited for with a deadline and a cancel event. A server that does not start is a
problem with its stderr's last lines (its log is in the logs folder); the others work on. One
that does not answer in time is stopped at once, in the background, so that neither the other
servers nor the exit wait for it; the exit waits at most `STOP_SECONDS` for the SDK to stop
every server (stdin closed, then SIGTERM, then SIGKILL to its process group).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gptoss_local import paths
from gptoss_local.tools.mcp_config import ServerSpec
from gptoss_local.tools.mcp_server import McpTool, ServerTask
from gptoss_local.tools.result import ToolOutput

__all__ = ["McpHub", "McpTool", "describe", "result_text"]

START_SECONDS = 30.0  # a server started through uvx or npx may install itself first
CALL_SECONDS = 120.0
STOP_SECONDS = 8.0  # the SDK's stop takes 6.5 s at most for a server that ignores SIGTERM
_POLL = 0.1


class McpHub:
    """The MCP servers of mcp.json, started together and stopped together.

    Args:
        servers: What to start.
        log_dir: Where each server's log goes (``mcp-NAME.log``); default the logs folder.
        start_seconds: How long a server may take to start and list its tools, unless its
            mcp.json entry says (``startup_timeout_sec``).
        call_seconds: How long one call may take.
    """

    def __init__(
        self,
        servers: Sequence[ServerSpec],
        *,
        log_dir: Path | None = None,
        start_seconds: float = START_SECONDS,
        call_seconds: float = CALL_SECONDS,
    ) -> None:
        self.servers = list(servers)
        self.tools: list[McpTool] = []
        self.problems: dict[str, str] = {}  # server name → what went wrong
        self._log_dir = log_dir
        self._start_seconds, self._call_seconds = start_seconds, call_seconds
        self._running: dict[str, ServerTask] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    def start(self) -> None:
        """Start every server and list its tools (each within its start-up bound, together)."""
        if self._loop is not None or not self.servers:
            return
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._connect_all(), self._loop).result()

    def call(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any],
        cancel: threading.Event | None = None,
    ) -> ToolOutput:
        """Call `tool` of `server`; its text content is the result (errors included)."""
        running = self._running.get(server)
        if running is None or running.session is None or self._loop is None:
            why = self.problems.get(server, "it is not running")
            return ToolOutput(f"The MCP server {server!r} is not available: {why}", error=True)
        future = asyncio.run_coroutine_threadsafe(self._call(running, tool, arguments), self._loop)
        deadline = time.monotonic() + self._call_seconds + 5
        while True:
            try:
                result = future.result(timeout=_POLL)
            except concurrent.futures.TimeoutError:
                if cancel is not None and cancel.is_set():
                    future.cancel()
                    return ToolOutput("Stopped by the user.", error=True)
                if time.monotonic() < deadline:
                    continue
                future.cancel()
                result = asyncio.TimeoutError()
            except Exception as exc:  # the SDK's errors, a dead server: a result, not a crash
                result = exc
            break
        new_junk = running.unnoted_junk()
        note = f"MCP server {server!r} {running.junk_words(new_junk)}" if new_junk else ""
        if isinstance(result, asyncio.TimeoutError):
            text = f"{tool} timed out after {self._call_seconds:g} s."
            return ToolOutput(text, error=True, note=note)
        if isinstance(result, BaseException):
            return ToolOutput(f"{tool} failed: {describe(result)}", error=True, note=note)
        text, failed = result_text(result)
        return ToolOutput.of(text, error=failed, note=note)

    def close(self) -> None:
        """Stop every server (at most `STOP_SECONDS`) and the loop's thread."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(STOP_SECONDS + 3)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=2)
        if not loop.is_running():
            loop.close()
        deadline = time.monotonic() + 1.0  # for the last stderr lines to reach the logs
        for running in self._running.values():
            running.join_log(max(0.0, deadline - time.monotonic()))

    # -- on the loop's thread --------------------------------------------------------------

    async def _connect_all(self) -> None:
        self._stop = asyncio.Event()
        await asyncio.gather(*(self._connect(spec) for spec in self.servers))
        found = {spec.name: i for i, spec in enumerate(self.servers)}
        self.tools.sort(key=lambda t: (found[t.server], t.name))
        for name, running in self._running.items():
            if running.session is not None and (junk := running.unnoted_junk()):
                self.problems[name] = f"it {running.junk_words(junk)}"

    async def _connect(self, spec: ServerSpec) -> None:
        assert self._stop is not None
        running = self._running[spec.name] = ServerTask(spec, self._log_path(spec))
        started: asyncio.Future[list[McpTool]] = asyncio.get_running_loop().create_future()
        task = running.task = asyncio.create_task(running.run(started, self._stop))
        limit = spec.start_seconds or self._start_seconds
        try:
            tools = await asyncio.wait_for(asyncio.shield(started), limit)
        except asyncio.TimeoutError:
            # Stopped now, in the background: the SDK stops its process group on cancel.
            started.cancel()
            task.cancel()
            why = f"it did not answer within {limit:g} s"
            if spec.start_seconds is None:
                why += ' (more time: "startup_timeout_sec" in its mcp.json entry)'
            self.problems[spec.name] = _with_log(why, running.log_path)
        except Exception as exc:
            self.problems[spec.name] = _with_log(
                f"it failed to start: {describe(exc)}", running.log_path
            )
        else:
            self.tools += tools

    async def _call(self, running: ServerTask, tool: str, arguments: dict[str, Any]) -> Any:
        result = await asyncio.wait_for(
            running.session.call_tool(tool, arguments), self._call_seconds
        )
        await asyncio.sleep(0)  # junk lines read before the reply are counted by now
        return result

    async def _shutdown(self) -> None:
        if self._stop is not None:
            self._stop.set()
        tasks = [running.task for running in self._running.values() if running.task]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=STOP_SECONDS)
            for task in pending:  # cancelled, the SDK still stops the server: wait for that
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1.0)

    def _log_path(self, spec: ServerSpec) -> Path:
        folder = paths.ensure_dir(self._log_dir or paths.logs_dir())
        return folder / f"mcp-{spec.prefix}.log"


def result_text(result: Any) -> tuple[str, bool]:
    """A `CallToolResult` as text (other content described in brackets), and its error flag."""
    parts: list[str] = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            size = len(block.data) * 3 // 4
            parts.append(f"[{kind} {getattr(block, 'mime_type', '')}, {size:,} bytes: not shown]")
        elif kind == "resource":
            text = getattr(block.resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource {block.resource.uri}]")
        elif kind == "resource_link":
            parts.append(f"[resource {block.uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    return "\n".join(parts), bool(getattr(result, "is_error", False))


def describe(exc: BaseException) -> str:
    """An exception (or the first of an exception group, as anyio raises them) in words."""
    while inner := getattr(exc, "exceptions", None):  # BaseExceptionGroup (3.11+ or backport)
        exc = inner[0]
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"command {exc.filename!r} not found"
    return str(exc) or type(exc).__name__


def _with_log(why: str, log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        lines = []
    tail = "\n".join(f"    {line}" for line in lines[-8:])
    where = f"(log: {log})"
    return f"{why} {where}\n{tail}" if tail else f"{why} {where}"
