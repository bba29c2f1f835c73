"""Throughput and time to first token of `gptoss-local serve` with 1, 4 and 8 clients at once,
and the same against llama.cpp's llama-server when a path to it is given.

Each client holds one conversation of `--turns` turns (its history grows, so a server that
keeps each conversation's prefix evaluates only the new message), all clients start together,
and every reply is streamed from /v1/chat/completions with exactly `--tokens` tokens (end
tokens banned in our server, `ignore_eos` in llama-server: random weights stop at random).
Ours is asked in each API dialect it speaks (`--dialects`: Chat Completions, Responses,
Anthropic's Messages, Ollama's /api/chat; bench/dialects.py), llama-server in Chat Completions.
Throughput is all clients' generated tokens over the wall time; TTFT is from sending a request
to its first streamed text, median and 90th percentile over every request. With random weights
the model writes no Harmony header, and our parser holds such text until it is sure none is
coming (256 characters, some 28 tokens), so our TTFT here includes that many tokens' decoding;
"hold" is the median time from our engine's first sampled token to that first text, which a
real model's header-first reply would not wait; our TTFT less the hold is comparable with
llama-server's, which streams such text at once.

Each server runs in a process of its own, with `-np 1` (one sequence, requests queue) and
`-np N` (N sequences decoded together, N the most clients): ours (`--serve`, the same Service
and HTTP server as `gptoss-local serve`, end tokens banned) and llama-server.

Run: python bench/serve.py MODEL.gguf [--clients 1 4 8] [--turns 3] [--tokens 64]
     [--dialects chat responses messages ollama] [--llama-server PATH] [--gpu-layers 0]
     [--cache-ram 4096] [--out FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from dialects import DIALECTS, chat  # noqa: E402  (bench/ itself is on the path)

Ask = Callable[[int, list[dict], int], dict]
LLAMA_SERVER_CHAT: Ask = partial(chat, llama_server=True)

TEXT = ("The harbour town wakes early: boats go out before dawn, the market opens at six, and "
        "by noon the fish is sold. ") * 6  # fmt: skip


def timed(backend: Any, timings: Path) -> Callable[..., Any]:
    """`backend.stream`, appending to `timings` how long each reply's first text came after its
    first sampled token (the engine's own figure): the parser's hold on headerless text."""
    from gptoss_local.backends.base import Reply

    def stream(request: Any, cancel: Any) -> Reply:
        called = time.perf_counter()
        reply = backend.stream(request, cancel)

        def events() -> Iterator[Any]:
            first_text = None
            for event in reply:
                if first_text is None and getattr(event, "text", ""):
                    first_text = time.perf_counter() - called
                yield event
            first_token = reply.stats.ttft_seconds
            if first_text is not None and first_token is not None:
                with timings.open("a") as sink:
                    sink.write(f"{max(0.0, first_text - first_token)}\n")
            return reply.stats

        return Reply(events())  # type: ignore[arg-type]

    return stream


def serve(
    model: Path,
    port: int,
    context: int,
    gpu_layers: int,
    cache_ram: int,
    sequences: int,
    timings: Path,
) -> None:
    """Our server on `port`, every reply exactly as long as asked (end tokens banned), with
    `cache_ram` MiB for conversations waiting their turn (`gptoss-local serve --cache-ram`) and
    `sequences` replies decoded together (`--parallel`); each reply's hold on its first text goes
    to `timings`."""
    from gptoss_local.backends.base import GenerationSettings
    from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
    from gptoss_local.backends.llamacpp.load import LoadSettings
    from gptoss_local.backends.llamacpp.options import LlamaOptions
    from gptoss_local.serve.guard import Guard
    from gptoss_local.serve.server import make_server
    from gptoss_local.serve.service import Service

    settings = LoadSettings(context=context, gpu_layers=gpu_layers, sequences=sequences)
    backend = LlamaCppBackend(model, settings)
    ends = ("<|return|>", "<|call|>", "<|endoftext|>")
    ban = tuple((backend.tokenize(t)[0], float("-inf")) for t in ends)
    backend.options = LlamaOptions(logit_bias=ban, backend_sampling=gpu_layers != 0)
    backend.keep_conversations(cache_ram << 20)
    service = Service(backend, ("bench",), GenerationSettings(), stream=timed(backend, timings))
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")  # into --log
    make_server(service, Guard("127.0.0.1", port)).serve_forever()


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def started(command: list[str], port: int, log: Path) -> Iterator[int]:
    with log.open("ab") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 300
            while True:
                assert process.poll() is None, f"{command[0]} exited; see {log}"
                assert time.monotonic() < deadline, f"{command[0]} never answered"
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                        break
                except OSError:
                    time.sleep(0.2)
            yield port
        finally:
            process.terminate()
            process.wait(30)


def client(port: int, number: int, turns: int, tokens: int, out: list[dict], ask: Ask) -> None:
    messages: list[dict] = []
    for turn in range(turns):
        messages.append({"role": "user", "content": f"Client {number}, turn {turn}. {TEXT}"})
        try:
            result = ask(port, messages, tokens)
        except Exception as exc:  # reported by round_of: a client must not vanish silently
            out.append({"error": repr(exc)})
            return
        messages.append({"role": "assistant", "content": result["text"][-200:]})
        out.append(result)


def round_of(port: int, clients: int, turns: int, tokens: int, ask: Ask) -> dict:
    results: list[dict] = []
    threads = [threading.Thread(target=client, args=(port, n, turns, tokens, results, ask))
               for n in range(clients)]  # fmt: skip
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    failed = [r["error"] for r in results if "error" in r]
    assert not failed, f"{len(failed)} client(s) failed: {failed[0]}"
    ttfts = sorted(r["ttft"] for r in results)
    prompt = sum(r["prompt"] for r in results)
    return {
        "clients": clients, "requests": len(results), "wall_s": round(wall, 3),
        "tokens": sum(r["tokens"] for r in results),
        "throughput_tps": round(sum(r["tokens"] for r in results) / wall, 1),
        "ttft_median_s": round(statistics.median(ttfts), 3),
        "ttft_p90_s": round(ttfts[max(0, int(len(ttfts) * 0.9 + 0.5) - 1)], 3),
        "cached_share": round(sum(r["cached"] for r in results) / prompt, 2) if prompt else None,
    }  # fmt: skip


def measure(
    name: str,
    command: list[str],
    port: int,
    args: argparse.Namespace,
    timings: Path | None = None,
    dialects: tuple[str, ...] = ("chat",),
) -> list[dict]:
    """Warm up, then a round per dialect and client count; with `timings` (ours), also the
    median hold on the first text that the server wrote there."""
    rows = []
    with started(command, port, args.log):
        asks = {d: DIALECTS[d] for d in dialects} if timings else {"chat": LLAMA_SERVER_CHAT}
        round_of(port, 1, 1, 8, next(iter(asks.values())))  # warm-up
        for (dialect, ask), clients in itertools.product(asks.items(), args.clients):
            if timings:
                timings.write_text("")
            row = {"server": name, "dialect": dialect,
                   **round_of(port, clients, args.turns, args.tokens, ask)}  # fmt: skip
            if timings:
                holds = [float(x) for x in timings.read_text().split()]
                row["text_hold_median_s"] = round(statistics.median(holds), 3) if holds else None
            rows.append(row)
            print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def measure_ours(args: argparse.Namespace, sequences: int) -> list[dict]:
    """Our server, in a process of its own, with `sequences` decoded together sharing a
    context of `sequences` times `--context` (as llama-server's `-np N -c N*context`)."""
    port = free_port()
    timings = args.log.with_name(f"first-tokens-{port}.txt")
    command = [sys.executable, __file__, str(args.model), "--serve", str(port),
               "--context", str(args.context * sequences), "--gpu-layers", str(args.gpu_layers),
               "--cache-ram", str(args.cache_ram), "--sequences", str(sequences),
               "--timings", str(timings)]  # fmt: skip
    return measure(f"gptoss-local serve -np {sequences}", command, port, args, timings,
                   tuple(args.dialects))  # fmt: skip


def measure_llama_server(args: argparse.Namespace, slots: int) -> list[dict]:
    """llama-server with `slots` sequences (its context split among them), as configured as
    ours: all layers on the GPU or none, flash attention on a GPU, no repacking on AMX CPUs."""
    port = free_port()
    layers, flash = ("99", "on") if args.gpu_layers else ("0", "auto")
    command = [str(args.llama_server), "-m", str(args.model), "--port", str(port),
               "-c", str(args.context * slots), "-np", str(slots), "-ngl", layers,
               "-fa", flash, "--no-webui", *args.server_arg]  # fmt: skip
    if "amx_int8" in Path("/proc/cpuinfo").read_text():
        command.append("--no-repack")  # ggml's AMX kernels crash on gpt-oss; ours skip them too
    try:
        return measure(f"llama-server -np {slots}", command, port, args)
    except (AssertionError, OSError) as exc:
        print(f"llama-server -np {slots} failed: {exc}", file=sys.stderr)
        return []


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("model", type=Path)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--context", type=int, default=4096, help="per conversation")
    parser.add_argument("--gpu-layers", type=int, default=0)
    parser.add_argument("--cache-ram", type=int, default=4096, metavar="MIB",
                        help="our server's RAM for waiting conversations (0: none)")  # fmt: skip
    parser.add_argument("--dialects", nargs="+", choices=sorted(DIALECTS), default=["chat"],
                        help="the APIs ours is asked in (llama-server: chat)")  # fmt: skip
    parser.add_argument("--llama-server", type=Path, help="llama-server binary to compare with")
    parser.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                        help="an extra llama-server argument (repeatable)")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=1, help="runs of each server")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--log", type=Path, default=Path("/tmp/bench-serve.log"))
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--sequences", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--timings", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.model, args.serve, args.context, args.gpu_layers, args.cache_ram,
              args.sequences, args.timings)  # fmt: skip
        return
    args.load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    servers: list[Callable[[], list[dict]]] = []
    for slots in sorted({1, max(args.clients)}):
        servers.append(partial(measure_ours, args, slots))
        if args.llama_server:
            servers.append(partial(measure_llama_server, args, slots))
    rows: list[dict] = []
    for _ in range(args.repeats):  # servers take turns, so that each meets the same load
        for run in servers:
            rows += run()
    rows.sort(key=lambda r: (r["server"].split(" -np ")[0], int(r["server"].rsplit(" ", 1)[-1]),
                             r["dialect"]))  # fmt: skip
    report = render(rows, args)
    sys.stdout.write(report)
    if args.out:
        args.out.write_text(report)


