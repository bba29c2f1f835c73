"""What `run` asks of its replies beyond the conversation: `--schema`'s response format and
`--tool-choice`; and the answer held against the schema once it is printed."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from gptoss_local.backends.base import (
    Backend,
    BackendInfo,
    Reply,
    ReplyRequest,
    ResponseFormat,
    ToolChoice,
)
from gptoss_local.chat.context_keeper import estimate_prompt
from gptoss_local.conversation import Conversation
from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.schemas import SchemaError, SchemaLoop, check_answer, check_schema

NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what OpenAI's API takes as a format's name


def response_format(given: str | None) -> ResponseFormat | None:
    """`--schema`: a JSON schema file, or the schema itself as JSON (text that starts with
    `{`); named after the file where its name is a plain word.

    Raises:
        WishError: The file cannot be read, is not JSON, or holds something else than an object.
    """
    if given is None:
        return None
    inline = given.lstrip().startswith(("{", "[", '"'))
    where = "--schema" if inline else f"--schema {given}"
    try:
        text = given if inline else Path(given).read_text(encoding="utf-8")
        schema = json.loads(text)
    except FileNotFoundError:
        raise WishError(
            _("{where}: no such file").format(where=where),
            _("Give a JSON schema file, or the schema itself: --schema '{example}'").format(
                example='{"type": "object", "properties": {"name": {"type": "string"}}}'
            ),
        ) from None
    except RecursionError:
        raise WishError(_("{where}: the JSON is nested too deeply").format(where=where)) from None
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, not JSON
        raise WishError(_("{where}: not JSON ({error})").format(where=where, error=exc)) from None
    if not isinstance(schema, dict):
        raise WishError(
            _("{where}: a JSON schema is an object, not {kind}").format(
                where=where, kind=kind_of(schema)
            )
        )
    _check_loops(schema, where)
    stem = "" if inline else Path(given).stem
    return ResponseFormat(schema, name=stem if NAME.fullmatch(stem) else "response")


def _check_loops(schema: dict[str, object], where: str) -> None:
    """Refuse refs that loop with no way out: no engine could finish an answer to them (other
    keywords the llama.cpp grammar cannot hold are its own refusal, when it is asked)."""
    try:
        check_schema(schema)
    except SchemaLoop as exc:
        if exc.empty:
            raise WishError(
                f"{where}: {exc}",
                _("Give each loop of refs a way out (an optional property, null)."),
            ) from None
    except SchemaError:
        pass


def tool_choice(given: str | None, conversation: Conversation) -> ToolChoice:
    """`--tool-choice`: `auto` (the model decides), `required` (a call of any tool offered),
    or the name of the function tool it must call.

    Raises:
        WishError: No tools are offered, or none of that name.
    """
    if given is None or given == "auto":
        return ToolChoice()
    offered = [tool.name for tool in conversation.tools]
    if not offered:
        raise WishError(
            _("--tool-choice {choice}: no function tools are offered").format(choice=given),
            _("Offer some with --tools FILE, or an MCP tool with --allow-tool NAME."),
        )
    if given == "required":
        return ToolChoice(required=True)
    tool = next((t for t in conversation.tools if t.name == given), None)
    if tool is None:
        raise WishError(
            _("--tool-choice {choice}: no function tool of that name is offered ({names})").format(
                choice=given, names=", ".join(offered)
            )
        )
    return ToolChoice(name=tool.name, namespace=tool.namespace)


def kind_of(value: object) -> str:
    """What a JSON value is, in words ("an object", "a list", "a number")."""
    if value is None:
        return "null"
    number = _("a number")
    names: dict[type, str] = {dict: _("an object"), list: _("a list"), str: _("a string"),
                              bool: _("true or false"), int: number, float: number}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def answer_problem(answer: str, fmt: ResponseFormat) -> str | None:
    """Why `answer` does not hold to `fmt` (not JSON, or JSON the schema refuses); None when
    it does."""
    try:
        check_answer(answer, fmt)
    except ValueError as exc:
        return str(exc)
    return None


class AskedBackend:
    """`backend`, with `response_format` asked of every reply and `tool_choice` of the first.

    The tool loop streams one reply per model turn: the answer may come at any of them, so
    each is held to the format; a forced call applies to the first turn only (its result then
    lets the model answer, as OpenAI's agents reset `tool_choice` after a call).
    """

    def __init__(
        self, backend: Backend, response_format: ResponseFormat | None, tool_choice: ToolChoice
    ) -> None:
        self._backend, self._format, self._choice = backend, response_format, tool_choice
        self.capabilities = backend.capabilities

    def info(self) -> BackendInfo:
        """What is loaded."""
        return self._backend.info()

    def stream(self, request: ReplyRequest, cancel: threading.Event | None = None) -> Reply:
        """The next turn, asked what `run` asks (see `Backend.stream`)."""
        asked = replace(request, response_format=self._format, tool_choice=self._choice)
        self._choice = ToolChoice()
        return self._backend.stream(asked, cancel)

    def count_prompt(self, request: ReplyRequest) -> int:
        """The prompt's tokens, with the format shown to the model, by the engine's tokenizer
        where it has one (else estimated)."""
        count: Callable[[ReplyRequest], int] | None = getattr(self._backend, "count_prompt", None)
        asked = replace(request, response_format=self._format)
        return count(asked) if count is not None else estimate_prompt(asked.conversation)

    def prefill(self, request: ReplyRequest, cancel: threading.Event | None = None) -> int:
        """As the backend's (`run` never prefills)."""
        return self._backend.prefill(replace(request, response_format=self._format), cancel)

    def keep_conversations(self, max_bytes: int) -> None:
        """As the backend's."""
        self._backend.keep_conversations(max_bytes)

    def close(self) -> None:
        """Free the model."""
        self._backend.close()
