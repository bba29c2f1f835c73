"""Files, manifests and options for the model store tests: valid gpt-oss GGUFs of random bytes,
a manifest listing them with their real sizes and sha256, fast retry settings."""

from __future__ import annotations

import hashlib
import os
import random
import struct
from dataclasses import dataclass
from pathlib import Path

from gptoss_local import catalog
from gptoss_local.catalog import Shape
from gptoss_local.store.download import RetryPolicy
from gptoss_local.store.progress import Progress
from gptoss_local.store.pull import PullOptions, PullResult, pull_model

REPO = "test-org/tiny-GGUF"
FAST = RetryPolicy(attempts=3, backoff=0.0, timeout=5.0, chunk=64 * 1024, sleep=lambda _: None)


def _gstr(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf_file(payload: int, seed: int, split: tuple[int, int] | None = None) -> bytes:
    """A valid gpt-oss GGUF holding one F32 tensor of `payload` random bytes (a multiple of 4).

    `split` = (index, count) makes it shard `index` of a `count`-shard model, one tensor each.
    """
    kvs = [_gstr("general.architecture") + struct.pack("<i", 8) + _gstr("gpt-oss")]
    if split:
        no, count = split
        kvs += [
            _gstr("split.no") + struct.pack("<iH", 2, no),
            _gstr("split.count") + struct.pack("<iH", 2, count),
            _gstr("split.tensors.count") + struct.pack("<ii", 5, count),
        ]
    info = _gstr(f"t{seed}.weight") + struct.pack("<IqiQ", 1, payload // 4, 0, 0)
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kvs)) + b"".join(kvs) + info
    head += bytes(-len(head) % 32)
    return head + random.Random(seed).randbytes(payload)


@dataclass(frozen=True)
class Served:
    """The files of one served model, and the manifest that lists them."""

    manifest: Path
    files: dict[str, bytes]

    @property
    def names(self) -> list[str]:
        return list(self.files)


def _shape_toml() -> str:
    shipped = Path(__file__).parent.parent / "models" / "manifest.toml"
    shape: Shape = catalog.load(shipped).model("20b").shape  # real numbers: plausible, valid
    return "\n".join(f"{k} = {v}" for k, v in vars(shape).items())


def write_manifest(
    path: Path, models: dict[str, dict[str, bytes]], sources: dict[str, str]
) -> Path:
    """A manifest listing `models` (name -> files) with their real sizes and sha256."""
    lines = ["schema = 1", ""]
    for name, url in sources.items():
        lines += [f"[sources.{name}]", f'url = "{url}"', ""]
    for model, files in models.items():
        alias = model.split("-")[-1]
        lines += [
            f"[models.{model}]",
            f'aliases = ["{alias}"]',
            f'repo = "{REPO}"',
            'revision = "abc123"',
            'license = "Apache-2.0"',
            'ollama_tag = "x"',
            "",
        ]
        for fname, data in files.items():
            lines += [f"[[models.{model}.files]]", f'name = "{fname}"', f"bytes = {len(data)}",
                      f'sha256 = "{hashlib.sha256(data).hexdigest()}"', ""]  # fmt: skip
        lines += [f"[models.{model}.shape]", _shape_toml(), ""]
    path.write_text("\n".join(lines))
    return path


def options(**changes: object) -> PullOptions:
    """Pull options for tests: tiny backoff, no disk margin, no waiting on locks."""
    base = {"policy": FAST, "disk_margin": 0, "lock_timeout": 0.0, "lock_poll": 0.05}
    return PullOptions(**(base | changes))  # type: ignore[arg-type]


def pull_recorded(
    model: str = "tiny-one", **changes: object
) -> tuple[PullResult, list[str], list[Progress]]:
    """Pull a test model with `options(**changes)`; returns the result, notices and progress."""
    notices: list[str] = []
    reports: list[Progress] = []
    cat = catalog.load()
    result = pull_model(cat.model(model), cat, options(**changes), reports.append, notices.append)
    return result, notices, reports


def models_dir() -> Path:
    """The isolated models folder of the current test."""
    return Path(os.environ["GPTOSS_LOCAL_HOME"]) / "models"
