"""`gptoss-local bench`: prefill and decode speed of the planned model on this machine, or of
the machine's engine when it holds that model (`launch.resident.over_engine`: for another
model there, bench asks to switch it, or takes `--switch`, as `run` does)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace

from gptoss_local import benchmark, config
from gptoss_local.backends.base import Backend, GenerationSettings, LoadProgress
from gptoss_local.commands.notes import LoadNotes, note, warn
from gptoss_local.i18n import _
from gptoss_local.launch.engine_switch import ask_on_terminal
from gptoss_local.launch.engines import Ready
from gptoss_local.launch.prepare import prepare
from gptoss_local.launch.resident import over_engine
from gptoss_local.launch.runner import choose_model, load_planned
from gptoss_local.plan.wishes import wishes_from


def run_bench(args: argparse.Namespace) -> int:
    """Load the planned model and measure; prints a table (or JSON). When the machine's engine
    holds the model, measure through it instead of loading a second copy."""

    settings = config.load()
    wishes = replace(wishes_from(args, settings), backend="llamacpp")  # an engine benchmark
    # Planned, not made ready: bench loads llama.cpp itself, each run sets its reply options.
    prepared = prepare(wishes, settings, warn=warn, make_ready=False)
    catalog, plan = prepared.preparation.catalog, prepared.plan
    choice = choose_model(catalog, prepared.wishes.model_path, plan)

    def load(progress: LoadProgress) -> Backend:
        return load_planned(catalog, choice, plan, progress)

    # The file the user named goes with a switch of the engine (the engine resolves it so).
    named = prepared.wishes.model_path and choice.path
    local = Ready(choice.spec.name, load, GenerationSettings(), path=named or None)
    ask = ask_on_terminal(args.switch)
    ready = over_engine(local, prepared.wishes, False, note, "gptoss-local bench", ask)
    shared = ready is not local
    if shared:
        note(_("measuring through the engine on this machine: it holds the model, so none is "
               "loaded here"))  # fmt: skip
    backend = ready.open(LoadNotes())
    # Sampling on the GPU is an option of a load of our own; the engine samples as it does.
    on_gpu = plan.gpu_layers != 0 and not shared
    runs = [("greedy", False), ("default", False)] + ([("default", True)] if on_gpu else [])
    results = []
    try:
        for sampling, on_backend in runs:
            name = f"{sampling}{', sampled on the GPU' if on_backend else ''}"
            name += ", through the engine" if shared else ""
            results.append(benchmark.measure(backend, name, args.prompt_tokens, args.generate,
                                             sampling, on_backend, args.repeats))  # fmt: skip
        info = backend.info()
    finally:
        backend.close()
    if args.json:
        doc = {"model": info.model, "placement": info.placement, "context": info.context_size,
               "plan": plan.to_dict(), "results": [asdict(r) for r in results],
               "through_engine": info.details.get("server") if shared else None}  # fmt: skip
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(
        _("{model} · {placement} · context {context:,}").format(
            model=info.model, placement=info.placement, context=info.context_size
        )
    )
    heads = (_("run"), _("prompt"), _("prefill t/s"), _("decode t/s"), _("TTFT s"))
    print(f"{heads[0]:34} {heads[1]:>7} {heads[2]:>12} {heads[3]:>11} {heads[4]:>8}")
    for r in results:
        print(f"{r.name:34} {r.prompt_tokens:7} {r.prefill_tokens_per_second:12.1f} "
              f"{r.decode_tokens_per_second:11.1f} {r.ttft_seconds:8.3f}")  # fmt: skip
    if plan.speed and not shared:  # the engine was planned by its own command line
        best = max(r.decode_tokens_per_second for r in results)
        verdict = (
            _("expected decode: {low:g}–{high:g} t/s ({basis}); this machine is within that range")
            if best >= plan.speed.low
            else _(
                "expected decode: {low:g}–{high:g} t/s ({basis}); this machine is BELOW that range"
            )
        )
        print(verdict.format(low=plan.speed.low, high=plan.speed.high, basis=plan.speed.basis))
    return 0
