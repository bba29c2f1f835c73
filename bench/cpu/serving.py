"""`gptoss-local serve` against `llama-server`: the same requests, one at a time, wall time of
each from sending it to its stream's last byte (see compare.py)."""

from __future__ import annotations

import argparse
import statistics
from functools import partial
from pathlib import Path

from tools import (
    SAMPLING,
    SERVER_OFF,
    free_ports,
    llama_server_command,
    ours_command,
    post_stream,
    running,
)

from gptoss_local.conversation import Message
from gptoss_local.harmony import render_prompt

QUESTIONS = (
    "How do tides work?", "Why is the sky blue?", "What makes bread rise?",
    "How does a refrigerator keep food cold?", "Why do cats purr?",
)  # fmt: skip
ANSWER = ("Briefly: it comes down to a few physical effects acting together, and the details "
          "depend on the conditions. Ask me about any part and I will go deeper.")  # fmt: skip
ENDS = ("<|return|>", "<|call|>", "<|endoftext|>")


def workloads(turns: int) -> dict[str, list[list[Message]]]:
    """Each workload's requests: one-turn chats, and one chat of `turns` turns."""
    singles = [[Message("user", q)] for q in QUESTIONS]
    chat: list[list[Message]] = []
    history: list[Message] = []
    for turn in range(turns):
        history.append(Message("user", f"Turn {turn + 1}. {QUESTIONS[turn % len(QUESTIONS)]}"))
        chat.append(list(history))
        history.append(Message("assistant", ANSWER))
    return {"one-turn chats": singles, f"{turns}-turn chat": chat}


def ours_request(port: int, messages: list[Message], mode: str, tokens: int, ends: list[int],
                 model: str = ""):  # type: ignore[no-untyped-def]  # fmt: skip
    body = {
        "model": model, "stream": True, "max_tokens": tokens, "seed": 1, **SAMPLING[mode],
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "logit_bias": {str(token): -100 for token in ends},
        "stream_options": {"include_usage": True},
    }  # fmt: skip
    seconds, events = post_stream(port, "/v1/chat/completions", body)
    usage = next((e["usage"] for e in reversed(events) if e.get("usage")), {})
    prompt = usage.get("prompt_tokens", 0)
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    return seconds, prompt, usage.get("completion_tokens", 0), prompt - cached


def their_request(port: int, messages: list[Message], mode: str, tokens: int, _ends: list[int]):  # type: ignore[no-untyped-def]
    body = {
        "prompt": render_prompt(messages), "n_predict": tokens, "stream": True,
        "ignore_eos": True, "cache_prompt": True, "seed": 1, **SAMPLING[mode], **SERVER_OFF,
    }  # fmt: skip
    seconds, events = post_stream(port, "/completion", body)
    final = events[-1] if events else {}
    evaluated = (final.get("timings") or {}).get("prompt_n", 0)
    return seconds, final.get("tokens_evaluated", 0), final.get("tokens_predicted", 0), evaluated


def compare_servers(  # type: ignore[no-untyped-def]
    bin_dir: Path, model: Path, shape, threads: int, args: argparse.Namespace, name: str
) -> dict:
    """Both servers up at once (an idle one takes no CPU), every request sent to one then the
    other (the order swapped every round), `args.repeats` rounds; the median wall time of a
    round, and ours ÷ theirs."""
    ends = [shape.special_ids()[end] for end in ENDS]
    loads = workloads(args.turns)
    log = args.out / f"servers-{name}.log"
    ours = partial(ours_request, model=model.stem)  # the name our server gives it
    theirs_port, ours_port = free_ports(2)
    servers = {
        "llama-server": (llama_server_command(bin_dir, model, threads, theirs_port), their_request),
        "ours": (ours_command(model, ours_port, False), ours),
    }  # fmt: skip
    ports = {"llama-server": theirs_port, "ours": ours_port}
    rounds: dict[str, dict[str, list[float]]] = {}
    counts: dict[str, dict[str, tuple[int, ...]]] = {}
    with (
        running(*_pinned(servers["llama-server"][0], args), theirs_port, log),
        running(*_pinned(servers["ours"][0], args), ours_port, log),
    ):
        for server, (_, request) in servers.items():
            request(ports[server], loads["one-turn chats"][0], "greedy", 8, ends)  # warm-up
        for index in range(args.repeats):
            order = list(servers) if index % 2 == 0 else list(reversed(servers))
            for load, requests in loads.items():
                for mode in SAMPLING:
                    key = f"{load}, {mode}"
                    for server in order:
                        request = servers[server][1]
                        done = [
                            request(ports[server], m, mode, args.tokens, ends) for m in requests
                        ]
                        rounds.setdefault(key, {}).setdefault(server, []).append(
                            sum(d[0] for d in done)
                        )
                        counts.setdefault(key, {})[server] = tuple(
                            sum(d[i] for d in done) for i in (1, 3, 2)
                        )  # fmt: skip
    walls = {key: {s: statistics.median(v) for s, v in by.items()} for key, by in rounds.items()}
    lines = [f"{name}: serve, {args.tokens} tokens a reply, median wall seconds of "
             f"{args.repeats} interleaved rounds (prompt / evaluated / generated tokens a "
             "round)"]  # fmt: skip
    for key, by_server in walls.items():
        theirs = by_server["llama-server"]
        cells = [f"{s} {w:.3f}s ({'/'.join(map(str, counts[key][s]))})"
                 for s, w in by_server.items()]  # fmt: skip
        ratios = [f"{s} ÷ llama-server {w / theirs:.2f}"
                  for s, w in by_server.items() if s != "llama-server"]  # fmt: skip
        lines.append(f"  {key}: " + ", ".join(cells) + "; " + ", ".join(ratios))
    return {"lines": lines, "walls": walls, "rounds": rounds, "counts": counts}


def _pinned(command: list[str], args: argparse.Namespace) -> tuple[list[str]]:
    """`command` run on the first `args.cpus` CPUs (`taskset`), when asked: llama-server is
    told its threads, and ours takes as many as it may run on (`default_threads`)."""
    if not args.cpus:
        return (command,)
    return (["taskset", "-c", f"0-{args.cpus - 1}", *command],)
