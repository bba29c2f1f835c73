"""After a rebuild: does the new llama-cpp-python load, and does it offload to the GPU?

The check runs in a fresh interpreter of the rebuilt environment (this process may hold the old
library), through the same runtime lookup the engine uses (`backends.llamacpp.runtime`). Without an
NVIDIA GPU it says it could not check, rather than failing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gptoss_local
from gptoss_local.hardware.machine import Hardware
from gptoss_local.i18n import _

# Run as `python -c SCRIPT PACKAGE_PARENT`; prints one JSON line.
SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
out = {"loaded": False}
try:
    from gptoss_local.backends.llamacpp import runtime as llama_runtime
    prepared = llama_runtime.prepare()
    out["preloaded"] = prepared.loaded + prepared.dll_dirs
    import llama_cpp.llama_cpp as bindings
    out["loaded"] = True
    out["gpu_offload"] = bool(bindings.llama_supports_gpu_offload())
    out["system_info"] = bindings.llama_print_system_info().decode(errors="replace")
    out["devices"] = llama_runtime.gpu_devices(bindings)
except Exception as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Outcome:
    """`ok`: True (offload works), False (it does not), None (could not be checked here)."""

    ok: bool | None
    message: str


def argv(python: str) -> list[str]:
    """The command that runs the check in `python`'s environment."""
    return [python, "-c", SCRIPT, str(Path(gptoss_local.__file__).resolve().parent.parent)]


def parse(output: str) -> dict[str, Any]:
    """The check's JSON line (the last line that parses), or an error record.

    ggml's own complaints about CUDA (`ggml_cuda_init: ...`) among the output are kept under
    `cuda_init`: they say why a CUDA build sees no GPU.
    """
    complaints = [line.strip() for line in output.splitlines() if "ggml_cuda_init" in line]
    for line in reversed(output.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return {**value, "cuda_init": complaints}
    return {"loaded": False, "error": _("the check printed no result"), "cuda_init": complaints}


def judge(result: dict[str, Any], hardware: Hardware) -> Outcome:
    """Turn the check's result into a verdict, knowing whether this PC has an NVIDIA GPU.

    `llama_supports_gpu_offload()` is false for a CUDA build that finds no usable GPU, so
    whether CUDA was built in is read from the system info ('CUDA : ARCHS = 890 | ...').
    """
    no_gpu = not hardware.gpus
    if not result.get("loaded"):
        error = result.get("error", _("unknown error"))
        if no_gpu and "libcuda" in error:
            return Outcome(
                None,
                _(
                    "Could not check GPU offload: there is no NVIDIA driver here "
                    "(libcuda), which the build needs to load ({error})."
                ).format(error=error),
            )
        return Outcome(False, _("The new build does not load: {error}").format(error=error))
    info = result.get("system_info", "")
    if "CUDA :" not in info and not result.get("gpu_offload"):
        return Outcome(
            False,
            _(
                "The new build has no CUDA: it was not built in (see the log "
                "for CMake's messages about CUDA)."
            ),
        )
    archs = cuda_archs(info)
    built = _("CUDA, architectures {archs}").format(archs=", ".join(archs)) if archs else "CUDA"
    if no_gpu:
        return Outcome(
            None,
            _(
                "Could not check GPU offload: no NVIDIA GPU here. The build "
                "loads and has {built} built in."
            ).format(built=built),
        )
    devices = result.get("devices")
    if result.get("gpu_offload") and devices is None:
        return Outcome(
            True,
            _(
                "The build loads with GPU offload ({built}); its devices could not be listed here."
            ).format(built=built),
        )
    if not result.get("gpu_offload") or not devices:
        why = "; ".join(result.get("cuda_init") or []) or _(
            "the driver may be too old for its CUDA version, or the architecture does not "
            "match the card (see --arch)"
        )
        return Outcome(
            False, _("The build has {built} but sees no GPU: {why}").format(built=built, why=why)
        )
    return Outcome(
        True,
        _("GPU offload works ({built}): {devices}.").format(
            built=built, devices=", ".join(devices)
        ),
    )


def cuda_archs(system_info: str) -> list[str]:
    """A CUDA build's architectures, from `llama_print_system_info` ('CUDA : ARCHS = 890')."""
    for section in system_info.split("CUDA :")[1:]:
        for part in section.split("|"):
            name, _equals, value = part.partition("=")
            if name.strip() == "ARCHS":
                return [a for a in value.strip().replace(";", ",").split(",") if a]
    return []
