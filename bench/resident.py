"""A reply through the machine's shared engine (`gptoss-local serve`) against the same reply in
process, and the first `run` with that engine resident against a cold `run` (issue 39).

1. Reply: the in-process side is `LlamaCppBackend.stream` in this process, the model planned
   and opened as the chat and `run` do (`prepare`, the same context); the shared side is a real
   `gptoss-local serve` in a process of its own (as a user starts it), found through its
   runtime file and asked by `OpenAIClientBackend.stream` (as `run` and `chat` reach it).
   Both get the same conversation and settings: greedy, seed 1, low effort, end tokens biased
   away (-100, a request field both honour) so every reply is exactly `--tokens` long. The
   sides take turns (A B, then B A, so drift falls on both), each round a new user message
   after the same system prompt (as a chat's next turn: both reuse the cached prefix). Both
   are timed alike, from outside, as the chat sees a reply: TTFT from asking to the first
   text; tokens/s as the OpenAI client backend reports it, generated tokens over the time from
   the first text to the last. Random weights write no Harmony header, so the parser (the same
   one on both sides) holds the first text some 28 tokens; both TTFTs include it, and both
   tokens/s count those tokens in a shorter time (the ratio is unaffected: the same tokens,
   the same hold). "CPU s" is this process's CPU time, plus the server's for the shared side;
   "engine t/s" the in-process engine's own decode rate, for reference.
2. `run`: the wall time of `gptoss-local run --model-path M --context C --max-tokens N
   --temperature 0 --seed 1 PROMPT` as a subprocess, cold (a GPTOSS_LOCAL_HOME of its own: it
   loads the model itself) and with the serve above resident in its home (it answers through
   it; checked by its "using the engine at" note), taking turns, a new prompt each time.

Run: python bench/resident.py [MODEL.gguf ...] [--shapes tiny small] [--rounds 15] [--runs 5]
     [--tokens N] [--run-tokens 32] [--context 4096] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this tree's gptoss_local; tests/synthetic

TOKENS = {"tiny": 256, "small": 128}  # per reply, by synthetic shape (others: 128)
ENDS = ("<|return|>", "<|call|>", "<|endoftext|>")
QUESTION = (
    "Round {n}. The harbour town wakes early: boats go out before dawn, the market "
    "opens at six, and by noon the fish is sold. Why does the market open so early?"
)
PYTHONPATH = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
ENV = {**os.environ, "PYTHONPATH": PYTHONPATH}  # the commands run this tree's gptoss_local


@contextmanager
def serving(model: Path, home: Path, context: int) -> Iterator[subprocess.Popen[str]]:
    """`gptoss-local serve --model-path MODEL` on a free port with GPTOSS_LOCAL_HOME=home,
    once it says it serves; ended (SIGTERM, as `gptoss-local stop` does) at the end."""
    command = [sys.executable, "-m", "gptoss_local", "serve", "--model-path", str(model),
               "--context", str(context), "--port", str(free_port())]  # fmt: skip
    env = {**ENV, "GPTOSS_LOCAL_HOME": str(home)}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:  # a thread, so that a full pipe never stalls the server
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            ready.set() if line.startswith("serving") else None

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + 300
        while not ready.wait(0.1):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("serve did not start:\n" + "".join(lines[-20:]))
        yield process
    finally:
        process.terminate()
        process.wait(30)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def engine_client(home: Path) -> Any:
    """An OpenAI client backend of the engine whose runtime file is in `home`, as `run` opens it."""
    from gptoss_local.backends.openai.backend import OpenAIClientBackend
    from gptoss_local.serve.find_engine import find_engine

    previous = os.environ["GPTOSS_LOCAL_HOME"]
    os.environ["GPTOSS_LOCAL_HOME"] = str(home)  # where its runtime file is
    try:
        found = find_engine(wait=30)
    finally:
        os.environ["GPTOSS_LOCAL_HOME"] = previous
    assert found is not None and not found.starting, "no engine found in its runtime file"
    return OpenAIClientBackend(found.url, found.record.model, found.record.key, "bench")


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user and system, all threads) of this process, or of process `pid`."""
    if pid is None:
        used = resource.getrusage(resource.RUSAGE_SELF)
        return used.ru_utime + used.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_reply(backend: Any, request: Any, server: int | None = None) -> dict[str, Any]:
    """One streamed reply, timed from outside: TTFT to the first text, tokens/s from it to the
    last text (as `OpenAIClientBackend` computes it), the whole reply's time, and the CPU time
    it took here and in the `server` process."""
    cpu = cpu_seconds() + (cpu_seconds(server) if server else 0.0)
    asked = time.perf_counter()
    reply = backend.stream(request)
    first = last = 0.0
    for event in reply:
        if getattr(event, "text", ""):
            last = time.perf_counter()
            first = first or last
    done = time.perf_counter()
    cpu = cpu_seconds() + (cpu_seconds(server) if server else 0.0) - cpu
    stats = reply.stats
    if last <= first:  # the parser held every token's text to the end
        raise SystemExit(
            f"a {stats.generated_tokens}-token reply came all at once: ask more "
            "--tokens (random weights write no header; text is held ~28 tokens)"
        )
    return {
        "ttft_s": first - asked, "tps": stats.generated_tokens / (last - first),
        "reply_s": done - asked, "cpu_s": cpu, "tokens": stats.generated_tokens,
        "prompt": stats.prompt_tokens, "cached": stats.cached_tokens,
        "engine_tps": stats.decode_tokens_per_second,
    }  # fmt: skip


