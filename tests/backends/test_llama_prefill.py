"""Warming the KV cache before the user sends (`prefill`), on the real engine and tiny model."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
from engine_helpers import (
    DATE,
    SEEDED,
    chat,
    finished,
    last_logits,
    open_tiny,
    prompt_tokens,
    ran,
    steered,
)

from gptoss_local.backends.base import GenerationSettings, ReplyRequest
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.conversation import Conversation, Message
from gptoss_local.harmony import render_next_turn_prefix

BATCHES = {"n_batch": 32, "n_ubatch": 32}  # the same batching gives bit-identical results
GREEDY_ONE = GenerationSettings(temperature=0, max_tokens=1)


def prefix_tokens(backend, conversation: Conversation) -> list[int]:
    c = conversation
    text = render_next_turn_prefix(list(c.messages), current_date=c.current_date)
    return backend.tokenize(text)


def test_a_prefilled_new_chat_evaluates_only_the_users_message(tiny_gguf: Path) -> None:
    with open_tiny(tiny_gguf, **BATCHES) as warmed, open_tiny(tiny_gguf, **BATCHES) as cold:
        empty = Conversation((), current_date=DATE)
        evaluated = warmed.prefill(ReplyRequest(empty, GREEDY_ONE))
        assert evaluated == len(prefix_tokens(warmed, empty)) > 20  # the system message
        first = chat("what is the capital of France?")
        stats = finished(ran(warmed.stream(ReplyRequest(first, GREEDY_ONE)))).stats
        assert stats.cached_tokens == evaluated
        assert stats.evaluated_tokens == len(prompt_tokens(warmed, first)) - evaluated
        finished(ran(cold.stream(ReplyRequest(first, GREEDY_ONE))))
        np.testing.assert_array_equal(last_logits(warmed), last_logits(cold))


def test_after_a_reply_prefill_redoes_the_turn_without_its_reasoning(tiny_gguf: Path) -> None:
    """The next prompt drops the last reply's analysis, so the tokens after it must be
    evaluated again: prefill does that while the user types, and the reply starts from there."""
    with open_tiny(tiny_gguf, **BATCHES) as warmed, open_tiny(tiny_gguf, **BATCHES) as cold:
        ran(warmed.stream(ReplyRequest(chat("hi"), SEEDED), options=steered(warmed)))
        so_far = chat("hi", reply=("The user says hi", "Hello there"))
        evaluated = warmed.prefill(ReplyRequest(so_far, GREEDY_ONE))
        known = prefix_tokens(warmed, so_far)
        assert 0 < evaluated < len(known)  # the system message and "hi" were reused
        assert warmed.cache.tokens == known
        nxt = chat("hi", "and again", reply=("The user says hi", "Hello there"))
        stats = finished(ran(warmed.stream(ReplyRequest(nxt, GREEDY_ONE)))).stats
        assert stats.cached_tokens == len(known)
        finished(ran(cold.stream(ReplyRequest(nxt, GREEDY_ONE))))
        np.testing.assert_array_equal(last_logits(warmed), last_logits(cold))


def test_prefill_again_evaluates_one_token_and_cancel_evaluates_none(tiny_gguf: Path) -> None:
    with open_tiny(tiny_gguf) as backend:
        conversation = chat("a question", reply=("", "an answer"))
        assert backend.prefill(ReplyRequest(conversation, GREEDY_ONE)) > 1
        assert (
            backend.prefill(ReplyRequest(conversation, GREEDY_ONE)) == 1
        )  # its logits, nothing more
        backend.cache.clear()
        stop = threading.Event()
        stop.set()
        assert backend.prefill(ReplyRequest(conversation, GREEDY_ONE), stop) == 0
        assert backend.cache.tokens == []


def test_prefill_uses_the_effort_and_instructions_of_the_next_turn(tiny_gguf: Path) -> None:
    told = "Answer in French."
    high = GenerationSettings(effort="high", temperature=0, max_tokens=1)
    with open_tiny(tiny_gguf) as backend:
        evaluated = backend.prefill(ReplyRequest(Conversation((), told, current_date=DATE), high))
        first = Conversation((Message("user", "hi"),), told, current_date=DATE)
        stats = finished(ran(backend.stream(ReplyRequest(first, high)))).stats
        assert stats.cached_tokens == evaluated  # all of it: "Reasoning: high" and the text
        medium = GenerationSettings(effort="medium", temperature=0, max_tokens=1)
        stats = finished(ran(backend.stream(ReplyRequest(first, medium)))).stats
        assert stats.cached_tokens < evaluated  # another effort is another system message


class SetAfter(threading.Event):
    """An event that reads as set from its `n`-th check on (as if Enter came mid-prefill)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.checks, self.n = 0, n

    def is_set(self) -> bool:
        self.checks += 1
        return self.checks >= self.n


def test_a_cancelled_prefill_stops_within_a_chunk_and_keeps_what_it_did(tiny_gguf: Path) -> None:
    from gptoss_local.backends.llamacpp.token_loop import PREFILL_CHUNK

    with open_tiny(tiny_gguf, context=4096, n_batch=2048, n_ubatch=512) as backend:
        long = chat(*[f"question number {i}, " * 10 for i in range(8)])
        assert len(prefix_tokens(backend, long)) > 3 * PREFILL_CHUNK
        # Checks: the backend's, the loop's, one before each batch; the fourth says "stop".
        evaluated = backend.prefill(ReplyRequest(long, GREEDY_ONE), SetAfter(4))
        assert evaluated == PREFILL_CHUNK == len(backend.cache.tokens)
        again = backend.prefill(ReplyRequest(long, GREEDY_ONE))  # the rest, from where it stopped
        assert again == len(prefix_tokens(backend, long)) - PREFILL_CHUNK


