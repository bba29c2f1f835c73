"""Loading a gpt-oss GGUF into llama.cpp exactly as a plan says, with failures explained."""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gptoss_local.backends import llama_native as native
from gptoss_local.backends.base import BackendError, LoadProgress, no_load_progress
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

    @classmethod
    def from_plan(cls, plan: Any) -> LoadSettings:
        """The settings of a `planner.Plan`.

        Experts kept in RAM beside a GPU are read into pinned host buffers ("none"), which the
        GPU takes whole for a prompt's batches: prefill of 4,096 tokens with 24 layers' experts
        in RAM went from 357 to 1,937 tokens/s at the same VRAM on an H200
        (bench/results/gpu/experts-in-ram.txt); decode moved within run-to-run noise.
        """
        experts_in_ram = plan.cpu_moe_layers > 0 and plan.gpu_layers != 0
        return cls(
            context=plan.context,
            gpu_layers=plan.gpu_layers,
            cpu_moe_layers=plan.cpu_moe_layers,
            kv_type=plan.kv_type,
            flash_attn=plan.flash_attn,
            n_batch=plan.n_batch,
            n_ubatch=plan.n_ubatch,
            load_mode="none" if experts_in_ram else "auto",
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
    threads = settings.threads or _physical_cores()
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
    return params, (overrides,)


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


def _physical_cores() -> int:
    import psutil

    return psutil.cpu_count(logical=False) or os.cpu_count() or 1


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
