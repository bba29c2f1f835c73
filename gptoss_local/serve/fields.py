"""The request fields both APIs share, read and checked: a wrong type or value is a 400 that
names the field."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from gptoss_local.backends.base import GenerationSettings
from gptoss_local.conversation import Tool
from gptoss_local.harmony.names import ToolNames
from gptoss_local.harmony.tools import custom_tool, function_tool, namespace_tools
from gptoss_local.kinds import EFFORTS, Effort
from gptoss_local.serve.errors import ApiError, bad_request
from gptoss_local.serve.limits import check_stops, check_tools
from gptoss_local.serve.model_names import accepts

MAX_STOPS = 16
MAX_LOGIT_BIASES = 1024  # each is applied at every token
MAX_TOKEN_ID = 2**31  # llama.cpp's token ids are 32-bit
# Tools that need the internet: a client that offers them (Codex offers web_search by default)
# is answered without them, and the server's log says so.
OFFLINE_DROPPED = frozenset({"web_search", "web_search_preview"})
log = logging.getLogger("gptoss_local.serve")


class Body:
    """A request's JSON object, read field by field; a wrong type is a 400 naming the field."""

    def __init__(self, data: Any) -> None:
        if not isinstance(data, dict):
            raise bad_request("the request body must be a JSON object")
        self.data: dict[str, Any] = data

    def present(self, key: str) -> bool:
        """Whether the field is there and not null."""
        return self.data.get(key) is not None

    def text(self, key: str) -> str | None:
        return self._typed(key, str, "a string")

    def flag(self, key: str) -> bool:
        return bool(self._typed(key, bool, "true or false"))

    def mapping(self, key: str) -> dict[str, Any] | None:
        return self._typed(key, dict, "an object")

    def items(self, key: str) -> list[Any] | None:
        return self._typed(key, list, "an array")

    def number(self, key: str, low: float, high: float) -> float | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad_request(f"{key} must be a number", key)
        if not (math.isfinite(value) and low <= value <= high):
            raise bad_request(f"{key} must be between {low:g} and {high:g}, not {value}", key)
        return float(value)

    def whole(self, key: str, low: int) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad_request(f"{key} must be a whole number", key)
        if value < low:
            raise bad_request(f"{key} must be at least {low}, not {value}", key)
        return value

    def _typed(self, key: str, kind: type, words: str) -> Any:
        value = self.data.get(key)
        if value is not None and not isinstance(value, kind):
            raise bad_request(f"{key} must be {words}", key)
        return value


def each_message(
    items: Any, read: Callable[[dict[str, Any], str], None], where: str = "messages[{}]"
) -> None:
    """Calls `read(message, place)` on each of a request's messages, in order; `place` is
    `where` with its index, as the errors name it. A 400 when `items` is not a non-empty array
    of objects, and for a name the Harmony renderer refuses (its `ValueError`) in a message."""
    if not isinstance(items, list) or not items:
        raise bad_request("messages must be a non-empty array", "messages")
    for index, item in enumerate(items):
        place = where.format(index)
        if not isinstance(item, dict):
            raise bad_request("each message must be an object", place)
        try:
            read(item, place)
        except ValueError as exc:
            raise bad_request(str(exc), place) from None


def model_name(body: Body, known: Sequence[str]) -> str:
    """The model asked for: `known[0]` (the loaded model's id) when the request names it by
    any of `known` or another spelling of the same model (`model_names.accepts`), else a
    404."""
    model = body.text("model")
    if not model:
        raise bad_request("model is required (see GET /v1/models)", "model", "missing_model")
    if not accepts(model, known):
        message = f"The model {model!r} does not exist here; this server has {known[0]!r}"
        raise ApiError(404, f"{message} (see GET /v1/models).", "model_not_found", "model")
    return known[0]


# OpenAI's names for less reasoning than low and more than high, as gpt-oss's nearest: apps
# send "none" when their user turns thinking off (oterm does, through pydantic-ai), which
# Ollama accepts; gpt-oss cannot stop reasoning, so the least it does is what they get.
NEAREST: dict[str, Effort] = {"none": "low", "minimal": "low", "xhigh": "high"}


def effort(value: Any, param: str, default: Effort) -> Effort:
    """A reasoning effort; gpt-oss knows low, medium and high and cannot switch reasoning off
    (`NEAREST` takes OpenAI's other names)."""
    if value is None:
        return default
    for known in EFFORTS:
        if value == known:
            return known
    if isinstance(value, str) and value in NEAREST:
        return NEAREST[value]
    raise bad_request(
        f"{param} must be one of {', '.join(EFFORTS)} (or {', '.join(NEAREST)}), not {value!r}",
        param,
    )


