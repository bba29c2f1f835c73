"""The closed sets of names that several layers share: reasoning efforts and backends."""

from __future__ import annotations

from typing import Literal, get_args

Effort = Literal["low", "medium", "high"]
EFFORTS: tuple[Effort, ...] = get_args(Effort)

BackendName = Literal["llamacpp", "ollama", "openai"]
BACKENDS: tuple[BackendName, ...] = get_args(BackendName)
