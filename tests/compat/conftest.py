"""The compatibility tests' server (one per test module) and their guard against the network:
each client talks to `serve` on loopback only, and any try to look up or reach another host
fails the test (a price list fetched at import, a trace uploaded, a key checked with OpenAI)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from offline_guard import refuse_the_network
from serve_helpers import Running, running_server

pytest.register_assert_rewrite("compat_helpers")  # before its import: its checks explain themselves
from compat_helpers import Recording, cities  # noqa: E402


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf, steer=Recording) as running:
        yield running


@pytest.fixture(autouse=True)
def fresh_record(served: Running) -> None:
    """The backend's record and the tool's calls start empty in each test."""
    served.seen.conversations.clear()
    assert isinstance(served.steering, Recording)
    served.steering.requests.clear()
    cities.clear()


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any try to look up or reach a host past loopback, from any thread."""
    tries = refuse_the_network(monkeypatch)
    for tracing in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LOGFIRE_TOKEN"):
        monkeypatch.delenv(tracing, raising=False)
    yield
    assert tries == []
