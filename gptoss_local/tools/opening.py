"""Building the tools of a chat, a run or a `tools` command from the settings and mcp.json."""

from __future__ import annotations

from pathlib import Path

from gptoss_local import paths
from gptoss_local.config import Settings
from gptoss_local.i18n import _
from gptoss_local.library import Library, LibraryError
from gptoss_local.tools.browser import BrowserTool
from gptoss_local.tools.errors import McpConfigError
from gptoss_local.tools.mcp_client import McpHub
from gptoss_local.tools.mcp_config import load_servers
from gptoss_local.tools.python_session import PythonSession
from gptoss_local.tools.python_tool import PythonTool
from gptoss_local.tools.registry import ToolRegistry


def scratch_dir(label: str) -> Path:
    """The python tool's scratch folder for `label` (``chat-12``, ``run``, ``call``): under
    the data folder, kept after the session ends so the files the code wrote stay there."""
    return paths.data_dir() / "python" / label


def python_tool(settings: Settings, label: str) -> PythonTool:
    """A python tool with the settings' limits and the scratch folder of `label`."""
    return PythonTool(
        PythonSession(
            scratch_dir(label),
            timeout=float(settings.python_timeout),
            memory_mb=settings.python_memory_mb,
        )
    )


def browser_tool(settings: Settings, library_path: Path | None = None) -> BrowserTool:
    """The browser over the settings' `docs` folders, its index brought up to date first
    (only what changed is read again: quick when nothing did).

    Raises:
        LibraryError: No folders are set, or the index cannot be used.
    """
    if not settings.docs:
        raise LibraryError(
            _("the browser has no folders to search"),
            _("Add one with `gptoss-local docs add PATH`."),
        )
    library = Library.open(library_path)
    try:
        library.update(settings.docs)
    except BaseException:
        library.close()
        raise
    return BrowserTool(library, settings.docs)


def open_tools(
    settings: Settings,
    *,
    label: str,
    python: bool = True,
    mcp: bool = True,
    mcp_path: Path | None = None,
    strict: bool = False,
    browser: bool = False,
) -> ToolRegistry:
    """The python tool, the browser, and the tools of mcp.json's servers (started here:
    seconds).

    Args:
        settings: The limits of the python tool, the browser's folders.
        label: Names the python tool's scratch folder (see `scratch_dir`).
        python: Offer the python tool.
        mcp: Start the MCP servers and offer their tools.
        browser: Offer the browser over the settings' `docs` folders (one that cannot be
            offered is one of `problems`).
        mcp_path: mcp.json elsewhere than the config folder (tests).
        strict: A bad mcp.json raises instead of becoming one of `problems`.

    Raises:
        McpConfigError: With `strict`, when mcp.json cannot be used.
        ToolsError: ``GPTOSS_LOCAL_SANDBOX`` names a sandbox that does not work here.
    """
    registry = ToolRegistry()
    if python:
        registry.set_python(python_tool(settings, label))
    if browser:
        try:
            registry.set_browser(browser_tool(settings))
        except LibraryError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            registry.problems.append(
                _("The browser is off: {error}").format(error=exc.args[0]) + hint
            )
    if mcp:
        try:
            servers = load_servers(mcp_path)
        except McpConfigError as exc:
            if strict:
                raise
            registry.problems.append(str(exc))
        else:
            hub = McpHub(servers)
            hub.start()
            registry.add_mcp(hub)
    return registry
