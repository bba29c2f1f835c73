"""The Harmony stream parser against malformed output in the tiny model's real tokens: named
hostile cases (hostile_output.py) and a fixed number of seeded random token runs. Whatever comes,
no exception, one `TurnEnded` last, text kept (as reasoning where its purpose is unclear), and,
fed as text, the same events however the text is cut into chunks."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_helpers import open_tiny
from hostile_output import KEPT, Vocab, all_text, check_events, hostile_cases, parsed, random_script

from gptoss_local.events import (
    AnswerDelta,
    Event,
    ReasoningDelta,
    ToolCall,
    TurnEnded,
    merge_events,
)
from gptoss_local.harmony import HarmonyStreamParser, parse_completion

RUNS = 2000  # seeded random token runs


@pytest.fixture(scope="module")
def vocab(tiny_gguf: Path) -> Iterator[Vocab]:
    with open_tiny(tiny_gguf) as backend:
        yield Vocab(backend)


OTHERS = ["cut header", "markers only", "empty", "calls without arguments", "bad json arguments"]


@pytest.mark.parametrize("name", [*KEPT, *OTHERS])
def test_a_hostile_case_parses_into_valid_events(vocab: Vocab, name: str) -> None:
    events = parsed(vocab, hostile_cases(vocab)[name])
    check_events(events)
    if name in KEPT:
        assert KEPT[name] in all_text(merge_events(events)), merge_events(events)


def test_what_each_hostile_case_becomes(vocab: Vocab) -> None:
    cases = {name: merge_events(parsed(vocab, tokens))
             for name, tokens in hostile_cases(vocab).items()}  # fmt: skip
    long = cases["long channel"]
    assert isinstance(long[0], ReasoningDelta) and long[-1] == TurnEnded("return")
    assert cases["unknown function"][0] == ToolCall("nope", {"a": 1}, '{"a": 1}')
    weird = cases["unknown recipient"][0]
    assert isinstance(weird, ToolCall) and (weird.name, weird.raw) == ("weird", "kept args")
    assert weird.error  # not JSON: said so, and the text kept
    assert cases["cut header"] == [ReasoningDelta("thinking"), TurnEnded("truncated")]
    assert AnswerDelta("kept answer") in cases["header without message"]
    assert cases["empty"] == [TurnEnded("truncated")]
    bad = cases["bad json arguments"][0]
    assert isinstance(bad, ToolCall) and bad.error and bad.raw == '{"city": '


def test_seeded_random_token_runs(vocab: Vocab) -> None:
    rng = random.Random(36)
    for run in range(RUNS):
        tokens = random_script(vocab, rng)
        try:
            check_events(parsed(vocab, tokens))
        except AssertionError as exc:
            raise AssertionError(f"run {run}: tokens {tokens}") from exc


def chunked(text: bytes, rng: random.Random) -> list[Event]:
    parser = HarmonyStreamParser()
    events: list[Event] = []
    at = 0
    while at < len(text):
        step = rng.randint(1, 12)
        events += parser.feed(text[at : at + step])  # bytes: a character may be split
        at += step
    return merge_events(events + parser.finish())


def test_fed_as_text_the_events_do_not_depend_on_the_chunks(vocab: Vocab) -> None:
    rng = random.Random(7)
    hostile = list(hostile_cases(vocab).values())
    for run in range(RUNS // 2):
        tokens = hostile[run] if run < len(hostile) else random_script(vocab, rng)
        text = b"".join(vocab.pieces(token) for token in tokens)
        whole = parse_completion(text)
        check_events(whole)
        assert chunked(text, rng) == whole, (run, tokens)
