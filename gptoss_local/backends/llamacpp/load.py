"""Loading a gpt-oss GGUF into llama.cpp exactly as a plan says, with failures explained."""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gptoss_local.backends.base import BackendError, LoadProgress, no_load_progress
from gptoss_local.backends.llamacpp import native
from gptoss_local.i18n import _

LoadMode = Literal["auto", "none", "mmap"]
# llama.h's enum llama_load_mode.
LOAD_MODES: dict[str, int] = {"auto": -1, "none": 0, "mmap": 1}
_OOM = re.compile(
    r"out of memory|failed to allocate|cudaMalloc|unable to allocate|ErrorOutOfDeviceMemory", re.I
)


@dataclass(frozen=True)
class LoadSettings:
    """What to load and where; mirrors the planner's `Plan`."""

    context: int = 8192
    gpu_layers: int = -1  # -1: all layers on the GPU(s); 0: CPU only
    cpu_moe_layers: int = 0
    kv_type: str = "f16"
    flash_attn: bool = True
    n_batch: int = 2048
    n_ubatch: int = 512
    threads: int | None = None  # None: the physical core count
    # "auto": llama.cpp maps the file where the GPU allows it; "none": the weights are read into
    # memory, and experts kept in RAM land in pinned host buffers that the GPU can take in
    # large batches (llama-bench --load-mode none); "mmap": always mapped.
    load_mode: LoadMode = "auto"
    expert_bias_on_gpu: bool = False  # biases of experts kept in RAM stay on the GPU
    sequences: int = 1  # replies decoded together (`serve --parallel`), sharing the context
    draft_model: str | None = None  # an EAGLE-3 head drafting for the model (one sequence only)
    # The cards to load onto, by PCI bus id (NVML's), in llama.cpp's order; empty: every GPU
    # llama.cpp sees. Found among llama.cpp's devices by bus id, whatever CUDA numbers them.
    devices: tuple[str, ...] = ()
    # Several cards: slots (layers, then the output layer) per card, in `devices` order;
    # llama.cpp's layer split then places exactly these (`plan.split`).
    tensor_split: tuple[int, ...] = ()

    @classmethod
    def from_plan(cls, plan: Any) -> LoadSettings:
        """The settings of a `planner.Plan`.

        Experts kept in RAM beside a GPU are read into pinned host buffers ("none"), which the
        GPU takes whole for a prompt's batches: prefill of 4,096 tokens with 24 layers' experts
        in RAM went from 357 to 1,937 tokens/s at the same VRAM on an H200
        (bench/results/gpu/experts-in-ram.txt); decode moved within run-to-run noise.
        """
        experts_in_ram = plan.cpu_moe_layers > 0 and plan.gpu_layers != 0
        bus_ids = tuple(card.pci_bus_id for card in plan.cards)
        # One card is named too: one card of several must be passed as a device list, or
        # llama.cpp spreads the model over every card it sees, whatever the plan chose.
        on_gpu = plan.gpu_layers != 0 and bool(bus_ids) and None not in bus_ids
        return cls(
            context=plan.context,
            gpu_layers=plan.gpu_layers,
            cpu_moe_layers=plan.cpu_moe_layers,
            kv_type=plan.kv_type,
            flash_attn=plan.flash_attn,
            n_batch=plan.n_batch,
            n_ubatch=plan.n_ubatch,
            load_mode="none" if experts_in_ram else "auto",
            devices=tuple(b for b in bus_ids if b is not None) if on_gpu else (),
            tensor_split=plan.tensor_split if plan.gpu_layers != 0 else (),
        )


@dataclass
class Loaded:
    """Native handles of a loaded model; `keepalive` must outlive `model`."""

    model: Any
    context: Any
    vocab: Any
    keepalive: tuple[Any, ...]
    threads: int


