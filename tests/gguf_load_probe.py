"""Load GGUF files into llama.cpp one after another and reply two tokens from each.

``python tests/gguf_load_probe.py FILE...`` prints ``loading N`` before the N-th file and
``ok N`` or ``refused N: why`` after it. A crash of llama.cpp ends the process, so a
``loading`` line without an answer names the file that crashed it; `load_each` runs this as a
subprocess, attributes the crash, and carries on with the files after it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

PROBE = Path(__file__)
SECONDS_PER_FILE = 20  # a tiny model loads and replies in well under a second


def load_each(paths: Sequence[Path]) -> dict[Path, str]:
    """Loads every file in a fresh interpreter (a few per process); returns each outcome.

    Returns:
        Per path: "ok", "refused: <why>" (a clean error), or "crashed: <exit status and
        the end of the output>" (an abort, a signal, a hang or an unexpected error).
    """
    outcomes: dict[Path, str] = {}
    todo = list(paths)
    while todo:
        output, status = _run(todo)
        answered, last = _read(output, todo, outcomes)
        if status == 0 and answered == len(todo):
            break
        if last is None:  # died before the first file or after the last answer
            last = next((i for i, p in enumerate(todo) if p not in outcomes), len(todo) - 1)
        outcomes[todo[last]] = f"crashed: {status}: {output[-2000:]}"
        todo = todo[last + 1 :]
    return outcomes


def _run(todo: list[Path]) -> tuple[str, int | str]:
    command = [sys.executable, str(PROBE), *map(str, todo)]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=SECONDS_PER_FILE * len(todo) + 30,
        )
    except subprocess.TimeoutExpired as hung:
        out = hung.stdout if isinstance(hung.stdout, str) else (hung.stdout or b"").decode()
        return out, "timeout"
    return done.stdout + done.stderr, done.returncode


def _read(output: str, todo: list[Path], outcomes: dict[Path, str]) -> tuple[int, int | None]:
    """Records the answered files; returns (how many, index of an unanswered `loading`)."""
    answered, last = 0, None
    for line in output.splitlines():
        word, _, rest = line.partition(" ")
        number, _, why = rest.partition(": ")
        if word not in ("loading", "ok", "refused") or not number.isdigit():
            continue
        index = int(number)
        if word == "loading":
            last = index
            continue
        outcomes[todo[index]] = "ok" if word == "ok" else f"refused: {why}"
        answered, last = answered + 1, None
    return answered, last


def _probe(paths: list[str]) -> None:
    from engine_helpers import chat

    from gptoss_local.backends.base import BackendError, GenerationSettings, ReplyRequest
    from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
    from gptoss_local.backends.llamacpp.load import LoadSettings

    settings = LoadSettings(context=512, gpu_layers=0, threads=1)
    log = Path(tempfile.mkdtemp()) / "llama.log"
    for i, path in enumerate(paths):
        print(f"loading {i}", flush=True)
        try:
            backend = LlamaCppBackend(Path(path), settings, log_path=log)
            try:
                list(
                    backend.stream(
                        ReplyRequest(chat("hi"), GenerationSettings(max_tokens=2, seed=1))
                    )
                )
            finally:
                backend.close()
        except BackendError as exc:
            print(f"refused {i}: " + " ".join(str(exc).split()), flush=True)
            continue
        print(f"ok {i}", flush=True)


if __name__ == "__main__":
    _probe(sys.argv[1:])
