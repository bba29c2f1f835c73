"""Ollama's request fields that OpenAI's dialect spells otherwise: `options` (sampling, the
token limit, stop strings, the context), `think` and `keep_alive`.

Options are mapped to the names the shared reader takes (`fields.sampling`); an option this
server cannot honour is refused by name rather than silently ignored, except the ones that
only say how a model is loaded (`IGNORED`): apps send those with every request, and `serve`
loaded its model once, at start.
"""

from __future__ import annotations

import math
from typing import Any

from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.keep_alive import parse_keep_alive

# Ollama's name -> the shared reader's name (`fields.sampling`, `fields.stops`).
MAPPED = {"temperature": "temperature", "top_p": "top_p", "seed": "seed", "stop": "stop",
          "frequency_penalty": "frequency_penalty", "presence_penalty": "presence_penalty",
          "num_predict": "num_predict"}  # fmt: skip
# Read here: they have no OpenAI spelling (`settings`), or only bound the request.
OWN = frozenset({"top_k", "min_p", "num_ctx"})
# How the model is loaded: settled when serve started, so accepted and ignored.
IGNORED = frozenset({"num_gpu", "main_gpu", "num_thread", "num_batch", "use_mmap", "use_mlock",
                     "numa", "low_vram", "num_keep"})  # fmt: skip
# Accepted only at the value that switches them off: the engine has no such stage.
NEUTRAL = {"repeat_penalty": 1, "mirostat": 0, "typical_p": 1, "tfs_z": 1}
UNLIMITED = (-1, -2)  # num_predict: no limit, or until the context is full
FOREVER = -1.0  # ApiRequest.keep_alive: negative, until the server stops


def mapped(options: Any, context: int) -> dict[str, Any]:
    """The request fields `options` stands for, under the shared reader's names.

    Args:
        options: The request's `options` (None when absent).
        context: The loaded model's context, in tokens (`num_ctx` may not ask for more).
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise bad_request("options must be an object", "options")
    fields: dict[str, Any] = {}
    for name, value in options.items():
        if name in MAPPED:
            if name == "num_predict" and value in UNLIMITED:
                continue
            fields[MAPPED[name]] = value
        elif name == "num_ctx":
            _check_context(value, context)
        elif name in NEUTRAL:
            _check_neutral(name, value)
        elif name not in OWN and name not in IGNORED:
            raise bad_request(f"the option {name!r} is not supported by this server "
                              f"(gptoss-local); leave it out", f"options.{name}")  # fmt: skip
    return fields


def settings(options: Any) -> dict[str, Any]:
    """`top_k` and `min_p`, checked, as `GenerationSettings` fields."""
    found: dict[str, Any] = {}
    if not isinstance(options, dict):
        return found
    top_k, min_p = options.get("top_k"), options.get("min_p")
    if top_k is not None:
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
            raise bad_request("options.top_k must be a whole number of 0 (off) or more",
                              "options.top_k")  # fmt: skip
        found["top_k"] = top_k
    if min_p is not None:
        number = not isinstance(min_p, bool) and isinstance(min_p, (int, float))
        if not (number and math.isfinite(min_p) and 0 <= min_p <= 1):
            raise bad_request("options.min_p must be a number from 0 to 1", "options.min_p")
        found["min_p"] = float(min_p)
    return found


def _check_context(value: Any, context: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise bad_request("options.num_ctx must be a whole number of 1 or more", "options.num_ctx")
    if value > context:
        raise bad_request(
            f"options.num_ctx asks for {value} tokens of context; this server's model has "
            f"{context}. Ask for at most {context}, or restart serve with a larger --context.",
            "options.num_ctx",
        )  # fmt: skip


def _check_neutral(name: str, value: Any) -> None:
    if value != NEUTRAL[name] or isinstance(value, bool):
        raise bad_request(f"the option {name!r} is not supported by this server (gptoss-local) "
                          f"except at {NEUTRAL[name]}, which switches it off; leave it out",
                          f"options.{name}")  # fmt: skip


def effort(think: Any) -> Any:
    """`think` as a reasoning effort: "low", "medium" or "high" as it is; true or false mean
    the server's default (gpt-oss always reasons and takes no switch); else the value, which
    the shared reader refuses naming the efforts."""
    if think is None or isinstance(think, bool):
        return None
    return think


def keep_alive(value: Any) -> float | None:
    """`keep_alive` in seconds: a number of seconds, or a duration ("5m", "1h30m", "300ms",
    "-1m"), or a number as text ("-1"); negative keeps the model loaded until the server
    stops (-1), 0 unloads it at once, None (absent) is the server's default."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise _bad_keep_alive(value)
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        seconds = _duration(value.strip())
    else:
        raise _bad_keep_alive(value)
    if not math.isfinite(seconds):
        raise _bad_keep_alive(value)
    return FOREVER if seconds < 0 else seconds


def _duration(text: str) -> float:
    try:
        return parse_keep_alive(text)  # serve --keep-alive's spelling, which is Ollama's
    except ValueError:
        raise _bad_keep_alive(text) from None


def _bad_keep_alive(value: Any) -> Exception:
    return bad_request(f"keep_alive must be a duration such as \"5m\" or \"1h30m\", a number of "
                       f"seconds, 0 (unload now) or -1 (keep loaded), not {value!r}",
                       "keep_alive")  # fmt: skip
