"""MCP servers over stdio, through the official `mcp` SDK, for callers that are not async.

The SDK is async (anyio). `McpHub` runs one event loop on a background thread for all servers:
each server lives in a task that enters the SDK's `stdio_client` and `ClientSession`, lists
the tools, and waits until the hub closes (so the context managers are entered and left in
the same task, as anyio requires). Calls are scheduled on that loop from any thread and
waited for with a deadline and a cancel event. A server that does not start is a problem
with its stderr's last lines (its log is in the logs folder); the others work on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gptoss_local import paths
from gptoss_local.tools.mcp_config import ServerSpec
from gptoss_local.tools.result import ToolOutput

START_SECONDS = 30.0  # a server started through uvx or npx may install itself first
CALL_SECONDS = 120.0
_MAX_PAGES = 50  # of a tools listing; a server that keeps paging is not listed for ever
_POLL = 0.1


@dataclass(frozen=True)
class McpTool:
    """A tool of a running server, as the server names and describes it."""

    server: str
    name: str
    description: str
    schema: dict[str, Any] | None


class McpHub:
    """The MCP servers of mcp.json, started together and stopped together.

    Args:
        servers: What to start.
        log_dir: Where each server's stderr goes (``mcp-NAME.log``); default the logs folder.
        start_seconds: How long a server may take to start and list its tools.
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
        self._sessions: dict[str, Any] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    def start(self) -> None:
        """Start every server and list its tools (at most `start_seconds` in all)."""
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
        session = self._sessions.get(server)
        if session is None or self._loop is None:
            why = self.problems.get(server, "it is not running")
            return ToolOutput(f"The MCP server {server!r} is not available: {why}", error=True)
        call = asyncio.wait_for(session.call_tool(tool, arguments), self._call_seconds)
        future = asyncio.run_coroutine_threadsafe(call, self._loop)
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
        if isinstance(result, asyncio.TimeoutError):
            return ToolOutput(f"{tool} timed out after {self._call_seconds:g} s.", error=True)
        if isinstance(result, BaseException):
            return ToolOutput(f"{tool} failed: {describe(result)}", error=True)
        text, failed = result_text(result)
        return ToolOutput.of(text, error=failed)

    def close(self) -> None:
        """Stop every server and the loop's thread."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        # A server that would not stop is killed by the SDK; the thread is a daemon anyway.
        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=20)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
        if not loop.is_running():
            loop.close()
        self._sessions.clear()

    # -- on the loop's thread --------------------------------------------------------------

    async def _connect_all(self) -> None:
        self._stop = asyncio.Event()
        await asyncio.gather(*(self._connect(spec) for spec in self.servers))
        found = {spec.name: i for i, spec in enumerate(self.servers)}
        self.tools.sort(key=lambda t: (found[t.server], t.name))

    async def _connect(self, spec: ServerSpec) -> None:
        started: asyncio.Future[list[McpTool]] = asyncio.get_running_loop().create_future()
        log = self._log_path(spec)
        self._tasks.append(asyncio.create_task(self._serve(spec, started, log)))
        try:
            tools = await asyncio.wait_for(asyncio.shield(started), self._start_seconds)
        except asyncio.TimeoutError:
            started.cancel()  # so the server's task, once cancelled, has no one to tell
            self._tasks[-1].cancel()
            why = f"it did not answer within {self._start_seconds:g} s"
            self.problems[spec.name] = _with_log(why, log)
        except Exception as exc:
            self.problems[spec.name] = _with_log(f"it failed to start: {describe(exc)}", log)
        else:
            self.tools += tools

    async def _serve(self, spec: ServerSpec, started: asyncio.Future[Any], log: Path) -> None:
        # mcp and its dependencies (pydantic, anyio, httpx) take ~0.3 s to import: only here.
        from mcp import ClientSession, StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=spec.command, args=list(spec.args), env=spec.env or None, cwd=spec.cwd
        )
        assert self._stop is not None
        try:
            with log.open("w", encoding="utf-8") as errlog:
                async with (
                    stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    tools = await _list_tools(spec, session)
                    self._sessions[spec.name] = session
                    started.set_result(tools)
                    await self._stop.wait()
        except BaseException as exc:
            if not started.done():
                started.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
            self._sessions.pop(spec.name, None)
            if isinstance(exc, asyncio.CancelledError):
                raise

    async def _shutdown(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=15)
            for task in pending:
                task.cancel()

    def _log_path(self, spec: ServerSpec) -> Path:
        folder = paths.ensure_dir(self._log_dir or paths.logs_dir())
        return folder / f"mcp-{spec.prefix}.log"


async def _list_tools(spec: ServerSpec, session: Any) -> list[McpTool]:
    from mcp import types

    found: list[McpTool] = []
    cursor = None
    for _ in range(_MAX_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        for tool in page.tools:
            text = tool.description or getattr(tool, "title", None) or ""
            found.append(McpTool(spec.name, tool.name, text, tool.input_schema or None))
        cursor = page.next_cursor
        if not cursor:
            break
    return found


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
