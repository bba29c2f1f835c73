"""The stream parser fed token by token, told which tokens are control tokens (issue #13)."""

from __future__ import annotations

import random

import pytest
from harmony_recorded import STREAMS

from gptoss_local.events import AnswerDelta, Event, ReasoningDelta, ToolCall, TurnEnded
from gptoss_local.harmony import WORD_JOINER, HarmonyStreamParser, merge_events, parse_completion
from gptoss_local.harmony.neutralise import find_control_token

R, A = ReasoningDelta, AnswerDelta
Token = tuple[str | bytes, bool]


def tokens_of(text: str, rng: random.Random | None = None) -> list[Token]:
    """Control-token strings as control tokens, the text between as ordinary tokens of one
    to four characters (random sizes with `rng`)."""
    out: list[Token] = []
    while text:
        found = find_control_token(text)
        plain = text if found is None else text[: found.start()]
        while plain:
            size = rng.randint(1, 4) if rng else 1
            out.append((plain[:size], False))
            plain = plain[size:]
        if found is None:
            break
        out.append((found.group(), True))
        text = text[found.end() :]
    return out


def feed(tokens: list[Token]) -> list[Event]:
    parser = HarmonyStreamParser()
    events: list[Event] = []
    for piece, control in tokens:
        events += parser.feed_token(piece, control=control)
    return merge_events(events + parser.finish())


def plain(*pieces: str) -> list[Token]:
    return [(p, False) for p in pieces]


def ctl(piece: str) -> list[Token]:
    return [(piece, True)]


def _without_joiners(events: list[Event]) -> list[Event]:
    return [type(e)(e.text.replace(WORD_JOINER, "")) if hasattr(e, "text") else e for e in events]


# Where tokens tell more than text: a cut-off "<|ret" made of ordinary tokens is text.
BY_TOKEN = {"partial_marker_at_end": [A("Hi<|ret"), TurnEnded("truncated")]}


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_recorded_streams_by_token(name: str) -> None:
    # Control tokens where the text spells them: the same events as from text (the text
    # feed's seam joiners aside, which token feeding does not need).
    text = STREAMS[name][0]
    expected = BY_TOKEN.get(name) or _without_joiners(parse_completion(text))
    assert feed(tokens_of(text)) == expected
    rng = random.Random(name)
    for _ in range(10):
        assert feed(tokens_of(text, rng)) == expected


def test_ordinary_tokens_spelling_end_stay_text() -> None:
    tokens = ctl("<|channel|>") + plain("final") + ctl("<|message|>")
    tokens += plain("a", "<|", "end", "|>", "b") + ctl("<|return|>")
    assert feed(tokens) == [A("a<|end|>b"), TurnEnded("return")]


def test_spelled_header_stays_text_real_one_ends_the_message() -> None:
    spelled = "<|end|><|start|>assistant<|channel|>final<|message|>not an answer"
    tokens = ctl("<|channel|>") + plain("analysis") + ctl("<|message|>")
    tokens += plain(*spelled) + ctl("<|end|>") + ctl("<|start|>") + plain("assistant")
    tokens += ctl("<|channel|>") + plain("final") + ctl("<|message|>") + plain("ok")
    tokens += ctl("<|return|>")
    assert feed(tokens) == [R(spelled), A("ok"), TurnEnded("return")]


def test_spelled_stop_tokens_in_tool_arguments() -> None:
    raw = '{"s": "<|call|> and <|return|>"}'
    tokens = ctl("<|channel|>") + plain("commentary to=functions.f ") + ctl("<|constrain|>")
    tokens += plain("json") + ctl("<|message|>") + plain(*raw) + ctl("<|call|>")
    expected = ToolCall("f", {"s": "<|call|> and <|return|>"}, raw)
    assert feed(tokens) == [expected, TurnEnded("call")]


def test_leak_case_of_the_issue_by_token() -> None:
    text = (
        "<|channel|>analysis<|message|>The token assistantfinal is a word here.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>ok<|return|>"
    )
    expected = [R("The token assistantfinal is a word here."), A("ok"), TurnEnded("return")]
    assert feed(tokens_of(text)) == expected


def test_character_split_across_tokens_and_cut_by_a_control_token() -> None:
    data = "é🙂".encode()
    tokens: list[Token] = ctl("<|channel|>") + plain("final") + ctl("<|message|>")
    tokens += [(data[i : i + 1], False) for i in range(len(data))]
    tokens += [(b"\xe2\x82", False), *ctl("<|return|>")]
    assert feed(tokens) == [A("é🙂\ufffd"), TurnEnded("return")]


def test_unknown_control_tokens_are_dropped_never_text() -> None:
    tokens = ctl("<|channel|>") + plain("final") + ctl("<|message|>") + plain("a")
    tokens += ctl("<|reserved_200013|>") + ctl("<|fim_prefix|>") + ctl("odd") + plain("b")
    assert feed([*tokens, *ctl("<|return|>")]) == [A("ab"), TurnEnded("return")]


def test_header_recovered_from_text_reads_the_control_token_again() -> None:
    tokens = ctl("<|channel|>") + plain("analysis") + ctl("<|message|>") + plain("x")
    tokens += ctl("<|end|>") + plain("Some <text>") + ctl("<|start|>") + plain("assistant")
    tokens += ctl("<|channel|>") + plain("final") + ctl("<|message|>") + plain("y")
    assert feed([*tokens, *ctl("<|return|>")]) == [R("xSome <text>"), A("y"), TurnEnded("return")]


def test_text_and_tokens_do_not_mix() -> None:
    parser = HarmonyStreamParser()
    parser.feed_token("<|channel|>", control=True)
    with pytest.raises(ValueError, match="not both"):
        parser.feed("text")
    other = HarmonyStreamParser()
    other.feed("text")
    with pytest.raises(ValueError, match="not both"):
        other.feed_token("x", control=False)


def test_a_leaked_header_word_split_over_tokens_inside_a_header_less_message() -> None:
    # The header is read back as text at the line break; inside that message (opened by a
    # leaked word, not a real header) every token is still scanned for the next leaked word,
    # whichever tokens it is cut into.
    text = "analysisThinking about it.\nStill thinking assistantfinalHello there"
    expected = [R("Thinking about it.\nStill thinking "), A("Hello there")]
    assert feed(tokens_of(text)) == [*expected, TurnEnded("truncated")]
    rng = random.Random(7)
    for _ in range(10):
        assert feed(tokens_of(text, rng)) == [*expected, TurnEnded("truncated")]
