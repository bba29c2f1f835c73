"""The few llama.cpp functions an EAGLE-3 drafter needs that llama-cpp-python does not bind.

They live in llama.cpp's `llama-ext.h`, declared without `extern "C"`, so the library exports
them under C++ mangled names: the Itanium form (Linux, macOS) and the MSVC form (Windows) are
both tried. What they do:
- `llama_set_embeddings_layer_inp(ctx, layer, on)`: after each decode, keep the input of
  `layer` (the hidden state after the layers below it) for every token of the batch;
- `llama_get_embeddings_layer_inp(ctx, layer)`: those rows, `n_embd` floats per token;
- `llama_model_target_layer_ids(model)` / `_n`: the target layers an EAGLE-3 head reads;
- `llama_set_embeddings_nextn(ctx, on, masked)` / `llama_get_embeddings_nextn(_ith)`: the
  head's own pre-norm hidden state (its encoder's output, or the state after its layer).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Iterable
from typing import Any

from gptoss_local.backends.llamacpp import native

_CONTEXT = ctypes.c_void_p
_MODEL = ctypes.c_void_p
_FLOATS = ctypes.POINTER(ctypes.c_float)

# name -> (mangled names to try, argument types, result type)
_SIGNATURES: dict[str, tuple[tuple[str, ...], list[Any], Any]] = {
    "llama_set_embeddings_layer_inp": (
        (
            "_Z30llama_set_embeddings_layer_inpP13llama_contextjb",
            "?llama_set_embeddings_layer_inp@@YAXPEAUllama_context@@I_N@Z",
        ),
        [_CONTEXT, ctypes.c_uint32, ctypes.c_bool],
        None,
    ),
    "llama_get_embeddings_layer_inp": (
        (
            "_Z30llama_get_embeddings_layer_inpP13llama_contextj",
            "?llama_get_embeddings_layer_inp@@YAPEAMPEAUllama_context@@I@Z",
        ),
        [_CONTEXT, ctypes.c_uint32],
        _FLOATS,
    ),
    "llama_model_target_layer_ids": (
        (
            "_Z28llama_model_target_layer_idsPK11llama_model",
            "?llama_model_target_layer_ids@@YAPEBHPEBUllama_model@@@Z",
        ),
        [_MODEL],
        ctypes.POINTER(ctypes.c_int32),
    ),
    "llama_model_target_layer_ids_n": (
        (
            "_Z30llama_model_target_layer_ids_nPK11llama_model",
            "?llama_model_target_layer_ids_n@@YAIPEBUllama_model@@@Z",
        ),
        [_MODEL],
        ctypes.c_uint32,
    ),
    "llama_set_embeddings_nextn": (
        (
            "_Z26llama_set_embeddings_nextnP13llama_contextbb",
            "?llama_set_embeddings_nextn@@YAXPEAUllama_context@@_N1@Z",
        ),
        [_CONTEXT, ctypes.c_bool, ctypes.c_bool],
        None,
    ),
    "llama_get_embeddings_nextn": (
        (
            "_Z26llama_get_embeddings_nextnP13llama_context",
            "?llama_get_embeddings_nextn@@YAPEAMPEAUllama_context@@@Z",
        ),
        [_CONTEXT],
        _FLOATS,
    ),
    "llama_get_embeddings_nextn_ith": (
        (
            "_Z30llama_get_embeddings_nextn_ithP13llama_contexti",
            "?llama_get_embeddings_nextn_ith@@YAPEAMPEAUllama_context@@H@Z",
        ),
        [_CONTEXT, ctypes.c_int32],
        _FLOATS,
    ),
}


class MissingFunction(RuntimeError):
    """This build of llama.cpp lacks a function EAGLE-3 drafting needs."""


def _lookup(library: Any, names: Iterable[str]) -> Any:
    for name in names:
        try:
            return getattr(library, name)
        except AttributeError:
            continue
    return None


@functools.cache
def function(name: str) -> Any:
    """The named extension function, typed; raises `MissingFunction` when the library has it
    under none of the names tried."""
    names, argtypes, restype = _SIGNATURES[name]
    found = _lookup(native.lib()._lib, names)
    if found is None:
        raise MissingFunction(name)
    found.argtypes = argtypes
    found.restype = restype
    return found


def available() -> bool:
    """Whether every function is there."""
    try:
        for name in _SIGNATURES:
            function(name)
    except MissingFunction:
        return False
    return True


def target_layers(model: Any) -> list[int]:
    """The target model's layers an EAGLE-3 head reads ([] for a model that is not one)."""
    count = int(function("llama_model_target_layer_ids_n")(model))
    ids = function("llama_model_target_layer_ids")(model)
    return [int(ids[i]) for i in range(count)] if count and ids else []
