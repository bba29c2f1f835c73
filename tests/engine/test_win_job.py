"""Windows: the Ollama daemon goes into a kill-on-close job object (stand-in kernel32, any OS)."""

from __future__ import annotations

import ctypes
import io
import subprocess
from typing import Any

import pytest

from gptoss_local.backends.ollama import spawn as ollama_spawn
from gptoss_local.backends.ollama import win_job


@pytest.fixture(autouse=True)
def fresh() -> None:
    win_job.reset_for_tests()


class FakeKernel32:
    """Records the job-object calls; `fail` names one that returns failure."""

    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail
        self.calls: list[tuple[Any, ...]] = []
        self.flags: list[int] = []

    def CreateJobObjectW(self, attributes: Any, name: Any) -> int:
        self.calls.append(("CreateJobObjectW", attributes, name))
        return 0 if self.fail == "create" else 4242

    def SetInformationJobObject(self, job: int, kind: int, info: Any, size: int) -> int:
        limits = info._obj  # what ctypes.byref points at
        self.flags.append(limits.BasicLimitInformation.LimitFlags)
        self.calls.append(("SetInformationJobObject", job, kind, size))
        return 0 if self.fail == "set" else 1

    def AssignProcessToJobObject(self, job: int, process: int) -> int:
        self.calls.append(("AssignProcessToJobObject", job, process))
        return 0 if self.fail == "assign" else 1


class FakeProcess:
    def __init__(self, handle: int) -> None:
        self._handle = handle
        self.killed = False


def test_the_job_kills_on_close_and_takes_the_process() -> None:
    kernel32 = FakeKernel32()
    win_job.tie_to_us(777, kernel32)
    assert kernel32.calls == [
        ("CreateJobObjectW", None, None),
        ("SetInformationJobObject", 4242, 9, ctypes.sizeof(win_job.ExtendedLimits)),
        ("AssignProcessToJobObject", 4242, 777),
    ]
    assert kernel32.flags == [win_job.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE] == [0x2000]


def test_one_job_serves_every_daemon_for_the_process_lifetime() -> None:
    kernel32 = FakeKernel32()
    win_job.tie_to_us(1, kernel32)
    win_job.tie_to_us(2, kernel32)
    names = [call[0] for call in kernel32.calls]
    assert names.count("CreateJobObjectW") == 1 and names.count("AssignProcessToJobObject") == 2


def test_the_structure_has_windows_64_bit_layout() -> None:
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        pytest.skip("the sizes below are for 64-bit Python")
    assert ctypes.sizeof(win_job.BasicLimits) == 64
    assert ctypes.sizeof(win_job.ExtendedLimits) == 144


@pytest.mark.parametrize("fail", ["create", "set", "assign"])
def test_refusals_are_oserrors(fail: str) -> None:
    with pytest.raises(OSError, match="failed"):
        win_job.tie_to_us(5, FakeKernel32(fail=fail))


def test_spawn_on_windows_puts_the_daemon_in_the_job() -> None:
    kernel32 = FakeKernel32()
    seen: dict[str, Any] = {}

    def popen(**kwargs: Any) -> FakeProcess:
        seen.update(kwargs)
        return FakeProcess(31337)

    log = io.BytesIO()
    process = ollama_spawn.spawn(
        ["ollama.exe", "serve"], {"A": "1"}, log, platform="win32", popen=popen, kernel32=kernel32
    )
    assert process._handle == 31337
    assert seen["creationflags"] == getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)
    assert "preexec_fn" not in seen and "start_new_session" not in seen
    assert ("AssignProcessToJobObject", 4242, 31337) in kernel32.calls
    assert log.getvalue() == b""


def test_spawn_on_windows_keeps_a_daemon_windows_will_not_tie_and_logs_why() -> None:
    log = io.BytesIO()
    process = ollama_spawn.spawn(
        ["ollama.exe", "serve"], {}, log, platform="win32",
        popen=lambda **kwargs: FakeProcess(9), kernel32=FakeKernel32(fail="assign"),
    )  # fmt: skip
    assert not process.killed
    assert b"outlives a killed gptoss-local" in log.getvalue()
