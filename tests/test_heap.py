"""Full garbage collections at the end of a load and of a reply, not inside the next reply."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest

from gptoss_local import catalog, heap
from gptoss_local.backends.base import Capabilities, GenerationSettings, Stats
from gptoss_local.chat.next_reply import NextReply
from gptoss_local.conversation import Conversation, Message
from gptoss_local.events import AnswerDelta
from gptoss_local.hardware.machine import Hardware
from gptoss_local.launch import runner
from gptoss_local.plan.wishes import Wishes
from gptoss_local.tools import ToolRegistry
from gptoss_local.tools.events import ChainEnded, ReplyEnded
from gptoss_local.tui import pump
from gptoss_local.tui.messages import ReplyFinished


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_settle_frees_cycles_now_and_freezes_only_when_asked(unfrozen) -> None:
    garbage = Cycle()
    gone = weakref.ref(garbage)
    del garbage
    heap.settle()
    assert gone() is None and gc.get_freeze_count() == 0
    kept = Cycle()  # noqa: F841 - alive while settled
    heap.settle(freeze=True)
    assert gc.get_freeze_count() > 0 and gc.get_count()[2] == 0


def test_a_planned_load_ends_with_its_heap_settled_and_frozen(
    unfrozen, tiny_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPTOSS_LOCAL_HOME", str(tmp_path))
    cat = catalog.load()
    choice = runner.choose_model(cat, tiny_gguf, None)
    cpu = Hardware((), 16 << 30, 12 << 30, 2, 2, str(tmp_path), 100 << 30)
    the_plan = runner.plan(cpu, cat, Wishes(context=1024), spec=choice.spec)
    backend = runner.load_planned(cat, choice, the_plan)
    try:
        assert gc.get_freeze_count() > 0
    finally:
        backend.close()


def test_a_chat_reply_settles_the_heap_after_it_has_finished(
    unfrozen, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    monkeypatch.setattr(heap, "settle", lambda freeze=False: order.append(f"settle {freeze}"))

    class Scripted:
        class backend:
            capabilities = Capabilities()

        registry = ToolRegistry()

        def run(self, _request, _cancel):
            yield AnswerDelta("hello")
            yield ReplyEnded(Message("assistant", "hello"), Stats(generated_tokens=1))
            yield ChainEnded("answered")

    def post(message: object) -> None:
        order.append(type(message).__name__)

    conversation = Conversation((Message("user", "hi"),))
    reply = NextReply(conversation, GenerationSettings(), "medium")
    pump.run_reply(Scripted, lambda _e: None, reply, threading.Event(), post)  # type: ignore[arg-type]
    assert order[-2:] == [ReplyFinished.__name__, "settle False"]