def load(
    path: Path,
    settings: LoadSettings,
    log: native.NativeLog,
    progress: LoadProgress = no_load_progress,
) -> Loaded:
    """Load model and context; raises BackendError with the reason and what to do.

    `progress` hears how much of the weights is loaded; returning False aborts the load
    (kind "aborted").
    """
    bindings = native.lib()
    native.init_backend()
    mparams, keepalive = _model_params(settings)
    aborted = False

    def report(fraction: float, _user_data: Any) -> bool:
        nonlocal aborted
        try:
            go_on = progress(min(max(fraction, 0.0), 1.0), _("loading the weights"))
        except Exception:  # an exception must not cross into C; treat it as "stop"
            go_on = False
        aborted = aborted or not go_on
        return bool(go_on)

    callback = bindings.llama_progress_callback(report)
    mparams.progress_callback = callback
    mark = log.count
    model = bindings.llama_model_load_from_file(str(path).encode(), mparams)
    if not model:
        if aborted:
            raise BackendError(
                _("loading {name} was stopped").format(name=path.name), kind="aborted"
            )
        what = _("llama.cpp could not load {name}").format(name=path.name)
        raise _load_error(what, log.since(mark))
    keepalive += (callback,)
    threads = settings.threads or default_threads()
    cparams = _context_params(settings, threads)
    progress(
        1.0, _("making room for {context:,} tokens of context").format(context=settings.context)
    )
    mark = log.count
    context = bindings.llama_init_from_model(model, cparams)
    if not context:
        bindings.llama_model_free(model)
        what = _("llama.cpp could not create a {context:,}-token context").format(
            context=settings.context
        )
        raise _load_error(what, log.since(mark))
    vocab = bindings.llama_model_get_vocab(model)
    return Loaded(model, context, vocab, keepalive, threads)


def _model_params(settings: LoadSettings) -> tuple[Any, tuple[Any, ...]]:
    bindings = native.lib()
    params = bindings.llama_model_default_params()
    params.n_gpu_layers = 999 if settings.gpu_layers < 0 else settings.gpu_layers
    # This llama.cpp has `load_mode` in place of `use_mmap` (an attribute of that name would be
    # set on the Python object alone and change nothing).
    params.load_mode = LOAD_MODES[settings.load_mode]
    # ggml's AMX matrix kernels crash on gpt-oss's Q8_0 tensors (llama.cpp#20824): on CPUs with
    # AMX, skip the CPU's extra (repacked) buffer types.
    if "AMX_INT8 = 1" in native.system_info():
        params.use_extra_bufts = False
    overrides = None
    if settings.gpu_layers:
        in_ram = not settings.expert_bias_on_gpu
        overrides = native.expert_overrides(settings.cpu_moe_layers, biases_in_ram=in_ram)
    if overrides is not None:
        params.tensor_buft_overrides = ctypes.cast(overrides, ctypes.c_void_p)
    keep: tuple[Any, ...] = (overrides,)
    if settings.gpu_layers:
        keep += _place_on_cards(params, settings)
    return params, keep


def _place_on_cards(params: Any, settings: LoadSettings) -> tuple[Any, ...]:
    """The planned cards as llama.cpp's devices, and with several the layer split; returns
    what must stay alive until the model is loaded. Split mode "layer": each card a run of
    whole layers and its KV cache (`main_gpu` only matters to the other modes, and is the
    first card)."""
    bindings = native.lib()
    keep: tuple[Any, ...] = ()
    if settings.devices:
        devices = _devices(settings.devices)
        if devices is not None:
            params.devices = ctypes.cast(devices, ctypes.c_void_p)
            keep += (devices,)
    if len(settings.tensor_split) > 1:
        room = int(bindings.llama_max_devices())
        if len(settings.tensor_split) > room:
            raise BackendError(
                _("this llama.cpp splits a model over at most {most} GPUs, not {count}").format(
                    most=room, count=len(settings.tensor_split)
                ),
                kind="load_failed",
            )
        split = (ctypes.c_float * room)(*settings.tensor_split)
        params.tensor_split = split
        keep += (split,)
    params.split_mode = bindings.LLAMA_SPLIT_MODE_LAYER
    params.main_gpu = 0
    return keep


