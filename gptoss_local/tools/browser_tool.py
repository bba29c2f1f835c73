"""gpt-oss's built-in browser as the model reads it in the system message.

The declaration is openai-harmony's browser config (``ToolNamespaceConfig.browser()``), word
for word, checked against the package in tests/harmony/test_harmony_oracle_browser.py: the
model was trained on exactly this text, and ``sources=web`` stays although the pages are the
user's files, since the pages themselves name where they come from. Its functions are answered
from the local index (`tools.browser.BrowserTool`), never from the network.
"""

from __future__ import annotations

from gptoss_local.conversation import BuiltinTool, Tool

NAME = "browser"
FUNCTION_NAMES = ("search", "open", "find")

DESCRIPTION = (
    "Tool for browsing.\n"
    "The `cursor` appears in brackets before each browsing display: `[{cursor}]`.\n"
    "Cite information from the tool using the following format:\n"
    "`【{cursor}†L{line_start}(-L{line_end})?】`, for example: `【6†L9-L11】` or `【8†L3】`.\n"
    "Do not quote more than 10 words directly from the tool output.\n"
    "sources=web (default: web)"
)

_SEARCH = Tool(
    "search",
    "Searches for information related to `query` and displays `topn` results.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "topn": {"type": "number", "default": 10},
            "source": {"type": "string"},
        },
        "required": ["query"],
    },
)
_OPEN = Tool(
    "open",
    "Opens the link `id` from the page indicated by `cursor` starting at line number `loc`, "
    "showing `num_lines` lines.\n"
    "Valid link ids are displayed with the formatting: `【{id}†.*】`.\n"
    "If `cursor` is not provided, the most recent page is implied.\n"
    "If `id` is a string, it is treated as a fully qualified URL associated with `source`.\n"
    "If `loc` is not provided, the viewport will be positioned at the beginning of the "
    "document or centered on the most relevant passage, if available.\n"
    "Use this function without `id` to scroll to a new location of an opened page.",
    {
        "type": "object",
        "properties": {
            "id": {"type": ["number", "string"], "default": -1},
            "cursor": {"type": "number", "default": -1},
            "loc": {"type": "number", "default": -1},
            "num_lines": {"type": "number", "default": -1},
            "view_source": {"type": "boolean", "default": False},
            "source": {"type": "string"},
        },
    },
)
_FIND = Tool(
    "find",
    "Finds exact matches of `pattern` in the current page, or the page given by `cursor`.",
    {
        "type": "object",
        "properties": {"pattern": {"type": "string"}, "cursor": {"type": "number", "default": -1}},
        "required": ["pattern"],
    },
)

BROWSER = BuiltinTool(NAME, DESCRIPTION, (_SEARCH, _OPEN, _FIND))
