"""Recorded and hand-made completions with the events they must produce (deltas merged), shared
by the parser, token and oracle tests; and how to compare text that had seams broken."""

from __future__ import annotations

import re

from gptoss_local.events import (
    AnswerDelta,
    Event,
    PreambleDelta,
    ReasoningDelta,
    ToolCall,
    TurnEnded,
)
from gptoss_local.harmony import WORD_JOINER

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


_TEXT_EVENTS = (ReasoningDelta, AnswerDelta, PreambleDelta)
_SEAM_BEFORE = re.compile(r"<(?:\|(?:[A-Za-z0-9_]{1,24}\|?)?)?\Z")


def without_seam_joiners(events: list[Event]) -> list[Event]:
    """The events with the word joiners that break seams taken out, each checked to follow a
    seam."""
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
