"""Small ctypes helpers over llama-cpp-python's low-level bindings (`llama_cpp.llama_cpp`).

The high-level `Llama` class is not used: it copies full-vocabulary logits into Python per token,
cannot keep MoE experts in system RAM, and lets native logs reach the terminal.
"""

from __future__ import annotations

import collections
import ctypes
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gptoss_local.backends.llamacpp import runtime as llama_runtime

_LOG_LEVELS = {0: "NONE", 1: "DEBUG", 2: "INFO", 3: "WARN", 4: "ERROR", 5: "CONT"}
# llama.cpp's debug line for every token a chain attached to the context samples: dropped at once,
# as it would write (and flush) the log once per token, ~5 MB for a reply of 50,000 tokens.
_PER_TOKEN_LINE = b"llama_sampler_sample: Backend sampler selected token"
# One line per tensor in every layer below N: llama.cpp's own `--n-cpu-moe N` pattern.
EXPERT_PATTERN = r"blk\.{layer}\.ffn_(up|down|gate|gate_up)_(ch|)exps"
# The same tensors' weights only: their biases (a few KiB a layer) then stay on the GPU.
EXPERT_WEIGHTS_PATTERN = EXPERT_PATTERN + r"\.weight"
KV_TYPES = {"f16": 1, "q8_0": 8}  # ggml_type ids

_state_lock = threading.Lock()
_backend_ready = False


def lib() -> Any:
    """The low-level bindings module, imported on first use (it loads the native library).

    A build against NVIDIA's pip CUDA packages first gets their libraries loaded
    (`llama_runtime.prepare`). CUDA is told to number the cards in PCI bus order, as NVML
    does, unless the environment says otherwise (it reads this once, when it starts), so that
    numbers in CUDA_VISIBLE_DEVICES and llama.cpp's CUDA0, CUDA1 mean `doctor`'s cards.
    """
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    llama_runtime.prepare()
    import llama_cpp.llama_cpp as bindings

    return bindings


class NativeLog:
    """Receives llama.cpp and ggml log lines: appends them to a file, keeps the last ones.

    Installed process-wide with `llama_log_set`; the ctypes callback is kept alive here, since
    the library would call into freed memory otherwise.
    """

    def __init__(self, path: Path | None, keep: int = 400) -> None:
        self.recent: collections.deque[str] = collections.deque(maxlen=keep)
        self.count = 0  # lines received so far, for `since()`
        self.path: Path | None = None
        self._file: Any = None
        self.set_file(path)
        self._pending = ""
        bindings = lib()
        self._callback = bindings.llama_log_callback(self._on_log)
        bindings.llama_log_set(self._callback, ctypes.c_void_p())

    def _on_log(self, level: int, text: bytes | None, _user: Any) -> None:
        if text is not None and text.startswith(_PER_TOKEN_LINE):
            return
        chunk = (text or b"").decode("utf-8", "replace")
        self._pending += chunk
        if "\n" not in self._pending:
            return
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            tagged = f"[{_LOG_LEVELS.get(level, level)}] {line}"
            self.recent.append(tagged)
            self.count += 1
            if self._file:
                self._file.write(tagged + "\n")
        if self._file:
            self._file.flush()

    def set_file(self, path: Path | None) -> None:
        """Append to `path` from now on (None: keep lines in memory only)."""
        if self._file is not None:
            self._file.close()
        self.path = path
        self._file = path.open("a", encoding="utf-8", errors="replace") if path else None

    def since(self, mark: int) -> list[str]:
        """The lines received after `count` was `mark` (as many as are still kept)."""
        wanted = min(self.count - mark, len(self.recent))
        return list(self.recent)[len(self.recent) - wanted :] if wanted > 0 else []


_active_log: NativeLog | None = None


def route_logs(path: Path | None) -> NativeLog:
    """Send every native log line to `path` (and keep recent ones); never to the terminal."""
    global _active_log
    with _state_lock:
        if _active_log is None:
            _active_log = NativeLog(path)
        elif path is not None and path != _active_log.path:
            _active_log.set_file(path)
        return _active_log


