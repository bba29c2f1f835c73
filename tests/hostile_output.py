"""Malformed model output as the tiny model's real tokens, and what any reading of it must keep.

The cases (`hostile_cases`, and `random_script` for seeded random ones) are token ids of the
tiny model's own vocabulary (o200k, with Harmony's control tokens): random tokens, headers cut
off, recipients no tool has, a channel name 10,000 letters long, headers that never reach
``<|message|>``, a ``<|start|>`` inside a header, text spelling control tokens. `check_events`
holds what the parser promises for any of them: no exception, exactly one `TurnEnded`, last;
no escape character of its own in text; a call's arguments parsed exactly when they are JSON.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.events import TEXT_EVENTS, Event, ToolCall, TurnEnded
from gptoss_local.harmony import HarmonyStreamParser

CONTROLS = ("<|start|>", "<|channel|>", "<|message|>", "<|call|>", "<|constrain|>", "<|end|>",
            "<|return|>", "<|endoftext|>")  # fmt: skip
LONG_CHANNEL = "x" * 10_000
WORDS = ("assistant", "analysis", "final", "commentary", " to=functions.get_weather",
         " to=functions.nope", " to=weird", " to=", "functions.", " json", "json",
         '{"city": "Tokyo"}', '{"city":', "Hello there", "\n", " ", "<|end|>", "<|",
         "assistantfinal", "final answer", "é", "🙂")  # fmt: skip


@dataclass
class Vocab:
    """The tiny model's tokens: control tokens by name, text as ordinary tokens, pieces."""

    backend: LlamaCppBackend

    def __post_init__(self) -> None:
        self.ids = {name: self.backend.tokenize(name)[0] for name in CONTROLS}
        self.size = self.backend._n_vocab
        self.pieces = self.backend._pieces
        self._texts: dict[str, list[int]] = {}

    def text(self, text: str) -> list[int]:
        """`text` as ordinary tokens (what spells a control token stays text: llama.cpp reads
        Harmony's user-defined tokens even in plain text, so such text goes a character at a
        time)."""
        if text not in self._texts:
            parts = [text] if "<|" not in text else list(text)
            found = [t for part in parts for t in self.backend.tokenize(part, special=False)]
            self._texts[text] = found
        return list(self._texts[text])

    def __getitem__(self, name: str) -> int:
        return self.ids[name]


def hostile_cases(v: Vocab) -> dict[str, list[int]]:
    """Named malformed outputs; each one's text that must come through is in `KEPT`."""
    s, c, m, e = v["<|start|>"], v["<|channel|>"], v["<|message|>"], v["<|end|>"]
    call, ret, con = v["<|call|>"], v["<|return|>"], v["<|constrain|>"]
    t = v.text
    return {
        "long channel": [c, *t(LONG_CHANNEL), m, *t("kept after"), ret],
        "long channel, no end": [c, *t(LONG_CHANNEL), m, *t("kept after")],
        "unknown function": [c, *t("commentary to=functions.nope"), con, *t("json"), m,
                             *t('{"a": 1}'), call],
        "unknown recipient": [c, *t("commentary to=weird"), m, *t("kept args"), call],
        "cut header": [c, *t("analysis"), m, *t("thinking"), e, s, *t("assistant"), c, *t("fin")],
        "header without message": [c, *t("final"), e, s, c, *t("final"), m, *t("kept answer"), ret],
        "nested starts": [s, s, *t("assistant"), s, c, *t("analysis"), s, m, *t("kept text"), ret],
        "text spelling markers": [c, *t("final"), m, *t("<|end|><|start|>kept<|call|>"), ret],
        "no header at all": [*t("kept plain text with no header"), ret],
        "calls without arguments": [c, *t("commentary to=functions.x"), m, call],
        "bad json arguments": [c, *t("commentary to=functions.get_weather"), m,
                               *t('{"city": '), call],
        "markers only": [e, e, s, m, con, c, m, e, ret],
        "browser call, odd name": [c, *t("analysis to=browser.x-y"), m, *t("{}"), call],
        "browser call, no name": [c, *t("analysis to=browser."), m, call],
        "empty": [],
    }  # fmt: skip


# Text each case must keep somewhere in its events (as reasoning, answer or a call's raw text).
KEPT = {
    "long channel": LONG_CHANNEL[:5_000] + "kept after",
    "long channel, no end": "kept after",
    "unknown function": '{"a": 1}',
    "unknown recipient": "kept args",
    "header without message": "kept answer",
    "nested starts": "kept text",
    "text spelling markers": "<|end|><|start|>kept<|call|>",
    "no header at all": "kept plain text with no header",
}


def random_script(v: Vocab, rng: random.Random, most: int = 60) -> list[int]:
    """A random run of control tokens, random tokens and header-like words."""
    out: list[int] = []
    for _ in range(rng.randint(1, most)):
        roll = rng.random()
        if roll < 0.35:
            out.append(v[rng.choice(CONTROLS[:6])])  # no end token: the run goes on
        elif roll < 0.4:
            out.append(v[rng.choice(CONTROLS[6:])])
        elif roll < 0.7:
            out += v.text(rng.choice(WORDS))
        else:
            out.append(rng.randrange(v.size))  # any token: control, text, half a character
    return out


def parsed(v: Vocab, tokens: list[int]) -> list[Event]:
    """The events of `tokens` fed one by one as the backend feeds them, then finished."""
    parser = HarmonyStreamParser()
    events: list[Event] = []
    for token in tokens:
        events += parser.feed_token(v.pieces(token), control=v.pieces.is_control(token))
    return events + parser.finish()


def check_events(events: list[Event]) -> None:
    """What the parser promises of any output (see the module's docstring)."""
    ends = [i for i, event in enumerate(events) if isinstance(event, TurnEnded)]
    assert ends == [len(events) - 1], events[-3:]
    for event in events:
        if isinstance(event, TEXT_EVENTS):
            assert isinstance(event.text, str) and event.text
            assert "\udc00" not in event.text  # the parser's own stand-in for "<"
            event.text.encode("utf-8")  # no lone surrogate: it could not be sent as JSON
        elif isinstance(event, ToolCall):
            assert isinstance(event.name, str) and isinstance(event.arguments, dict)
            event.raw.encode("utf-8")
            if event.error is None and event.name != "python" and event.raw.strip():
                assert json.loads(event.raw) == event.arguments


def all_text(events: list[Event]) -> str:
    """Every text the events carry, calls' raw arguments included, joined."""
    return "".join(e.text if isinstance(e, TEXT_EVENTS) else e.raw for e in events
                   if isinstance(e, (*TEXT_EVENTS, ToolCall)))  # fmt: skip
