"""HTTP for the OpenAI-compatible client: JSON requests and a server-sent event stream that a
cancel event interrupts at once, over the standard library's `http.client`.

`http.client` rather than urllib: the stream's socket is at hand, so a cancel can shut it
down even while a read waits (a queued or long prompt sends nothing for a while), which tells
the server to stop generating; and redirects are never followed, so a key never travels to an
address the user did not name.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

TIMEOUT_SECONDS = 600.0  # a reply may wait in a busy server's queue, then think for long
CANCEL_POLL_SECONDS = 0.05


class HttpFailure(Exception):
    """The server answered with an error status; `body` is its JSON (or {"text": ...})."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"HTTP {status}")
        self.status, self.body = status, body

    def message(self) -> str:
        """The server's own words for the error, if it gave any."""
        error = self.body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
        return str(self.body.get("text") or f"HTTP {self.status}")


class Endpoint:
    """A server's base URL (with its /v1 path) and key; `client` names the program that asks
    (`X-Client-Name`, which a gptoss-local engine shows in `ps`)."""

    def __init__(self, base_url: str, api_key: str | None = None, client: str = "") -> None:
        parts = urlsplit(base_url.rstrip("/"))
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname or "", parts.port
        self.path = parts.path if parts.path else "/v1"
        self.url = f"{parts.scheme}://{parts.netloc}{self.path}"
        self._key, self.client = api_key, client

    def get(self, route: str) -> Any:
        """GET `route` (e.g. "/models") as JSON."""
        return self.call("GET", self.path + route)

    def call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        cancel: threading.Event | None = None,
        timeout: float = TIMEOUT_SECONDS,
    ) -> Any:
        """`method` on the server's `path` (from its root, without the API's /v1), with
        `body` as JSON, answered as JSON; a set `cancel` closes the connection."""
        connection = self._connection(timeout)
        stop = _CancelWatch(connection, cancel)
        try:
            headers = self._headers()
            data = None
            if body is not None:
                data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
            connection.request(method, path, body=data, headers=headers)
            return _json(connection.getresponse())
        finally:
            stop.done()
            connection.close()

    def stream(
        self, route: str, body: dict[str, Any], cancel: threading.Event | None
    ) -> Iterator[Any]:
        """POST `body` to `route` and yield the JSON of each server-sent event until
        `[DONE]` or the end of the stream; a set `cancel` ends it (closing the connection)."""
        connection = self._connection()
        stop = _CancelWatch(connection, cancel)
        try:
            data = json.dumps(body).encode()
            headers = {**self._headers(), "Content-Type": "application/json"}
            connection.request("POST", self.path + route, body=data, headers=headers)
            response = connection.getresponse()
            if response.status >= 300:
                _json(response)  # raises HttpFailure
            yield from _events(response)
        finally:
            stop.done()
            connection.close()

    def _connection(self, timeout: float = TIMEOUT_SECONDS) -> http.client.HTTPConnection:
        if self.https:
            context = ssl.create_default_context()
            return http.client.HTTPSConnection(
                self.host, self.port, timeout=timeout, context=context
            )
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        if self.client:
            headers["X-Client-Name"] = self.client
        return headers


def _json(response: http.client.HTTPResponse) -> Any:
    raw = response.read()
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        body = {"text": raw.decode("utf-8", "replace")[:500]}
    if response.status >= 300:
        raise HttpFailure(response.status, body if isinstance(body, dict) else {"text": body})
    return body


def _events(response: http.client.HTTPResponse) -> Iterator[Any]:
    """The data of each event (data lines joined, comments and other fields skipped)."""
    data: list[str] = []
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
            continue
        if line or not data:
            continue  # a comment, an event name, or a blank line with nothing before it
        text, data = "\n".join(data), []
        if text == "[DONE]":
            return
        yield json.loads(text)


class _CancelWatch:
    """Shuts the connection's socket down when `cancel` is set, waking a blocked read."""

    def __init__(self, connection: http.client.HTTPConnection, cancel: threading.Event | None):
        self._connection, self._cancel = connection, cancel
        self._finished = threading.Event()
        if cancel is not None:
            threading.Thread(target=self._watch, name="openai-cancel", daemon=True).start()

    def done(self) -> None:
        self._finished.set()

    def _watch(self) -> None:
        assert self._cancel is not None
        while not self._finished.wait(CANCEL_POLL_SECONDS):
            if self._cancel.is_set():
                sock = self._connection.sock
                if sock is not None:
                    with contextlib.suppress(OSError):  # closed already
                        sock.shutdown(socket.SHUT_RDWR)
                return
