"""What `run` asks of its replies beyond the conversation: `--schema`'s response format and
`--tool-choice`; and the answer held against the schema once it is printed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gptoss_local.backends.base import ResponseFormat, ToolChoice
from gptoss_local.conversation import Conversation
from gptoss_local.errors import WishError
from gptoss_local.harmony.names import ToolNames
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


def tool_choice(
    given: str | None, conversation: Conversation, names: ToolNames | None = None
) -> ToolChoice:
    """`--tool-choice`: `auto` (the model decides), `required` (a call of any tool offered),
    or the name of the function tool it must call (as `--tools` names it: `names`).

    Raises:
        WishError: No tools are offered, or none of that name.
    """
    if given is None or given == "auto":
        return ToolChoice()
    names = names or ToolNames()
    offered = [names.client(tool.name) for tool in conversation.tools]
    if not offered:
        raise WishError(
            _("--tool-choice {choice}: no function tools are offered").format(choice=given),
            _("Offer some with --tools FILE, or an MCP tool with --allow-tool NAME."),
        )
    if given == "required":
        return ToolChoice(required=True)
    wanted = names.known(given) or given
    tool = next((t for t in conversation.tools if t.name == wanted), None)
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
