"""The memory estimate against VRAM measured with NVML on a real GPU, and its building blocks."""

from __future__ import annotations

import pytest

from gptoss_local import catalog, memory
from gptoss_local.memory import MIB, Placement

# NVML-measured VRAM of the 20b shape loaded by llama.cpp (CUDA, H200, 4,096-token context,
# ubatch 512, flash attention), by layers whose experts stayed in system RAM.
MEASURED_20B_4K_MIB = {0: 12_003, 8: 8_807, 24: 2_291}


@pytest.mark.parametrize(("layers", "measured_mib"), MEASURED_20B_4K_MIB.items())
def test_estimate_is_within_ten_percent_and_on_the_safe_side(
    layers: int, measured_mib: int
) -> None:
    spec = catalog.load().model("20b")
    est = memory.estimate(spec, Placement(gpu_count=1, cpu_moe_layers=layers, context=4_096))
    assert measured_mib * MIB <= est.vram <= measured_mib * MIB * 1.10


def test_kv_cache_full_layers_take_every_token_and_window_layers_a_window() -> None:
    spec = catalog.load().model("20b")
    small, large = (memory.kv_cache_bytes(spec, n) for n in (4_096, 131_072))
    # Growth comes from the 12 full-attention layers alone: 24 KiB per token.
    assert large - small == (131_072 - 4_096) * 24 * 1024
    assert memory.kv_cache_bytes(spec, 131_072, "q8_0") < large * 0.54


def test_manifest_shapes_agree_with_the_architecture() -> None:
    for spec in catalog.load().models:
        shape = spec.shape
        full_layers = shape.layers // 2  # odd layers attend fully, even ones use the window
        assert shape.kv_bytes_per_token == full_layers * 2 * shape.kv_heads * shape.head_dim * 2
        expert_tensor = shape.experts * shape.hidden * shape.hidden * 17 // 32  # MXFP4
        biases = 3 * shape.experts * shape.hidden * 4
        assert shape.expert_layer_bytes == 3 * expert_tensor + biases
        assert shape.token_embd_bytes == shape.vocab * shape.hidden * 34 // 32  # Q8_0


def test_cpu_placement_keeps_everything_in_ram() -> None:
    spec = catalog.load().model("20b")
    est = memory.estimate(spec, Placement(gpu_count=0, cpu_moe_layers=0, context=16_384))
    assert est.vram == 0 and est.ram > spec.total_bytes


def test_each_offloaded_layer_moves_one_layer_of_experts() -> None:
    spec = catalog.load().model("120b")
    a, b = (memory.estimate(spec, Placement(1, n, 16_384)) for n in (10, 11))
    assert a.vram - b.vram == spec.shape.expert_layer_bytes
    assert b.ram - a.ram == spec.shape.expert_layer_bytes
