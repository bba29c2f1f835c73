"""The threads llama.cpp gets when none are asked for: the physical cores, but never more than
the CPUs the process may run on (a thread beyond those waits its turn at every barrier of every
decode step). Checked on the real engine in a child process pinned to one CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import json, os, sys
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from pathlib import Path
import llama_cpp.llama_cpp as bindings
from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
from gptoss_local.backends.llamacpp.load import LoadSettings
settings = LoadSettings(context=256, gpu_layers=0)
with LlamaCppBackend(Path(sys.argv[1]), settings, log_path=Path(os.devnull)) as backend:
    context = backend._native.context
    print(json.dumps([backend.info().details["threads"], bindings.llama_n_threads(context),
                      bindings.llama_n_threads_batch(context)]))
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_a_process_pinned_to_one_cpu_decodes_with_one_thread(tiny_gguf: Path) -> None:
    import psutil

    if (psutil.cpu_count(logical=False) or 1) < 2 or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core here: a pinned process would get one thread anyway")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tiny_gguf)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == ["1", 1, 1]


def test_without_pinning_the_threads_are_the_physical_cores_the_process_may_use() -> None:
    import psutil

    from gptoss_local.backends.llamacpp.load import default_threads

    cores = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    assert default_threads() == max(1, min(cores, allowed))