def test_a_prefill_that_waited_for_close_refuses_instead_of_using_freed_memory(
    tiny_gguf: Path,
) -> None:
    """F9 (switch model) closes the backend while a prefill may be queued on its lock: the
    prefill must see the model is closed once it gets the lock."""
    import pytest

    from gptoss_local.backends.base import BackendError

    with open_tiny(tiny_gguf) as backend:
        errors: list[BaseException] = []

        def prefill() -> None:
            try:
                backend.prefill(ReplyRequest(chat("hi"), GREEDY_ONE))
            except BaseException as exc:
                errors.append(exc)

        with backend._lock:  # what close() holds while it frees the model
            waiting = threading.Thread(target=prefill)
            waiting.start()
            waiting.join(0.2)
            assert waiting.is_alive()  # queued on the lock
            backend._closed = True  # the part of close() that matters to the waiting thread
        waiting.join(5)
        assert len(errors) == 1 and isinstance(errors[0], BackendError)
        assert "closed" in str(errors[0])
        backend._closed = False  # so that leaving `with` frees it for real
    with pytest.raises(BackendError, match="closed"):
        backend.prefill(ReplyRequest(chat("hi"), GREEDY_ONE))


def test_regenerating_after_a_prefill_gives_what_a_fresh_model_gives(tiny_gguf: Path) -> None:
    """A long reply, the prefill of the next turn, then Ctrl+R (the same prompt again): the
    cache has moved past the prompt twice, and the window layers must still come back right."""
    from engine_helpers import never_stop

    with open_tiny(tiny_gguf, **BATCHES) as warmed, open_tiny(tiny_gguf, **BATCHES) as fresh:
        first = chat("tell me a long story")
        endless = GenerationSettings(max_tokens=300, seed=5)
        forever = LlamaOptions(logit_bias=never_stop(warmed))
        story = "".join(
            e.text
            for e in warmed.stream(ReplyRequest(first, endless), options=forever)
            if hasattr(e, "text")
        )  # reasoning and answer, as the app would save them
        warmed.prefill(
            ReplyRequest(chat("tell me a long story", reply=("", story[-200:])), GREEDY_ONE)
        )
        again = finished(ran(warmed.stream(ReplyRequest(first, GREEDY_ONE)))).stats
        assert again.cached_tokens == again.prompt_tokens - 1
        finished(ran(fresh.stream(ReplyRequest(first, GREEDY_ONE))))
        np.testing.assert_array_equal(last_logits(warmed), last_logits(fresh))


def test_a_cancelled_prefill_leaves_what_newer_work_cached(tiny_gguf: Path) -> None:
    """Ctrl+O twice: the older prefill (cancelled) may get the lock after the newer one; it must
    not trim the cache back to its own prefix."""
    high = GenerationSettings(effort="high", temperature=0, max_tokens=1)
    low = GenerationSettings(effort="low", temperature=0, max_tokens=1)
    with open_tiny(tiny_gguf) as backend:
        conversation = chat(*[f"question {i}, " * 10 for i in range(4)])
        filled = backend.prefill(ReplyRequest(conversation, high))
        before = list(backend.cache.tokens)
        superseded = threading.Event()
        superseded.set()
        assert backend.prefill(ReplyRequest(conversation, low), superseded) == 0
        assert backend.cache.tokens == before
        nxt = Conversation((*conversation.messages, Message("user", "and?")), current_date=DATE)
        assert finished(ran(backend.stream(ReplyRequest(nxt, high)))).stats.cached_tokens == filled


def test_every_native_tokenize_holds_the_lock_close_frees_under(
    tiny_gguf: Path, monkeypatch
) -> None:
    """ctypes lets go of the GIL in llama_tokenize: done outside the lock, close() on another
    thread could free the vocabulary under it (it crashed the process)."""
    from gptoss_local.backends.llamacpp import native as llama_native

    with open_tiny(tiny_gguf) as backend:
        held: list[bool] = []
        real = llama_native.tokenize

        def spy(vocab, text, special):  # type: ignore[no-untyped-def]
            held.append(backend._vocab_lock.locked())
            return real(vocab, text, special)

        monkeypatch.setattr(llama_native, "tokenize", spy)
        backend.prefill(ReplyRequest(chat("hi"), GREEDY_ONE))
        finished(ran(backend.stream(ReplyRequest(chat("hi"), GREEDY_ONE))))
        backend.tokenize("hello")
        assert len(held) >= 3 and all(held)


def test_closing_while_a_prefill_tokenizes_a_long_chat_does_not_crash(tiny_gguf: Path) -> None:
    """The race itself, in a child process (a crash would take pytest down): a prefill of a long
    chat on a thread, close() as soon as it is tokenizing."""
    import os
    import subprocess
    import sys

    script = f"""
import threading
from engine_helpers import chat, open_tiny
import gptoss_local.backends.llamacpp.native as native
from gptoss_local.backends.base import BackendError, GenerationSettings, ReplyRequest
real, inside = native.tokenize, threading.Event()
def spy(vocab, text, special):
    inside.set()
    return real(vocab, text, special)
for _ in range(4):
    backend = open_tiny({str(tiny_gguf)!r}, context=4096)
    native.tokenize = spy
    inside.clear()
    long = chat(*[f"question number {{i}}, " * 400 for i in range(60)])
    def work():
        try:
            backend.prefill(ReplyRequest(long, GenerationSettings()), threading.Event())
        except BackendError:
            pass
    worker = threading.Thread(target=work)
    worker.start()
    inside.wait()
    backend.close()
    worker.join()
    native.tokenize = real
print("survived")
"""
    tests = Path(__file__).parents[1]  # for engine_helpers, as pytest's pythonpath has it
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "survived" in done.stdout, done.stderr[-2000:]
