"""What every agent module declares (`Agent`), and what it is pointed at (`Served`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gptoss_local.kinds import Effort


@dataclass(frozen=True)
class Served:
    """What an agent talks to: the server's base URL (with /v1), the model's id and context, the
    default effort, the environment variable holding the server's key (None: no key), and
    whether its engine takes freeform tools (else Codex edits files with shell commands)."""

    url: str
    model: str
    context: int
    effort: Effort = "medium"
    key_variable: str | None = None
    freeform_tools: bool = True


@dataclass(frozen=True)
class Start:
    """How to start the agent on a server: words before the user's own, more environment, the
    variables taken out of it, and notes for the user (a file of theirs kept aside)."""

    argv: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Configured:
    """What `--config` wrote, and notes for the user."""

    path: Path
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Agent:
    """One agent `launch` knows.

    Attributes:
        name: The word after `launch` (and the program's usual name).
        title: Its name for people ("Claude Code").
        install: The command that installs it.
        min_context: The context it needs room for: its instructions, tools and outputs.
        prepare: Writes what a run needs (files of gptoss-local's own, never the user's
            configuration) and says how to start it.
        configure: `--config`: merges the entries into the user's own configuration (kept in a
            backup first); where.
        restore: `--restore`: puts the backup back; what was done, for the user, or None when
            there was nothing to restore.
        started_with: `--config`'s hint: the command that starts it on the configuration.
    """

    name: str
    title: str
    install: str
    min_context: int
    prepare: Callable[[Served], Start]
    configure: Callable[[Served], Configured]
    restore: Callable[[], str | None]
    started_with: str
