"""The grammar a reply is held to, in Harmony: what gpt-oss writes around the JSON.

A response format holds the final message only. gpt-oss reasons first
(``<|channel|>analysis<|message|>...<|end|><|start|>assistant``), may call tools, and then
writes ``<|channel|>final<|message|>ANSWER<|return|>`` (sometimes ``<|channel|>final
<|constrain|>json<|message|>``). The grammar here is only the answer's JSON: the sampler lets
everything before it run free and puts the grammar on from the token after the final
message's ``<|message|>`` (`gate.FinalHeaderWatch`, which sees the control tokens themselves,
so text that spells a header never sets it off). Once the JSON is complete only an end token
fits; `<|endoftext|>` is barred, and `<|call|>` when the reply has no tool to call; and until
the final message starts, `<|return|>` is (a reply may not end with reasoning and no answer).

A forced tool choice holds the reply from its first token: any number of analysis and
commentary messages with free text (no control token inside, no end of the reply), then a call
to one of the tools (or the one named), with the header gpt-oss writes either way round
(``<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>`` or
``to=functions.NAME<|channel|>commentary json<|message|>``) and arguments held to the tool's
parameter schema; a freeform tool's text stays free. `<|return|>` and `<|endoftext|>` are barred,
so it ends with `<|call|>`. The python built-in is not among the tools a choice can force.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from gptoss_local.backends.base import ReplyRequest, ToolChoice
from gptoss_local.backends.llamacpp.structured.gbnf import convert
from gptoss_local.conversation import CALL_CHANNELS, Tool

FREE_TEXT = 'harmony-text ::= ( [^<] | "<"+ [^<|] )* "<"*'
NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}


class ToolChoiceError(ValueError):
    """A forced tool choice that no offered tool can meet."""


@dataclass(frozen=True)
class ReplyGrammar:
    """What a reply is held to: `gbnf` (root rule `root`), from the final message's content on
    (`from_final`) or from the first token; the end tokens it may not end with, and those it may
    not end with before its final message."""

    gbnf: str
    from_final: bool
    barred: tuple[str, ...]
    barred_until_final: tuple[str, ...] = ()


def reply_grammar(request: ReplyRequest) -> ReplyGrammar | None:
    """The grammar for `request`'s response format or forced tool choice (None: neither).

    Raises:
        SchemaError: a schema asks what the grammar cannot hold.
        ToolChoiceError: the choice names no offered tool, or no tool is offered.
    """
    if request.tool_choice.forced:
        return _call_grammar(_callable(request.conversation.tools, request.tool_choice))
    if request.response_format is None:
        return None
    conversation = request.conversation
    can_call = bool(conversation.tools or conversation.builtin_tools)
    barred = ("<|endoftext|>",) if can_call else ("<|endoftext|>", "<|call|>")
    gbnf = _answer_gbnf(json.dumps(request.response_format.schema))
    return ReplyGrammar(gbnf, True, barred, ("<|return|>",))


@functools.lru_cache(maxsize=64)
def _answer_gbnf(schema_json: str) -> str:
    root, rules = convert(schema_json, "r")
    return "\n".join([f"root ::= {root}", *(f"{k} ::= {v}" for k, v in rules)])


def _callable(tools: tuple[Tool, ...], choice: ToolChoice) -> tuple[tuple[str, str | None], ...]:
    """(recipient, parameter schema as JSON, or None for raw text) of each tool it may call."""
    chosen = [t for t in tools if choice.name is None or
              (t.name == choice.name and t.namespace == choice.namespace)]  # fmt: skip
    if not chosen:
        if choice.name is None:
            raise ToolChoiceError("a tool call is required, but no tool is offered")
        raise ToolChoiceError(f"tool_choice names {choice.namespace}.{choice.name}, "
                              "which is not among the tools offered")  # fmt: skip
    return tuple(
        (f"{t.namespace}.{t.name}",
         None if t.text_input is not None else json.dumps(t.parameters or NO_ARGUMENTS))
        for t in chosen
    )  # fmt: skip


@functools.lru_cache(maxsize=64)
def _call_grammar(tools: tuple[tuple[str, str | None], ...]) -> ReplyGrammar:
    channels = " | ".join(f'"{c}"' for c in CALL_CHANNELS)
    lines = [
        'root ::= ( harmony-message <|start|> "assistant" )* harmony-call',
        'harmony-message ::= <|channel|> ( "analysis" | "commentary" ) <|message|> '
        "harmony-text <|end|>",
        FREE_TEXT,
        f"harmony-channel ::= {channels}",
        'harmony-type ::= ( " "? <|constrain|> "json" | " json" )?',
        "harmony-call ::= " + " | ".join(f"harmony-call-{i}" for i in range(len(tools))),
    ]
    rules: dict[str, str] = {}
    for i, (recipient, parameters) in enumerate(tools):
        to = f'" to={recipient}"'
        if parameters is None:
            arguments = "harmony-text"
        else:
            arguments, converted = convert(parameters, f"t{i}")
            rules.update(converted)
        head = f"( <|channel|> harmony-channel {to} | {to} <|channel|> harmony-channel )"
        lines.append(f"harmony-call-{i} ::= {head} harmony-type <|message|> {arguments}")
    lines += [f"{k} ::= {v}" for k, v in sorted(rules.items())]
    return ReplyGrammar("\n".join(lines), False, ("<|return|>", "<|endoftext|>"))
