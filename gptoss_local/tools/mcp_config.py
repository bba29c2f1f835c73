"""mcp.json: the MCP servers to start, in the ``mcpServers`` format other apps use.

```json
{"mcpServers": {"git": {"command": "mcp-server-git", "args": ["--repository", "/src/app"],
                        "env": {"GIT_PAGER": "cat"}}}}
```

Only stdio servers (a `command`) are supported; ``"disabled": true`` leaves one out,
``"startup_timeout_sec": 60`` gives a slow one longer to start than the 30 s default (the key
Codex uses), and keys other apps add (``autoApprove``, ``timeout``...) are ignored. Anything
else that is wrong is an `McpConfigError` naming the file and the entry.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gptoss_local import paths
from gptoss_local.i18n import _
from gptoss_local.tools.errors import McpConfigError

FILE_NAME = "mcp.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server: how to start it, and the identifier-safe name its tools are prefixed with.

    Attributes:
        name: The key in mcp.json.
        command: The program to run.
        args: Its arguments.
        env: Variables added to the minimal environment the SDK gives servers.
        cwd: Its working folder, if given.
        start_seconds: How long it may take to start and list its tools (None: the default).
    """

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    start_seconds: float | None = None

    @property
    def prefix(self) -> str:
        """The server's name as it starts its tools' names (``git`` → ``git__status``)."""
        return identifier(self.name)


def config_path() -> Path:
    """Where mcp.json is: in the config folder, beside settings.toml."""
    return paths.config_dir() / FILE_NAME


def identifier(text: str) -> str:
    """`text` with every character a Harmony name cannot hold replaced by ``_``."""
    safe = _UNSAFE.sub("_", text) or "_"
    return safe if not safe[0].isdigit() else f"_{safe}"


def load_servers(path: Path | None = None) -> list[ServerSpec]:
    """The servers of mcp.json; none when the file does not exist.

    Raises:
        McpConfigError: The file cannot be read, is not JSON, or an entry is malformed.
    """
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise McpConfigError(
            _("cannot read {path}: {error}").format(path=path, error=exc)
        ) from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise McpConfigError(
            _("{path} is not valid JSON: {error}").format(path=path, error=exc)
        ) from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(
            _("{path}: expected {shape}").format(
                path=path, shape='{"mcpServers": {"NAME": {"command": ..., "args": [...]}}}'
            )
        )
    specs = [_server(path, name, entry) for name, entry in servers.items()]
    found = [spec for spec in specs if spec is not None]
    _check_unique(path, found)
    return found


def _server(path: Path, name: str, entry: Any) -> ServerSpec | None:
    where = f"{path}: mcpServers.{name}"
    if not isinstance(entry, dict):
        raise McpConfigError(_("{where} must be an object with a command").format(where=where))
    if entry.get("disabled") is True:
        return None
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        wrong = (
            _(
                "{where} is an HTTP server (url): gptoss-local starts stdio servers only, "
                'with a "command"'
            )
            if "url" in entry or "serverUrl" in entry
            else _('{where} is malformed: gptoss-local starts stdio servers only, with a "command"')
        )
        raise McpConfigError(wrong.format(where=where))
    args, env, cwd = entry.get("args", []), entry.get("env", {}), entry.get("cwd")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise McpConfigError(_("{where} must be a list of strings").format(where=f"{where}.args"))
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise McpConfigError(_("{where} must be an object of strings").format(where=f"{where}.env"))
    if cwd is not None and not isinstance(cwd, str):
        raise McpConfigError(_("{where} must be a string").format(where=f"{where}.cwd"))
    start = entry.get("startup_timeout_sec")
    if start is not None and (
        isinstance(start, bool) or not isinstance(start, (int, float))
        or not math.isfinite(start) or start <= 0
    ):  # fmt: skip
        raise McpConfigError(
            _("{where} must be a number of seconds above 0").format(
                where=f"{where}.startup_timeout_sec"
            )
        )
    seconds = float(start) if start is not None else None
    return ServerSpec(name, command, tuple(args), dict(env), cwd, seconds)


def _check_unique(path: Path, specs: list[ServerSpec]) -> None:
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.prefix in seen:
            raise McpConfigError(
                _(
                    "{path}: servers {first} and {second} would give their tools the same "
                    "prefix {prefix}; rename one"
                ).format(
                    path=path,
                    first=repr(seen[spec.prefix]),
                    second=repr(spec.name),
                    prefix=repr(spec.prefix),
                )
            )
        seen[spec.prefix] = spec.name
