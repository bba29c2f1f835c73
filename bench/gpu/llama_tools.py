"""llama.cpp's own tools as reference runners: llama-bench (JSON output) and llama-server
(streamed /completion requests timed on arrival, the way a front end sees them)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Server sampling equal to ours: every stage that would change the distribution switched off.
SERVER_SAMPLING = {
    "greedy": {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0},
    "default": {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0},
}


def cpu_has_amx() -> bool:
    """ggml's AMX kernels crash on gpt-oss's Q8_0 tensors; our loader then skips repacking, and
    so must the reference runners, for the same configuration."""
    try:
        return "amx_int8" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def llama_bench(
    bin_dir: Path, model: Path, prompts: str, generate: int, depths: str, repeats: int = 3
) -> list[dict]:
    """Run llama-bench with all layers on the GPU and flash attention; one row per test."""
    command = [
        str(bin_dir / "llama-bench"), "-m", str(model), "-ngl", "99", "-fa", "1",
        "-p", prompts, "-n", str(generate), "-d", depths, "-r", str(repeats), "-o", "json",
        *(("--repack", "0") if cpu_has_amx() else ()),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=900)
    return parse_llama_bench(done.stdout)


def parse_llama_bench(output: str) -> list[dict]:
    """llama-bench's JSON rows as {test, depth, tokens_per_second, stddev}."""
    rows = []
    for row in json.loads(output):
        test = f"pp{row['n_prompt']}" if row["n_gen"] == 0 else f"tg{row['n_gen']}"
        rows.append(
            {
                "test": test,
                "depth": row.get("n_depth", 0),
                "tokens_per_second": row["avg_ts"],
                "stddev": row.get("stddev_ts", 0.0),
            }
        )
    return rows


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def llama_server(
    bin_dir: Path, model: Path, context: int, extra: tuple[str, ...] = (), log: Path | None = None
) -> Iterator[int]:
    """A llama-server on 127.0.0.1 with all layers on the GPU; yields its port."""
    port = free_port()
    command = [
        str(bin_dir / "llama-server"), "-m", str(model), "-ngl", "99", "-fa", "on",
        "-c", str(context), "-np", "1", "--host", "127.0.0.1", "--port", str(port), *extra,
        *(("--no-repack",) if cpu_has_amx() else ()),
    ]  # fmt: skip
    sink = log.open("ab") if log else subprocess.DEVNULL
    server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(port, server)
        yield port
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def _wait_healthy(port: int, server: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"llama-server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    raise RuntimeError("llama-server did not become healthy")


def stream_completion(port: int, prompt: str, generate: int, sampling: str) -> dict:
    """One streamed /completion; decode t/s from the arrival times of the tokens."""
    body = {"prompt": prompt, "n_predict": generate, "stream": True, "ignore_eos": True,
            "cache_prompt": False, "return_tokens": True, **SERVER_SAMPLING[sampling]}  # fmt: skip
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/completion", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    arrivals: list[float] = []
    final: dict = {}
    with urllib.request.urlopen(request, timeout=600) as answer:
        for raw in answer:
            line = raw.decode().strip()
            if not line.startswith("data: "):
                continue
            event = json.loads(line[6:])
            count = len(event.get("tokens") or []) or (1 if event.get("content") else 0)
            arrivals += [time.perf_counter()] * count
            if event.get("stop"):
                final = event
    return summarise_stream(arrivals, final)


def summarise_stream(arrivals: list[float], final: dict) -> dict:
    """Client-side decode t/s over the streamed tokens, and what the server itself reported."""
    client = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0]) if len(arrivals) > 1 else 0.0
    timings = final.get("timings", {})
    return {
        "tokens": len(arrivals),
        "client_tokens_per_second": round(client, 1),
        "server_tokens_per_second": round(timings.get("predicted_per_second", 0.0), 1),
        "server_prompt_tokens_per_second": round(timings.get("prompt_per_second", 0.0), 1),
    }
