"""Streaming Harmony parser: recorded streams, chunking invariance, malformed output."""

from __future__ import annotations

import json
import random
import re

import pytest
from harmony_recorded import STREAMS, A, P, R, without_seam_joiners

from gptoss_local.events import Event, ToolCall, TurnEnded
from gptoss_local.harmony import (
    HarmonyStreamParser,
    is_control_token,
    merge_events,
    parse_completion,
)


def _normalise(events: list[Event]) -> list[Event]:
    # Expected tool-call errors are written as "bad": compare presence, not wording.
    out: list[Event] = []
    for e in events:
        if isinstance(e, ToolCall) and e.error is not None:
            e = ToolCall(e.name, e.arguments, e.raw, "bad")
        out.append(e)
    return out


def feed_chunks(chunks: list[str] | list[bytes]) -> list[Event]:
    parser = HarmonyStreamParser()
    events: list[Event] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return merge_events(events + parser.finish())


def random_chunks(text: str, rng: random.Random, max_size: int = 12) -> list[str]:
    chunks, i = [], 0
    while i < len(text):
        size = rng.randint(1, max_size)
        chunks.append(text[i : i + size])
        i += size
    return chunks


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_recorded_stream(name: str) -> None:
    text, expected = STREAMS[name]
    assert _normalise(parse_completion(text)) == expected


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_every_split_point(name: str) -> None:
    text = STREAMS[name][0]
    whole = parse_completion(text)
    for i in range(len(text) + 1):
        assert feed_chunks([text[:i], text[i:]]) == whole, f"split at {i}: {text[:i]!r}"


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_one_character_at_a_time(name: str) -> None:
    text = STREAMS[name][0]
    assert feed_chunks(list(text)) == parse_completion(text)


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_random_chunkings_and_bytes(name: str) -> None:
    text = STREAMS[name][0]
    whole = parse_completion(text)
    rng = random.Random(name)
    data = text.encode("utf-8")
    for _ in range(60):
        assert feed_chunks(random_chunks(text, rng)) == whole
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 6))) if data else []
        pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        assert feed_chunks(pieces) == whole


def test_exactly_one_turn_ended_last() -> None:
    for text, _ in STREAMS.values():
        events = parse_completion(text)
        assert isinstance(events[-1], TurnEnded)
        assert sum(isinstance(e, TurnEnded) for e in events) == 1


# -- streaming behaviour -------------------------------------------------------------------


def test_deltas_stream_before_message_ends() -> None:
    parser = HarmonyStreamParser()
    assert parser.feed("<|channel|>analysis<|message|>Thinking ") == [R("Thinking ")]
    assert parser.feed("hard<|end|><|start|>assistant<|channel|>final<|message|>Hel") == [
        R("hard"),
        A("Hel"),
    ]
    assert parser.feed("lo") == [A("lo")]
    assert parser.feed("<|return|>") == [TurnEnded("return")]
    assert parser.finish() == []


# Chunks fed one after another, each with the events it must give at once.
HELD_BACK = {
    "split_marker_is_held_back": [
        ("<|channel|>final<|message|>Hi<|e", [A("Hi")]),
        ("n", []),
        ("d|>", []),
        ("<|cha", []),
        ("nnel|>final<|message|>!", [A("!")]),
    ],
    "lone_angle_bracket_released_when_decided": [
        ("<|channel|>final<|message|>a <", [A("a ")]),
        (" b", [A("< b")]),
    ],
    # Only a stream whose markers were stripped looks for leaked header words in its text.
    "held_leak_prefix_released": [
        ("analysisThinking.\nThe assist", [R("Thinking.\nThe ")]),
        ("ant helps", [R("assistant helps")]),
    ],
    "text_after_a_real_header_is_never_held_for_leak_words": [
        ("<|channel|>analysis<|message|>The assist", [R("The assist")]),
        ("antfinal", [R("antfinal")]),
    ],
}


@pytest.mark.parametrize("name", HELD_BACK)
def test_text_is_held_back_only_until_it_is_decided(name: str) -> None:
    parser = HarmonyStreamParser()
    for chunk, expected in HELD_BACK[name]:
        assert parser.feed(chunk) == expected, chunk


def test_utf8_split_inside_character() -> None:
    data = "<|channel|>final<|message|>é🙂<|return|>".encode()
    parser = HarmonyStreamParser()
    events: list[Event] = []
    for i in range(len(data)):
        events += parser.feed(data[i : i + 1])
    texts = [e.text for e in events if isinstance(e, A)]
    assert "".join(texts) == "é🙂"
    assert all("\ufffd" not in t for t in texts)


def test_invalid_utf8_never_raises() -> None:
    parser = HarmonyStreamParser()
    events = parser.feed(b"<|channel|>final<|message|>ok\xff\xfe") + parser.feed(b"\xe2\x82")
    events += parser.finish()
    merged = merge_events(events)
    assert merged[0] == A("ok\ufffd\ufffd\ufffd")
    assert merged[-1] == TurnEnded("truncated")


def test_feed_after_end_and_finish_twice() -> None:
    parser = HarmonyStreamParser()
    assert parser.feed("<|channel|>final<|message|>x<|return|>")[-1] == TurnEnded("return")
    assert parser.feed("more text") == []
    assert parser.finish() == []
    assert parser.finish() == []


