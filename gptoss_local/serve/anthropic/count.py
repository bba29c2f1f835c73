"""`POST /v1/messages/count_tokens`: the tokens of the prompt a Messages request would send
(`{model, messages, system, tools, tool_choice, thinking}` -> `{"input_tokens": N}`).

An engine with the model's tokenizer counts exactly (`Backend.count_prompt`); one that keeps
its tokenizer to itself (Ollama's, a remote server's) gets an estimate from the rendered
prompt, about one token per four bytes, which is what Anthropic promises of its own count
too (an estimate), so that clients that size their context by it keep working.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gptoss_local.attachments import estimate_tokens
from gptoss_local.backends.base import Backend, BackendError, GenerationSettings, ReplyRequest
from gptoss_local.harmony import render_prompt
from gptoss_local.serve.anthropic.request import MessagesReader
from gptoss_local.serve.limits import Limits

PATH = "/v1/messages/count_tokens"
READER = MessagesReader(counting=True)


def count_tokens(
    backend: Backend,
    data: Any,
    names: Sequence[str],
    defaults: GenerationSettings,
    limits: Limits,
) -> dict[str, int]:
    """The body of count_tokens' answer for the request `data` (a 400 or 404 `ApiError` as
    the Messages API's would be)."""
    request = READER.read(data, names, defaults, limits).request
    if backend.capabilities.tokenizer:
        try:
            return {"input_tokens": backend.count_prompt(request)}
        except BackendError:
            pass  # an engine that could not count after all: estimate as below
    return {"input_tokens": estimate_tokens(_prompt(request))}


def _prompt(request: ReplyRequest) -> str:
    c = request.conversation
    return render_prompt(list(c.messages), effort=request.settings.effort,
                         instructions=c.instructions, tools=c.tools)  # fmt: skip
