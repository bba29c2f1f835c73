"""The micro-batch: how many prompt tokens llama.cpp takes through the model in one step.

With experts in RAM (read into pinned host buffers), llama.cpp copies those experts to the GPU
once per micro-batch of a prompt, so a larger micro-batch reads prompts several times faster
(4,096-token prompt, 20b with 24 layers' experts in RAM, H200: 1,937 tokens/s at 512, 5,640 at
4,096); entirely on the GPU it gains ~13 %. It costs VRAM, about 1 MiB per token of micro-batch
(every token's logits and the experts' intermediates), which may push more experts into RAM and
so slow every decoded token.

The policy: context and layers in RAM are chosen at the smallest micro-batch first. Then, at the
same context, each larger micro-batch with the fewest layers in RAM that fit is weighed by the
time of a reference turn (`REFERENCE_PROMPT` new prompt tokens, `REFERENCE_REPLY` reply tokens):
the experts' copies over PCIe plus the decode time the speed model guesses; the shortest wins,
the larger micro-batch on a tie. The GPU's own compute is left out, being about the same for
every option. A plan entirely on the GPU stays there.
Measured: bench/results/gpu/experts-in-ram.txt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from gptoss_local.catalog import ModelSpec
from gptoss_local.plan.memory import Estimate, Placement
from gptoss_local.plan.speed import decode_seconds

SMALLEST = 512
MICRO_BATCHES = (SMALLEST, 1024, 2048, 4096)
REFERENCE_PROMPT = 4096  # a pasted file, or one step of a coding agent
REFERENCE_REPLY = 512
# Host-to-GPU copy rate of pinned memory, GB/s: a PCIe 4.0 x16 slot (the H200's PCIe 5.0 host
# copied 24 layers' experts per micro-batch at ~38 GB/s).
PCIE_GBS = 25.0


def widest(
    spec: ModelSpec,
    start: tuple[Placement, Estimate],
    fits: Callable[[Placement], Estimate | None],
    gpu_bandwidth_gbs: float | None,
    layers_fixed: bool,
) -> tuple[Placement, Estimate]:
    """The best micro-batch for `start`, a placement at the smallest one; more layers' experts
    may go to RAM for it unless `layers_fixed` or `start` has none there."""
    placement, _ = start
    if placement.gpu_count == 0:  # on the CPU a larger micro-batch only costs RAM
        return start
    stay = layers_fixed or placement.cpu_moe_layers == 0
    most_layers = placement.cpu_moe_layers if stay else spec.shape.layers
    best, best_seconds = start, turn_seconds(spec, gpu_bandwidth_gbs, placement)
    for ubatch in MICRO_BATCHES[1:]:
        for layers in range(placement.cpu_moe_layers, most_layers + 1):
            wider = replace(placement, cpu_moe_layers=layers, n_ubatch=ubatch)
            est = fits(wider)
            if est is None:
                continue
            seconds = turn_seconds(spec, gpu_bandwidth_gbs, wider)
            if seconds <= best_seconds:
                best, best_seconds = (wider, est), seconds
            break  # more layers in RAM at this micro-batch only cost more
    return best


def turn_seconds(spec: ModelSpec, gpu_bandwidth_gbs: float | None, placement: Placement) -> float:
    """What differs between placements in the reference turn's time: copying the RAM-kept
    experts to the GPU for each micro-batch of the prompt, and decoding the reply."""
    batches = -(-REFERENCE_PROMPT // placement.n_ubatch)
    copied = batches * placement.cpu_moe_layers * spec.shape.expert_layer_bytes
    decoding = REFERENCE_REPLY * decode_seconds(spec, gpu_bandwidth_gbs, placement.cpu_moe_layers)
    return copied / (PCIE_GBS * 1e9) + decoding
