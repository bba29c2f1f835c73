"""What this PC has: NVIDIA GPUs through NVML, system RAM and cores through psutil, free disk.

`probe()` never raises on a machine without a GPU, a driver or NVML: it returns a `Hardware` with
no GPUs and `nvml_error` saying why, and the planner then plans for the CPU. The NVML module is
injectable so tests can describe any card.

NVML numbers the cards in PCI bus order and ignores `CUDA_VISIBLE_DEVICES`; CUDA numbers them
fastest first unless `CUDA_DEVICE_ORDER=PCI_BUS_ID`, which gptoss-local sets (where it is not
set) before llama.cpp starts CUDA (`backends.llamacpp.native.lib`). So a card's `index` here is
the number `--gpus` and `doctor` use, and numbers in `CUDA_VISIBLE_DEVICES` mean the same cards;
a card that variable hides is marked `cuda_visible=False` (the planner leaves it out). The
engine finds each planned card among llama.cpp's devices by its PCI bus id, never by number.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from gptoss_local import paths
from gptoss_local.i18n import N_, _, translate

# NVML brand codes (nvmlBrandType_t) that matter for choosing a model.
_BRAND_NAMES = {
    1: "Quadro", 2: "Tesla", 3: "NVS", 4: "GRID", 5: "GeForce", 6: "TITAN",
    12: "Quadro RTX", 13: "NVIDIA RTX", 14: "NVIDIA",
}  # fmt: skip
_WORKSTATION_BRANDS = {1, 12, 13}
_GEFORCE_BRANDS = {5, 6}
_DATACENTRE_BRANDS = {2, 4}
_DATACENTRE_NAME = re.compile(r"\b(Tesla|[ABGHL]\d{2,3}S?|GH200|GB200|B\d00|L4)\b")
_WORKSTATION_NAME = re.compile(r"\b(Quadro|RTX PRO|RTX A\d+|Ada Generation)\b")
_NVML_CLOCK_MEM = 2

# Why NVML could not start, by NVML error code, in words a user can act on.
_NVML_REASONS = {
    12: N_("no NVIDIA driver is installed: the NVML library was not found"),
    9: N_("the NVIDIA driver is installed but not loaded"),
    4: N_("no permission to query the NVIDIA driver"),
    2: N_("the NVIDIA driver rejected the query"),
    999: N_("the NVIDIA driver reported an unknown error"),
}


@dataclass(frozen=True)
class Gpu:
    """One NVIDIA GPU as NVML sees it. Memory in bytes."""

    index: int
    name: str
    brand: str
    gpu_class: str  # "geforce", "workstation", "datacenter" or "other"
    total_vram: int
    free_vram: int
    compute_capability: str | None = None
    memory_bandwidth_gbs: float | None = None
    pci_bus_id: str | None = None  # "00000000:01:00.0", as NVML writes it
    uuid: str | None = None  # "GPU-…"
    cuda_visible: bool = True  # False: CUDA_VISIBLE_DEVICES hides it from CUDA (and llama.cpp)


@dataclass(frozen=True)
class Hardware:
    """The probe's result. Memory and disk in bytes."""

    gpus: tuple[Gpu, ...]
    ram_total: int
    ram_available: int
    cpu_cores: int
    cpu_threads: int
    disk_path: str
    disk_free: int
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    nvml_error: str | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)


def classify(brand_code: int | None, name: str) -> str:
    """GPU class from NVML's brand code, falling back to the marketing name."""
    if "GeForce" in name or "TITAN" in name or brand_code in _GEFORCE_BRANDS:
        return "geforce"
    if _WORKSTATION_NAME.search(name) or brand_code in _WORKSTATION_BRANDS:
        return "workstation"
    if _DATACENTRE_NAME.search(name) or brand_code in _DATACENTRE_BRANDS:
        return "datacenter"
    return "other"


def load_nvml() -> Any:
    """Import the NVML bindings (from nvidia-ml-py); ImportError when missing."""
    import pynvml

    return pynvml


def probe(
    nvml: Any = None, models_path: Path | None = None, environ: Mapping[str, str] | None = None
) -> Hardware:
    """Look at GPUs, RAM, cores and disk. Never raises for missing GPUs or drivers.

    Args:
        nvml: an object with pynvml's functions; None loads the real module.
        models_path: where models live (for free disk); default from `paths`.
        environ: the environment whose CUDA_VISIBLE_DEVICES counts (default: this process's).
    """
    gpus, versions, error, problems = _probe_gpus(nvml)
    visible = cuda_visible(os.environ if environ is None else environ, gpus)
    gpus = [replace(gpu, cuda_visible=gpu.index in visible) for gpu in gpus]
    ram_total, ram_available, cores, threads = _probe_system()
    disk_path = paths.existing_ancestor(models_path or paths.models_dir())
    return Hardware(
        gpus=tuple(gpus),
        ram_total=ram_total,
        ram_available=ram_available,
        cpu_cores=cores,
        cpu_threads=threads,
        disk_path=str(disk_path),
        disk_free=shutil.disk_usage(disk_path).free,
        driver_version=versions[0],
        cuda_driver_version=versions[1],
        nvml_error=error,
        problems=tuple(problems),
    )


