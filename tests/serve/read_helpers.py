"""Reading requests of either API without a model, for the unit tests of issue 24's fields."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from gptoss_local.backends.base import (
    BackendInfo,
    Capabilities,
    GenerationSettings,
    Reply,
    ReplyRequest,
)
from gptoss_local.serve.chat_request import ChatReader
from gptoss_local.serve.errors import ApiError
from gptoss_local.serve.responses_request import ResponsesReader

NAMES = ("gpt-oss-20b-mxfp4",)
DEFAULTS = GenerationSettings()
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
WEATHER = {"type": "function",
           "function": {"name": "get_weather", "parameters": {"type": "object"}}}  # fmt: skip
TIME = {"type": "function", "function": {"name": "get_time"}}
HI = [{"role": "user", "content": "hi"}]


def chat(**fields: Any) -> ReplyRequest:
    """The `ReplyRequest` of a chat completion of "hi" with `fields`."""
    body = {"model": "gpt-oss-20b", "messages": HI, **fields}
    return ChatReader().read(body, NAMES, DEFAULTS).request


def responses(**fields: Any) -> ReplyRequest:
    """The `ReplyRequest` of a response to "hi" with `fields`."""
    body = {"model": "gpt-oss-20b", "input": "hi", **fields}
    return ResponsesReader().read(body, NAMES, DEFAULTS).request


def refused(read: Any, **fields: Any) -> ApiError:
    """The 400 `read` (`chat` or `responses`) answers `fields` with."""
    with pytest.raises(ApiError) as caught:
        read(**fields)
    assert caught.value.status == 400
    return caught.value


class PlainEngine:
    """An engine that offers tools and holds nothing of issue 24 (never asked for a reply)."""

    capabilities = Capabilities(tools=True)

    def info(self) -> BackendInfo:
        return BackendInfo("plain", "gpt-oss-20b", "CPU", 4096)

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        raise AssertionError("a refused request never reaches the engine")
