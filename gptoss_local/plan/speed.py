"""Expected decode speed (tokens/s) for a placement: published figures where known, else physics.

Decode at batch 1 is bound by memory bandwidth: every token reads the active weights once. With
experts in system RAM, the CPU's share of those reads goes at RAM speed, which dominates.
"""

from __future__ import annotations

from dataclasses import dataclass

from gptoss_local.catalog import Catalog, ModelSpec
from gptoss_local.hardware.machine import Gpu
from gptoss_local.i18n import _

# Fraction of peak GPU bandwidth llama.cpp decode reaches (published figures give 0.5-0.7).
GPU_EFFICIENCY = (0.45, 0.70)
# Effective RAM bandwidth for expert matmuls on the CPU, GB/s: dual-channel DDR4 to fast DDR5.
RAM_GBS = (15.0, 60.0)
# Per-token overheads (kernel launches, sampling) bound decode whatever the bandwidth: the fastest
# published single-stream gpt-oss figures are just under this.
SPEED_CAP = 400.0
# A GeForce RTX of the middle (RTX 4070: 504 GB/s), for cards NVML and the catalog cannot tell.
TYPICAL_GPU_GBS = 500.0


@dataclass(frozen=True)
class SpeedRange:
    """Decode tokens/s, low to high, and what the numbers rest on (`basis`, in the user's
    language: only people read it)."""

    low: float
    high: float
    basis: str


def decode_speed(
    spec: ModelSpec, catalog: Catalog, gpus: tuple[Gpu, ...], cpu_moe_layers: int
) -> SpeedRange | None:
    """Expected decode speed at short context; None when nothing is known to base it on."""
    if not gpus:
        basis = _("rough estimate from RAM speed")
        return _ram_bound(spec.shape.decode_bytes_per_token, 0.0, basis)
    known = [catalog.known_gpu(gpu.name) for gpu in gpus]
    bandwidths = [
        g.memory_bandwidth_gbs or (k.bandwidth_gbs if k else None)
        for g, k in zip(gpus, known, strict=True)
    ]
    first = known[0]
    if cpu_moe_layers == 0 and len(gpus) == 1 and first and spec.name in first.decode:
        low, high = first.decode[spec.name]
        basis = _("published llama.cpp figures for the {gpu}").format(gpu=first.match)
        return SpeedRange(low, high, basis)
    if any(bw is None for bw in bandwidths):
        return None
    slowest = min(bw for bw in bandwidths if bw is not None)
    cpu_bytes = _cpu_bytes_per_token(spec, cpu_moe_layers)
    gpu_bytes = spec.shape.decode_bytes_per_token - cpu_bytes
    if cpu_moe_layers == 0:
        ceiling = slowest * 1e9 / gpu_bytes
        high = min(ceiling * GPU_EFFICIENCY[1], SPEED_CAP)
        low = min(ceiling * GPU_EFFICIENCY[0], high * 0.75)
        basis = _("estimate from {bandwidth:g} GB/s GPU memory bandwidth").format(bandwidth=slowest)
        return SpeedRange(round(low), round(high), basis)
    gpu_seconds = gpu_bytes / (slowest * 1e9 * GPU_EFFICIENCY[1])
    basis = _("rough estimate: depends on RAM speed and CPU cores")
    return _ram_bound(cpu_bytes, gpu_seconds, basis)


def _cpu_bytes_per_token(spec: ModelSpec, cpu_moe_layers: int) -> float:
    shape = spec.shape
    return cpu_moe_layers * shape.expert_layer_bytes * shape.experts_used / shape.experts


def _ram_bound(cpu_bytes: float, gpu_seconds: float, basis: str) -> SpeedRange:
    slow = 1 / (gpu_seconds + cpu_bytes / (RAM_GBS[0] * 1e9))
    fast = min(1 / (gpu_seconds + cpu_bytes / (RAM_GBS[1] * 1e9)), SPEED_CAP)
    return SpeedRange(round(min(slow, fast), 1), round(fast, 1), basis)


def decode_seconds(spec: ModelSpec, gpu_bandwidth_gbs: float | None, cpu_moe_layers: int) -> float:
    """A middle guess of one decoded token's time with experts of `cpu_moe_layers` layers in RAM,
    for comparing placements of the same model on the same machine (not for showing)."""
    gpu_gbs = (gpu_bandwidth_gbs or TYPICAL_GPU_GBS) * sum(GPU_EFFICIENCY) / 2
    ram_gbs = (RAM_GBS[0] * RAM_GBS[1]) ** 0.5
    cpu_bytes = _cpu_bytes_per_token(spec, cpu_moe_layers)
    gpu_bytes = spec.shape.decode_bytes_per_token - cpu_bytes
    return gpu_bytes / (gpu_gbs * 1e9) + cpu_bytes / (ram_gbs * 1e9)
