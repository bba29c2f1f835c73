"""Tools the model can call: gpt-oss's built-in python (a sandboxed, stateful worker process)
and the tools of MCP servers (mcp.json), behind one registry and one loop.

Plain Python, no UI: `ToolLoop.run` streams a reply, asks `Approvals` about each call (the
TUI's dialog plugs in as its `ask`), runs it, feeds the result back and continues, reporting
every step as events (`tools.events`); `HistoryRecorder` saves those events into the chat
history. `open_tools` builds the registry from the settings and mcp.json.
"""

from __future__ import annotations

from gptoss_local.tools.approvals import Approvals, Ask, Decision, Verdict
from gptoss_local.tools.errors import McpConfigError, ToolsError, UnknownToolError
from gptoss_local.tools.events import (
    ChainEnded,
    LoopEvent,
    ReplyEnded,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallFinished,
    ToolCallRequested,
)
from gptoss_local.tools.loop import MAX_CALLS, ToolLoop
from gptoss_local.tools.opening import browser_tool, open_tools, python_tool, scratch_dir
from gptoss_local.tools.recorder import HistoryRecorder
from gptoss_local.tools.registry import ToolInfo, ToolRegistry
from gptoss_local.tools.result import ToolOutput

__all__ = [
    "MAX_CALLS",
    "Approvals",
    "Ask",
    "ChainEnded",
    "Decision",
    "HistoryRecorder",
    "LoopEvent",
    "McpConfigError",
    "ReplyEnded",
    "ToolCallApproved",
    "ToolCallDenied",
    "ToolCallFinished",
    "ToolCallRequested",
    "ToolInfo",
    "ToolLoop",
    "ToolOutput",
    "ToolRegistry",
    "ToolsError",
    "UnknownToolError",
    "Verdict",
    "browser_tool",
    "open_tools",
    "python_tool",
    "scratch_dir",
]