def request_for(backend: Any, n: int, tokens: int) -> Any:
    """Round `n`'s request: a new user message, greedy, low effort, end tokens biased away."""
    from gptoss_local.backends.base import GenerationSettings, ReplyRequest
    from gptoss_local.conversation import Conversation, Message

    ban = tuple((backend.tokenize(t)[0], -100.0) for t in ENDS)
    settings = GenerationSettings(effort="low", max_tokens=tokens, temperature=0.0, seed=1,
                                  logit_bias=ban)  # fmt: skip
    return ReplyRequest(Conversation((Message("user", QUESTION.format(n=n)),)), settings)


@contextmanager
def in_process(model: Path, context: int) -> Iterator[Any]:
    """The model loaded in this process as `run` and the chat load it: planned (`prepare`)
    with the same wishes as the serve's command line, then opened."""
    from gptoss_local import config
    from gptoss_local.launch.prepare import prepare
    from gptoss_local.plan.wishes import Wishes

    wishes = Wishes(model_path=model, context=context, given=frozenset({"context"}))
    ready = prepare(wishes, config.Settings(), warn=lambda _text: None).ready
    assert ready is not None
    backend = ready.open(lambda _fraction, _text: True)  # True: go on loading
    try:
        yield backend
    finally:
        backend.close()


def compare_replies(
    model: Path, home: Path, server: int, args: argparse.Namespace, tokens: int
) -> dict:
    """Rounds of the same reply in process (A) and through the engine (B, served by process
    `server`), taking turns; also how long the in-process load took."""
    sides: dict[str, Any] = {"in-process": [], "shared": []}
    start = time.perf_counter()
    with in_process(model, args.context) as local:
        sides["load_s"] = time.perf_counter() - start
        shared = engine_client(home)
        backends = {"in-process": (local, None), "shared": (shared, server)}
        for backend, pid in backends.values():  # warm-up, both
            time_reply(backend, request_for(local, -1, tokens), pid)
        for n in range(args.rounds):
            order = list(backends) if n % 2 == 0 else list(reversed(backends))
            for name in order:
                backend, pid = backends[name]
                sides[name].append(time_reply(backend, request_for(local, n, tokens), pid))
    for name in backends:
        runs = sides[name]
        assert all(r["tokens"] == tokens for r in runs), f"{name}: a reply was not {tokens} long"
    return sides


def time_run(model: Path, home: Path, args: argparse.Namespace, n: int, tokens: int) -> float:
    """Wall seconds of one real `gptoss-local run`; checks whether it used an engine."""
    command = [sys.executable, "-m", "gptoss_local", "run", "--model-path", str(model),
               "--context", str(args.context), "--max-tokens", str(tokens), "--temperature",
               "0", "--seed", "1", QUESTION.format(n=n)]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**ENV, "GPTOSS_LOCAL_HOME": str(home)})  # fmt: skip
    wall = time.perf_counter() - start
    assert done.returncode == 0, done.stderr[-2000:]
    return wall if "using the engine at" in done.stderr else -wall  # negative: loaded itself


def compare_runs(
    model: Path, homes: dict[str, Path], args: argparse.Namespace, tokens: int
) -> dict:
    """`run` cold and with the engine resident, taking turns, a new prompt each time."""
    walls: dict[str, list[float]] = {"cold": [], "resident": []}
    for n in range(args.runs):
        for name in ["cold", "resident"] if n % 2 == 0 else ["resident", "cold"]:
            walls[name].append(time_run(model, homes[name], args, 1000 + n, tokens))
    assert all(w < 0 for w in walls["cold"]), "a cold run found an engine"
    assert all(w > 0 for w in walls["resident"]), "a run with the engine resident loaded itself"
    return {name: [abs(w) for w in runs] for name, runs in walls.items()}


def bench_model(model: Path, name: str, args: argparse.Namespace, folder: Path) -> dict:
    tokens = args.tokens or TOKENS.get(name, 128)
    homes = {"cold": folder / f"{name}-cold", "resident": folder / f"{name}-resident"}
    for home in homes.values():
        home.mkdir()
    with serving(model, homes["resident"], args.context) as server:
        replies = compare_replies(model, homes["resident"], server.pid, args, tokens)
        runs = compare_runs(model, homes, args, args.run_tokens)
    return {"model": name, "size_mb": round(model.stat().st_size / 1e6, 1), "tokens": tokens,
            "replies": replies, "runs": runs}  # fmt: skip


def models(args: argparse.Namespace, folder: Path) -> Iterator[tuple[Path, str]]:
    """The GGUF files given, else the synthetic shapes written into `folder`."""
    yield from ((path, path.stem) for path in args.models)
    if not args.models:
        from synthetic import PRESETS, write_gguf

        for shape in args.shapes:
            yield write_gguf(folder / f"{shape}.gguf", PRESETS[shape], seed=0), shape


