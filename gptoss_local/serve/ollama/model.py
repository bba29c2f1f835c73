"""The served model as Ollama's API describes it: `/api/tags`' entries, `/api/show`'s body and
`/api/ps`' entry, from the GGUF's header (read once, on the first ask).

The `digest` is the SHA-256 of the file's name, size and modification time, not of its
content: hashing a 13 GB file would keep the first `/api/tags` waiting for a minute, and
clients use the digest only to tell models apart. `size_vram` is the whole file when every
layer runs on the GPU and 0 otherwise (a split between GPU and RAM is not measured).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gptoss_local.backends.base import Backend, BackendInfo
from gptoss_local.serve.model_names import family
from gptoss_local.store.ggml_types import F32, type_name
from gptoss_local.store.gguf_check import GgufError, GgufInfo, check_gguf

CAPABILITIES = ("completion", "tools", "thinking")
# What `/api/show` gives as the template: the server writes gpt-oss's prompt in Harmony itself.
TEMPLATE = "{{- /* gptoss-local renders gpt-oss's Harmony prompt itself */ -}}{{ .Prompt }}"
FOREVER_YEARS = 292  # as far as Ollama's "forever" (the largest Go duration) reaches


@dataclass(frozen=True)
class ModelFacts:
    """What the header of the served file tells (empty where there is no file)."""

    size: int = 0
    modified_at: str = ""
    digest: str = ""
    family: str = "gpt-oss"
    parameters: int = 0
    quantization: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def parameter_size(self) -> str:
        """The count as Ollama shows it ("20.9B", "1.5M")."""
        for unit, scale in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
            if self.parameters >= scale:
                return f"{self.parameters / scale:.1f}{unit}"
        return str(self.parameters)


def read_facts(path: Path | None, name: str, since: str) -> ModelFacts:
    """The facts of the GGUF at `path` (None, or a file that cannot be read: the name's, and
    `since` as the date: Ollama's clients read the date of every entry)."""
    if path is None:
        return ModelFacts(modified_at=since, family=_family(name))
    try:
        info = check_gguf(path, expect_architecture=None)
        stat = path.stat()
    except (GgufError, OSError):
        return ModelFacts(modified_at=since, family=_family(name))
    identity = f"{path.name}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()
    when = datetime.fromtimestamp(stat.st_mtime, timezone.utc)
    return ModelFacts(
        size=info.file_size, modified_at=_rfc3339(when),
        digest=hashlib.sha256(identity).hexdigest(), family=info.architecture or _family(name),
        parameters=sum(math.prod(t.dims) for t in info.tensors),
        quantization=_quantization(info), info=_model_info(info),
    )  # fmt: skip


def _family(name: str) -> str:
    return "gpt-oss" if family(name) else ""


def _quantization(info: GgufInfo) -> str:
    """The type holding most of the weights' bytes (MXFP4 for gpt-oss's experts)."""
    held: Counter[int] = Counter()
    for tensor in info.tensors:
        held[tensor.ggml_type] += tensor.nbytes
    held.pop(F32, None)  # norms and biases: never what a model is quantized to
    return type_name(held.most_common(1)[0][0]) if held else "F32"


def _model_info(info: GgufInfo) -> dict[str, Any]:
    kept = {k: v for k, v in info.metadata.items() if not k.startswith("tokenizer.")}
    return {**kept, "general.parameter_count": sum(math.prod(t.dims) for t in info.tensors)}


def _rfc3339(when: datetime) -> str:
    return when.isoformat(timespec="microseconds").replace("+00:00", "Z")


class ModelCard:
    """The served model's entries in Ollama's listings.

    Args:
        names: The names the model is listed under (`model_names.listed`).
        backend: The loaded model (its file, when it has one, is read for the facts).
        context: The context the server runs it with.
    """

    def __init__(self, names: tuple[str, ...], backend: Backend, context: int) -> None:
        self.names, self.context = names, context
        self._backend, self._lock = backend, threading.Lock()
        self._facts: ModelFacts | None = None
        self._since = _rfc3339(datetime.now(timezone.utc))  # the date where no file tells one

    @property
    def facts(self) -> ModelFacts:
        """The file's facts, read on the first ask that finds the file (a resident model
        names it once it has been loaded; Ollama's engine never does)."""
        with self._lock:
            if self._facts is not None:
                return self._facts
            path = getattr(self._backend, "path", None)  # llama.cpp's file; Ollama's none
            facts = read_facts(Path(path) if path else None, self.names[0], self._since)
            if path or not hasattr(self._backend, "path"):
                self._facts = facts
            return facts

    def details(self) -> dict[str, Any]:
        """The `details` of each listing."""
        f = self.facts
        return {"parent_model": "", "format": "gguf", "family": f.family,
                "families": [f.family], "parameter_size": f.parameter_size,
                "quantization_level": f.quantization}  # fmt: skip

    def tags(self) -> list[dict[str, Any]]:
        """`/api/tags`' entries: one per name a user would type."""
        f = self.facts
        return [{"name": name, "model": name, "modified_at": f.modified_at, "size": f.size,
                 "digest": f.digest, "details": self.details()} for name in self.names]  # fmt: skip

    def show(self) -> dict[str, Any]:
        """`/api/show`'s body."""
        f = self.facts
        arch = str(f.info.get("general.architecture") or f.family)
        # The context the server runs, which bounds a request, rather than the trained one; a
        # name where the file has none (VS Code's Ollama provider shows the basename).
        info = {"general.basename": self.names[0], **f.info, "general.architecture": arch,
                f"{arch}.context_length": self.context}  # fmt: skip
        return {"license": "", "modelfile": "", "parameters": f"num_ctx {self.context}",
                "template": TEMPLATE, "details": self.details(), "model_info": info,
                "capabilities": list(CAPABILITIES), "modified_at": f.modified_at}  # fmt: skip

    def running(self, info: BackendInfo, expires: float | None = None) -> dict[str, Any]:
        """`/api/ps`' entry, `expires` the time (seconds since the epoch) it is let go; None:
        not before serve stops (`expires_at` years away, as Ollama shows a model kept for
        good)."""
        f = self.facts
        now = datetime.now(timezone.utc)
        until = now.replace(year=now.year + FOREVER_YEARS, day=1)
        if expires is not None:
            until = datetime.fromtimestamp(expires, timezone.utc)
        on_gpu = f.size if "GPU" in info.placement and "RAM" not in info.placement else 0
        return {"name": self.names[0], "model": self.names[0], "size": f.size,
                "digest": f.digest, "details": self.details(),
                "expires_at": _rfc3339(until),
                "size_vram": on_gpu, "context_length": self.context}  # fmt: skip
