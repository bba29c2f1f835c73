"""Streaming Harmony parser: recorded streams, chunking invariance, malformed output."""

from __future__ import annotations

import json
import random
import re

import pytest

from gptoss_local.events import (
    AnswerDelta,
    Event,
    PreambleDelta,
    ReasoningDelta,
    ToolCall,
    TurnEnded,
)
from gptoss_local.harmony import (
    WORD_JOINER,
    HarmonyStreamParser,
    is_control_token,
    merge_events,
    parse_completion,
)

R, A, P = ReasoningDelta, AnswerDelta, PreambleDelta

# Recorded and hand-made streams with the events they must produce (deltas merged).
STREAMS: dict[str, tuple[str, list[Event]]] = {
    "analysis_final": (
        "<|channel|>analysis<|message|>User greets. Reply politely.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Hello! How can I help?<|return|>",
        [R("User greets. Reply politely."), A("Hello! How can I help?"), TurnEnded("return")],
    ),
    "preamble_tool_call": (
        "<|channel|>analysis<|message|>Plan the files.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>"
        "**Action plan**:\n1. HTML\n2. Server<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.generate_file<|constrain|>json"
        '<|message|>{"template": "basic_html", "path": "index.html"}<|call|>',
        [
            R("Plan the files."),
            P("**Action plan**:\n1. HTML\n2. Server"),
            ToolCall(
                "generate_file",
                {"template": "basic_html", "path": "index.html"},
                '{"template": "basic_html", "path": "index.html"}',
            ),
            TurnEnded("call"),
        ],
    ),
    "recipient_after_channel": (
        "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"location":"San Francisco"}<|call|>',
        [
            R("Need to use function get_weather."),
            ToolCall("get_weather", {"location": "San Francisco"}, '{"location":"San Francisco"}'),
            TurnEnded("call"),
        ],
    ),
    "recipient_in_role": (
        "<|channel|>analysis<|message|>Need weather.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary json"
        '<|message|>{"location": "Tokyo"}<|call|>',
        [
            R("Need weather."),
            ToolCall("get_weather", {"location": "Tokyo"}, '{"location": "Tokyo"}'),
            TurnEnded("call"),
        ],
    ),
    "recipient_at_stream_start": (
        ' to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Oslo"}'
        "<|call|>",
        [ToolCall("get_weather", {"city": "Oslo"}, '{"city":"Oslo"}'), TurnEnded("call")],
    ),
    "tool_call_no_arguments": (
        "<|channel|>commentary to=functions.get_location <|constrain|>json<|message|><|call|>",
        [ToolCall("get_location", {}, ""), TurnEnded("call")],
    ),
    "tool_call_bad_json": (
        '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": <|call|>',
        [ToolCall("f", {}, '{"a": ', "bad"), TurnEnded("call")],
    ),
    "tool_call_not_object": (
        "<|channel|>commentary to=functions.f<|message|>[1, 2]<|call|>",
        [ToolCall("f", {}, "[1, 2]", "bad"), TurnEnded("call")],
    ),
    "truncated_final": (
        "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final"
        "<|message|>The answer is",
        [R("Think."), A("The answer is"), TurnEnded("truncated")],
    ),
    "truncated_tool_call": (
        '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1',
        [ToolCall("f", {}, '{"a": 1', "bad"), TurnEnded("truncated")],
    ),
    "truncated_header": (
        "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>fin",
        [R("Think."), TurnEnded("truncated")],
    ),
    "partial_marker_at_end": (
        "<|channel|>final<|message|>Hi<|ret",
        [A("Hi"), TurnEnded("truncated")],
    ),
    "end_of_stream": (
        "<|channel|>analysis<|message|>only thinking<|end|>",
        [R("only thinking"), TurnEnded("end_of_stream")],
    ),
    "empty": ("", [TurnEnded("truncated")]),
    "leaked_stripped_tokens": (
        "analysisUser greets. Reply politely.assistantfinalHello! How can I help?",
        [R("User greets. Reply politely."), A("Hello! How can I help?"), TurnEnded("truncated")],
    ),
    "leaked_header_without_channel": (
        "<|channel|>analysis<|message|>ok<|end|>"
        "<|start|>assistantfinal<|message|>Hi there<|return|>",
        [R("ok"), A("Hi there"), TurnEnded("return")],
    ),
    # Header words inside a message opened by a real header are words: reasoning stays
    # reasoning, whatever it says (issue #13).
    "leak_word_in_reasoning": (
        "<|channel|>analysis<|message|>The token assistantfinal is a word here.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>ok<|return|>",
        [R("The token assistantfinal is a word here."), A("ok"), TurnEnded("return")],
    ),
    "leak_words_in_reasoning": (
        "<|channel|>analysis<|message|>assistantanalysis, assistantcommentary and "
        "assistantfinal<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>",
        [
            R("assistantanalysis, assistantcommentary and assistantfinal"),
            A("ok"),
            TurnEnded("return"),
        ],
    ),
    "leaked_inside_reasoning": (
        "<|channel|>analysis<|message|>We answer 4.assistantfinalThe answer is 4.<|return|>",
        [R("We answer 4.assistantfinalThe answer is 4."), TurnEnded("return")],
    ),
    "leak_word_in_preamble": (
        "<|channel|>commentary<|message|>Say assistantfinal now<|end|>",
        [P("Say assistantfinal now"), TurnEnded("end_of_stream")],
    ),
    "leak_word_in_answer": (
        "<|channel|>final<|message|>x assistantanalysis y<|return|>",
        [A("x assistantanalysis y"), TurnEnded("return")],
    ),
    "leak_word_after_text_between_messages": (
        "<|channel|>analysis<|message|>a<|end|>The assistantfinal word<|start|>assistant"
        "<|channel|>final<|message|>b<|return|>",
        [R("aThe assistantfinal word"), A("b"), TurnEnded("return")],
    ),
    "bare_channel_word_starts_a_sentence": (
        "finally, an answer without any header",
        [R("finally, an answer without any header"), TurnEnded("truncated")],
    ),
    "utf8": (
        "<|channel|>analysis<|message|>Café ☕ — 日本語 🙂<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Grüße 👋🏽 ok<|return|>",
        [R("Café ☕ — 日本語 🙂"), A("Grüße 👋🏽 ok"), TurnEnded("return")],
    ),
    "text_before_header": (
        "Sure!<|channel|>final<|message|>Hi<|return|>",
        [R("Sure!"), A("Hi"), TurnEnded("return")],
    ),
    "unknown_channel": (
        "<|channel|>thoughts<|message|>hidden<|end|>"
        "<|start|>assistant<|channel|>final<|message|>shown<|return|>",
        [R("hidden"), A("shown"), TurnEnded("return")],
    ),
    "missing_channel": (
        "<|start|>assistant<|message|>no channel<|end|>",
        [R("no channel"), TurnEnded("end_of_stream")],
    ),
    "missing_message_marker": (
        "<|channel|>final\nThe answer, without a message marker.",
        [A("\nThe answer, without a message marker."), TurnEnded("truncated")],
    ),
    "stray_markers": (
        "<|channel|>analysis<|message|>a<|message|>b<|constrain|>c<|end|><|end|>\n"
        "<|start|>assistant<|channel|>final<|message|>x<|start|>assistant<|channel|>final"
        "<|message|>y<|return|>",
        [R("abc"), A("xy"), TurnEnded("return")],
    ),
    "channel_inside_content": (
        "<|channel|>analysis<|message|>think<|channel|>final<|message|>done<|return|>",
        [R("think"), A("done"), TurnEnded("return")],
    ),
    "start_missing_after_end": (
        "<|channel|>analysis<|message|>t<|end|>assistant<|channel|>final<|message|>ok<|return|>",
        [R("t"), A("ok"), TurnEnded("return")],
    ),
    "reserved_tokens_dropped": (
        "<|channel|>final<|message|>a<|reserved_200013|>b<|endofprompt|>c<|return|>",
        [A("abc"), TurnEnded("return")],
    ),
    "unknown_marker_is_text": (
        "<|channel|>final<|message|>Use <|im_start|> or f <|> g and a <| b.<|return|>",
        [A("Use <|im_start|> or f <|> g and a <| b."), TurnEnded("return")],
    ),
    "ignored_after_return": (
        "<|channel|>final<|message|>Hi<|return|>junk<|start|>assistant<|channel|>final<|message|>x",
        [A("Hi"), TurnEnded("return")],
    ),
    "endoftext_stops": (
        "<|channel|>final<|message|>Hi<|endoftext|>more",
        [A("Hi"), TurnEnded("return")],
    ),
    "other_author_is_reasoning": (
        "<|channel|>analysis<|message|>x<|end|>"
        '<|start|>functions.f to=assistant<|channel|>commentary<|message|>{"fake": true}<|end|>',
        [R('x{"fake": true}'), TurnEnded("end_of_stream")],
    ),
    "newlines_between_messages": (
        "<|channel|>analysis<|message|>a<|end|>\n\n<|start|>assistant<|channel|>final"
        "<|message|>b<|return|>",
        [R("a"), A("b"), TurnEnded("return")],
    ),
    "call_without_recipient": (
        "<|channel|>final<|message|>done<|call|>",
        [A("done"), TurnEnded("return")],
    ),
    "seam_across_dropped_marker": (
        "<|channel|>final<|message|>a<|e<|message|>nd|>b<|return|>",
        [A(f"a<|e{WORD_JOINER}nd|>b"), TurnEnded("return")],
    ),
}


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


