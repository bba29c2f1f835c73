"""Replay a recorded Codex CLI session (bench/codex_session, from record_codex_session.py)
against `serve`: prompt tokens evaluated per request and time to first token.

Each recorded request goes to /v1/responses as Codex sent it (streamed, its tools, reasoning
items, calls and outputs), one after the other, as Codex would. Two runs side by side in one
server process:

- "ours": the session as it comes, the engine keeping the conversation's cache from request
  to request, so it evaluates only what is new;
- "reference": the same requests with an unrelated short request between them (a second
  client, and no RAM for shelved caches), so each is evaluated whole, as by a server that
  keeps no conversation's cache.

The model's replies are cut at `--tokens` (random weights do not stop), and they differ from the
recorded ones; the next request carries the recorded reply, which the engine evaluates as new.
TTFT is from sending a request to its first streamed event of output (reasoning, text or a
call); "prefill" is the engine's own time for the prompt. With random weights the model writes
no Harmony header and the parser holds such text for some 28 tokens, so TTFT includes that much
decoding in both runs; the ratio of prefill times is the cleaner figure.

Run: python bench/codex_replay.py MODEL.gguf [--session bench/codex_session] [--gpu-layers -1]
     [--context 32768] [--tokens 32] [--out FILE]
"""

from __future__ import annotations

import argparse
import http.client
import json
import platform
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
OTHER = "Write one sentence about the sea."


def start(model: Path, context: int, gpu_layers: int, cache_ram_mib: int) -> tuple[Any, list, Any]:
    """Our server on a free loopback port; every reply's stats are appended to the list."""
    from gptoss_local.backends.base import GenerationSettings, Reply
    from gptoss_local.backends.llamacpp.backend import LlamaCppBackend
    from gptoss_local.backends.llamacpp.load import LoadSettings
    from gptoss_local.backends.llamacpp.options import LlamaOptions
    from gptoss_local.serve.guard import Guard
    from gptoss_local.serve.server import make_server
    from gptoss_local.serve.service import Service

    backend = LlamaCppBackend(model, LoadSettings(context=context, gpu_layers=gpu_layers))
    backend.options = LlamaOptions(backend_sampling=gpu_layers != 0)
    backend.keep_conversations(cache_ram_mib << 20)
    stats: list = []

    def stream(request: Any, cancel: Any) -> Reply:
        reply = backend.stream(request, cancel)

        def events() -> Any:
            yield from reply
            stats.append(reply.stats)
            return reply.stats

        return Reply(events())

    service = Service(backend, ("bench",), GenerationSettings(), stream=stream)
    server = make_server(service, Guard("127.0.0.1", 0))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, stats, backend


def send(port: int, body: dict[str, Any]) -> float | None:
    """Stream one request; seconds to its first output event (None if none came)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    sent = time.perf_counter()
    connection.request("POST", "/v1/responses", json.dumps(body),
                       {"Content-Type": "application/json"})  # fmt: skip
    answer = connection.getresponse()
    assert answer.status == 200, answer.read()[:500]
    first = None
    for raw in answer:
        line = raw.decode().strip()
        if first is None and line.startswith("data:"):
            kind = json.loads(line[5:]).get("type", "")
            if kind.endswith(".delta") or kind == "response.output_item.added":
                first = time.perf_counter() - sent
    connection.close()
    return first


def replay(port: int, stats: list, bodies: list[dict], tokens: int, interleave: bool) -> list:
    rows = []
    for body in bodies:
        if interleave:
            send(port, {"model": "bench", "input": OTHER, "max_output_tokens": 8, "stream": True})
        asked = {**body, "model": "bench", "max_output_tokens": tokens}
        ttft = send(port, asked)
        s = stats[-1]
        rows.append({"prompt": s.prompt_tokens, "evaluated": s.evaluated_tokens,
                     "cached": s.cached_tokens, "prefill_s": s.prefill_seconds,
                     "ttft_s": ttft})  # fmt: skip
    return rows


def render(ours: list, ref: list, args: argparse.Namespace, device: str) -> str:
    lines = [
        "Codex session replayed against serve (bench/codex_replay.py)",
        f"command: python bench/codex_replay.py {args.model.name} --gpu-layers {args.gpu_layers} "
        f"--context {args.context} --tokens {args.tokens}",
        f"machine: {device}; {platform.platform()}",
        f"session: {args.session} ({len(ours)} requests, 3 user turns)",
        "",
        "req  prompt  ours: evaluated  prefill_s  ttft_s | reference: evaluated  prefill_s  "
        "ttft_s | ttft ratio",
    ]
    for n, (a, b) in enumerate(zip(ours, ref, strict=True), 1):
        both = a["ttft_s"] is not None and b["ttft_s"] is not None
        ratio = f"{b['ttft_s'] / a['ttft_s']:5.1f}x" if both else "     -"
        lines.append(
            f"{n:3d}  {a['prompt']:6d}  {a['evaluated']:15d}  {a['prefill_s']:9.3f}  "
            f"{_seconds(a['ttft_s'])} | {b['evaluated']:20d}  {b['prefill_s']:9.3f}  "
            f"{_seconds(b['ttft_s'])} | {ratio}"
        )
    total = {k: sum(r[k] for r in ours) for k in ("prompt", "evaluated", "prefill_s")}
    ref_total = {k: sum(r[k] for r in ref) for k in ("evaluated", "prefill_s")}
    timed = [(a["ttft_s"], b["ttft_s"]) for a, b in zip(ours, ref, strict=True)
             if a["ttft_s"] is not None and b["ttft_s"] is not None]  # fmt: skip
    ttft = sum(a for a, _ in timed), sum(b for _, b in timed)
    lines += [
        "",
        f"after the first request ours evaluated {sum(r['evaluated'] for r in ours[1:]):,} of "
        f"{sum(r['prompt'] for r in ours[1:]):,} prompt tokens "
        f"(reference {sum(r['evaluated'] for r in ref[1:]):,})",
        f"total prefill: ours {total['prefill_s']:.2f} s, reference {ref_total['prefill_s']:.2f} s "
        f"({ref_total['prefill_s'] / max(total['prefill_s'], 1e-9):.1f}x); total TTFT over the "
        f"{len(timed)} requests with output in both runs: ours {ttft[0]:.2f} s, reference "
        f"{ttft[1]:.2f} s ({ttft[1] / max(ttft[0], 1e-9):.1f}x)",
    ]
    return "\n".join(lines) + "\n"


def _seconds(value: float | None) -> str:
    return f"{value:6.3f}" if value is not None else "     -"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--session", type=Path, default=ROOT / "bench" / "codex_session")
    parser.add_argument("--gpu-layers", type=int, default=0)
    parser.add_argument("--context", type=int, default=32_768)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--device", default="", help="the machine, in words, for the report")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    bodies = [json.loads(p.read_text()) for p in sorted(args.session.glob("*.json"))]
    runs = {}
    for name, cache_mib, interleave in (("ours", 4096, False), ("reference", 0, True)):
        server, stats, backend = start(args.model, args.context, args.gpu_layers, cache_mib)
        try:
            send(
                server.server_address[1],
                {"model": "bench", "input": OTHER, "max_output_tokens": 8, "stream": True},
            )  # warm-up
            runs[name] = replay(server.server_address[1], stats, bodies, args.tokens, interleave)
        finally:
            server.stop()
            backend.close()
    device = args.device or platform.processor() or platform.machine()
    text = render(runs["ours"], runs["reference"], args, device)
    print(text, end="")
    if args.out:
        args.out.write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
