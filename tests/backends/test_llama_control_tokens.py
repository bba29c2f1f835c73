"""Control tokens by id on the real engine (tiny model): text that spells a control token
stays text, the control token itself is a marker (issue #13, item 2)."""

from __future__ import annotations

from engine_helpers import chat, finished, ran, text_of

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.events import AnswerDelta, ReasoningDelta, TurnEnded
from gptoss_local.harmony import parse_completion

MARKERS = ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>")
STOPS = ("<|return|>", "<|call|>", "<|endoftext|>")


def spelled(backend, text: str) -> str:
    """Grammar for `text` where every "<|" must be the ordinary tokens "<" and "|".

    In a grammar's quoted text llama.cpp also accepts a control token whose text fits, so
    the opener is pinned to the two ordinary token ids (``<[id]>``); what follows it
    cannot be a control token, since every one of them starts with "<|".
    """
    lt, bar = backend.tokenize("<", special=False), backend.tokenize("|", special=False)
    assert len(lt) == len(bar) == 1
    opener = f"<[{lt[0]}]> <[{bar[0]}]>"
    return f" {opener} ".join(f'"{part}"' for part in text.split("<|"))


def test_control_tokens_are_known_by_id(backend) -> None:
    pieces = backend._pieces
    for text in MARKERS + STOPS:
        (token,) = backend.tokenize(text)
        assert pieces.is_control(token), text
    for token in backend.tokenize("<|end|> hello", special=False)[1:]:
        assert not pieces.is_control(token)


def test_spelled_end_stays_text_and_the_real_end_closes_the_message(backend) -> None:
    grammar = (
        f'root ::= <|channel|> "analysis" <|message|> {spelled(backend, "x<|end|>y")} '
        '<|end|> <|start|> "assistant" <|channel|> "final" <|message|> '
        f"{spelled(backend, 'ok <|return|> <|start|>assistant')}"
    )
    bans = tuple((backend.tokenize(t)[0], float("-inf")) for t in STOPS[1:])
    for seed in range(3):
        options = LlamaOptions(grammar=grammar, logit_bias=bans)
        events = ran(
            backend.stream(ReplyRequest(chat("hi"), GenerationSettings(seed=seed)), options=options)
        )
        assert text_of(events, ReasoningDelta) == "x<|end|>y"
        assert text_of(events, AnswerDelta) == "ok <|return|> <|start|>assistant"
        assert events[-1] == TurnEnded("return")
        stats = finished(events).stats
        assert stats.stop_reason == "return"
        assert stats.reasoning_tokens >= len("x<|end|>y") // 2  # the spelled marker counts


def test_text_alone_could_not_tell() -> None:
    # The same output as text: the spelled <|end|> would have ended the reasoning.
    text = (
        "<|channel|>analysis<|message|>x<|end|>y<|end|><|start|>assistant<|channel|>final"
        "<|message|>ok<|return|>"
    )
    assert text_of(parse_completion(text), ReasoningDelta) != "x<|end|>y"
