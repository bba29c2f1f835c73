"""Offline mode: when it is on, gptoss-local downloads nothing (a chat server the user names
with `--backend openai` is a conversation they asked for, not a download, and is left alone)."""

from __future__ import annotations

import os
from collections.abc import Mapping

# Ours, and the Hugging Face ecosystem's, so one setting covers every tool on the machine.
OFFLINE_VARS = ("GPTOSS_LOCAL_OFFLINE", "HF_HUB_OFFLINE")
_TRUE = {"1", "true", "yes", "on"}


def offline_reason(flag: bool = False, env: Mapping[str, str] | None = None) -> str | None:
    """Why offline mode is on (`--offline` or the variable that set it), or None when it is off."""
    if flag:
        return "--offline"
    environ: Mapping[str, str] = os.environ if env is None else env
    for name in OFFLINE_VARS:
        if environ.get(name, "").strip().lower() in _TRUE:
            return f"{name}={environ[name].strip()}"
    return None
