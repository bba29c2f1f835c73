"""Anthropic's Claude Code, through the Messages API `serve` speaks: environment variables
point it at the server (`ANTHROPIC_BASE_URL`, without /v1: the client adds /v1/messages) and
name the served model for every role, with nothing sent anywhere else.

A run gets them twice: in its environment, and in a settings file of gptoss-local's own given
with `--settings`, which outranks the "env" of the user's ~/.claude/settings.json (where an
earlier `--config` may have left another port). `--config` merges them into that "env".
"""

from __future__ import annotations

import os
from pathlib import Path

from gptoss_local import paths
from gptoss_local.agents import files
from gptoss_local.agents.agent import Agent, Configured, Served, Start

# Claude Code sends no key-less request: a server without a key takes any.
PLACEHOLDER_KEY = "gptoss-local"
COMPACT_WINDOW_MIN = 100_000
MAX_OUTPUT = 32_000  # Claude Code's own default
MODEL_ROLES = (
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
)


def settings_path() -> Path:
    """The user's settings: `$CLAUDE_CONFIG_DIR/settings.json`, else ~/.claude/settings.json."""
    folder = os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude"
    return Path(folder) / "settings.json"


def environment(served: Served) -> dict[str, str]:
    """The variables that point Claude Code at `served`, offline."""
    key = os.environ.get(served.key_variable) if served.key_variable else None
    return {
        "ANTHROPIC_BASE_URL": served.url.removesuffix("/v1"),
        "ANTHROPIC_AUTH_TOKEN": key or PLACEHOLDER_KEY,
        **{role: served.model for role in MODEL_ROLES},
        **_room(served.context),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # no updates, telemetry or reports
    }


def _room(context: int) -> dict[str, str]:
    """The served context's limits, where Claude Code would assume a cloud model's: its replies
    get a quarter, and it compacts at 80% of the context. Its compaction window is at least
    100,000 tokens (a smaller one reads as that, with a warning), so a smaller context lowers
    the threshold in percent of that window instead."""
    window = max(COMPACT_WINDOW_MIN, context)
    return {
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(min(MAX_OUTPUT, context // 4)),
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(window),
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": str(80 * context // window),
    }


def prepare(served: Served) -> Start:
    """The run's settings file (0600: it may hold the server's key) and environment."""
    env = environment(served)
    path = paths.ensure_dir(paths.data_dir() / "agents") / "claude-settings.json"
    path.unlink(missing_ok=True)  # made anew, the user's alone
    files.write_json(path, {"env": env}, keep=False)
    return Start(argv=("--settings", str(path)), env=env, unset=("ANTHROPIC_API_KEY",))


def configure(served: Served) -> Configured:
    """Merge the variables into the "env" of the user's settings (the rest stays)."""
    path = settings_path()
    settings = files.read_json(path)
    files.section(settings, "env", path).update(environment(served))
    files.write_json(path, settings)
    return Configured(path)


def restore() -> str | None:
    """Put the user's settings back as they were."""
    return files.restore(settings_path())


AGENT = Agent(
    name="claude",
    title="Claude Code",
    install="npm i -g @anthropic-ai/claude-code",
    min_context=65_536,  # its instructions and tools alone are tens of thousands of tokens
    prepare=prepare,
    configure=configure,
    restore=restore,
    started_with="claude",
)
