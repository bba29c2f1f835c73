"""Load a model onto llama.cpp's GPU devices three ways, each in a process of its own (a crash
in one does not hide the others): no device list, the planned card's device list, and as the
planner's LoadSettings say. Prints what ggml reports of its devices.

Usage: python bench/gpu/devices_check.py MODEL.gguf
"""

from __future__ import annotations

import subprocess
import sys

STEP = """
import faulthandler, sys
faulthandler.enable()
from pathlib import Path
from gptoss_local.backends.llamacpp import native, load as llama_load
from gptoss_local.backends.llamacpp.load import LoadSettings
native.init_backend()
found = native.gpu_devices()
print("devices:", [(d.name, d.bus_id, hex(d.handle)) for d in found], flush=True)
how = sys.argv[2]
settings = LoadSettings(context=4096, gpu_layers=-1)
if how == "list":
    settings = LoadSettings(context=4096, gpu_layers=-1, devices=(found[0].bus_id,))
elif how == "planned":
    from gptoss_local import catalog
    from gptoss_local.hardware.machine import probe
    from gptoss_local.plan.planner import plan
    import dataclasses
    p = plan(probe(), catalog.load(), None)
    settings = dataclasses.replace(LoadSettings.from_plan(p), context=4096)
    print("planned:", settings, flush=True)
log = native.route_logs(None)
loaded = llama_load.load(Path(sys.argv[1]), settings, log)
print(how, "loaded", flush=True)
"""


def main() -> None:
    for how in ("none", "list", "planned"):
        done = subprocess.run([sys.executable, "-c", STEP, sys.argv[1], how],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        output = (done.stdout + done.stderr).splitlines()
        lines = [line for line in output if not line.startswith("[")]
        print(f"== {how}: exit {done.returncode}")
        print("\n".join(lines[-12:]))


if __name__ == "__main__":
    main()