def test_split_marker_is_held_back() -> None:
    parser = HarmonyStreamParser()
    assert parser.feed("<|channel|>final<|message|>Hi<|e") == [A("Hi")]
    assert parser.feed("n") == []
    assert parser.feed("d|>") == []
    assert parser.feed("<|cha") == []
    assert parser.feed("nnel|>final<|message|>!") == [A("!")]


def test_lone_angle_bracket_released_when_decided() -> None:
    parser = HarmonyStreamParser()
    assert parser.feed("<|channel|>final<|message|>a <") == [A("a ")]
    assert parser.feed(" b") == [A("< b")]


def test_held_leak_prefix_released() -> None:
    # Only a stream whose markers were stripped looks for leaked header words in its text.
    parser = HarmonyStreamParser()
    assert parser.feed("analysisThinking.\nThe assist") == [R("Thinking.\nThe ")]
    assert parser.feed("ant helps") == [R("assistant helps")]


def test_text_after_a_real_header_is_never_held_for_leak_words() -> None:
    parser = HarmonyStreamParser()
    assert parser.feed("<|channel|>analysis<|message|>The assist") == [R("The assist")]
    assert parser.feed("antfinal") == [R("antfinal")]


def test_utf8_split_inside_character() -> None:
    data = "<|channel|>final<|message|>é🙂<|return|>".encode()
    parser = HarmonyStreamParser()
    events: list[Event] = []
    for i in range(len(data)):
        events += parser.feed(data[i : i + 1])
    texts = [e.text for e in events if isinstance(e, AnswerDelta)]
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


