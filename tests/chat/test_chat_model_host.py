"""ModelHost without a UI: one load however many threads ask, failures held for a retry, the
progress thinned out, switching and closing while a load runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from gptoss_local.backends.base import Backend, BackendError, BackendInfo, LoadProgress
from gptoss_local.chat.model_host import Held, LoadReports, ModelHost, ProgressThrottle

WAIT = 5.0  # seconds: only reached when a test is broken


class FakeBackend:
    """Enough of a backend for the host: it can be closed, once."""

    def __init__(self, name: str = "model") -> None:
        self.name = name
        self.closes = 0

    def info(self) -> BackendInfo:
        return BackendInfo("fake", self.name, "entirely on the GPU", 4096)

    def close(self) -> None:
        self.closes += 1


class Recorder:
    """`LoadReports` that note what they were told, in order."""

    def __init__(self, answer: bool = True) -> None:
        self.events: list[tuple[str, object]] = []
        self.answer = answer

    def reports(self) -> LoadReports:
        return LoadReports(
            started=lambda name: self.events.append(("started", name)),
            progress=self._progress,
            failed=lambda error: self.events.append(("failed", str(error))),
            loaded=lambda backend: self.events.append(("loaded", backend)),
        )

    def _progress(self, fraction: float, what: str) -> bool:
        self.events.append(("progress", (fraction, what)))
        return self.answer

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]


def opener_of(
    backend: Backend, calls: list[int] | None = None
) -> Callable[[LoadProgress], Backend]:
    def open_it(progress: LoadProgress) -> Backend:
        if calls is not None:
            calls.append(1)
        progress(0.5, "loading")
        return backend

    return open_it


def failing(message: str = "not enough memory") -> Callable[[LoadProgress], Backend]:
    def open_it(_progress: LoadProgress) -> Backend:
        raise BackendError(message, kind="out_of_memory")

    return open_it


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def in_thread(work: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


# --- loading --------------------------------------------------------------------------------------


def test_the_backend_is_made_once_however_many_threads_ask() -> None:
    release, calls, backend = threading.Event(), [], FakeBackend()

    def slow(progress: LoadProgress) -> Backend:
        calls.append(1)
        release.wait(WAIT)
        return backend

    recorder = Recorder()
    host = ModelHost(slow, "tiny", recorder.reports())
    got: list[Backend] = []
    threads = [in_thread(lambda: got.append(host.get())) for _ in range(4)]
    release.set()
    for thread in threads:
        thread.join(WAIT)
    assert got == [backend] * 4 and calls == [1]
    assert recorder.events == [("started", "tiny"), ("loaded", backend)]
    assert host.backend is backend and host.load() is None


def test_a_failed_load_is_reported_raised_and_returned_for_announcing() -> None:
    recorder = Recorder()
    host = ModelHost(failing(), "tiny", recorder.reports())
    with pytest.raises(BackendError, match="not enough memory"):
        host.get()
    error = host.load()  # the load worker's way: the error comes back, not raised
    assert isinstance(error, BackendError) and error.kind == "out_of_memory"
    assert recorder.events == [("started", "tiny"), ("failed", "not enough memory")] * 2
    assert host.backend is None


def test_without_an_opener_nothing_is_reported_and_the_error_says_what_to_do() -> None:
    recorder = Recorder()
    host = ModelHost(None, reports=recorder.reports())
    assert not host.chosen
    with pytest.raises(BackendError, match="first-run screen"):
        host.get()
    assert recorder.events == []
    backend = FakeBackend()
    host.choose(opener_of(backend), "chosen")
    assert host.chosen and host.get() is backend
    assert recorder.events[0] == ("started", "chosen")


# --- holding a message after a failed load --------------------------------------------------------


def test_a_message_is_held_only_after_a_failed_load_until_the_retry_ends() -> None:
    attempts: list[int] = []
    backend = FakeBackend()

    def second_time_lucky(progress: LoadProgress) -> Backend:
        attempts.append(1)
        if len(attempts) == 1:
            raise BackendError("not enough memory")
        return backend

    host = ModelHost(second_time_lucky)
    assert host.hold(Held(None, None, "early")) == "send"  # no failure: the reply waits itself
    assert host.load() is not None
    first, second = Held(None, None, "hello?"), Held(3, None, "hello again")
    assert host.hold(first) == "retry"  # the caller starts the load again
    assert host.hold(second) == "wait" and host.held == second  # the newest is the one kept
    assert host.load() is None and host.backend is backend
    assert host.take_held() == second and host.take_held() is None
    assert host.hold(first) == "send"


def test_a_retry_that_fails_again_drops_the_held_message_and_a_send_retries_again() -> None:
    host = ModelHost(failing())
    host.load()
    assert host.hold(Held(None, None, "hello?")) == "retry"
    host.load()  # fails again: the text stays in the input box, not here
    assert host.held is None
    assert host.hold(Held(None, None, "hello?")) == "retry"


# --- progress -------------------------------------------------------------------------------------


def test_progress_is_thinned_out_but_the_first_a_new_step_and_the_end_go_through() -> None:
    def chatty(progress: LoadProgress) -> Backend:
        for i in range(1000):  # per tensor, as llama.cpp reports
            progress(i / 2000, "loading the weights")
        progress(0.6, "creating the context")
        progress(1.0, "creating the context")
        return FakeBackend()

    recorder = Recorder()
    ModelHost(chatty, reports=recorder.reports()).get()
    shown = [value for kind, value in recorder.events if kind == "progress"]
    assert shown[0] == (0.0, "loading the weights")
    assert shown[-2:] == [(0.6, "creating the context"), (1.0, "creating the context")]
    assert len(shown) < 10


def test_the_throttle_lets_a_step_through_after_the_interval_and_starts_afresh() -> None:
    now = [0.0]
    throttle = ProgressThrottle(clock=lambda: now[0])
    assert throttle.wants(0.5, "a")
    assert not throttle.wants(0.6, "a")  # too soon
    now[0] += 0.2
    assert not throttle.wants(0.505, "a")  # too small a step
    assert throttle.wants(0.6, "a")
    throttle.reset()
    assert throttle.wants(0.1, "a")  # a new load: behind the last report, yet shown


def test_the_ui_can_stop_a_load_through_its_progress_answer() -> None:
    answers: list[bool] = []

    def asks(progress: LoadProgress) -> Backend:
        answers.append(progress(0.1, "loading"))
        raise BackendError("load aborted", kind="aborted")

    ModelHost(asks, reports=Recorder(answer=False).reports()).load()
    assert answers == [False]


# --- switching and closing ------------------------------------------------------------------------


def test_switching_closes_the_old_model_before_the_new_one_loads() -> None:
    order: list[str] = []
    old = FakeBackend("old")
    old.close = lambda: order.append("old closed")  # type: ignore[method-assign]

    def new_opener(progress: LoadProgress) -> Backend:
        order.append("new opened")
        return FakeBackend("new")

    recorder = Recorder()
    host = ModelHost(opener_of(old), "old", recorder.reports())
    host.get()
    assert host.switch_to(new_opener, "new") is None
    assert order == ["old closed", "new opened"]
    assert host.backend is not None and host.backend.info().model == "new"
    assert ("started", "new") in recorder.events


def test_close_during_a_load_stops_it_through_progress_and_reports_nothing() -> None:
    started, answers = threading.Event(), []

    def llama_like(progress: LoadProgress) -> Backend:
        started.set()
        while progress(0.5, "loading"):  # llama.cpp aborts once the callback says False
            answers.append(True)
            threading.Event().wait(0.001)
        raise BackendError("the load was aborted", kind="aborted")

    recorder = Recorder()
    host = ModelHost(llama_like, reports=recorder.reports())
    result: list[Exception | None] = []
    loader = in_thread(lambda: result.append(host.load()))
    assert started.wait(WAIT)
    host.close()  # waits for the load to give up
    loader.join(WAIT)
    assert result == [None]  # nothing to announce: the app is closing
    assert "failed" not in recorder.kinds() and host.backend is None
    with pytest.raises(BackendError, match="closing"):
        host.get()  # a reply that waited on the lock finds the chat closed, not a new load


def test_a_model_that_finished_loading_while_closing_is_freed_not_announced() -> None:
    release, backend = threading.Event(), FakeBackend()

    def deaf(_progress: LoadProgress) -> Backend:  # ignores the progress answer
        release.wait(WAIT)
        return backend

    recorder = Recorder()
    host = ModelHost(deaf, reports=recorder.reports())
    loader = in_thread(host.load)
    closer = in_thread(host.close)
    wait_until(lambda: host.closing)  # close() began: it waits on the lock the load holds
    release.set()
    loader.join(WAIT)
    closer.join(WAIT)
    assert backend.closes == 1 and host.backend is None
    assert "loaded" not in recorder.kinds()


def test_close_frees_a_loaded_model_once() -> None:
    backend = FakeBackend()
    host = ModelHost(opener_of(backend))
    host.get()
    host.close()
    host.close()
    assert backend.closes == 1 and host.closing
