"""The Codex CLI profile `gptoss-local launch codex` writes: a model provider pointing at
`serve`, and the served model's metadata, so that Codex does not fall back to defaults made for
other models.

Codex (0.171) layers `$CODEX_HOME/NAME.config.toml` over its config for `--profile NAME`. The
model's metadata goes in a model catalog (`model_catalog_json`), which replaces Codex's own list:
the context window, gpt-oss's three reasoning levels, no reasoning summaries (gpt-oss writes
none; the raw reasoning is shown instead), no parallel tool calls, `apply_patch` as a freeform
tool, and instructions of our own, shorter than Codex's so that a local prefill stays quick.
Tools that cannot work here are switched off: web search (offline), sub-agents and goals.

A profile file there without our header is the user's own: it is copied aside first (never over
an earlier copy), and the caller is told where.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from gptoss_local.agents.agent import Served
from gptoss_local.kinds import EFFORTS

PROFILE = "gptoss-local"
PROVIDER = "gptoss-local"
# Replies on a CPU can pause for minutes before their first token (a long prompt's prefill).
IDLE_TIMEOUT_MS = 900_000
# What Codex keeps of a command's output for the model, in tokens.
OUTPUT_TOKEN_LIMIT = 10_000
# Codex compacts the conversation when it nears the window; leave room for the reply.
COMPACT_AT = 0.8
# The first line of every profile we write: a file without it is not ours to replace silently.
HEADER = "# Written by `gptoss-local codex` each time it starts; changes here are overwritten."

INSTRUCTIONS = """\
You are a coding agent working in the user's terminal through Codex CLI. You run on gpt-oss, \
on the user's own computer: nothing leaves it.

How to work:
- Look before you change anything: list files, read the ones that matter, run the tests.
- Run shell commands with exec_command ({"cmd": "..."}). Keep each command short and \
non-interactive; read long files in parts.
- Edit files with apply_patch. Its input is plain patch text, never JSON:
*** Begin Patch
*** Update File: path/to/file.py
@@ def greet():
-    print("hi")
+    print("hello")
*** End Patch
  Use "*** Add File: PATH" with every line starting with "+" for a new file, and \
"*** Delete File: PATH" to remove one.
- Make the smallest change that does the job, in the style of the code around it. Check it: \
run the tests or the program.
- If something fails, read the error and fix the cause; do not repeat the same command.
- Ask the user only when you cannot go on without an answer.

When you are done, say briefly what you changed and how you checked it. Refer to files by \
their paths.
"""


def codex_home() -> Path:
    """Codex's own folder: `$CODEX_HOME`, else ~/.codex."""
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def catalog(served: Served) -> dict[str, object]:
    """The model catalog Codex reads (`model_catalog_json`): the served model alone."""
    levels = [{"effort": e, "description": f"{e} reasoning effort"} for e in EFFORTS]
    patches = {"apply_patch_tool_type": "freeform"} if served.freeform_tools else {}
    return {
        "models": [
            {
                **patches,
                "slug": served.model, "display_name": served.model,
                "description": "gpt-oss on this computer, served by gptoss-local",
                "supported_reasoning_levels": levels,
                "default_reasoning_level": served.effort,
                "default_reasoning_summary": "none", "supports_parallel_tool_calls": False,
                "shell_type": "unified_exec",
                "visibility": "list", "supported_in_api": True, "priority": 1,
                "support_verbosity": False,
                "truncation_policy": {"mode": "tokens", "limit": OUTPUT_TOKEN_LIMIT},
                "experimental_supported_tools": [], "input_modalities": ["text"],
                "context_window": served.context, "max_context_window": served.context,
                "base_instructions": INSTRUCTIONS,
            }
        ]
    }  # fmt: skip


def profile(served: Served, catalog_path: Path) -> str:
    """The profile's TOML (strings written as JSON strings, which TOML reads alike)."""
    q = json.dumps
    provider = [
        f"[model_providers.{q(PROVIDER)}]",
        f"name = {q('gptoss-local')}",
        f"base_url = {q(served.url)}",
        'wire_api = "responses"',
        f"stream_idle_timeout_ms = {IDLE_TIMEOUT_MS}",
    ]
    if served.key_variable:
        provider.append(f"env_key = {q(served.key_variable)}")
    lines = [
        HEADER,
        f"model = {q(served.model)}",
        f"model_provider = {q(PROVIDER)}",
        f"model_catalog_json = {q(str(catalog_path))}",
        f"model_context_window = {served.context}",
        f"model_auto_compact_token_limit = {int(served.context * COMPACT_AT)}",
        f"model_reasoning_effort = {q(served.effort)}",
        'model_reasoning_summary = "none"',
        "show_raw_agent_reasoning = true",
        'web_search = "disabled"',
        "",
        "[agents]",
        "enabled = false",
        "",
        "[features]",
        "goals = false",
        "",
        *provider,
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Written:
    """Where the profile went, and where the user's own file that was there now is (or None)."""

    path: Path
    backup: Path | None = None


def write_profile(served: Served, home: Path | None = None) -> Written:
    """Write the profile and its catalog into Codex's folder, keeping a copy of a profile file
    the user wrote there (one without our header)."""
    home = home or codex_home()
    home.mkdir(parents=True, exist_ok=True)
    catalog_path = home / f"{PROFILE}.models.json"
    _write(catalog_path, json.dumps(catalog(served), indent=1) + "\n")
    path = home / f"{PROFILE}.config.toml"
    backup = _keep_users_file(path)
    _write(path, profile(served, catalog_path))
    return Written(path, backup)


def _keep_users_file(path: Path) -> Path | None:
    """Copy `path` aside when it is not one of ours; the copy's path, or None (nothing to keep).
    A copy, not a move: the user's file stays in place until ours replaces it whole."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if data.startswith(HEADER.encode()):
        return None
    stamp, n = time.strftime("%Y%m%d-%H%M%S"), 0
    while True:
        backup = path.with_name(f"{path.name}.bak-{stamp}" + (f"-{n}" if n else ""))
        try:
            with backup.open("xb") as out:  # never over an earlier copy
                out.write(data)
        except FileExistsError:
            n += 1
            continue
        shutil.copymode(path, backup)
        return backup


def _write(path: Path, text: str) -> None:
    """Replace `path` whole, so that a Codex starting at the same time never reads half."""
    part = path.with_name(path.name + ".part")
    part.write_text(text, encoding="utf-8")
    part.replace(path)
