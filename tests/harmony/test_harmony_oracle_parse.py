"""Our stream parser against openai-harmony's StreamableParser, token by token.

Both read the same token ids. Ours is fed each token with whether it is a control token
(as the llama.cpp backend does) and, where the text holds no ``<|``, also as text only;
openai-harmony's messages become our events (harmony_spec.events). Malformed output is
left out here: openai-harmony raises on it, where we recover (test_harmony_parse.py).
"""

from __future__ import annotations

import random
from typing import Any

import harmony_spec as spec
import harmony_streams as streams
import openai_harmony as oh
import pytest
from harmony_recorded import STREAMS, without_seam_joiners

from gptoss_local.events import AnswerDelta, Event, ReasoningDelta, ToolCall, TurnEnded
from gptoss_local.harmony import HarmonyStreamParser, merge_events

# Recorded streams that are well-formed Harmony: openai-harmony reads them without error.
WELL_FORMED = [
    "analysis_final", "preamble_tool_call", "recipient_after_channel", "recipient_in_role",
    "recipient_at_stream_start", "tool_call_no_arguments", "tool_call_bad_json",
    "tool_call_not_object", "truncated_final", "truncated_tool_call", "end_of_stream", "utf8",
    "leak_word_in_reasoning", "leak_words_in_reasoning", "leaked_inside_reasoning",
    "leak_word_in_preamble", "leak_word_in_answer", "unknown_channel",
]  # fmt: skip
_ENDS = {"<|return|>": "return", "<|call|>": "call", "<|end|>": "end_of_stream"}


def theirs(oracle: Any, tokens: list[int]) -> tuple[list[Event], oh.StreamState]:
    """openai-harmony's reading of `tokens` as our events, and its state at the end."""
    parser = oh.StreamableParser(oracle.encoding, oh.Role.ASSISTANT)
    for token in tokens:
        parser.process(token)
    state = parser.state
    if state is not oh.StreamState.HEADER:  # in a header, it refuses the end of output
        parser.process_eos()
    last = oracle.encoding.decode_utf8(tokens[-1:]) if tokens else ""
    reason = _ENDS.get(last, "truncated") if state is oh.StreamState.EXPECT_START else "truncated"
    cut = state is oh.StreamState.CONTENT
    return _normalise([*spec.events(parser.messages, cut=cut), TurnEnded(reason)]), state


def ours(oracle: Any, tokens: list[int], *, by_token: bool) -> list[Event]:
    """Our parser's events for `tokens`, fed one at a time."""
    parser = HarmonyStreamParser()
    events: list[Event] = []
    for token in tokens:
        piece = oracle.piece(token)
        if by_token:
            events += parser.feed_token(piece, control=oracle.is_special(token))
        else:
            events += parser.feed(piece)
    events = merge_events(events + parser.finish())
    return _normalise(events if by_token else without_seam_joiners(events))


def _normalise(events: list[Event]) -> list[Event]:
    # Whether a call has an error matters, not its wording.
    out = [
        ToolCall(e.name, e.arguments, e.raw, "error" if e.error else None)
        if isinstance(e, ToolCall)
        else e
        for e in events
    ]
    return merge_events(out)


def agree(oracle: Any, tokens: list[int], *, spelled: bool) -> None:
    """Our events equal openai-harmony's, fed by token and (without ``<|``) as text."""
    expected, state = theirs(oracle, tokens)
    modes = [True] if spelled else [True, False]
    for by_token in modes:
        got = ours(oracle, tokens, by_token=by_token)
        if state is oh.StreamState.HEADER:
            _agree_on_a_cut_header(got, expected)
        else:
            assert got == expected, (by_token, oracle.encoding.decode(tokens))


def _agree_on_a_cut_header(got: list[Event], expected: list[Event]) -> None:
    # Output cut inside a header: openai-harmony keeps the messages before it; we may also
    # keep the cut header as reasoning (never as anything else).
    def others(events: list[Event]) -> list[Event]:
        return [e for e in events if not isinstance(e, ReasoningDelta)]

    def reasoning(events: list[Event]) -> str:
        return "".join(e.text for e in events if isinstance(e, ReasoningDelta))

    assert others(got) == others(expected)
    assert reasoning(got).startswith(reasoning(expected))


@pytest.mark.parametrize("name", WELL_FORMED)
def test_recorded_streams(oracle: Any, name: str) -> None:
    text = STREAMS[name][0]
    agree(oracle, oracle.encode(text), spelled=False)


def test_leak_case_of_the_issue(oracle: Any) -> None:
    text = (
        "<|channel|>analysis<|message|>The token assistantfinal is a word here.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>ok<|return|>"
    )
    tokens = oracle.encode(text)
    assert theirs(oracle, tokens)[0][1] == AnswerDelta("ok")
    agree(oracle, tokens, spelled=False)


@pytest.mark.parametrize("seed", range(40))
def test_generated_completions(oracle: Any, seed: int) -> None:
    rng = random.Random(f"completion-{seed}")
    spelled = seed % 2 == 1  # odd seeds: text that spells markers, fed by token only
    for _ in range(25):
        found = streams.completion(rng, oracle.encoding, spelled)
        agree(oracle, found.tokens, spelled=found.spelled)
        cut = rng.randint(0, len(found.tokens))
        agree(oracle, found.tokens[:cut], spelled=found.spelled)
