"""Helpers for tests that run the real llama.cpp engine on the tiny model."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import llama_cpp.llama_cpp as bindings
import numpy as np

from gptoss_local.backends.base import GenerationSettings, Reply, Stats
from gptoss_local.backends.llama_cpp import LlamaCppBackend
from gptoss_local.backends.llama_load import LoadSettings
from gptoss_local.backends.llama_options import LlamaOptions
from gptoss_local.conversation import Conversation, Message
from gptoss_local.events import AnswerDelta, Event, PreambleDelta, ReasoningDelta
from gptoss_local.harmony import render_prompt

DATE = dt.date(2026, 12, 2)
# Steers the random tiny model into a well-formed Harmony reply. The grammar ends with the
# answer: once it is complete only end-of-generation tokens remain, and the bias below leaves
# <|return|> as the only one.
REPLY_GRAMMAR = (
    'root ::= <|channel|> "analysis" <|message|> "The user says hi" <|end|> '
    '<|start|> "assistant" <|channel|> "final" <|message|> "Hello there"'
)


def open_tiny(path: Path, log: Path | None = None, **load: object) -> LlamaCppBackend:
    """The tiny model on the CPU with a small context."""
    settings = LoadSettings(**{"context": 2048, "gpu_layers": 0, **load})  # type: ignore[arg-type]
    return LlamaCppBackend(path, settings, log_path=log)


SEEDED = GenerationSettings(seed=1)


def steered(backend: LlamaCppBackend, **extra: object) -> LlamaOptions:
    """Options that make the tiny model answer 'Hello there' after 'The user says hi'."""
    ban = tuple((backend.tokenize(t)[0], float("-inf")) for t in ("<|call|>", "<|endoftext|>"))
    return LlamaOptions(grammar=REPLY_GRAMMAR, logit_bias=ban, **extra)  # type: ignore[arg-type]


def never_stop(backend: LlamaCppBackend) -> tuple[tuple[int, float], ...]:
    """A logit bias that bans every end-of-generation token: the reply runs to its limit."""
    stops = ("<|return|>", "<|call|>", "<|endoftext|>")
    return tuple((backend.tokenize(t)[0], float("-inf")) for t in stops)


def chat(*texts: str, reply: tuple[str, str] | None = None) -> Conversation:
    """A conversation of user messages, with an optional (reasoning, answer) after the first."""
    messages = [Message("user", texts[0])]
    if reply:
        messages.append(Message("assistant", reply[1], reasoning=reply[0]))
    messages += [Message("user", text) for text in texts[1:]]
    return Conversation(tuple(messages), current_date=DATE)


class Ran(list):  # type: ignore[type-arg]
    """A reply run to its end: its events (a list) and its `stats`."""

    stats: Stats


def ran(reply: Reply) -> Ran:
    """Every event of `reply`, with the stats it ended with (checked to be there)."""
    events, stats = reply.drain()
    done = Ran(events)
    done.stats = stats
    return done


def text_of(events: list[Event], kind: type[ReasoningDelta | AnswerDelta | PreambleDelta]) -> str:
    """The text of the events of one `kind` (ReasoningDelta, AnswerDelta, …) joined."""
    return "".join(e.text for e in events if isinstance(e, kind))


def finished(events: Ran) -> Ran:
    """The reply's events, checked to have ended with stats (read them as `.stats`)."""
    assert isinstance(events.stats, Stats)
    return events


def prompt_tokens(backend: LlamaCppBackend, conversation: Conversation) -> list[int]:
    """The tokens of the prompt the backend renders for `conversation` (default effort)."""
    c = conversation
    return backend.tokenize(render_prompt(list(c.messages), current_date=c.current_date))


def last_logits(backend: LlamaCppBackend) -> np.ndarray:
    """Logits at the last evaluated position (a one-token greedy reply leaves them in place)."""
    n_vocab = bindings.llama_vocab_n_tokens(backend._native.vocab)
    pointer = bindings.llama_get_logits_ith(backend._native.context, -1)
    return np.ctypeslib.as_array(pointer, shape=(n_vocab,)).copy()
