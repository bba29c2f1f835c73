"""Errors as the OpenAI API reports them: a status code and `{"error": {message, type, code}}`."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A request the server answers with an error instead of a reply.

    Args:
        status: The HTTP status (400 bad request, 401 bad key, 404 unknown model or route, ...).
        message: What went wrong and, where it helps, what to send instead.
        code: A short machine-readable code (`model_not_found`, `invalid_api_key`, ...).
        param: The request field at fault, when there is one.
    """

    def __init__(
        self, status: int, message: str, code: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.param = status, message, code, param

    @property
    def type(self) -> str:
        """OpenAI's error type for the status."""
        fallback = "server_error" if self.status >= 500 else "invalid_request_error"
        return TYPES.get(self.status, fallback)

    def body(self) -> dict[str, Any]:
        """The JSON body of the error response."""
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.code}}  # fmt: skip


TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    503: "server_overloaded",
}


def bad_request(message: str, param: str | None = None, code: str = "invalid_value") -> ApiError:
    """A 400: the request cannot be served as it stands."""
    return ApiError(400, message, code, param)
