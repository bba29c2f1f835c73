"""The settings file: the user's defaults for backend, model, context, effort and download source,
and for tools (which run without asking, the python tool's limits, calls per reply).

The file is small, flat TOML. It is read when asked for and written atomically (a temporary file in
the same folder, then a rename), so a crash mid-write never leaves half a settings file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gptoss_local import paths
from gptoss_local.errors import UserError
from gptoss_local.i18n import _
from gptoss_local.kinds import (
    BACKENDS,
    CONTEXT_POLICIES,
    DRAFTERS,
    EFFORTS,
    BackendName,
    ContextPolicy,
    Effort,
)
from gptoss_local.tomlread import TomlReadError, load_toml


class SettingsError(UserError):
    """The settings file exists but cannot be used; the message names the file and the fix."""


# A tool name, or a pattern of them ("git__*"): what `allowed_tools` may hold.
ENGINE_STARTS = ("off", "background")  # `engine_start`: see `Settings`
_TOOL_PATTERN = re.compile(r"[A-Za-z0-9_*?\[\]]+")


@dataclass(frozen=True)
class Settings:
    """User defaults. `model="auto"` and `context=0` leave the choice to the planner.

    Tools: `allowed_tools` run in the chat without asking (names as `gptoss-local tools` lists
    them, or patterns such as ``"git__*"``); `max_tool_calls` bounds the calls of one reply;
    the python tool stops a call after `python_timeout` seconds and limits its memory to
    `python_memory_mb` MiB (0: no limit).

    `context_policy`: what a chat does when its next prompt would leave too little room for
    the reply: "compact" (the model summarises the oldest turns), "drop_oldest" (they are left
    out) or "stop" (the message is not sent).

    `draft`: speculative decoding on the llama.cpp engine, "ngram", "eagle3" (with the EAGLE-3
    head `draft_model`, a GGUF file) or "off".

    `language`: what gptoss-local shows is in ("en", "zh_CN", "pt_BR"); "" follows the locale.

    `gpus`: the cards to run on, by `doctor`'s numbers in llama.cpp's order ("0,1"); "" or
    "auto" leaves the choice to the planner (`--gpus` on the command line).

    `docs`: the folders the browser tool searches (absolute paths; `gptoss-local docs add`
    writes them), indexed in the data folder.

    `engine_start`: what a command that needs the model does when no engine (`serve`) runs on
    this machine: "off" loads the model itself, "background" starts `serve` in the background
    and answers through it (the next commands find it there).
    """

    backend: BackendName = "llamacpp"
    model: str = "auto"
    context: int = 0
    effort: Effort = "medium"
    source: str = "huggingface"
    allowed_tools: tuple[str, ...] = ()
    max_tool_calls: int = 10
    python_timeout: int = 30
    python_memory_mb: int = 4096
    context_policy: ContextPolicy = "compact"
    draft: str = "off"
    draft_model: str = ""
    language: str = ""
    gpus: str = ""
    docs: tuple[str, ...] = ()
    engine_start: str = "off"

    def validate(self) -> None:
        """Raise ValueError naming the first setting with a value gptoss-local cannot use."""
        if self.backend not in BACKENDS:
            raise ValueError(_one_of("backend", BACKENDS, self.backend))
        if self.effort not in EFFORTS:
            raise ValueError(_one_of("effort", EFFORTS, self.effort))
        if not isinstance(self.context, int) or self.context < 0:
            raise ValueError(
                _("context must be a whole number ≥ 0 (0 = automatic), not {value}").format(
                    value=repr(self.context)
                )
            )
        if not self.model or not self.source:
            raise ValueError(_("model and source must not be empty"))
        for name in self.allowed_tools:
            if not isinstance(name, str) or not _TOOL_PATTERN.fullmatch(name):
                raise ValueError(
                    _(
                        "allowed_tools holds {name}: use tool names as `gptoss-local tools` "
                        'lists them, or patterns such as "git__*"'
                    ).format(name=repr(name))
                )
        for folder in self.docs:
            if not isinstance(folder, str) or not os.path.isabs(folder):
                raise ValueError(
                    _("docs holds {folder}: use absolute paths of folders, as "
                      "`gptoss-local docs add` writes them").format(folder=repr(folder))
                )  # fmt: skip
        if self.context_policy not in CONTEXT_POLICIES:
            raise ValueError(_one_of("context_policy", CONTEXT_POLICIES, self.context_policy))
        if self.engine_start not in ENGINE_STARTS:
            raise ValueError(_one_of("engine_start", ENGINE_STARTS, self.engine_start))
        if self.draft not in DRAFTERS:
            raise ValueError(_one_of("draft", DRAFTERS, self.draft))
        if self.draft == "eagle3" and not self.draft_model:
            raise ValueError(_('draft = "eagle3" needs draft_model, the EAGLE-3 head\'s file'))
        gpu_list(self.gpus)
        _at_least("max_tool_calls", self.max_tool_calls, 1)
        _at_least("python_timeout", self.python_timeout, 1)
        _at_least("python_memory_mb", self.python_memory_mb, 0)
        if 0 < self.python_memory_mb < 256:
            raise ValueError(_("python_memory_mb must be 0 (no limit) or at least 256"))


def gpu_list(text: str) -> tuple[int, ...] | None:
    """Cards by number, "0,1" (in the order given), from `--gpus` or the `gpus` setting; None
    for "" or "auto" (the planner chooses).

    Raises:
        ValueError: not a list of different whole numbers ≥ 0.
    """
    words = [word.strip() for word in text.split(",")]
    if words in ([""], ["auto"]):
        return None
    if not all(word.isdigit() for word in words) or len(set(map(int, words))) != len(words):
        raise ValueError(
            _(
                "gpus must list different GPU numbers as `gptoss-local doctor` shows them, "
                'such as "0,1", or be "auto", not {value}'
            ).format(value=repr(text))
        )
    return tuple(int(word) for word in words)


def _at_least(name: str, value: object, low: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(
            _("{setting} must be a whole number ≥ {low}, not {value}").format(
                setting=name, low=low, value=repr(value)
            )
        )


def _one_of(name: str, choices: tuple[str, ...], value: object) -> str:
    return _("{setting} must be one of {choices}, not {value}").format(
        setting=name, choices=", ".join(choices), value=repr(value)
    )


_FIELDS = {field.name: field.type for field in dataclasses.fields(Settings)}


def load(path: Path | None = None) -> Settings:
    """Read the settings file; a missing file gives the defaults.

    Raises:
        SettingsError: the file is not valid TOML, has an unknown key or a bad value.
    """
    path = path or paths.settings_file()
    try:
        raw = load_toml(path)
    except FileNotFoundError:
        return Settings()
    except (OSError, TomlReadError) as exc:
        raise SettingsError(
            _("cannot read settings file {path}: {error}. Fix or delete it.").format(
                path=path, error=exc
            )
        ) from exc
    unknown = sorted(set(raw) - set(_FIELDS))
    if unknown:
        raise SettingsError(
            _("{path}: unknown setting(s) {names}").format(path=path, names=", ".join(unknown))
        )
    defaults = dataclasses.asdict(Settings())
    for key, value in raw.items():
        if isinstance(defaults[key], tuple):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise SettingsError(
                    _("{path}: setting {key} must be a list of strings").format(
                        path=path, key=repr(key)
                    )
                )
            raw[key] = tuple(value)
        elif type(value) is not type(defaults[key]):
            wrong = (
                _("{path}: setting {key} must be a whole number, not {value}")
                if isinstance(defaults[key], int)
                else _("{path}: setting {key} must be a string, not {value}")
            )
            raise SettingsError(wrong.format(path=path, key=repr(key), value=repr(value)))
    settings = Settings(**raw)
    try:
        settings.validate()
    except ValueError as exc:
        raise SettingsError(f"{path}: {exc}") from exc
    return settings


def save(settings: Settings, path: Path | None = None) -> Path:
    """Write the settings atomically and return the file's path."""
    settings.validate()
    path = path or paths.settings_file()
    paths.ensure_dir(path.parent)
    text = "".join(
        f"{key} = {_toml_value(value)}\n" for key, value in dataclasses.asdict(settings).items()
    )
    handle, tmp_name = tempfile.mkstemp(prefix=".settings-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as tmp:
            tmp.write(text)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return path


def _toml_value(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    # A JSON string literal is also a valid TOML basic string (same escapes).
    return json.dumps(str(value), ensure_ascii=False)
