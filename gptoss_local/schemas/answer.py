"""An answer (or a call's arguments) held to its JSON schema once it is written.

The engine's grammar makes a mismatch impossible where it holds the reply; this is the check
that says so, for every engine (Ollama's and a remote server's answers too), and the one place
that says what is wrong: the `jsonschema` library's verdict, with the path of the value that
fails (`$.items[2].price`).
"""

from __future__ import annotations

import json
from typing import Any, Protocol


class Format(Protocol):
    """What the check reads of a response format (`backends.base.ResponseFormat`, which sits
    above this package): its schema, None for any JSON object."""

    @property
    def schema(self) -> dict[str, Any] | None: ...


class AnswerError(ValueError):
    """The text is not JSON, or not JSON the schema accepts; the message says where."""


def check_answer(text: str, response_format: Format) -> Any:
    """The answer's JSON value, checked against the format (no schema: any JSON object).

    Raises:
        AnswerError: naming what fails and its path.
    """
    value = parse_json(text, "the answer")
    if response_format.schema is None:
        if not isinstance(value, dict):
            raise AnswerError("the answer is JSON but not an object")
        return value
    check_value(value, response_format.schema, "the answer")
    return value


def check_arguments(text: str, parameters: dict[str, Any] | None) -> Any:
    """A tool call's arguments, checked against the tool's parameter schema (None: `{}`).

    Raises:
        AnswerError: naming what fails and its path.
    """
    value = parse_json(text, "the arguments")
    schema = parameters if parameters is not None else {"type": "object", "maxProperties": 0}
    check_value(value, schema, "the arguments")
    return value


def parse_json(text: str, what: str) -> Any:
    """`text` as JSON (strict: raw control characters in strings are refused, as JSON says).

    Raises:
        AnswerError: it is not (complete) JSON.
    """
    if not text.strip():
        raise AnswerError(f"{what} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise AnswerError(
            f"{what} is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise AnswerError(f"{what} nests too deeply") from None


def check_value(value: Any, schema: dict[str, Any], what: str) -> None:
    """Hold a JSON value to a schema (its `$schema`'s draft, else 2020-12; formats checked).

    Raises:
        AnswerError: with the path of the first value that fails.
    """
    import jsonschema  # deferred: ~0.1 s, paid by a reply with a format only

    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    # The draft's own format checker: FormatChecker() mixes every draft's, and draft 3's
    # "time" (HH:MM:SS, no offset) would refuse what later drafts ask for.
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except jsonschema.exceptions.SchemaError as exc:  # pragma: no cover - checked before
        raise AnswerError(f"the schema is not valid JSON Schema: {exc.message}") from None
    except RecursionError:
        raise AnswerError(f"{what} nests too deeply for the schema check") from None
    if error is not None:
        raise AnswerError(f"{what} does not match the schema at {error.json_path}: "
                          f"{error.message}")  # fmt: skip
