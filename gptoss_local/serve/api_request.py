"""What a request asks for, whichever API it came through, and the order it is read in.

An `ApiRequest` is the `ReplyRequest` the backend is given (the conversation, the generation
settings, the answer's format, the tool choice) plus what the server applies itself: stop
strings, streaming, usage in the stream. `RequestReader` reads both APIs in one order (the
model, fields refused, the conversation, effort, sampling, tools and the tool choice, the
answer's format, the conversation checked, stop strings, streaming), each API reading what it
names differently.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gptoss_local.backends.base import GenerationSettings, ReplyRequest, ResponseFormat
from gptoss_local.conversation import Conversation, Message, Tool, ToolCallRecord
from gptoss_local.harmony import render_prompt
from gptoss_local.harmony.names import OPENAI_NAMES, NameRule, ToolNames
from gptoss_local.harmony.tools import offered_names, offered_namespaces
from gptoss_local.serve import fields
from gptoss_local.serve.choice import tool_choice
from gptoss_local.serve.errors import bad_request
from gptoss_local.serve.fields import Body
from gptoss_local.serve.limits import Limits
from gptoss_local.serve.ours import Ours
from gptoss_local.urls import OURS_FIELD


@dataclass(frozen=True)
class ApiRequest:
    """One generation request, read from either API."""

    model: str
    request: ReplyRequest
    stops: tuple[str, ...] = ()
    stream: bool = False
    include_usage: bool = False
    carry_reasoning: bool = False
    summarise_reasoning: bool = False  # the chain of thought goes out as the reasoning summary
    # Seconds the model stays loaded once this reply ends (Ollama's `keep_alive`): None the
    # server's default, 0 unload at once, negative until the server stops.
    keep_alive: float | None = None
    # Our own client asked (`ours`): the reply says on which channel each call was written.
    ours: bool = False
    # The client's tool names and the model's: the reply names calls as the client does.
    names: ToolNames = field(default_factory=ToolNames)


class RequestReader(ABC):
    """Reads one API's request into an `ApiRequest`.

    Attributes:
        param: The field that holds the conversation ("messages", "input").
        effort_param: The reasoning effort's field, as a refusal names it.
        format_param: The field that asks for a format of the answer.
        max_keys: The fields that bound the reply's tokens; the first present counts.
        responses: It spells tool choices as the Responses API does (`choice.py`).
        name_rule: The tool names it takes (others are refused; those that are no
            identifiers are given one in the prompt, `ToolNames`).
    """

    param: str
    effort_param: str
    format_param: str
    max_keys: tuple[str, ...]
    responses: bool = False
    name_rule: NameRule = OPENAI_NAMES

    def read(
        self,
        data: Any,
        known_models: Sequence[str],
        defaults: GenerationSettings,
        limits: Limits | None = None,
    ) -> ApiRequest:
        """The request `data` asks for; a 400 `ApiError` names what is wrong.

        Args:
            data: The request's JSON.
            known_models: The loaded model's id, then the other names requests may use.
            defaults: The server's generation settings, for what the request leaves out.
            limits: The bounds of the loaded model's context (default: gpt-oss's full
                context).
        """
        limits = limits or Limits()
        sent = Body(data)
        shared, defaults = self.translated(sent, defaults, limits)
        asked = self._read(Body(shared), known_models, defaults, limits)
        return self.completed(asked, sent, defaults)

    def _read(
        self, body: Body, known_models: Sequence[str], defaults: GenerationSettings, limits: Limits
    ) -> ApiRequest:
        """The request in the shared spelling, read in the shared order."""
        model = fields.model_name(body, known_models)
        fields.refuse_unsupported(body)
        self.refuse(body)
        # The offered tools' names first: the history names them too, and each gets one name.
        given = body.data.get("tools")
        names = ToolNames(offered_names(given), self.name_rule, offered_namespaces(given))
        messages, instructions = self.history(body, limits, names)
        ours = self.ours(body) or Ours()  # our own client's tools: the model's names already
        effort = fields.effort(self.effort(body), self.effort_param, defaults.effort)
        settings = fields.sampling(body, replace(defaults, effort=effort), self.max_keys)
        offered = self.tools(body, names) + ours.tools
        tools, choice = tool_choice(body.data.get("tool_choice"), offered, self.responses, names)
        answer_format = self.response_format(body)
        conversation = Conversation(tuple(messages), instructions, tools, ours.current_date,
                                    ours.builtin_tools)  # fmt: skip
        conversation = checked(conversation, self.param, limits)
        include_usage = self.include_usage(body)
        # Both APIs take it; a request reuses only the cached prompts of its own key.
        cache_key = body.text("prompt_cache_key") or None
        return ApiRequest(
            model=model,
            request=ReplyRequest(conversation, settings, answer_format, choice, cache_key),
            stops=fields.stops(body.data.get("stop")),
            stream=body.flag("stream"),
            include_usage=include_usage,
            carry_reasoning=self.carry_reasoning(body),
            summarise_reasoning=self.summarise_reasoning(body),
            ours=body.present(OURS_FIELD),
            names=names,
        )

    def translated(
        self, sent: Body, defaults: GenerationSettings, limits: Limits
    ) -> tuple[dict[str, Any], GenerationSettings]:
        """The request as `read` reads it, and the defaults it gives: an API that names
        fields its own way puts them as the shared order names them (refusing first what only
        it may ask and the server cannot honour)."""
        return sent.data, defaults

    def completed(self, asked: ApiRequest, sent: Body, defaults: GenerationSettings) -> ApiRequest:
        """The request read in the shared order, with what only this API asks besides
        (`sent`: the request as it came)."""
        return asked

    @abstractmethod
    def refuse(self, body: Body) -> None:
        """Refuse what this API may ask for and the server cannot honour."""

    @abstractmethod
    def history(
        self, body: Body, limits: Limits, names: ToolNames
    ) -> tuple[list[Message], str | None]:
        """The conversation's messages, and the instructions (None without any); the tools
        its calls and results name by the model's names for them (`names`)."""

    @abstractmethod
    def effort(self, body: Body) -> Any:
        """The reasoning effort as the request gives it (None when it does not)."""

    @abstractmethod
    def response_format(self, body: Body) -> ResponseFormat | None:
        """The answer's format (None: free text)."""

    @abstractmethod
    def include_usage(self, body: Body) -> bool:
        """Whether a streamed reply ends with the token counts."""

    def ours(self, body: Body) -> Ours | None:
        """What our own client sends besides (`serve.ours`); None from other clients."""
        return None

    def tools(self, body: Body, names: ToolNames) -> tuple[Tool, ...]:
        """The tools offered (function tools, in either API's form), by the model's names."""
        return fields.tools(body, names)

    def carry_reasoning(self, body: Body) -> bool:
        """Whether the reply hands its reasoning to the client to send back (`carried`)."""
        return False

    def summarise_reasoning(self, body: Body) -> bool:
        """Whether the client asks for reasoning summaries (and reads nothing else)."""
        return False