def sampling(
    body: Body, defaults: GenerationSettings, max_keys: Sequence[str]
) -> GenerationSettings:
    """`temperature`, `top_p`, `seed`, the penalties, `logit_bias` and the first of `max_keys`
    present, over the server's defaults."""
    max_tokens = defaults.max_tokens
    for key in max_keys:
        if body.present(key):
            max_tokens = body.whole(key, 1)
            break
    temperature, top_p = body.number("temperature", 0, 100), body.number("top_p", 0, 1)
    if top_p == 0:
        raise bad_request("top_p must be more than 0", "top_p")
    return replace(
        defaults,
        max_tokens=max_tokens,
        temperature=defaults.temperature if temperature is None else temperature,
        top_p=defaults.top_p if top_p is None else top_p,
        seed=body.whole("seed", -(2**63)) if body.present("seed") else defaults.seed,
        frequency_penalty=_or(body.number("frequency_penalty", -2, 2), defaults.frequency_penalty),
        presence_penalty=_or(body.number("presence_penalty", -2, 2), defaults.presence_penalty),
        logit_bias=logit_bias(body) or defaults.logit_bias,
    )


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def logit_bias(body: Body) -> tuple[tuple[int, float], ...]:
    """`logit_bias`: `{"TOKEN_ID": BIAS}`, ids of the model's vocabulary as decimal text and
    biases from -100 (never) to 100 (always), as (id, bias) pairs in id order."""
    given = body.mapping("logit_bias") or {}
    if len(given) > MAX_LOGIT_BIASES:
        raise bad_request(f"logit_bias takes at most {MAX_LOGIT_BIASES} tokens", "logit_bias")
    pairs = []
    for key, bias in given.items():
        if not (key.isascii() and key.isdigit() and int(key) < MAX_TOKEN_ID):
            raise bad_request(f"logit_bias keys are token ids (whole numbers as text), not "
                              f"{key[:40]!r}", "logit_bias")  # fmt: skip
        number = not isinstance(bias, bool) and isinstance(bias, (int, float))
        if not (number and math.isfinite(bias) and -100 <= bias <= 100):
            raise bad_request(f"logit_bias[{key!r}] must be a number from -100 to 100",
                              "logit_bias")  # fmt: skip
        pairs.append((int(key), float(bias)))
    return tuple(sorted(pairs))


def tools(body: Body, names: ToolNames, responses: bool = False) -> tuple[Tool, ...]:
    """The tools the request offers, by the model's names for them (`names`);
    `choice.tool_choice` then applies `tool_choice`.

    `responses`: the Responses API's kinds are read too: tools grouped in namespaces, freeform
    (`custom`) tools, and web search, which is left out with a line in the log (nothing here
    reaches the internet). Chat Completions refuses custom tools: its replies have no way to
    give their calls back yet.
    """
    offered: list[Tool] = []
    items = body.items("tools") or []
    check_tools(items)  # before each is checked and rendered
    for index, item in enumerate(items):
        kind = item.get("type") if isinstance(item, dict) else None
        if responses and kind in OFFLINE_DROPPED:
            log.warning("tools[%d] (%s) left out: this server does not reach the internet",
                        index, kind)  # fmt: skip
            continue
        if kind == "custom" and not responses:
            raise bad_request("custom tools are offered on /v1/responses only; "
                              "/v1/chat/completions takes function tools", f"tools[{index}]",
                              "unsupported_value")  # fmt: skip
        try:
            if responses and kind == "namespace":
                offered += namespace_tools(item, index, names)
            elif kind == "custom":
                offered.append(custom_tool(item, index, names))
            else:
                offered.append(function_tool(item, index, names))
        except ValueError as exc:
            raise bad_request(str(exc), f"tools[{index}]") from None
    return tuple(offered)


def stops(value: Any) -> tuple[str, ...]:
    """`stop`: one string or a list of them."""
    if value is None:
        return ()
    found = [value] if isinstance(value, str) else value
    if not isinstance(found, list) or not all(isinstance(s, str) and s for s in found):
        raise bad_request("stop must be a non-empty string or an array of them", "stop")
    if len(found) > MAX_STOPS:
        raise bad_request(f"stop takes at most {MAX_STOPS} strings", "stop")
    check_stops(found)
    return tuple(found)


def refuse_unsupported(body: Body) -> None:
    """Fields whose meaning the server cannot honour are refused rather than ignored."""
    n = body.whole("n", 1)
    if n not in (None, 1):
        raise bad_request("n must be 1: one reply per request", "n", "unsupported_value")
    if body.flag("logprobs") or body.present("top_logprobs"):
        raise bad_request("logprobs are not available", "logprobs", "unsupported_parameter")
    if body.present("previous_response_id") or body.present("conversation"):
        raise bad_request(
            "this server keeps no responses: send the whole conversation in input",
            "previous_response_id", "unsupported_parameter",
        )  # fmt: skip
