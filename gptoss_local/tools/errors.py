"""Failures of the tools layer that are meant for the user as they stand."""

from __future__ import annotations

from gptoss_local.errors import UserError


class ToolsError(UserError):
    """A tool cannot be set up or called; the message names what and why."""


class McpConfigError(ToolsError):
    """mcp.json cannot be used; the message names the file and the part that is wrong."""


class UnknownToolError(ToolsError):
    """No tool has that name; the message lists the ones there are."""
