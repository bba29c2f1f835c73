"""`prompt_cache_key` keeps clients apart: through real HTTP on the tiny model, a request reuses
only what requests of its own key (or, without a key, requests without one) left in the KV
cache, on the shelf or in a live sequence, and reports only that as cached."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from serve_helpers import Running, running_server

from gptoss_local.backends.base import Stats

# Some 500 tokens of the tiny model: far more than `MIN_SHELVED_GAIN`, past the 128-token window.
SECRET = "Client A's plan: move the harbour office to the old mill on Friday, tell nobody. " * 5
SHELF_BYTES = 64 << 20


@pytest.fixture(scope="module")
def served(tiny_gguf: Path) -> Iterator[Running]:
    with running_server(tiny_gguf) as running:
        running.steering.backend.keep_conversations(SHELF_BYTES)
        yield running


def client_of(served: Running) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.url, api_key="x", max_retries=0)


def asked(served: Running, text: str, key: str | None) -> tuple[int, Stats]:
    """A chat completion of `text` under `key`: the cached tokens it reports, and the engine's
    own figures for it (what it evaluated)."""
    extra = {} if key is None else {"prompt_cache_key": key}
    done = client_of(served).chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": text}], max_tokens=16, **extra
    )
    assert done.usage is not None and done.usage.prompt_tokens_details is not None
    return done.usage.prompt_tokens_details.cached_tokens or 0, served.seen.stats[-1]


def test_another_key_reuses_nothing_of_a_prompt_and_its_own_key_does(served: Running) -> None:
    cached, first = asked(served, SECRET + "one", "a")
    assert first.evaluated_tokens == first.prompt_tokens > 300
    cached, stats = asked(served, SECRET + "one", "b")  # the same prompt, another client
    assert cached == stats.cached_tokens == 0
    assert stats.evaluated_tokens == stats.prompt_tokens == first.prompt_tokens
    cached, stats = asked(served, SECRET + "one", "a")  # A's again: back from the shelf
    assert cached == stats.cached_tokens == first.prompt_tokens - 1
    assert stats.evaluated_tokens == 1


def test_a_guessed_start_under_another_key_reports_nothing(served: Running) -> None:
    asked(served, SECRET + "two", "a")
    cached, stats = asked(served, SECRET + "a guess at what follows", "f")
    assert cached == 0 and stats.evaluated_tokens == stats.prompt_tokens


def test_requests_without_a_key_share_their_caches_but_not_keyed_ones(served: Running) -> None:
    asked(served, SECRET + "three", "a")
    cached, stats = asked(served, SECRET + "three", None)
    assert cached == 0 and stats.evaluated_tokens == stats.prompt_tokens
    cached, again = asked(served, SECRET + "three", None)  # another client without a key
    assert cached == again.prompt_tokens - 1 and again.evaluated_tokens == 1


def test_the_responses_api_scopes_by_its_key_too(served: Running) -> None:
    client = client_of(served)

    def respond(key: str) -> int:
        done = client.responses.create(model="tiny", input=SECRET + "four", prompt_cache_key=key,
                                       max_output_tokens=16)  # fmt: skip
        assert done.usage is not None
        return done.usage.input_tokens_details.cached_tokens

    assert respond("d") == 0
    assert respond("e") == 0 and served.seen.stats[-1].evaluated_tokens > 300
    assert respond("d") == served.seen.stats[-1].prompt_tokens - 1


def test_a_live_sequence_of_another_key_is_not_reused(tiny_gguf: Path) -> None:
    """Two sequences and no shelf: A's cache stays in its sequence, B's request of the same
    prompt under another key evaluates it all, and A's next request still finds its own."""
    with running_server(tiny_gguf, sequences=2) as running:
        cached, first = asked(running, SECRET + "five", "a")
        cached, stats = asked(running, SECRET + "five", "b")
        assert cached == 0 and stats.evaluated_tokens == first.prompt_tokens
        cached, stats = asked(running, SECRET + "five", "a")
        assert cached == first.prompt_tokens - 1