def cuda_visible(environ: Mapping[str, str], gpus: list[Gpu]) -> set[int]:
    """The indexes of the cards CUDA may use under `CUDA_VISIBLE_DEVICES`: all when it is not
    set; else those it lists by number (PCI bus order, see above) or by UUID (a prefix is
    enough, as for CUDA), read as CUDA reads it, up to the first entry that names no card."""
    listed = environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None or "MIG-" in listed:  # MIG instances: not a card NVML lists here
        return {gpu.index for gpu in gpus}
    visible: set[int] = set()
    for entry in (part.strip() for part in listed.split(",")):
        found = [
            gpu.index
            for gpu in gpus
            if (entry.isdigit() and gpu.index == int(entry))
            or (entry.startswith("GPU-") and gpu.uuid and gpu.uuid.startswith(entry))
        ]
        if len(found) != 1 or found[0] in visible:
            break  # CUDA stops at an entry it cannot use
        visible.add(found[0])
    return visible


def _probe_system() -> tuple[int, int, int, int]:
    import psutil

    memory = psutil.virtual_memory()
    threads = psutil.cpu_count(logical=True) or 1
    cores = psutil.cpu_count(logical=False) or threads
    return memory.total, memory.available, cores, threads


def _probe_gpus(
    nvml: Any,
) -> tuple[list[Gpu], tuple[str | None, str | None], str | None, list[str]]:
    no_versions: tuple[str | None, str | None] = (None, None)
    try:
        nvml = nvml if nvml is not None else load_nvml()
    except ImportError:
        return [], no_versions, "the NVML bindings (nvidia-ml-py) are not installed", []
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError subclasses, OSError from a broken driver library
        return [], no_versions, _nvml_reason(exc), []
    try:
        versions = (_driver_version(nvml), _cuda_version(nvml))
        count = nvml.nvmlDeviceGetCount()
        gpus: list[Gpu] = []
        problems: list[str] = []
        for index in range(count):
            try:
                gpus.append(_probe_gpu(nvml, index))
            except Exception as exc:
                problems.append(
                    _("GPU {index} could not be read and is left out: {reason}").format(
                        index=index, reason=_nvml_reason(exc)
                    )
                )
        return gpus, versions, None, problems
    except Exception as exc:
        return [], no_versions, _nvml_reason(exc), []
    finally:
        _quietly(nvml.nvmlShutdown)


def _probe_gpu(nvml: Any, index: int) -> Gpu:
    handle = nvml.nvmlDeviceGetHandleByIndex(index)
    name = _text(nvml.nvmlDeviceGetName(handle))
    memory = nvml.nvmlDeviceGetMemoryInfo(handle)
    brand_code = _quietly(nvml.nvmlDeviceGetBrand, handle)
    capability = _quietly(nvml.nvmlDeviceGetCudaComputeCapability, handle)
    return Gpu(
        index=index,
        name=name,
        brand=_BRAND_NAMES.get(brand_code, "unknown") if brand_code is not None else "unknown",
        gpu_class=classify(brand_code, name),
        total_vram=int(memory.total),
        free_vram=int(memory.free),
        compute_capability=f"{capability[0]}.{capability[1]}" if capability else None,
        memory_bandwidth_gbs=_bandwidth(nvml, handle),
        pci_bus_id=_pci_bus_id(nvml, handle),
        uuid=_optional_text(nvml, "nvmlDeviceGetUUID", handle),
    )


def _pci_bus_id(nvml: Any, handle: Any) -> str | None:
    info = _optional(nvml, "nvmlDeviceGetPciInfo", handle)
    bus_id = getattr(info, "busId", None) if info is not None else None
    return _text(bus_id) if bus_id else None


def _optional_text(nvml: Any, name: str, *args: Any) -> str | None:
    value = _optional(nvml, name, *args)
    return _text(value) if value else None


def _optional(nvml: Any, name: str, *args: Any) -> Any:
    """An NVML query the bindings (or a test's stand-in) may lack; None when absent or failing."""
    function = getattr(nvml, name, None)
    return _quietly(function, *args) if function is not None else None


def _bandwidth(nvml: Any, handle: Any) -> float | None:
    """Peak memory bandwidth: bus width × memory clock × 2 (double data rate), in GB/s."""
    width = _quietly(nvml.nvmlDeviceGetMemoryBusWidth, handle)
    clock_mhz = _quietly(nvml.nvmlDeviceGetMaxClockInfo, handle, _NVML_CLOCK_MEM)
    if not width or not clock_mhz:
        return None
    return round(width / 8 * clock_mhz * 2 / 1000, 1)


def _driver_version(nvml: Any) -> str | None:
    version = _quietly(nvml.nvmlSystemGetDriverVersion)
    return _text(version) if version else None


def _cuda_version(nvml: Any) -> str | None:
    version = _quietly(nvml.nvmlSystemGetCudaDriverVersion)
    return f"{version // 1000}.{version % 1000 // 10}" if isinstance(version, int) else None


def _nvml_reason(exc: Exception) -> str:
    code = getattr(exc, "value", None)
    if code in _NVML_REASONS:
        return translate(_NVML_REASONS[code])
    return _("NVML failed: {error}").format(error=exc or type(exc).__name__)


def _quietly(function: Any, *args: Any) -> Any:
    """Call an optional NVML query; None when the card or driver does not support it."""
    try:
        return function(*args)
    except Exception:
        return None


def _text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
