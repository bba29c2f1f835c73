"""One MCP server's life on the hub's event loop: started through the SDK's `stdio_client`, its
tools listed, held until the hub stops, its stderr and the SDK's words about it in its log.

The SDK's context managers are entered and left in this one task, as anyio requires; cancelling
the task makes the SDK stop the server's whole process group (stdin closed, then SIGTERM, then
SIGKILL, each wait bounded: 6.5 s at most).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gptoss_local.tools.mcp_config import ServerSpec
from gptoss_local.tools.mcp_log import CappedLog, StderrPump, route_sdk_logs

_MAX_PAGES = 50  # of a tools listing; a server that keeps paging is not listed for ever
_TAIL_SECONDS = 1.0  # for a failed server's last stderr lines to reach its log


@dataclass(frozen=True)
class McpTool:
    """A tool of a running server, as the server names and describes it."""

    server: str
    name: str
    description: str
    schema: dict[str, Any] | None


class ServerTask:
    """One server: `run` is its task; `session` is set while it serves.

    Attributes:
        junk: Lines the server wrote to stdout that were not MCP messages (each one a
            traceback in its log, from the SDK).
        noted: How many of those the user has been told about.
    """

    def __init__(self, spec: ServerSpec, log_path: Path) -> None:
        self.spec, self.log_path = spec, log_path
        self.session: Any = None
        self.task: asyncio.Task[None] | None = None
        self.junk = self.noted = 0
        self._pump: StderrPump | None = None

    async def run(self, started: asyncio.Future[list[McpTool]], stop: asyncio.Event) -> None:
        """Start the server, give its tools to `started`, serve until `stop` is set."""
        # mcp and its dependencies (pydantic, anyio, httpx) take ~0.3 s to import: only here.
        from mcp import ClientSession, StdioServerParameters, stdio_client

        spec = self.spec
        params = StdioServerParameters(
            command=spec.command, args=list(spec.args), env=spec.env or None, cwd=spec.cwd
        )
        log = CappedLog(self.log_path)
        route_sdk_logs(log)  # for this task and the SDK's tasks under it
        pump = self._pump = StderrPump(log)
        try:
            async with stdio_client(params, errlog=pump.writer) as (read, write):
                pump.close_writer()  # the server holds its own end now
                async with ClientSession(read, write, message_handler=self._seen) as session:
                    await session.initialize()
                    tools = await _list_tools(spec, session)
                    self.session = session
                    started.set_result(tools)
                    await stop.wait()
        except asyncio.CancelledError:
            started.cancel()  # no-op once started; else no one is left to read it
            raise
        except BaseException as exc:
            # Failed to start: its stderr's last lines say why. Died later: its calls say so.
            if not started.done():
                pump.close_writer()
                await asyncio.to_thread(pump.join, _TAIL_SECONDS)
                started.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
        finally:
            self.session = None
            pump.close_writer()

    def unnoted_junk(self) -> int:
        """How many junk lines arrived since the last call of this; marks them told."""
        new, self.noted = self.junk - self.noted, self.junk
        return new

    def junk_words(self, count: int) -> str:
        """`count` junk lines in words, with where they are."""
        return (
            f"wrote {count:,} line{'s' if count != 1 else ''} to its stdout that are not MCP "
            f"messages (stdout is for MCP only; they are in its log: {self.log_path})"
        )

    def join_log(self, timeout: float) -> None:
        """Wait up to `timeout` seconds for the server's last stderr to reach its log."""
        if self._pump is not None:
            self._pump.join(timeout)

    async def _seen(self, message: Any) -> None:
        # The SDK hands the session each stdout line it could not parse as an exception
        # (after logging its traceback, which `route_sdk_logs` sends to the log).
        if isinstance(message, Exception):
            self.junk += 1


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
