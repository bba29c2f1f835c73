"""Finding the engine other commands share: the runtime file read, its PID checked alive, and
the server at its address asked who it is (`GET /gptoss-local/engine`, with the key), so that
a foreign server, or a port another program took since, is never used in its place.

`run` (and later the chat, `bench`, `launch`) call `find_engine()` before loading a model.
"""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from gptoss_local.i18n import _
from gptoss_local.serve.runtime_file import (
    EngineFileError,
    EngineRecord,
    pid_alive,
    read_record,
    remove,
    runtime_path,
)
from gptoss_local.serve.service import ENGINE_PATH
from gptoss_local.urls import SWITCH_PATH, is_loopback_host

START_POLL_SECONDS = 0.2
ASK_SECONDS = 5.0  # a live engine answers its state at once, even mid-reply (its own thread)


@dataclass(frozen=True)
class Engine:
    """The engine found: its runtime record, and its state as it answered."""

    record: EngineRecord
    state: dict[str, Any]

    @property
    def url(self) -> str:
        """The base URL to reach it from this machine (with /v1)."""
        return reachable(self.record.url)

    @property
    def starting(self) -> bool:
        """Whether it still starts (loads its model, binds): no address yet."""
        return not self.record.url

    @property
    def names(self) -> tuple[str, ...]:
        """The names its model answers to."""
        return tuple(str(n) for n in self.state.get("names", (self.record.model,)))


def find_engine(
    path: Path | None = None, uid: int | None = None, wait: float = 0.0
) -> Engine | None:
    """The engine that runs on this machine, checked; None when none runs (a stale runtime
    file, of a dead PID or of a server that is gone, is removed). One that still starts is
    waited for up to `wait` seconds, then returned as it is (`Engine.starting`).

    Args:
        path: The runtime file (default: `runtime_file.runtime_path()`).
        uid: Its owner to expect (tests inject another user).
        wait: Seconds to wait for an engine that starts.

    Raises:
        EngineFileError: the file cannot be trusted (another user's, readable by others), or
            the server at its address is not the engine it names (refused, never used).
    """
    path = path or runtime_path()
    deadline = time.monotonic() + wait
    record = read_record(path, uid)
    while record is not None and not record.url and pid_alive(record.pid):
        if time.monotonic() >= deadline:
            return Engine(record, {"starting": True})
        time.sleep(START_POLL_SECONDS)  # polls the file while the engine loads
        record = read_record(path, uid)
    if record is None:
        return None
    if not pid_alive(record.pid):
        remove(path)
        return None
    if not is_loopback_host(urlsplit(reachable(record.url)).hostname):
        raise foreign(record, path)  # an engine of this machine listens here
    try:
        state = ask_state(record)
    except ConnectionRefusedError:  # nothing listens there any more: a stale file
        remove(path)
        return None
    if state.get("instance") != record.instance:
        raise foreign(record, path)
    return Engine(record, state)


def ask_state(record: EngineRecord, timeout: float = ASK_SECONDS) -> dict[str, Any]:
    """The answer to `GET /gptoss-local/engine` at the record's address, with its key ({}
    when what answers is not an engine of ours). Straight to the address: no proxy.

    Raises:
        ConnectionRefusedError: nothing listens there.
        EngineFileError: nothing answers in time.
    """
    parts = urlsplit(reachable(record.url))
    headers = {"Authorization": f"Bearer {record.key}"} if record.key else {}
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    try:
        connection.request("GET", ENGINE_PATH, headers=headers)
        answer = connection.getresponse()
        data = json.loads(answer.read()) if answer.status == 200 else {}
    except ConnectionRefusedError:
        raise
    except TimeoutError:
        raise _silent(record) from None
    except (OSError, ValueError, http.client.HTTPException):
        return {}
    finally:
        connection.close()
    return data if isinstance(data, dict) else {}


def ask_switch(record: EngineRecord, body: dict[str, str], timeout: float) -> dict[str, Any]:
    """`POST /gptoss-local/engine/switch` with `body` at the record's address, with its key:
    the engine's answer (its state once switched). Straight to the address: no proxy.

    Raises:
        SwitchRefused: the engine answered with an error (its status and message).
        OSError: it could not be reached, or did not answer in `timeout` seconds.
    """
    parts = urlsplit(reachable(record.url))
    headers = {"Content-Type": "application/json"}
    if record.key:
        headers["Authorization"] = f"Bearer {record.key}"
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    try:
        connection.request("POST", SWITCH_PATH, json.dumps(body), headers)
        answer = connection.getresponse()
        status, raw = answer.status, answer.read()
    except http.client.HTTPException as exc:
        raise OSError(str(exc)) from None
    finally:
        connection.close()
    try:
        data = json.loads(raw)
    except ValueError:
        data = {}
    data = data if isinstance(data, dict) else {}
    if status != 200:
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        raise SwitchRefused(status, str(message or f"HTTP {status}"))
    return data


class SwitchRefused(Exception):
    """The engine refused or failed a switch: its HTTP status and its words."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def reachable(url: str) -> str:
    """`url` with a wildcard host (0.0.0.0, ::) replaced by loopback, to connect to."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if host in ("0.0.0.0", "::", ""):
        loop = "[::1]" if host == "::" else "127.0.0.1"
        netloc = f"{loop}:{parts.port}" if parts.port else loop
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return url


def foreign(record: EngineRecord, path: Path) -> EngineFileError:
    """The refusal of a runtime file whose address answers as another server."""
    return EngineFileError(
        _("the server at {url} is not the engine that {path} names (another program, or a "
          "port taken since): it is not used").format(url=record.url, path=path),
        _("Remove {path} if no gptoss-local serve runs.").format(path=path),
    )  # fmt: skip


def _silent(record: EngineRecord) -> EngineFileError:
    return EngineFileError(
        _("the engine at {url} (PID {pid}) does not answer").format(url=record.url, pid=record.pid),
        _("End it with `gptoss-local stop`, or wait until it answers again."),
    )
