"""Load a model onto llama.cpp's GPU devices several ways, each in a process of its own (a crash
in one does not hide the others), and say how each went.

- none: no device list (llama.cpp picks its GPUs);
- list: the first card passed as a one-card device list (forced: the loader passes none for
  the only card);
- planned: as the planner's LoadSettings say for this machine (its context too);
- planned-list: the planner's settings with the planned cards always passed as a device list.

Prints what ggml reports of its devices and the device array handed to llama.cpp. With --out,
each way's native log goes to OUT/devices-WAY.log (its last lines are printed when a way fails);
with --gdb, a way that dies of a signal runs again under cuda-gdb (or gdb) for a native backtrace.

Usage: python bench/gpu/devices_check.py MODEL.gguf [--out DIR] [--gdb] [--ways none,list,...]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

STEP = """
import ctypes, dataclasses, faulthandler, sys
faulthandler.enable()
from pathlib import Path
from gptoss_local.backends.llamacpp import native, load as llama_load
from gptoss_local.backends.llamacpp.load import LoadSettings
native.init_backend()
found = native.gpu_devices()
print("devices:", [(d.name, d.bus_id, hex(d.handle)) for d in found], flush=True)
how, log_path = sys.argv[2], (Path(sys.argv[3]) if sys.argv[3] else None)
settings = LoadSettings(context=4096, gpu_layers=-1)
if how == "list":
    settings = LoadSettings(context=4096, gpu_layers=-1, devices=(found[0].bus_id,))
elif how.startswith("planned"):
    from gptoss_local import catalog
    from gptoss_local.hardware.machine import probe
    from gptoss_local.plan.planner import plan
    p = plan(probe(), catalog.load(), None)
    settings = LoadSettings.from_plan(p)  # the planned context too, as the command loads
    if how == "planned-list":
        cards = tuple(card.pci_bus_id for card in p.cards)
        settings = dataclasses.replace(settings, devices=cards)
    print("planned:", settings, flush=True)
if how.endswith("list") and len(found) == 1:  # the loader gives one card no list: force it
    llama_load._devices = lambda bus_ids: native.device_list([found[0].handle])
if settings.devices:
    array = llama_load._devices(settings.devices)  # None: no list (one card on a one-card PC)
    shown = None if array is None else [hex(h) if h else None for h in array]
    print("device array:", shown, flush=True)
log = native.route_logs(log_path)
loaded = llama_load.load(Path(sys.argv[1]), settings, log)
print(how, "loaded", flush=True)
"""
WAYS = ("none", "list", "planned", "planned-list")


def run_way(model: str, how: str, out: Path | None, gdb: bool) -> int:
    """Loads `model` one way in a fresh process; prints its output; returns its exit code."""
    log = out / f"devices-{how}{'-gdb' if gdb else ''}.log" if out else None
    command = [sys.executable, "-c", STEP, model, how, str(log or "")]
    debugger = shutil.which("cuda-gdb") or shutil.which("gdb")
    if gdb and debugger:
        command = [debugger, "-batch", "-ex", "run", "-ex", "bt 40", "--args", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    lines = (done.stdout + done.stderr).splitlines()
    print(f"== {how}{' (under ' + Path(debugger or '').name + ')' if gdb else ''}: "
          f"exit {done.returncode}")  # fmt: skip
    print("\n".join(lines[-(60 if gdb else 14) :]))
    if done.returncode != 0 and log and log.exists():
        print(f"-- last native log lines ({log.name}):")
        print("\n".join(log.read_text(errors="replace").splitlines()[-25:]))
    return done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--out", type=Path, help="folder for each way's native log")
    parser.add_argument("--gdb", action="store_true", help="rerun a crashed way under a debugger")
    parser.add_argument(
        "--ways", default=",".join(WAYS), help="comma-separated, of: " + ", ".join(WAYS)
    )
    args = parser.parse_args()
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    for how in args.ways.split(","):
        code = run_way(args.model, how, args.out, gdb=False)
        if code < 0 and args.gdb:  # died of a signal: where, natively
            run_way(args.model, how, args.out, gdb=True)


if __name__ == "__main__":
    main()
