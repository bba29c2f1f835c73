"""Errors as Anthropic's API spells them: `{"type": "error", "error": {"type", "message"}}`,
the type chosen by the HTTP status (400 invalid_request_error, 401 authentication_error, 404
not_found_error, 503 overloaded_error, ...). The status itself is the server's as for every
other path (`ApiError.status`)."""

from __future__ import annotations

from typing import Any

from gptoss_local.serve.errors import ApiError

TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
}
# OpenAI's error types, as the stream's error event receives them (`Api.error_piece`).
FROM_OPENAI = {
    "authentication_error": "authentication_error",
    "permission_error": "permission_error",
    "not_found_error": "not_found_error",
    "rate_limit_error": "rate_limit_error",
    "server_overloaded": "overloaded_error",
    "server_error": "api_error",
}


def error_type(status: int) -> str:
    """Anthropic's error type for an HTTP status."""
    fallback = "api_error" if status >= 500 else "invalid_request_error"
    return TYPES.get(status, fallback)


def body(error: ApiError) -> dict[str, Any]:
    """The JSON body of an error on an Anthropic path (`apis.ERROR_BODIES`)."""
    message = error.message
    if error.param and not message.startswith(error.param):
        message = f"{error.param}: {message}"  # as Anthropic names the field at fault
    return _shaped(error_type(error.status), message)


def error_event(openai_body: dict[str, Any]) -> dict[str, Any]:
    """The stream's `error` event for an error the server spelled in OpenAI's shape (a
    failure after the stream's first bytes)."""
    inner = openai_body.get("error") or {}
    kind = FROM_OPENAI.get(str(inner.get("type")), "invalid_request_error")
    return _shaped(kind, str(inner.get("message") or "the model failed"))


def _shaped(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}