def test_builtin_recipient_name_kept() -> None:
    events = parse_completion("<|channel|>analysis to=python code<|message|>print(1)<|call|>")
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
    for kind in (ReasoningDelta, AnswerDelta, PreambleDelta):
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


_TEXT_EVENTS = (ReasoningDelta, AnswerDelta, PreambleDelta)
_SEAM_BEFORE = re.compile(r"<(?:\|(?:[A-Za-z0-9_]{1,24}\|?)?)?\Z")


def _without_seam_joiners(events: list[Event]) -> list[Event]:
    # Text ending in "<" right before a marker gets a word joiner after the seam, so the
    # joined deltas cannot spell a control token; the generated texts hold no joiner.
    for kind in (ReasoningDelta, AnswerDelta, PreambleDelta):
        joined = "".join(e.text for e in events if isinstance(e, kind))
        for seam in re.finditer(WORD_JOINER, joined):
            assert _SEAM_BEFORE.search(joined, 0, seam.start()), joined
    return [
        type(e)(e.text.replace(WORD_JOINER, "")) if isinstance(e, _TEXT_EVENTS) else e
        for e in events
    ]


@pytest.mark.parametrize("seed", range(30))
def test_generated_turns_round_trip(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(20):
        text, expected = _random_turn(rng)
        whole = parse_completion(text)
        assert _without_seam_joiners(whole) == expected, text
        assert feed_chunks(random_chunks(text, rng, max_size=5)) == whole, text
