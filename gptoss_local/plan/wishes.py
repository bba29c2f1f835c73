"""What the user asked for: the command line over the settings file, in one type.

`doctor`, `run`, `bench`, `chat` and the first-run screen all start from a `Wishes`; the planner
turns it into a `Plan`. `given` remembers which fields the command line set, so the first-run
screen does not ask those again.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

from gptoss_local import config
from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.kinds import BackendName, Effort

# Command-line flags (argparse names) and the fields they set.
_FLAGS = {
    "model": "model",
    "context": "context",
    "effort": "effort",
    "backend": "backend",
    "cpu_moe": "cpu_moe_layers",
    "model_path": "model_path",
    "gpus": "gpus",
}


@dataclass(frozen=True)
class Wishes:
    """What the user asked for; None leaves the choice to the planner.

    Attributes:
        model: A model name or alias from the manifest.
        context: Context length in tokens.
        effort: Reasoning effort of new chats and of `run`.
        backend: The engine.
        cpu_moe_layers: Keep the experts of this many layers in system RAM.
        kv_type: The KV cache's type.
        model_path: A GGUF file to load instead of a manifest model.
        cpu_sampling: Sample on the CPU even when the model runs on a GPU.
        draft: Speculative decoding's drafter ("ngram", "eagle3"), or "" for none.
        draft_model: The EAGLE-3 head drafting with "eagle3".
        base_url: The OpenAI-compatible server of the `openai` backend (`--base-url`, else
            `OPENAI_BASE_URL`).
        api_key: That server's key (`--server-key`, else `OPENAI_API_KEY`).
        allow_http: Plain http:// to that server even beyond the local network.
        parallel: Replies the llama.cpp engine decodes together (`serve --parallel`).
        min_context: The least context the caller needs when `context` is not given (`codex`:
            an agent's prompts are long); the planner keeps it where memory allows.
        gpus: The cards to run on, by NVML's numbers (`doctor`'s), in llama.cpp's order: the
            first takes the first layers, the last the output layer; None lets the planner
            choose (`--gpus`, else the `gpus` setting).
        given: The fields the command line set (not asked again on the first-run screen).
    """

    model: str | None = None
    context: int | None = None
    effort: Effort = "medium"
    backend: BackendName = "llamacpp"
    cpu_moe_layers: int | None = None
    kv_type: str = "f16"
    model_path: Path | None = None
    cpu_sampling: bool = False
    draft: str = ""
    draft_model: Path | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    allow_http: bool = False
    parallel: int = 1
    min_context: int | None = None
    gpus: tuple[int, ...] | None = None
    given: frozenset[str] = frozenset()

    @property
    def everything_given(self) -> bool:
        """Whether no first-run question is left (context has a good default: not needed)."""
        return {"model", "backend", "effort"} <= self.given


def wishes_from(args: argparse.Namespace, settings: config.Settings) -> Wishes:
    """Command-line choices over the settings file's defaults; flags a command lacks count as
    not given.

    Raises:
        WishError: a negative context or `--cpu-moe`, or `--model-path` with another engine
            than llama.cpp.
    """
    flags = {field: getattr(args, flag, None) for flag, field in _FLAGS.items()}
    model = flags["model"] or settings.model
    context = flags["context"] if flags["context"] is not None else settings.context
    if context < 0:
        raise WishError(_("--context must be positive, not {context}").format(context=context))
    cpu_moe = flags["cpu_moe_layers"]
    if cpu_moe is not None and cpu_moe < 0:
        raise WishError(_("--cpu-moe must be 0 or more, not {cpu_moe}").format(cpu_moe=cpu_moe))
    wishes = Wishes(
        model=None if model == "auto" else model,
        context=context or None,
        effort=flags["effort"] or settings.effort,
        backend=_backend(flags["backend"], flags["model_path"], args, settings),
        cpu_moe_layers=cpu_moe,
        model_path=flags["model_path"],
        cpu_sampling=bool(getattr(args, "cpu_sampling", False)),
        draft=_draft(getattr(args, "draft", None), getattr(args, "draft_model", None), settings),
        draft_model=getattr(args, "draft_model", None) or _path(settings.draft_model),
        base_url=getattr(args, "base_url", None) or os.environ.get("OPENAI_BASE_URL") or None,
        api_key=getattr(args, "api_key", None) or os.environ.get("OPENAI_API_KEY") or None,
        allow_http=bool(getattr(args, "allow_http", False)),
        parallel=getattr(args, "parallel", None) or 1,
        gpus=_gpus(flags["gpus"], settings.gpus),
        given=frozenset(field for field, value in flags.items() if value is not None),
    )
    if wishes.draft == "eagle3" and wishes.draft_model is None:
        raise WishError(
            _(
                "--draft eagle3 needs an EAGLE-3 head: --draft-model FILE, or the "
                "draft_model setting"
            )
        )
    if wishes.model_path is not None and wishes.backend != "llamacpp":
        raise WishError(
            _("--model-path works with the llama.cpp backend only (--backend llamacpp)")
        )
    return wishes


def _gpus(flag: tuple[int, ...] | None, setting: str) -> tuple[int, ...] | None:
    """The cards asked for: the command line's (empty: "auto", the planner's) over the
    settings file's."""
    if flag is not None:
        return flag or None
    return config.gpu_list(setting)


def _draft(flag: str | None, head: Path | None, settings: config.Settings) -> str:
    """The drafter: the command line's ("off": none; a head given: "eagle3") over the
    settings file's."""
    chosen = flag if flag is not None else "eagle3" if head is not None else settings.draft
    return "" if chosen == "off" else chosen


def _path(text: str) -> Path | None:
    return Path(text).expanduser() if text else None


def _backend(
    flag: BackendName | None,
    model_path: Path | None,
    args: argparse.Namespace,
    settings: config.Settings,
) -> BackendName:
    """The engine asked for; a file of one's own runs in llama.cpp and a server's address
    means the OpenAI-compatible client, unless another engine is named (then refused)."""
    if flag:
        return flag
    if model_path:
        return "llamacpp"
    return "openai" if getattr(args, "base_url", None) else settings.backend
