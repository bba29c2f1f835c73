"""The request a backend is given, and the one check of it against what an engine declares."""

from __future__ import annotations

from pathlib import Path

import pytest

from gptoss_local.backends.base import (
    BackendError,
    Capabilities,
    GenerationSettings,
    ReplyRequest,
    ResponseFormat,
    UnsupportedRequest,
    check_request,
)
from gptoss_local.conversation import Attachment, BuiltinTool, Conversation, Message, Tool

NOTES = Attachment("notes.md", "text/markdown", text="# Notes")
ASKS = {
    "tools": ReplyRequest(Conversation((Message("user", "hi"),), tools=(Tool("add"),))),
    "builtin_tools": ReplyRequest(
        Conversation((Message("user", "hi"),), builtin_tools=(BuiltinTool("python", "Runs"),))
    ),
    "response_format": ReplyRequest(
        Conversation((Message("user", "hi"),)), response_format=ResponseFormat({"type": "object"})
    ),
    "attachments": ReplyRequest(Conversation((Message("user", "see", attachments=(NOTES,)),))),
}


def test_a_plain_request_needs_nothing_declared() -> None:
    request = ReplyRequest(Conversation((Message("user", "hi"),)))
    assert request.settings == GenerationSettings() and request.response_format is None
    check_request(Capabilities(), request)


@pytest.mark.parametrize("field", sorted(ASKS))
def test_what_an_engine_does_not_declare_is_refused_by_name(field: str) -> None:
    with pytest.raises(UnsupportedRequest) as refused:
        check_request(Capabilities(), ASKS[field], "ollama")
    assert isinstance(refused.value, BackendError) and refused.value.kind == "unsupported"
    assert refused.value.field == field and "the ollama engine cannot" in str(refused.value)
    assert refused.value.hint
    check_request(Capabilities(**{field: True}), ASKS[field])  # declared: accepted


def test_an_attachment_holds_its_bytes_or_names_its_file() -> None:
    assert Attachment("a.png", "image/png", data=b"\x89PNG").data == b"\x89PNG"
    assert Attachment("a.png", "image/png", path=Path("a.png")).path == Path("a.png")
    with pytest.raises(ValueError, match="not both"):
        Attachment("a.png", "image/png", data=b"x", path=Path("a.png"))
    with pytest.raises(ValueError, match="no bytes, path or text"):
        Attachment("a.png", "image/png")
    message = Message("user", "see", attachments=[NOTES])  # type: ignore[arg-type]
    assert message.attachments == (NOTES,)
