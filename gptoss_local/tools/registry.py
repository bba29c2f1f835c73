"""Every tool one chat (or one run) can offer the model, by the name the model calls it.

Four kinds: the built-ins ``python`` and ``browser`` (rendered in the system message; the
browser's calls are ``browser.search``, ``browser.open``, ``browser.find``, all of the one
tool ``browser``), the tools of MCP servers (functions named ``SERVER__TOOL``), and functions
the caller defines and runs itself (`run --tools FILE`: offered, never executed here). `offer`
puts them into a `Conversation`; `call` runs one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from gptoss_local.backends.base import Capabilities
from gptoss_local.conversation import BuiltinTool, Citation, Conversation, Tool
from gptoss_local.harmony import render_prompt
from gptoss_local.harmony.schema import check
from gptoss_local.tools.browser import BrowserTool
from gptoss_local.tools.browser_tool import FUNCTION_NAMES as BROWSER_FUNCTIONS
from gptoss_local.tools.browser_tool import NAME as BROWSER
from gptoss_local.tools.errors import ToolsError, UnknownToolError
from gptoss_local.tools.mcp_client import McpHub, describe
from gptoss_local.tools.mcp_config import identifier
from gptoss_local.tools.python_tool import NAME as PYTHON
from gptoss_local.tools.python_tool import PythonTool
from gptoss_local.tools.result import ToolOutput

ToolKind = Literal["builtin", "mcp", "function"]
Runner = Callable[[dict[str, Any], threading.Event | None], ToolOutput]


@dataclass(frozen=True)
class ToolInfo:
    """A tool as listings and approval prompts show it.

    Attributes:
        name: What the model calls it (and what settings' `allowed_tools` name).
        kind: "builtin" (python), "mcp" or "function".
        description: What it does.
        parameters: JSON schema of its arguments (None for python, which takes code).
        source: Where it comes from ("built-in", "MCP server git", a --tools file).
        note: What the user should know (for python: what the sandbox enforces).
        runnable: False for functions the caller runs itself: a call ends the chain.
    """

    name: str
    kind: ToolKind
    description: str
    parameters: dict[str, Any] | None = None
    source: str = ""
    note: str = ""
    runnable: bool = True


@dataclass
class _Entry:
    info: ToolInfo
    offer: Tool | BuiltinTool
    run: Runner | None


class ToolRegistry:
    """The tools of one chat or run. `problems` says what could not be offered, and why."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self.problems: list[str] = []
        self.python: PythonTool | None = None
        self.browser: BrowserTool | None = None
        self.hub: McpHub | None = None

    def infos(self) -> list[ToolInfo]:
        """Every tool, python first, then MCP tools by server, then functions."""
        return [self._info(entry) for entry in self._entries.values()]

    def get(self, name: str) -> ToolInfo | None:
        """The tool the model calls `name`, if there is one (``browser.search``: the
        browser)."""
        entry = self._entries.get(_tool_of(name))
        return self._info(entry) if entry else None

    def _info(self, entry: _Entry) -> ToolInfo:
        # The python tool's note changes once its worker has started (memory limit known).
        if entry.info.name == PYTHON and self.python is not None:
            return replace(entry.info, note=self.python.note)
        return entry.info

    def set_browser(self, browser: BrowserTool | None) -> None:
        """Offer this browser (None: none), closing the one it replaces."""
        if self.browser is not None and self.browser is not browser:
            self.browser.close()
        self.browser = browser
        self._entries.pop(BROWSER, None)
        if browser is not None:
            info = ToolInfo(BROWSER, "builtin", browser.builtin.description, None, "built-in",
                            browser.note)  # fmt: skip
            self._entries[BROWSER] = _Entry(info, browser.builtin, _browser_runner(browser))

    def cite(self, text: str) -> tuple[Citation, ...]:
        """The browser's citations in an answer, as files and lines (none without one)."""
        return self.browser.cite(text) if self.browser is not None else ()

    def set_python(self, python: PythonTool | None) -> None:
        """Offer this python tool (None: none), stopping the worker of the one it replaces
        (a chat's own session: switch it when the chat changes)."""
        if self.python is not None and self.python is not python:
            self.python.close()
        self.python = python
        self._entries.pop(PYTHON, None)
        if python is not None:
            info = ToolInfo(PYTHON, "builtin", python.builtin.description, None, "built-in",
                            python.note)  # fmt: skip
            entries = {PYTHON: _Entry(info, python.builtin, python.call), **self._entries}
            self._entries = entries

    def add_mcp(self, hub: McpHub) -> None:
        """Offer the tools of a started hub as ``SERVER__TOOL`` functions."""
        self.hub = hub
        self.problems += [f"MCP server {name!r}: {why}" for name, why in hub.problems.items()]
        prefixes = {spec.name: spec.prefix for spec in hub.servers}
        for tool in hub.tools:
            name = self._free_name(f"{prefixes[tool.server]}__{identifier(tool.name)}")
            source = f"MCP server {tool.server}"
            info = ToolInfo(name, "mcp", tool.description, tool.schema, source)
            run = _mcp_runner(hub, tool.server, tool.name)
            self._add(info, run, f"{source}: tool {tool.name!r}")

    def add_functions(self, tools: Iterable[Tool], source: str) -> None:
        """Offer functions that the caller runs (a call of one ends the chain)."""
        for tool in tools:
            self.add_function(tool, None, source=source)

    def add_function(self, tool: Tool, run: Runner | None, *, source: str = "") -> None:
        """Offer one function, run in this process by `run` (None: the caller runs it)."""
        info = ToolInfo(tool.name, "function", tool.description, tool.parameters, source,
                        runnable=run is not None)  # fmt: skip
        self._add(info, run, f"{source or 'function'} {tool.name!r}")

    def keep(self, allowed: Callable[[str], bool]) -> None:
        """Leave out every runnable tool whose name `allowed` refuses (functions stay)."""
        self._entries = {
            name: entry
            for name, entry in self._entries.items()
            if not entry.info.runnable or allowed(name)
        }

    def offer(
        self, conversation: Conversation, capabilities: Capabilities | None = None
    ) -> Conversation:
        """`conversation` with these tools (functions and built-ins) offered; given an
        engine's `capabilities`, only the kinds it can offer the model (the python tool is
        left out for a server that takes functions only, which would never show it)."""
        functions = tuple(e.offer for e in self._entries.values() if isinstance(e.offer, Tool))
        builtins = tuple(
            e.offer for e in self._entries.values() if isinstance(e.offer, BuiltinTool)
        )
        if capabilities is not None:
            functions = functions if capabilities.tools else ()
            builtins = builtins if capabilities.builtin_tools else ()
            # The browser is a namespace of functions, which only a Harmony renderer writes.
            builtins = tuple(b for b in builtins if capabilities.namespaces or not b.functions)
        return replace(conversation, tools=functions, builtin_tools=builtins)

    def call(
        self, name: str, arguments: dict[str, Any], cancel: threading.Event | None = None
    ) -> ToolOutput:
        """Run the tool `name`; a failure of the tool is an error result, not an exception.

        Raises:
            UnknownToolError: There is no runnable tool of that name.
        """
        entry = self._entries.get(_tool_of(name))
        if entry is None or entry.run is None:
            known = ", ".join(n for n, e in self._entries.items() if e.run) or "none"
            what = "is run by its caller" if entry else "does not exist"
            raise UnknownToolError(f"the tool {name!r} {what}; tools here: {known}")
        if entry.info.name == BROWSER:  # which of its functions is in the name
            arguments = {**arguments, _FUNCTION: name.partition(".")[2]}
        try:
            return entry.run(arguments, cancel)
        except ToolsError as exc:
            return ToolOutput(f"{name} failed: {exc}", error=True)
        except Exception as exc:  # a tool's bug is the model's (and user's) news, not a crash
            return ToolOutput(f"{name} failed: {describe(exc)}", error=True)

    def close(self) -> None:
        """Stop the python worker and the MCP servers; close the browser's index."""
        if self.python is not None:
            self.python.close()
        if self.browser is not None:
            self.browser.close()
        if self.hub is not None:
            self.hub.close()

    def _free_name(self, name: str) -> str:
        # Two tools whose names only differ in characters a Harmony name cannot hold.
        found, number = name, 2
        while found in self._entries:
            found, number = f"{name}_{number}", number + 1
        return found

    def _add(self, info: ToolInfo, run: Runner | None, what: str) -> None:
        if info.name in self._entries:
            self.problems.append(f"{what} left out: a tool named {info.name!r} is there already")
            return
        try:
            tool = Tool(info.name, info.description, info.parameters)
            if info.parameters is not None:
                check(info.parameters)
            render_prompt([], tools=[tool])
        except (ValueError, TypeError, AttributeError, KeyError, RecursionError) as exc:
            self.problems.append(f"{what} left out: it cannot be offered ({exc})")
            return
        self._entries[info.name] = _Entry(info, tool, run)


# The key under which `call` hands the browser the function called (not a JSON identifier,
# so no argument the model wrote can be it).
_FUNCTION = "browser function"


def _tool_of(name: str) -> str:
    """The tool a call's name is of: ``browser.open`` -> ``browser``, others themselves."""
    namespace, dot, function = name.partition(".")
    return BROWSER if dot and namespace == BROWSER and function in BROWSER_FUNCTIONS else name


def _browser_runner(browser: BrowserTool) -> Runner:
    def run(arguments: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        given = dict(arguments)
        return browser.call(str(given.pop(_FUNCTION, "")), given)

    return run


def _mcp_runner(hub: McpHub, server: str, tool: str) -> Runner:
    def run(arguments: dict[str, Any], cancel: threading.Event | None) -> ToolOutput:
        return hub.call(server, tool, arguments, cancel)

    return run


def timed(registry: ToolRegistry, name: str, arguments: dict[str, Any],
          cancel: threading.Event | None = None) -> tuple[ToolOutput, float]:  # fmt: skip
    """`registry.call` and how long it took, in seconds."""
    started = time.monotonic()
    output = registry.call(name, arguments, cancel)
    return output, time.monotonic() - started