def init_backend() -> None:
    """llama_backend_init, once per process."""
    global _backend_ready
    with _state_lock:
        if not _backend_ready:
            lib().llama_backend_init()
            _backend_ready = True


def system_info() -> str:
    """llama.cpp's build and CPU feature summary."""
    return lib().llama_print_system_info().decode(errors="replace")


class _BuftOverride(ctypes.Structure):
    # struct llama_model_tensor_buft_override {
    #     const char * pattern; ggml_backend_buffer_type_t buft; }
    _fields_ = [("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p)]


def cpu_buffer_type() -> int:
    """ggml's CPU buffer type, the same pointer llama.cpp's loader compares against."""
    function = _find_symbol("ggml_backend_cpu_buffer_type")
    function.restype = ctypes.c_void_p
    function.argtypes = []
    return int(function())


class _DeviceCaps(ctypes.Structure):
    _fields_ = [
        ("async_", ctypes.c_bool),
        ("host_buffer", ctypes.c_bool),
        ("buffer_from_host_ptr", ctypes.c_bool),
        ("events", ctypes.c_bool),
        ("mmap_support", ctypes.c_bool),
    ]


class _DeviceProps(ctypes.Structure):
    # struct ggml_backend_dev_props (ggml-backend.h), with room to spare for later fields.
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("description", ctypes.c_char_p),
        ("memory_free", ctypes.c_size_t),
        ("memory_total", ctypes.c_size_t),
        ("type", ctypes.c_int),
        ("device_id", ctypes.c_char_p),
        ("caps", _DeviceCaps),
        ("_spare", ctypes.c_char * 64),
    ]


GGML_DEVICE_GPU = 1  # enum ggml_backend_dev_type
_BUS_ID = re.compile(r"([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)")


@dataclass(frozen=True)
class Device:
    """One of ggml's GPU devices: its handle, name ("CUDA0") and PCI bus id, if it has one."""

    handle: int
    name: str
    bus_id: str | None


def gpu_devices() -> list[Device]:
    """ggml's discrete GPU devices, in its order (none with a CPU-only build)."""
    count = _function("ggml_backend_dev_count", ctypes.c_size_t, [])
    get = _function("ggml_backend_dev_get", ctypes.c_void_p, [ctypes.c_size_t])
    kind = _function("ggml_backend_dev_type", ctypes.c_int, [ctypes.c_void_p])
    props = _function(
        "ggml_backend_dev_get_props", None, [ctypes.c_void_p, ctypes.POINTER(_DeviceProps)]
    )
    found = []
    for index in range(int(count())):
        handle = get(index)
        if not handle or kind(handle) != GGML_DEVICE_GPU:
            continue
        about = _DeviceProps()
        props(handle, ctypes.byref(about))
        name = (about.name or b"").decode(errors="replace")
        bus_id = about.device_id.decode(errors="replace") if about.device_id else None
        found.append(Device(int(handle), name, bus_id))
    return found


def bus_key(bus_id: str | None) -> tuple[int, int, int, int] | None:
    """A PCI bus id as numbers, so that NVML's "00000000:01:00.0" and CUDA's "0000:01:00.0"
    compare equal; None when it is not one."""
    match = _BUS_ID.fullmatch(bus_id or "")
    if not match:
        return None
    domain, bus, device, function = (int(part, 16) for part in match.groups())
    return domain, bus, device, function


def device_list(handles: list[int]) -> ctypes.Array:
    """A NULL-terminated array of device handles for `llama_model_params.devices`; the caller
    keeps it alive until the model is loaded."""
    array = (ctypes.c_void_p * (len(handles) + 1))(*handles, None)
    return array


def _function(name: str, restype: Any, argtypes: list[Any]) -> Any:
    function = _find_symbol(name)
    function.restype = restype
    function.argtypes = argtypes
    return function


def _find_symbol(name: str) -> Any:
    """A ggml function: through libllama's handle (Linux and macOS search its dependencies),
    else from the ggml libraries beside it (Windows looks in one DLL only)."""
    bindings = lib()
    try:
        return getattr(bindings._lib, name)
    except AttributeError:
        pass
    folder = Path(bindings.__file__).parent / "lib"
    candidates = [
        sorted(folder.glob(pattern)) for pattern in ("*ggml-cpu*", "*ggml-base*", "*ggml.*")
    ]
    for candidate in [path for group in candidates for path in group]:
        try:
            return getattr(ctypes.CDLL(str(candidate)), name)
        except (OSError, AttributeError):
            continue
    raise RuntimeError(f"{name} not found in llama-cpp-python's libraries")


def expert_overrides(layers: int, biases_in_ram: bool = True) -> ctypes.Array | None:
    """A NULL-terminated override array keeping the experts of layers 0..layers-1 on the CPU,
    with their biases unless `biases_in_ram` is False.

    The caller must keep the array (and so the pattern strings) alive as long as the model.
    """
    if layers <= 0:
        return None
    array = (_BuftOverride * (layers + 1))()
    buft = cpu_buffer_type()
    pattern = EXPERT_PATTERN if biases_in_ram else EXPERT_WEIGHTS_PATTERN
    for layer in range(layers):
        array[layer].pattern = pattern.format(layer=layer).encode()
        array[layer].buft = buft
    array[layers].pattern = None
    array[layers].buft = None
    return array


def tokenize(vocab: Any, text: str, special: bool) -> list[int]:
    """Text to token ids; `special` lets control-token strings become control tokens."""
    bindings = lib()
    data = text.encode("utf-8")
    capacity = len(data) + 16
    for _ in range(2):
        buffer = (bindings.llama_token * capacity)()
        count = bindings.llama_tokenize(vocab, data, len(data), buffer, capacity, False, special)
        if count >= 0:
            return list(buffer[:count])
        capacity = -count
    raise RuntimeError("llama_tokenize kept asking for a larger buffer")


class PieceCache:
    """Token id → the bytes it renders to (control tokens as their text), memoised; and
    whether a token is a control token rather than text."""

    def __init__(self, vocab: Any) -> None:
        self._vocab = vocab
        self._buffer = ctypes.create_string_buffer(256)
        self._cache: dict[int, bytes] = {}
        self._controls: dict[int, bool] = {}
        bindings = lib()
        self._to_piece = bindings.llama_token_to_piece
        self._attr = bindings.llama_vocab_get_attr
        # llama.cpp marks Harmony's <|start|>, <|end|>, <|message|>, <|channel|> and
        # <|constrain|> USER_DEFINED (so they show in its own output), the others CONTROL.
        self._special = bindings.LLAMA_TOKEN_ATTR_CONTROL | bindings.LLAMA_TOKEN_ATTR_USER_DEFINED

    def copy(self) -> PieceCache:
        """A cache of its own for the same vocabulary (one is not shared between threads)."""
        return PieceCache(self._vocab)

    def is_control(self, token: int) -> bool:
        """Whether `token` is a control (or user-defined) token: a marker, never text."""
        found = self._controls.get(token)
        if found is None:
            found = self._controls[token] = bool(self._attr(self._vocab, token) & self._special)
        return found

    def __call__(self, token: int) -> bytes:
        piece = self._cache.get(token)
        if piece is None:
            size = self._to_piece(self._vocab, token, self._buffer, len(self._buffer), 0, True)
            if size < 0:
                self._buffer = ctypes.create_string_buffer(-size)
                size = self._to_piece(self._vocab, token, self._buffer, len(self._buffer), 0, True)
            piece = self._cache[token] = self._buffer.raw[:size]
        return piece


def model_meta(model: Any, key: str) -> str | None:
    """A metadata value of the loaded model as text, or None when the key is absent."""
    buffer = ctypes.create_string_buffer(512)
    size = lib().llama_model_meta_val_str(model, key.encode(), buffer, len(buffer))
    return buffer.value.decode("utf-8", "replace") if size >= 0 else None
