"""How much VRAM and RAM a gpt-oss model takes in llama.cpp, for a given placement and context.

The model: weights are the file's bytes, split between GPU and CPU per tensor; llama.cpp always
keeps the input embedding on the CPU, and each layer whose experts stay in system RAM moves that
layer's expert tensors there. The KV cache holds every context token for the full-attention layers
but only a window's worth for the sliding-window ones (`swa_full=False`). On top come the compute
buffers (dominated by the logits of one micro-batch) and the CUDA context of each GPU. The constants
lean to the safe side of what was measured; `bench/gpu/` checks them against NVML on a real GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from gptoss_local.catalog import ModelSpec
from gptoss_local.units import MIB

CUDA_CONTEXT_BYTES = 512 * MIB  # per GPU, counted by NVML as used memory
COMPUTE_EXTRA_BYTES = 128 * MIB  # graph scratch beyond the logits
# Calibrated on an H200 (bench/results/gpu): once the first prompt has run, use grows by ~0.1 GiB
# (20b) to ~0.3 GiB (120b) over what was allocated at load, growing with the layer count.
FIRST_USE_BYTES = 64 * MIB
LAYER_OVERHEAD_BYTES = 10 * MIB
HOST_BUFFERS_BYTES = 256 * MIB  # CPU-side compute and staging buffers
PROCESS_BYTES = 512 * MIB  # the Python process, llama.cpp and the UI themselves
KV_CELL_PAD = 256  # llama.cpp rounds KV cache sizes up to this many cells
KV_TYPE_RATIO = {"f16": 1.0, "q8_0": 34 / 64}  # q8_0: 34 bytes per 32 values vs 64 for f16


@dataclass(frozen=True)
class Placement:
    """Where a model's parts go. `cpu_moe_layers` = layers whose experts stay in system RAM."""

    gpu_count: int  # 0 = everything on the CPU
    cpu_moe_layers: int
    context: int
    kv_type: str = "f16"
    n_ubatch: int = 512


@dataclass(frozen=True)
class Estimate:
    """Expected memory use in bytes; `vram` is summed over the GPUs used."""

    vram: int
    ram: int
    kv_cache: int
    weights_on_gpu: int
    weights_in_ram: int


def kv_cache_bytes(spec: ModelSpec, context: int, kv_type: str = "f16", n_ubatch: int = 512) -> int:
    """KV cache for `context` tokens: full-attention layers hold all, window layers a window."""
    shape = spec.shape
    per_layer_token = 2 * shape.kv_heads * shape.head_dim * 2  # K and V, f16
    full_layers = shape.kv_bytes_per_token // per_layer_token
    swa_layers = shape.layers - full_layers
    full_cells = _pad(context)
    swa_cells = min(full_cells, _pad(shape.sliding_window + n_ubatch))
    total = (full_layers * full_cells + swa_layers * swa_cells) * per_layer_token
    return int(total * KV_TYPE_RATIO[kv_type])


def compute_buffer_bytes(spec: ModelSpec, n_ubatch: int = 512, experts_on_gpu: bool = True) -> int:
    """One compute buffer: float32 logits of a micro-batch, the experts' intermediate results
    for each of its tokens, and graph scratch.

    The experts' part was fitted to NVML on an H200 (bench/results/gpu/experts-in-ram.txt): the
    buffer grew by 0.15 MiB per micro-batch token beyond the logits with some experts on the GPU
    and by 0.05 MiB with all of them in RAM; here 4 and 1 float32 vectors of the chosen experts'
    width (gpt-oss's experts are as wide as the model) per token, a little above each.
    """
    shape = spec.shape
    vectors = 4 if experts_on_gpu else 1
    experts = n_ubatch * shape.experts_used * shape.hidden * 4 * vectors
    return shape.vocab * n_ubatch * 4 + experts + COMPUTE_EXTRA_BYTES


def estimate(spec: ModelSpec, placement: Placement) -> Estimate:
    """Memory a model takes when loaded with `placement` and its context filled."""
    shape = spec.shape
    kv = kv_cache_bytes(spec, placement.context, placement.kv_type, placement.n_ubatch)
    layers_in_ram = min(max(placement.cpu_moe_layers, 0), shape.layers)
    experts_on_gpu = placement.gpu_count > 0 and layers_in_ram < shape.layers
    compute = compute_buffer_bytes(spec, placement.n_ubatch, experts_on_gpu)
    if placement.gpu_count == 0:
        ram = spec.total_bytes + kv + compute + HOST_BUFFERS_BYTES + PROCESS_BYTES
        return Estimate(
            vram=0, ram=ram, kv_cache=kv, weights_on_gpu=0, weights_in_ram=spec.total_bytes
        )
    in_ram = shape.token_embd_bytes + layers_in_ram * shape.expert_layer_bytes
    on_gpu = spec.total_bytes - in_ram
    per_gpu = CUDA_CONTEXT_BYTES + compute + FIRST_USE_BYTES
    vram = on_gpu + kv + placement.gpu_count * per_gpu + shape.layers * LAYER_OVERHEAD_BYTES
    ram = in_ram + HOST_BUFFERS_BYTES + PROCESS_BYTES
    return Estimate(vram=vram, ram=ram, kv_cache=kv, weights_on_gpu=on_gpu, weights_in_ram=in_ram)


def _pad(cells: int) -> int:
    return -(-cells // KV_CELL_PAD) * KV_CELL_PAD
