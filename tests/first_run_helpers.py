"""Helpers of the first-run tests: a machine, and the tiny real model served as a catalog model
from the loopback file server, so a first run downloads and loads something real."""

from __future__ import annotations

import argparse
from pathlib import Path

from http_fixture import FileServer
from store_files import write_manifest

from gptoss_local import catalog, config
from gptoss_local.hardware.machine import Gpu, Hardware
from gptoss_local.launch.preparation import Preparation
from gptoss_local.plan.wishes import wishes_from

MODEL = "gpt-oss-tiny"  # alias "tiny"
FILE = "gpt-oss-tiny.gguf"
GIB = 1 << 30


def machine(gpu_gib: int = 0, ram_gib: int = 64) -> Hardware:
    """A PC with one GeForce card of `gpu_gib` GiB (none for 0), `ram_gib` of RAM, 1 TiB free."""
    gpus = ()
    if gpu_gib:
        size = gpu_gib * GIB
        gpus = (Gpu(0, f"NVIDIA GeForce RTX test {gpu_gib} GB", "GeForce", "geforce", size,
                    size - GIB // 2, "8.9", 1008.0),)  # fmt: skip
    return Hardware(gpus, ram_gib * GIB, ram_gib * GIB - 2 * GIB, 8, 16, "/", 1 << 40,
                    "575.0" if gpus else None, "12.9" if gpus else None,
                    None if gpus else "no NVIDIA driver (test)")  # fmt: skip


def serve_tiny(server: FileServer, tiny: Path, manifest: Path) -> catalog.Catalog:
    """Serve the tiny GGUF from sources `main` and `mirror` as model gpt-oss-tiny."""
    data = tiny.read_bytes()
    server.files[FILE] = data
    write_manifest(manifest, {MODEL: {FILE: data}},
                   {"main": server.url("main"), "mirror": server.url("mirror")})  # fmt: skip
    return catalog.load(manifest)


def install_tiny(tiny: Path) -> None:
    """Put the tiny model into the models folder as if it had been downloaded."""
    from gptoss_local import paths

    paths.ensure_dir(paths.models_dir())
    (paths.models_dir() / FILE).write_bytes(tiny.read_bytes())


def chat_args(**given: object) -> argparse.Namespace:
    """`chat`'s parsed command line with only `given` set."""
    names = ("model", "context", "effort", "backend", "cpu_moe", "model_path", "chat")
    values: dict[str, object] = dict.fromkeys(names)
    values["cpu_sampling"] = False
    values.update(given)
    return argparse.Namespace(**values)


def setup_for(
    cat: catalog.Catalog, hardware: Hardware | None = None, **given: object
) -> Preparation:
    """A Preparation as `chat` makes it, on `hardware` (default: a CPU-only PC), 4k context."""
    given.setdefault("context", 4096)
    from gptoss_local import paths

    first = not paths.settings_file().exists()
    settings = config.load()
    wishes = wishes_from(chat_args(**given), settings)
    return Preparation(hardware or machine(), cat, settings, wishes, first)