def render(rows: list[dict], args: argparse.Namespace) -> str:
    import llama_cpp

    lines = [
        f"command: python bench/serve.py {args.model.name} --clients "
        f"{' '.join(map(str, args.clients))} --turns {args.turns} --tokens {args.tokens} "
        f"--context {args.context} --gpu-layers {args.gpu_layers} --cache-ram {args.cache_ram} "
        f"--repeats {args.repeats} --dialects {' '.join(args.dialects)}"
        + (" --llama-server PATH" if args.llama_server else "")
        + "".join(f" --server-arg={a}" for a in args.server_arg),
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs; Python "
        f"{platform.python_version()}; llama-cpp-python {llama_cpp.__version__}; load average "
        f"(1, 5, 15 min) before {_load(args.load_before)}, after "
        f"{_load(os.getloadavg() if hasattr(os, 'getloadavg') else None)}",
        f"{'server':28} {'dialect':9} {'clients':>7} {'requests':>8} {'tokens/s':>9} "
        f"{'TTFT med':>9} {'TTFT p90':>9} {'cached':>7} {'hold med':>9}",
    ]
    lines += [_line(r) for r in rows]
    if args.repeats > 1:
        lines += ["", f"median of the {args.repeats} runs:", lines[2]]
        for server, dialect, clients in dict.fromkeys(
            (r["server"], r["dialect"], r["clients"]) for r in rows
        ):
            same = (server, dialect, clients)
            runs = [r for r in rows if (r["server"], r["dialect"], r["clients"]) == same]
            keys = ("throughput_tps", "ttft_median_s", "ttft_p90_s", "text_hold_median_s")
            mid = {k: statistics.median(r[k] for r in runs) for k in keys
                   if all(r.get(k) is not None for r in runs)}  # fmt: skip
            lines.append(_line({**runs[0], **mid}))
    lines.append("json: " + json.dumps(rows))
    return "\n".join(lines) + "\n"


def _line(r: dict) -> str:
    """One row of the table; the hold column is ours only (the engine's own figure)."""
    cached = "-" if r["cached_share"] is None else f"{r['cached_share']:.0%}"
    hold = r.get("text_hold_median_s")
    shown = "-" if hold is None else f"{hold:.3f}"
    return (f"{r['server']:28} {r['dialect']:9} {r['clients']:7} {r['requests']:8} "
            f"{r['throughput_tps']:9.1f} {r['ttft_median_s']:9.3f} {r['ttft_p90_s']:9.3f} "
            f"{cached:>7} {shown:>9}")  # fmt: skip


def _load(load: tuple[float, ...] | None) -> str:
    return "n/a" if load is None else "/".join(f"{x:.1f}" for x in load)


if __name__ == "__main__":
    main()