def checked(conversation: Conversation, param: str, limits: Limits) -> Conversation:
    """The conversation, once the renderer has accepted it (e.g. every tool result answers a
    call) and its prompt is not far beyond the context: a mistake in the request is a 400,
    not a failure inside the generation.

    The backend renders the prompt itself, so it is not rendered whole here as well: the
    renderer checks the conversation's outline (`_outline`), and only a conversation whose
    texts could take the prompt past `limits.max_chars` is rendered whole, to measure it.
    """
    if not conversation.messages:
        raise bad_request("the conversation has no messages", param)
    outline = _rendered(_outline(conversation), param)
    # Neutralising adds at most one character per two (a word joiner per `<|`), so each text
    # renders to less than twice its length, in place of its first character in the outline.
    if len(outline) + 2 * _text_length(conversation) > limits.max_chars:
        limits.check_prompt(_rendered(conversation, param), param)
    return conversation


def _rendered(conversation: Conversation, param: str) -> str:
    try:
        return render_prompt(
            list(conversation.messages),
            instructions=conversation.instructions,
            tools=conversation.tools,
        )
    except ValueError as exc:
        raise bad_request(str(exc), param) from None


def _outline(conversation: Conversation) -> Conversation:
    """The conversation with each text cut to its first character. The renderer refuses the
    outline exactly when it refuses the whole: what it refuses depends on roles, names and
    calls, and what it writes around a text on whether the text is empty, never on the text.
    Tools stay whole: a schema's rendering is not bounded by its JSON's length (nesting
    indents), and `check_tools` has bounded their number and size."""
    messages = tuple(
        replace(m, content=m.content[:1], reasoning=m.reasoning[:1],
                tool_calls=tuple(_cut(call) for call in m.tool_calls))
        for m in conversation.messages
    )  # fmt: skip
    instructions = conversation.instructions and conversation.instructions[:1]
    return replace(conversation, messages=messages, instructions=instructions)


def _cut(call: ToolCallRecord) -> ToolCallRecord:
    arguments = call.arguments
    return replace(call, arguments=arguments[:1]) if isinstance(arguments, str) else call


def _text_length(conversation: Conversation) -> int:
    """The characters of the texts `_outline` cuts."""
    total = len(conversation.instructions or "")
    for m in conversation.messages:
        total += len(m.content) + len(m.reasoning)
        total += sum(len(c.arguments) for c in m.tool_calls if isinstance(c.arguments, str))
    return total