def test_tool_call_keeps_raw_and_reports_error() -> None:
    events = parse_completion("<|channel|>commentary to=functions.f json<|message|>{oops}<|call|>")
    call = events[0]
    assert isinstance(call, ToolCall)
    assert (call.name, call.arguments, call.raw) == ("f", {}, "{oops}")
    assert call.error is not None and "JSON" in call.error


def test_builtin_python_call_carries_its_code_and_channel() -> None:
    events = parse_completion("<|channel|>analysis to=python code<|message|>print(1)<|call|>")
    assert events[0] == ToolCall("python", {"code": "print(1)"}, "print(1)", None, "analysis")
    assert events[1] == TurnEnded("call")


def test_function_call_keeps_its_channel() -> None:
    events = parse_completion("<|channel|>commentary to=functions.f json<|message|>{}<|call|>")
    assert events[0] == ToolCall("f", {}, "{}", None, "commentary")
    events = parse_completion('<|channel|>analysis to=functions.f<|message|>{"a": 1}<|call|>')
    assert events[0] == ToolCall("f", {"a": 1}, '{"a": 1}', None, "analysis")


def test_cut_python_call_is_an_error() -> None:
    events = parse_completion("<|channel|>analysis to=python code<|message|>print(")
    call = events[0]
    assert isinstance(call, ToolCall) and call.name == "python" and call.error is not None


# -- fuzzing: malformed output never raises and never leaks markers --------------------------

PIECES = [
    "<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>",
    "<|call|>", "<|endoftext|>", "<|reserved_200013|>", "<|foo|>", "<|", "<|cha", "nnel|>",
    "|>", "<", ">", "|", "assistant", "final", "analysis", "commentary", "assistantfinal",
    " to=functions.f", " json", "json", "{", "}", '"a": 1', "\n", " ", "hello", "é", "🙂",
    "assist", "antfinal", "e", "nd|>",
]  # fmt: skip

_CONTROL_RE = re.compile(r"<\|[A-Za-z0-9_]+\|>")


def _leaked_control_tokens(events: list[Event]) -> list[str]:
    found = []
    for kind in (R, A, P):
        text = "".join(e.text for e in events if isinstance(e, kind))
        found += [m.group() for m in _CONTROL_RE.finditer(text) if is_control_token(m.group())]
    return found


@pytest.mark.parametrize("seed", range(40))
def test_fuzz_malformed_streams(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40)))
        whole = parse_completion(text)
        assert isinstance(whole[-1], TurnEnded), text
        assert sum(isinstance(e, TurnEnded) for e in whole) == 1, text
        assert _leaked_control_tokens(whole) == [], text
        for _ in range(4):
            assert feed_chunks(random_chunks(text, rng, max_size=6)) == whole, text
        assert feed_chunks(list(text)) == whole, text


def test_parse_completion_accepts_bytes() -> None:
    text, expected = STREAMS["utf8"]
    assert parse_completion(text.encode()) == expected


# -- generated well-formed turns: the parser must recover exactly what was written ----------

TEXT_PIECES = [
    "word", " ", "\n", "é", "🙂", "日本", "<", ">", "|", "a <| b", "<|foo|>", "x < y",
    "assistant", "final", "analysis", '{"k": 1}', "to=x", "<>", "||", "assistantfinal",
    "assistantanalysis", "assistantcommentary", "assist",
]  # fmt: skip


def _random_text(rng: random.Random) -> str:
    # Header words included: inside a message with a real header they are plain text.
    return "".join(rng.choice(TEXT_PIECES) for _ in range(rng.randint(1, 12)))


def _random_turn(rng: random.Random) -> tuple[str, list[Event]]:
    parts: list[str] = []
    events: list[Event] = []
    for _ in range(rng.randint(0, 4)):
        channel = rng.choice(["analysis", "commentary"])
        text = _random_text(rng)
        parts.append(f"<|channel|>{channel}<|message|>{text}<|end|><|start|>assistant")
        events.append(R(text) if channel == "analysis" else P(text))
    if rng.random() < 0.5:
        args = {"q": _random_text(rng), "n": rng.randint(0, 9)}
        raw = json.dumps(args, ensure_ascii=rng.random() < 0.5)
        header = rng.choice(
            [
                " to=functions.tool_x<|channel|>commentary json",
                "<|channel|>commentary to=functions.tool_x <|constrain|>json",
                "<|channel|>commentary to=functions.tool_x<|constrain|>json",
            ]
        )
        parts.append(f"{header}<|message|>{raw}<|call|>")
        events += [ToolCall("tool_x", args, raw), TurnEnded("call")]
    else:
        text = _random_text(rng)
        parts.append(f"<|channel|>final<|message|>{text}<|return|>")
        events += [A(text), TurnEnded("return")]
    return "".join(parts), merge_events(events)


@pytest.mark.parametrize("seed", range(30))
def test_generated_turns_round_trip(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20):
        text, expected = _random_turn(rng)
        whole = parse_completion(text)
        assert without_seam_joiners(whole) == expected, text
        assert feed_chunks(random_chunks(text, rng, max_size=5)) == whole, text