def _devices(bus_ids: tuple[str, ...]) -> ctypes.Array | None:
    """llama.cpp's devices for the planned cards, in the plan's order; None where llama.cpp
    has no GPU at all (a CPU-only build loads on the CPU, as `doctor` warns), or sees one card
    and the plan one (llama.cpp then picks that card by itself).

    Raises:
        BackendError: a planned card is not among llama.cpp's devices (CUDA_VISIBLE_DEVICES
            hides it, or CUDA and NVML disagree).
    """
    found = native.gpu_devices()
    if not found:
        return None
    if len(bus_ids) == 1 and len(found) == 1:
        # The one card, whatever its id says, without a list: llama.cpp picks it by itself.
        # (A one-card list loads the same; the crash once seen with one was a build carrying
        # its own static libstdc++, bench/results/gpu/devices-list-libstdcxx.txt.)
        return None
    by_bus = {native.bus_key(device.bus_id): device for device in found}
    handles = []
    for bus_id in bus_ids:
        device = by_bus.get(native.bus_key(bus_id))
        if device is None:
            seen = ", ".join(f"{d.name} ({d.bus_id or '?'})" for d in found)
            raise BackendError(
                _(
                    "the planned GPU at PCI bus {bus_id} is not among llama.cpp's devices ({seen})"
                ).format(bus_id=bus_id, seen=seen),
                hint=_(
                    "CUDA_VISIBLE_DEVICES may hide it: choose visible cards with --gpus, or "
                    "unset CUDA_VISIBLE_DEVICES."
                ),
                kind="load_failed",
            )
        handles.append(device.handle)
    return native.device_list(handles)


def _context_params(settings: LoadSettings, threads: int) -> Any:
    bindings = native.lib()
    params = bindings.llama_context_default_params()
    params.n_ctx = settings.context
    params.n_batch = settings.n_batch
    params.n_ubatch = settings.n_ubatch
    params.n_seq_max = settings.sequences
    if settings.sequences > 1:
        params.kv_unified = True  # one pool of cells: any sequence may use the whole context
    params.n_threads = threads
    params.n_threads_batch = threads
    params.flash_attn_type = (
        bindings.LLAMA_FLASH_ATTN_TYPE_ENABLED
        if settings.flash_attn
        else bindings.LLAMA_FLASH_ATTN_TYPE_AUTO
    )
    params.swa_full = False  # sliding-window layers keep only a window of cells
    params.type_k = params.type_v = native.KV_TYPES[settings.kv_type]
    params.no_perf = True
    return params


def default_threads() -> int:
    """llama.cpp's threads when none are asked for: the physical cores (llama-bench's and
    llama-server's default too), but no more than the CPUs this process may run on (`taskset`,
    a container's cpuset): a thread more than those waits its turn at every barrier of every
    step (llama-bench's tg on one allowed CPU: 0.4-0.8 of one thread's speed with two)."""
    import psutil

    cores = psutil.cpu_count(logical=False) or os.cpu_count() or 1
    return max(1, min(cores, _allowed_cpus()))


def _allowed_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform (macOS, Windows)
        return os.cpu_count() or 1


def _load_error(what: str, lines: list[str]) -> BackendError:
    errors = [line.split("] ", 1)[-1].strip() for line in lines if line.startswith("[ERROR]")]
    # The first error says why; the ones after it only say that loading failed.
    detail = errors[0] if errors else _("no reason was logged (see the log file)")
    detail = detail.removeprefix("llama_model_load: error loading model: ")
    if any(_OOM.search(line) for line in lines):
        return BackendError(
            _("{what}: not enough memory ({detail}).").format(what=what, detail=detail),
            hint=_(
                "Keep more layers' experts in system RAM (--cpu-moe N), choose a smaller "
                "--context, or close programs using the GPU; `gptoss-local doctor` shows a plan "
                "that fits."
            ),
            kind="out_of_memory",
        )
    return BackendError(f"{what}: {detail}.", kind="load_failed")
