"""Ollama's `POST /api/chat` and `POST /api/generate` requests as `ApiRequest`s.

Each is read in the shared order (`RequestReader.read`) once its own spelling is turned into
the shared one: `options` into the sampling fields (`options.mapped`; `top_k` and `min_p` into
the defaults), `stream` true unless the request says false (Ollama's default), `think` into
the reasoning effort, `format` ("json" or a JSON schema) into the answer's format, which the
engine holds after the reasoning, and `keep_alive` into seconds.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gptoss_local.backends.base import GenerationSettings, ResponseFormat
from gptoss_local.conversation import Message
from gptoss_local.harmony.names import ANY_NAME, ToolNames
from gptoss_local.serve.api_request import ApiRequest, RequestReader
from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.fields import Body
from gptoss_local.serve.formats import JSON_OBJECT, check_schema
from gptoss_local.serve.limits import Limits
from gptoss_local.serve.ollama import messages, options


class OllamaReader(RequestReader):
    """What both of Ollama's generating requests share (see the module's docstring).

    Attributes:
        kept: The request's fields the shared reader reads as they are.
    """

    effort_param = "think"
    format_param = "format"
    max_keys = ("num_predict",)
    name_rule = ANY_NAME
    kept: tuple[str, ...] = ("model", "think", "format", "logprobs", "top_logprobs")

    def translated(
        self, sent: Body, defaults: GenerationSettings, limits: Limits
    ) -> tuple[dict[str, Any], GenerationSettings]:
        self.refuse_own(sent)
        data, given = sent.data, sent.data.get("options")
        shared = {key: data[key] for key in self.kept if key in data}
        shared.update(options.mapped(given, limits.context))
        shared["stream"] = True if data.get("stream") is None else data["stream"]
        return shared, replace(defaults, **options.settings(given))

    def completed(self, asked: ApiRequest, sent: Body, defaults: GenerationSettings) -> ApiRequest:
        return replace(asked, keep_alive=options.keep_alive(sent.data.get("keep_alive")))

    def refuse_own(self, body: Body) -> None:
        """Refuse what only this request may ask and the server cannot honour."""

    def refuse(self, body: Body) -> None:
        pass  # done on the request as sent (`refuse_own`)

    def effort(self, body: Body) -> Any:
        return options.effort(body.data.get("think"))

    def response_format(self, body: Body) -> ResponseFormat | None:
        value = body.data.get("format")
        if value is None or value == "":
            return None
        if value == "json":
            return ResponseFormat(schema=None, name=JSON_OBJECT, strict=False)
        if isinstance(value, dict):
            check_schema(value, "format")
            return ResponseFormat(schema=value)
        raise bad_request('format must be "json" or a JSON schema (an object)', "format")

    def include_usage(self, body: Body) -> bool:
        return False  # the last line of every reply carries the counts


class ChatReader(OllamaReader):
    """Reads a `POST /api/chat` request."""

    param = "messages"
    kept = (*OllamaReader.kept, "messages", "tools")

    def history(
        self, body: Body, limits: Limits, names: ToolNames
    ) -> tuple[list[Message], str | None]:
        items = body.items("messages")
        limits.check_count(items or [], "messages")  # before reading them one by one
        return messages.chat_history(items, names)


class GenerateReader(OllamaReader):
    """Reads a `POST /api/generate` request (a prompt, without tools)."""

    param = "prompt"
    kept = (*OllamaReader.kept, "prompt", "system", "images")

    def refuse_own(self, body: Body) -> None:
        if body.flag("raw"):
            raise bad_request("raw prompts are not supported: the server writes gpt-oss's "
                              "prompt in Harmony; send the prompt without raw", "raw")  # fmt: skip
        for key in ("suffix", "template", "context"):
            if body.data.get(key):
                raise bad_request(f"{key} is not supported by this server (gptoss-local); "
                                  "leave it out", key)  # fmt: skip

    def history(
        self, body: Body, limits: Limits, names: ToolNames
    ) -> tuple[list[Message], str | None]:
        return messages.generate_history(body)
