"""The runners of the CPU comparison: llama-bench, llama-server and `gptoss-local serve` as
processes, and one streamed request to either server timed from sending to its last byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from llama_tools import cpu_has_amx, free_port, parse_llama_bench

ROOT = Path(__file__).resolve().parents[2]
# Sampling that llama-server applies exactly as our chain does: every stage that would change the
# distribution off (its defaults, top-k 40 / top-p 0.95 / min-p 0.05, truncate it).
SAMPLING = {
    "greedy": {"temperature": 0.0, "top_p": 1.0},
    "default": {"temperature": 1.0, "top_p": 1.0},
}
SERVER_OFF = {"top_k": 0, "min_p": 0.0}


def llama_bench(
    bin_dir: Path,
    model: Path,
    threads: int,
    repeats: int,
    tests: tuple[str, ...] = ("pp", "tg"),
    depth: int = 0,
) -> dict[str, float]:
    """llama-bench's pp512 and/or tg128 on the CPU (flash attention on, as our loader sets it),
    at `depth` (its context is then depth + 512 or depth + 128 cells)."""
    command = [
        str(bin_dir / "llama-bench"), "-m", str(model), "-t", str(threads), "-ngl", "0",
        "-fa", "1", "-p", "512" if "pp" in tests else "0", "-n", "128" if "tg" in tests else "0",
        "-d", str(depth), "-r", str(repeats), "-o", "json",
        *(("--repack", "0") if cpu_has_amx() else ()),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=1800)
    return {row["test"]: row["tokens_per_second"] for row in parse_llama_bench(done.stdout)}


def llama_server_command(bin_dir: Path, model: Path, threads: int, port: int) -> list[str]:
    """llama-server on the CPU, one slot, the context our server gets."""
    return [
        str(bin_dir / "llama-server"), "-m", str(model), "-t", str(threads), "-ngl", "0",
        "-fa", "on", "-c", "4096", "-np", "1", "--host", "127.0.0.1", "--port", str(port),
        *(("--no-repack",) if cpu_has_amx() else ()),
    ]  # fmt: skip


def ours_command(model: Path, port: int, cpu_sampling: bool) -> list[str]:
    """`gptoss-local serve` as a user starts it (a CPU-only load samples after the graph with
    or without `--cpu-sampling`)."""
    return [
        sys.executable, "-m", "gptoss_local", "serve", "--model-path", str(model),
        "--context", "4096", "--port", str(port), *(("--cpu-sampling",) if cpu_sampling else ()),
    ]  # fmt: skip


@contextmanager
def running(command: list[str], port: int, log: Path) -> Iterator[int]:
    """`command` started (a server on `port`), until its /health answers; stopped after."""
    home = tempfile.mkdtemp(prefix="gptoss-bench-home-")
    env = {**os.environ, "GPTOSS_LOCAL_HOME": home, "PYTHONPATH": str(ROOT)}
    with log.open("ab") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 300
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"{command[0]} exited with {process.returncode}; see {log}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{command[0]} never answered; see {log}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                        break
                except OSError:
                    time.sleep(0.2)
            yield port
        finally:
            process.terminate()
            process.wait(30)


def post_stream(port: int, path: str, body: dict) -> tuple[float, list[dict]]:
    """POST `body` streamed; (seconds from sending to the last byte, the JSON events)."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    events = []
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=900) as answer:
        for raw in answer:
            line = raw.decode().strip()
            if line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line[6:]))
    return time.perf_counter() - start, events


def free_ports(count: int) -> list[int]:
    """`count` ports free now on 127.0.0.1."""
    return [free_port() for _ in range(count)]
