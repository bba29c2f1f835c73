"""Structured outputs: the answer's format as either API asks for it, read into the backend's
`ResponseFormat`, and the answer checked against it before the reply is finished.

Chat Completions asks with `response_format` (`{"type": "json_object"}`, or `{"type":
"json_schema", "json_schema": {"name", "schema", "strict", "description"}}`), the Responses API
with `text.format` (`{"type": "json_object"}`, or `{"type": "json_schema", "name", "schema",
"strict", "description"}`); `{"type": "text"}` (or nothing) asks for none. A schema must be a
JSON object, valid JSON Schema, and one the engine's grammar can hold (`structured.
check_schema`: no keyword left out unenforced); anything else is a 400 naming the field. The engine
holds the answer to the format (a grammar over the final message; `Capabilities.
response_format`), and `check_answer` holds what it wrote to the format once more: a finished
answer that does not match is the server's failure (`mismatch`), never passed off as one that
does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gptoss_local import schemas
from gptoss_local.backends.base import ResponseFormat
from gptoss_local.serve.errors import ApiError, bad_request
from gptoss_local.serve.limits import MAX_TOOL_CHARS

JSON_OBJECT = "json_object"
JSON_SCHEMA = "json_schema"
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # OpenAI's rule for a format's name


def chat_format(value: Any) -> ResponseFormat | None:
    """The Chat Completions `response_format`; None for plain text."""
    return _format(value, "response_format", nested=True)


def responses_format(text: Any) -> ResponseFormat | None:
    """The Responses API's `text` field's `format`; None for plain text."""
    if text is None:
        return None
    if not isinstance(text, dict):
        raise bad_request("text must be an object", "text")
    return _format(text.get("format"), "text.format", nested=False)


def as_given(response_format: ResponseFormat | None) -> dict[str, Any]:
    """The format as the Responses API echoes it in its response object."""
    if response_format is None:
        return {"type": "text"}
    if response_format.schema is None:
        return {"type": JSON_OBJECT}
    return {"type": JSON_SCHEMA, "name": response_format.name,
            "schema": response_format.schema, "strict": response_format.strict}  # fmt: skip


def check_answer(text: str, response_format: ResponseFormat) -> None:
    """Hold a finished answer to its format.

    Raises:
        ApiError: a 500 saying how the answer misses the format (`mismatch`).
    """
    try:
        schemas.check_answer(text, response_format)
    except ValueError as exc:
        raise mismatch(str(exc)) from None


def mismatch(why: str) -> ApiError:
    """The error for an answer that misses its format: the engine should have made that
    impossible, so it is the server's failure (500), with what went wrong."""
    return ApiError(
        500,
        f"The model's answer does not match the requested response format ({why}). The "
        "engine holds answers to the schema, so this is a fault of the server: please "
        "report it; asking again may succeed.",
        "response_format_mismatch",
    )


def _format(value: Any, param: str, nested: bool) -> ResponseFormat | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise bad_request(f"{param} must be an object", param)
    kind = value.get("type")
    if kind == "text":
        return None
    if kind == JSON_OBJECT:
        return ResponseFormat(schema=None, name=JSON_OBJECT, strict=False)
    if kind != JSON_SCHEMA:
        raise bad_request(
            f"{param}.type must be text, json_object or json_schema, not {kind!r}",
            f"{param}.type", "unsupported_value",
        )  # fmt: skip
    where = f"{param}.{JSON_SCHEMA}" if nested else param
    spec = value.get(JSON_SCHEMA) if nested else value
    if not isinstance(spec, dict):
        raise bad_request(f"{where} must be an object with the schema", where)
    return _schema_format(spec, where)


def _schema_format(spec: dict[str, Any], where: str) -> ResponseFormat:
    name = spec.get("name", "response")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise bad_request("the format's name must be 1 to 64 letters, digits, _ or -",
                          f"{where}.name")  # fmt: skip
    if not isinstance(spec.get("description", ""), str):
        raise bad_request("the format's description must be text", f"{where}.description")
    strict = spec.get("strict")
    if not isinstance(strict, (bool, type(None))):
        raise bad_request("strict must be true or false", f"{where}.strict")
    schema = spec.get("schema")
    if schema is None:
        raise bad_request('a json_schema format needs its schema (or ask for "json_object")',
                          f"{where}.schema")  # fmt: skip
    check_schema(schema, f"{where}.schema", f"the schema {name!r}")
    return ResponseFormat(schema=schema, name=name, strict=bool(strict),
                          description=spec.get("description") or "")  # fmt: skip


def check_schema(schema: Any, param: str, label: str = "the schema") -> None:
    """Refuse a schema that is not a JSON object, is too large, is not valid JSON Schema, has
    refs that loop with no way out (`label` names it then), or asks what the engine's grammar
    cannot hold (`schemas.check_schema`: a keyword it would otherwise leave out).

    Raises:
        ApiError: a 400 naming `param`.
    """
    if not isinstance(schema, dict):
        raise bad_request("the schema must be a JSON object (a JSON Schema)", param)
    size = len(json.dumps(schema, ensure_ascii=False))
    if size > MAX_TOOL_CHARS:
        raise bad_request(f"the schema is {size:,} characters of JSON; at most "
                          f"{MAX_TOOL_CHARS:,}", param)  # fmt: skip
    import jsonschema  # deferred: only a request with a schema pays for it (~0.2 s cold)

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "".join(f"[{p!r}]" for p in exc.path)
        raise bad_request(f"the schema is not valid JSON Schema: {exc.message}"
                          + (f" (at {where})" if where else ""), param) from None  # fmt: skip
    except RecursionError:
        raise bad_request("the schema nests too deeply", param) from None
    try:  # what the engine's grammar cannot hold is refused too, not loosened
        schemas.check_schema(schema)
    except schemas.SchemaLoop as exc:  # a loop of refs, named as one (not a keyword)
        raise bad_request(f"{label} cannot be answered: {exc}", param) from None
    except schemas.SchemaError as exc:
        raise bad_request(f"the schema cannot be enforced: {exc}", param,
                          "unsupported_value") from None  # fmt: skip
