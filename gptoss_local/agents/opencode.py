"""opencode: a provider of its own (`gptoss-local`, through its OpenAI-compatible SDK) with
the served model, its context and tools, chosen as the model, and nothing fetched from the
network (no updates, no model list, no sharing).

A run gets the provider in a file of gptoss-local's own, named by `OPENCODE_CONFIG` (opencode
merges it over the user's configuration); `--config` merges it into the user's
~/.config/opencode/opencode.json. The server's key is never written down: the provider reads it
from the environment (`{env:VAR}`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gptoss_local import paths
from gptoss_local.agents import files
from gptoss_local.agents.agent import Agent, Configured, Served, Start

PROVIDER = "gptoss-local"
PLACEHOLDER_KEY = "gptoss-local"  # a server without a key takes any
OFFLINE = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
}


def config_path() -> Path:
    """The user's configuration: `$XDG_CONFIG_HOME/opencode/opencode.json` (~/.config)."""
    folder = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(folder) / "opencode" / "opencode.json"


def provider(served: Served) -> dict[str, Any]:
    """The provider entry: the server, its key, and the served model."""
    key = f"{{env:{served.key_variable}}}" if served.key_variable else PLACEHOLDER_KEY
    output = min(16_384, served.context // 4)  # opencode keeps this much room for the reply
    model = {
        "name": served.model,
        "tool_call": True,
        "reasoning": True,
        "limit": {"context": served.context, "output": output},
        "options": {"reasoningEffort": served.effort},
    }
    return {
        "npm": "@ai-sdk/openai-compatible",
        "name": "gptoss-local",
        "options": {"baseURL": served.url, "apiKey": key},
        "models": {served.model: model},
    }


def chosen(served: Served) -> dict[str, str]:
    """The served model chosen, for the work and for the small jobs (a session's title)."""
    model = f"{PROVIDER}/{served.model}"
    return {"model": model, "small_model": model}


def prepare(served: Served) -> Start:
    """The run's configuration file and offline switches."""
    path = paths.ensure_dir(paths.data_dir() / "agents") / "opencode.json"
    config = {"provider": {PROVIDER: provider(served)}, **chosen(served),
              "autoupdate": False, "share": "disabled"}  # fmt: skip
    files.write_json(path, config, keep=False)
    return Start(env={"OPENCODE_CONFIG": str(path), **OFFLINE})


def configure(served: Served) -> Configured:
    """Merge the provider and the model chosen into the user's configuration (the rest
    stays, other providers too)."""
    path = config_path()
    config = files.read_json(path)
    files.section(config, "provider", path)[PROVIDER] = provider(served)
    config.update(chosen(served))
    files.write_json(path, config)
    return Configured(path)


def restore() -> str | None:
    """Put the user's configuration back as it was."""
    return files.restore(config_path())


AGENT = Agent(
    name="opencode",
    title="opencode",
    install="npm i -g opencode-ai",
    min_context=32_768,  # its instructions and ten tools, and the files it reads
    prepare=prepare,
    configure=configure,
    restore=restore,
    started_with="opencode",
)
