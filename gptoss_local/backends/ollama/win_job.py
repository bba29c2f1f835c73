"""Windows: a job object that kills the processes in it when gptoss-local's process ends.

Windows has no parent-death signal. A job object created with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
terminates every process in it when its last handle closes, and the OS closes our handles when
our process dies, however it dies (Task Manager, a crash). So: one job per process, created on
first use, its handle kept open for the process's lifetime and never closed by us; each daemon we
start is assigned to it right after it starts. Processes the daemon starts later (Ollama's model
runners) join the job by inheritance.

The one gap: a child is assigned just after it starts, so anything it spawns in that first
instant would escape the job; `ollama serve` starts its runners much later.

`kernel32` is injectable: the tests pass a stand-in that records the calls, since the real
functions exist only on Windows.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9  # JOBOBJECTINFOCLASS value


class BasicLimits(ctypes.Structure):
    """JOBOBJECT_BASIC_LIMIT_INFORMATION."""

    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    ]


class IoCounters(ctypes.Structure):
    """IO_COUNTERS."""

    _fields_ = [
        (name, ctypes.c_uint64)
        for name in ("Reads", "Writes", "Others", "ReadBytes", "WriteBytes", "OtherBytes")
    ]


class ExtendedLimits(ctypes.Structure):
    """JOBOBJECT_EXTENDED_LIMIT_INFORMATION."""

    _fields_ = [
        ("BasicLimitInformation", BasicLimits),
        ("IoInfo", IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


_lock = threading.Lock()
_job: int | None = None  # the job's handle: open until the process ends


def load_kernel32() -> Any:
    """kernel32 with the three functions typed (Windows only)."""
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
    kernel32.CreateJobObjectW.restype = wintypes.HANDLE
    kernel32.SetInformationJobObject.argtypes = [
        wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD,
    ]  # fmt: skip
    kernel32.SetInformationJobObject.restype = wintypes.BOOL
    kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
    kernel32.AssignProcessToJobObject.restype = wintypes.BOOL
    return kernel32


def job_handle(kernel32: Any) -> int:
    """This process's kill-on-close job, created on the first call.

    Raises:
        OSError: when Windows refuses to create or configure it.
    """
    global _job
    with _lock:
        if _job is None:
            job = kernel32.CreateJobObjectW(None, None)
            if not job:
                raise OSError(f"CreateJobObjectW failed (error {_last_error()})")
            info = ExtendedLimits()
            info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            if not kernel32.SetInformationJobObject(
                job, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION, ctypes.byref(info),
                ctypes.sizeof(info),
            ):  # fmt: skip
                raise OSError(f"SetInformationJobObject failed (error {_last_error()})")
            _job = job
        return _job


def tie_to_us(process_handle: int, kernel32: Any = None) -> None:
    """Put a started process into this process's job: it then dies when we do.

    Args:
        process_handle: The child's process handle (`Popen._handle` on Windows).
        kernel32: kernel32 or a stand-in; default: the real one.

    Raises:
        OSError: when the job cannot be made or the process cannot join it (for instance an
            old Windows where our own process is already in a job that forbids nesting).
    """
    kernel32 = kernel32 if kernel32 is not None else load_kernel32()
    job = job_handle(kernel32)
    if not kernel32.AssignProcessToJobObject(job, process_handle):
        raise OSError(f"AssignProcessToJobObject failed (error {_last_error()})")


def _last_error() -> int:
    getter = getattr(ctypes, "get_last_error", None)
    return int(getter()) if getter else 0


def reset_for_tests() -> None:
    """Forget the job (tests only)."""
    global _job
    with _lock:
        _job = None