def median(values: list[float]) -> float:
    return statistics.median(values)


SIDES = ("in-process", "shared")
KEYS = ("ttft_s", "tps", "reply_s", "cpu_s")


def reply_lines(found: dict) -> list[str]:
    """The reply table of one model: medians per side, then shared / in-process."""
    sides, lines = found["replies"], []
    mid = {side: {k: median([r[k] for r in sides[side]]) for k in KEYS} for side in SIDES}
    for side, m in mid.items():
        engine = [r["engine_tps"] for r in sides[side] if r["engine_tps"] is not None]
        shown = f"{median(engine):10.1f}" if side == "in-process" and engine else f"{'-':>10}"
        last = sides[side][-1]
        lines.append(f"{found['model']:8} {found['tokens']:6} {side:10} {m['ttft_s']:9.3f} "
                     f"{m['tps']:9.1f} {m['reply_s']:8.3f} {m['cpu_s']:7.3f} {shown} "
                     f"{last['prompt']:5}/{last['cached']:<5}")  # fmt: skip
    ratio = {k: mid["shared"][k] / mid["in-process"][k] for k in KEYS}
    found["ratios"] = {k.removesuffix("_s"): round(v, 3) for k, v in ratio.items()}
    pairs = zip(sides["in-process"], sides["shared"], strict=True)
    per_round = sorted(s["tps"] / i["tps"] for i, s in pairs)
    lines.append(f"{'':8} {'':6} {'÷':10} {ratio['ttft_s']:9.3f} {ratio['tps']:9.3f} "
                 f"{ratio['reply_s']:8.3f} {ratio['cpu_s']:7.3f}   shared / in-process; "
                 f"tokens/s goal >= 0.97: {'yes' if ratio['tps'] >= 0.97 else 'NO'} (per round "
                 f"{per_round[0]:.2f}..{per_round[-1]:.2f}, median "
                 f"{median(per_round):.2f})")  # fmt: skip
    return lines


def run_line(found: dict) -> str:
    cold, resident = median(found["runs"]["cold"]), median(found["runs"]["resident"])
    found["ratios"]["run"] = round(resident / cold, 3)
    return (
        f"{found['model']:8} {len(found['runs']['cold']):4} {cold:9.2f} {resident:9.2f} "
        f"{resident / cold:7.2f} {cold - resident:8.2f} {found['replies']['load_s']:9.2f}"
    )


def render(results: list[dict], args: argparse.Namespace, before: str) -> str:
    import llama_cpp

    names = " ".join(str(m) for m in args.models) or "--shapes " + " ".join(args.shapes)
    lines = [
        f"command: python bench/resident.py {names} --rounds {args.rounds} --runs {args.runs} "
        f"--context {args.context} --run-tokens {args.run_tokens}"
        + (f" --tokens {args.tokens}" if args.tokens else ""),
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs; Python "
        f"{platform.python_version()}; llama-cpp-python {llama_cpp.__version__}; load average "
        f"(1, 5, 15 min) before {before}, after {load()}",
        "",
        f"1. one reply, medians of {args.rounds} rounds (TTFT to the first text; tokens/s from "
        "the first text to the last)",
        f"{'model':8} {'tokens':>6} {'side':10} {'TTFT s':>9} {'tokens/s':>9} {'reply s':>8} "
        f"{'CPU s':>7} {'engine t/s':>10} prompt/cached (CPU: this process, and the server's "
        "for shared)",
    ]
    for found in results:
        lines += reply_lines(found)
    lines += [
        "",
        f"2. `gptoss-local run --max-tokens {args.run_tokens}`, wall seconds, medians",
        f"{'model':8} {'runs':>4} {'cold':>9} {'resident':>9} {'ratio':>7} {'saved s':>8} "
        f"{'load s':>9} (load: planning and loading in process, for scale)",
    ]
    lines += [run_line(found) for found in results]
    lines.append("json: " + json.dumps(results))
    return "\n".join(lines) + "\n"


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("models", type=Path, nargs="*", help="GGUF files (default: --shapes)")
    parser.add_argument("--shapes", nargs="+", default=["tiny", "small"],
                        help="synthetic gpt-oss shapes written for the run")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=15, help="replies on each side")
    parser.add_argument("--runs", type=int, default=5, help="`run` commands of each kind")
    parser.add_argument("--tokens", type=int, help="per reply (default: by shape, 256 or 128)")
    parser.add_argument("--run-tokens", type=int, default=32, help="`run --max-tokens`")
    parser.add_argument("--context", type=int, default=4096)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    before = load()
    with tempfile.TemporaryDirectory(prefix="gptoss-bench-") as tmp:
        folder = Path(tmp)
        os.environ["GPTOSS_LOCAL_HOME"] = str(folder)  # what this process plans and logs
        results = [bench_model(path, name, args, folder) for path, name in models(args, folder)]
    report = render(results, args, before)
    sys.stdout.write(report)
    if args.out:
        args.out.write_text(report)


if __name__ == "__main__":
    main()
