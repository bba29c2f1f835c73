"""The hardware probe: every NVML failure mode gives a CPU plan's input, never an exception."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from fake_nvml import (
    DRIVER_NOT_LOADED,
    GPU_IS_LOST,
    LIBRARY_NOT_FOUND,
    NO_PERMISSION,
    NOT_SUPPORTED,
    UNKNOWN,
    FakeCard,
    FakeNvml,
)

from gptoss_local.hardware import machine as hardware
from gptoss_local.hardware.machine import classify, probe

MIB = 1 << 20


def rtx_4090(**kw) -> FakeCard:
    return FakeCard(
        "NVIDIA GeForce RTX 4090", 24_564, 23_400, bus_width=384, mem_clock_mhz=10_501, **kw
    )


def test_probe_reads_every_field_of_a_card() -> None:
    nvml = FakeNvml([rtx_4090()])
    hw = probe(nvml)
    assert hw.nvml_error is None and hw.problems == ()
    (gpu,) = hw.gpus
    assert gpu.name == "NVIDIA GeForce RTX 4090"
    assert (gpu.brand, gpu.gpu_class) == ("GeForce", "geforce")
    assert (gpu.total_vram, gpu.free_vram) == (24_564 * MIB, 23_400 * MIB)
    assert gpu.compute_capability == "8.9"
    assert gpu.memory_bandwidth_gbs == pytest.approx(1008, rel=0.01)
    assert (hw.driver_version, hw.cuda_driver_version) == ("580.95.05", "13.0")
    assert nvml.shutdowns == 1


def test_probe_reports_system_ram_cores_and_disk(isolated_home: Path) -> None:
    hw = probe(FakeNvml([]))
    assert 0 < hw.ram_available <= hw.ram_total
    assert 1 <= hw.cpu_cores <= hw.cpu_threads
    # The models folder does not exist yet: free space is read at its nearest existing parent.
    assert not isolated_home.exists()
    assert Path(hw.disk_path) in (isolated_home.parent, *isolated_home.parents)
    assert hw.disk_free == pytest.approx(shutil.disk_usage(hw.disk_path).free, rel=0.05)


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (LIBRARY_NOT_FOUND, "no NVIDIA driver is installed"),
        (DRIVER_NOT_LOADED, "not loaded"),
        (NO_PERMISSION, "no permission"),
        (UNKNOWN, "unknown error"),
        (GPU_IS_LOST, "NVML failed"),
    ],
)
def test_nvml_init_failures_give_no_gpus_and_a_reason(code: int, words: str) -> None:
    hw = probe(FakeNvml([rtx_4090()], init_error=code))
    assert hw.gpus == ()
    assert words in hw.nvml_error


def test_a_broken_driver_library_is_not_an_exception() -> None:
    hw = probe(FakeNvml([rtx_4090()], init_exception=OSError("libnvidia-ml.so.1: bad ELF")))
    assert hw.gpus == () and "bad ELF" in hw.nvml_error


def test_missing_bindings_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing():
        raise ImportError("No module named 'pynvml'")

    monkeypatch.setattr(hardware, "load_nvml", missing)
    hw = probe()
    assert hw.gpus == () and "nvidia-ml-py" in hw.nvml_error


def test_device_count_failure_after_init_still_shuts_nvml_down() -> None:
    nvml = FakeNvml([rtx_4090()], count_error=UNKNOWN)
    hw = probe(nvml)
    assert hw.gpus == () and hw.nvml_error
    assert nvml.shutdowns == 1


@pytest.mark.parametrize("what", ["handle", "name", "memory"])
def test_one_unreadable_gpu_is_left_out_with_a_note(what: str) -> None:
    broken = FakeCard("NVIDIA GeForce RTX 3060", 12_288, 11_000, fail={what: GPU_IS_LOST})
    hw = probe(FakeNvml([broken, rtx_4090()]))
    assert [g.index for g in hw.gpus] == [1]
    assert len(hw.problems) == 1 and "GPU 0" in hw.problems[0]


def test_optional_queries_that_are_not_supported_become_none() -> None:
    card = FakeCard("NVIDIA RTX A6000", 49_140, 48_000, brand=12, fail={"brand": NOT_SUPPORTED})
    card.fail["capability"] = NOT_SUPPORTED
    (gpu,) = probe(FakeNvml([card])).gpus
    assert gpu.brand == "unknown" and gpu.gpu_class == "workstation"
    assert gpu.compute_capability is None and gpu.memory_bandwidth_gbs is None


def test_bytes_from_old_bindings_are_decoded() -> None:
    card = rtx_4090()
    card.name = b"NVIDIA GeForce RTX 4090"  # type: ignore[assignment]
    hw = probe(FakeNvml([card], driver=b"535.54.03"))
    assert hw.gpus[0].name == "NVIDIA GeForce RTX 4090" and hw.driver_version == "535.54.03"


@pytest.mark.parametrize(
    ("brand", "name", "expected"),
    [
        (5, "NVIDIA GeForce RTX 4060 Ti", "geforce"),
        (6, "NVIDIA TITAN RTX", "geforce"),
        (13, "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "workstation"),
        (13, "NVIDIA RTX 6000 Ada Generation", "workstation"),
        (12, "NVIDIA RTX A6000", "workstation"),
        (1, "Quadro RTX 8000", "workstation"),
        (None, "NVIDIA RTX A4000", "workstation"),
        (14, "NVIDIA H200", "datacenter"),
        (2, "Tesla T4", "datacenter"),
        (None, "NVIDIA A100-SXM4-80GB", "datacenter"),
        (None, "NVIDIA L40S", "datacenter"),
        (None, "Some Future Card", "other"),
    ],
)
def test_gpu_classes(brand: int | None, name: str, expected: str) -> None:
    assert classify(brand, name) == expected


def test_real_probe_on_this_machine() -> None:
    """With the real NVML bindings: GPUs where a driver exists, a stated reason where not."""
    hw = probe()
    has_driver = os.path.exists("/dev/nvidiactl") or shutil.which("nvidia-smi") is not None
    if has_driver:
        assert hw.gpus, f"an NVIDIA driver is present but the probe found no GPU: {hw.nvml_error}"
        assert all(g.total_vram >= g.free_vram > 0 for g in hw.gpus)
    else:
        assert hw.gpus == () and hw.nvml_error
