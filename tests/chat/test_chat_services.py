"""The prefill warmer and the VRAM poller without a UI: one prefill at a time (a newer one
supersedes the older), and one VRAM read at a time until a read gives nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable

from cards import card
from fake_nvml import GPU_IS_LOST, FakeNvml

from gptoss_local.backends.base import BackendError, Capabilities, GenerationSettings, ReplyRequest
from gptoss_local.chat.vram_poller import VramPoller
from gptoss_local.chat.warmer import PrefillWarmer
from gptoss_local.conversation import Conversation
from gptoss_local.hardware.vram import VramMonitor, VramUse

WAIT = 5.0  # seconds: only reached when a test is broken
NEW_CHAT = Conversation((), "Be brief.")
SETTINGS = GenerationSettings(effort="low")


class Later:
    """A `run_in_thread` that keeps the work until the test runs it (as a busy thread would)."""

    def __init__(self) -> None:
        self.jobs: list[Callable[[], None]] = []

    def __call__(self, work: Callable[[], None]) -> None:
        self.jobs.append(work)

    def run_all(self) -> None:
        jobs, self.jobs = self.jobs, []
        for job in jobs:
            job()


class PrefillBackend:
    """Records prefills; `block` makes one run until it is cancelled; `error` makes it fail."""

    capabilities = Capabilities(prefill=True)

    def __init__(self, block: bool = False, error: Exception | None = None) -> None:
        self.block, self.error = block, error
        self.prefills: list[tuple[Conversation, GenerationSettings]] = []
        self.started = threading.Event()
        self.stopped = threading.Event()

    def prefill(self, request: ReplyRequest, cancel: threading.Event) -> int:
        self.prefills.append((request.conversation, request.settings))
        self.started.set()
        if self.error is not None:
            raise self.error
        if self.block:
            cancel.wait(WAIT)
            self.stopped.set()
        return 0


# --- PrefillWarmer --------------------------------------------------------------------------------


def test_a_prefill_runs_on_another_thread_and_stop_cancels_it() -> None:
    backend = PrefillBackend(block=True)
    warmer = PrefillWarmer()  # a real daemon thread
    cancel = warmer.start(backend, ReplyRequest(NEW_CHAT, SETTINGS))  # type: ignore[arg-type]
    assert backend.started.wait(WAIT) and warmer.running
    assert backend.prefills == [(NEW_CHAT, SETTINGS)]
    warmer.stop()
    assert backend.stopped.wait(WAIT) and cancel.is_set() and not warmer.running


def test_a_backend_that_cannot_prefill_is_not_asked_to() -> None:
    backend = PrefillBackend()
    backend.capabilities = Capabilities(prefill=False)  # as Ollama declares
    ran: list[object] = []
    warmer = PrefillWarmer(run_in_thread=ran.append)
    warmer.start(backend, ReplyRequest(NEW_CHAT, SETTINGS))  # type: ignore[arg-type]
    assert ran == [] and backend.prefills == []


def test_a_newer_prefill_supersedes_the_one_running() -> None:
    backend = PrefillBackend(block=True)
    warmer = PrefillWarmer()
    first = warmer.start(backend, ReplyRequest(NEW_CHAT, SETTINGS))  # type: ignore[arg-type]
    assert backend.started.wait(WAIT)
    second = warmer.start(backend, ReplyRequest(Conversation((), None), SETTINGS))  # type: ignore[arg-type]
    assert first.is_set() and not second.is_set()
    assert backend.stopped.wait(WAIT)  # the first gave up; the second is the one running
    warmer.stop()
    assert second.is_set()


def test_a_prefill_stopped_before_its_thread_ran_never_touches_the_backend() -> None:
    later, backend = Later(), PrefillBackend()
    warmer = PrefillWarmer(later)
    warmer.start(backend, ReplyRequest(NEW_CHAT, SETTINGS))  # type: ignore[arg-type]
    warmer.start(backend, ReplyRequest(NEW_CHAT, GenerationSettings(effort="high")))  # type: ignore[arg-type]
    warmer.stop()
    later.run_all()  # the threads get to run only now: both were cancelled first
    assert backend.prefills == []


def test_only_the_newest_of_queued_prefills_runs() -> None:
    later, backend = Later(), PrefillBackend()
    warmer = PrefillWarmer(later)
    warmer.start(backend, ReplyRequest(NEW_CHAT, SETTINGS))  # type: ignore[arg-type]
    newest = GenerationSettings(effort="high")
    warmer.start(backend, ReplyRequest(NEW_CHAT, newest))  # type: ignore[arg-type]
    later.run_all()
    assert backend.prefills == [(NEW_CHAT, newest)]  # a stale one could trim the newer's cache


def test_a_failed_prefill_is_dropped() -> None:
    later = Later()
    warmer = PrefillWarmer(later)
    for error in (BackendError("model closed"), RuntimeError("a bug")):
        backend = PrefillBackend(error=error)
        warmer.start(backend, ReplyRequest(NEW_CHAT, SETTINGS))  # type: ignore[arg-type]
        later.run_all()  # raises nothing: the reply reports what is wrong
        assert len(backend.prefills) == 1


# --- VramPoller -----------------------------------------------------------------------------------


def test_each_poll_reads_once_on_another_thread_and_reports_the_reading() -> None:
    gpu, later, readings = card("4090", free_mib=23_400), Later(), []
    poller = VramPoller(VramMonitor(FakeNvml([gpu])), readings.append, later)
    assert poller.active and poller.poll()
    assert not poller.poll()  # a read is waiting (a slow driver): no second one
    later.run_all()
    assert readings == [VramUse(1_164 << 20, 24_564 << 20)]
    gpu.free_mib = 10_756
    assert poller.poll()
    later.run_all()
    assert readings[-1] == VramUse(13_808 << 20, 24_564 << 20)


def test_a_machine_without_a_gpu_reports_none_once_and_polling_stops() -> None:
    later, readings = Later(), []
    poller = VramPoller(VramMonitor(FakeNvml([])), readings.append, later)
    assert poller.poll()
    later.run_all()
    assert readings == [None] and not poller.active
    assert not poller.poll() and later.jobs == []


def test_a_gpu_that_fails_later_ends_polling_with_a_none() -> None:
    gpu, later, readings = card("4090"), Later(), []
    poller = VramPoller(VramMonitor(FakeNvml([gpu])), readings.append, later)
    poller.poll()
    later.run_all()
    gpu.fail["memory"] = GPU_IS_LOST
    poller.poll()
    later.run_all()
    assert readings[0] is not None and readings[1] is None and not poller.active


def test_no_monitor_polls_nothing_and_close_shuts_nvml_down() -> None:
    readings: list[VramUse | None] = []
    assert not VramPoller(None, readings.append).poll() and readings == []
    nvml = FakeNvml([card("4090")])
    later = Later()
    poller = VramPoller(VramMonitor(nvml), readings.append, later)
    poller.poll()
    later.run_all()
    poller.close()
    assert nvml.shutdowns == 1 and not poller.active and not poller.poll()


def test_a_read_on_a_real_thread_reports_from_that_thread() -> None:
    reported = threading.Event()
    threads: list[str] = []

    def report(_use: VramUse | None) -> None:
        threads.append(threading.current_thread().name)
        reported.set()

    poller = VramPoller(VramMonitor(FakeNvml([card("4090")])), report)  # a real daemon thread
    poller.poll()
    assert reported.wait(WAIT) and threads != [threading.current_thread().name]
