"""What our own client (`backends.openai`, over a shared engine) sends beside a Chat Completions
request, in the field only we read (`urls.OURS_FIELD`): the built-in tools and the tools of other
namespaces, the conversation's date, and each past call's recipient, channel and arguments as
recorded. With them the engine renders the prompt exactly as the client's own process would, and
its reply says on which channel the model wrote each call. Other clients never send the field;
a request without it is read as it always was.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from gptoss_local.conversation import BuiltinTool, Tool, ToolCallRecord, split_recipient
from gptoss_local.harmony.tools import builtin_tool, namespace_tools
from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.fields import Body
from gptoss_local.serve.limits import check_tools
from gptoss_local.urls import OURS_FIELD


@dataclass(frozen=True)
class Ours:
    """The request's `OURS_FIELD`, read."""

    builtin_tools: tuple[BuiltinTool, ...] = ()
    tools: tuple[Tool, ...] = ()
    current_date: dt.date | None = None


def read_ours(body: Body) -> Ours | None:
    """The field of ours in a chat request (None: a client not ours, which never sends it).

    Raises:
        ApiError: a 400 naming the part of the field that is wrong.
    """
    given = body.mapping(OURS_FIELD)
    if given is None:
        return None
    return Ours(_builtins(given.get("builtin_tools")), _namespaced(given.get("tools")),
                _date(given.get("current_date")))  # fmt: skip


def _builtins(items: Any) -> tuple[BuiltinTool, ...]:
    where = f"{OURS_FIELD}.builtin_tools"
    if not isinstance(items, list | None):
        raise bad_request(f"{where} must be an array", where)
    check_tools(items or [])
    found = []
    for index, item in enumerate(items or ()):
        try:
            found.append(builtin_tool(item, index))
        except ValueError as exc:
            raise bad_request(str(exc), f"{where}[{index}]") from None
    return tuple(found)


def _namespaced(items: Any) -> tuple[Tool, ...]:
    where = f"{OURS_FIELD}.tools"
    if not isinstance(items, list | None):
        raise bad_request(f"{where} must be an array", where)
    check_tools(items or [])
    found: list[Tool] = []
    for index, item in enumerate(items or ()):
        try:
            found += namespace_tools(item if isinstance(item, dict) else {}, index)
        except ValueError as exc:
            raise bad_request(str(exc), f"{where}[{index}]") from None
    return tuple(found)


def _date(given: Any) -> dt.date | None:
    where = f"{OURS_FIELD}.current_date"
    if given is None:
        return None
    try:
        return dt.date.fromisoformat(given)
    except (TypeError, ValueError):
        raise bad_request(f"{where} must be a date, YYYY-MM-DD", where) from None


def past_call(call: dict[str, Any], name: str, arguments: str) -> tuple[ToolCallRecord, str]:
    """A past call of the history as recorded: with our field, its recipient (``python``,
    ``browser.search``), channel and arguments as the client recorded them; else a function
    of `name`. Also the name its result answers to (``search``).

    Raises:
        ValueError: a name, namespace or channel the conversation refuses.
    """
    ours = call.get(OURS_FIELD)
    if not isinstance(ours, dict):
        return ToolCallRecord(name, arguments), name
    namespace, tool = split_recipient(name)
    recorded = ours.get("arguments")
    kept = recorded if isinstance(recorded, dict | str) else arguments
    channel = ours.get("channel", "commentary")
    return ToolCallRecord(tool, kept, str(channel), namespace), tool
