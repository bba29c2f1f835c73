"""The tool loop: a reply that may call tools, run, answered and continued until it is done.

The caller's `ReplyRequest` offers the tools (`ToolLoop.offer`, once per reply) and says what
is asked of the reply. Per model turn: stream it (its events pass through); when it ended on a
call, ask the approvals, run the tool, and append the assistant's message (reasoning included:
while a chain of calls runs, harmony keeps the turn's analysis, and dropping it breaks chained
tool use) and the tool's result as Harmony messages; then stream the same request on the longer
conversation. At most `max_calls` calls per reply: past it, calls are answered with an error
asking for an answer, and a model that calls again after that ends the chain.

Plain Python on the caller's thread: a UI runs `ToolLoop.run` on a worker and answers `ask`
from there (blocking the worker, never the UI).
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterator
from dataclasses import replace

from gptoss_local.backends.base import Backend, ReplyRequest, ToolChoice, check_request
from gptoss_local.conversation import (
    BUILTIN_NAMESPACES,
    AssistantDraft,
    Message,
    answered_name,
    call_record,
    split_recipient,
)
from gptoss_local.events import ToolCall
from gptoss_local.tools.approvals import Approvals
from gptoss_local.tools.events import (
    ChainEnded,
    LoopEvent,
    ReplyEnded,
    ToolCallApproved,
    ToolCallDenied,
    ToolCallFinished,
    ToolCallRequested,
)
from gptoss_local.tools.registry import ToolInfo, ToolRegistry, timed
from gptoss_local.tools.result import ToolOutput

MAX_CALLS = 10


class ToolLoop:
    """Replies with tools for one chat or run.

    Args:
        backend: The loaded model.
        registry: The tools offered (and run).
        approvals: Which calls run (and who is asked).
        max_calls: Calls answered per reply (each user message starts a new count).
    """

    def __init__(
        self,
        backend: Backend,
        registry: ToolRegistry,
        approvals: Approvals,
        *,
        max_calls: int = MAX_CALLS,
    ) -> None:
        self.backend, self.registry, self.approvals = backend, registry, approvals
        self.max_calls = max_calls

    def offer(self, request: ReplyRequest) -> ReplyRequest:
        """`request` with its conversation offering the registry's tools, as far as the engine
        can offer them: made once per reply, before its prompt is counted or fitted."""
        offered = self.registry.offer(request.conversation, self.backend.capabilities)
        return replace(request, conversation=offered)

    def run(
        self, request: ReplyRequest, cancel: threading.Event | None = None
    ) -> Iterator[LoopEvent]:
        """The reply `request` asks for (its conversation offering the tools: see `offer`), as
        events; see `tools.events` for their order.

        Each model turn streams the caller's request, on the conversation as the turns before
        left it; the loop adds only those turns and their tools' results, and drops a forced
        `tool_choice` after the first turn (its result then lets the model answer, as OpenAI's
        agents reset it after a call). The rest, such as the response format, goes with every
        turn: the answer may come at any of them.

        Raises:
            BackendError: From the backend, as `Backend.stream` raises it; before anything
                runs, `UnsupportedRequest` for what the engine cannot do.
        """
        cancel = cancel or threading.Event()
        check_request(self.backend.capabilities, request)
        messages = list(request.conversation.messages)
        turn, answered, warned = request, 0, False
        while True:
            draft = AssistantDraft()
            reply = self.backend.stream(turn, cancel)
            for event in reply:
                draft.add(event)
                yield event
            message = draft.message()
            cited = self.registry.cite(message.content) if not draft.calls else ()
            yield ReplyEnded(message, reply.stats, cited)
            ended = self._verdict(draft, cancel, warned and answered >= self.max_calls)
            if ended is not None:
                yield from self._refuse(draft.calls, ended)
                return
            messages.append(message)
            for call in draft.calls:
                tool = self.registry.get(call.name)
                yield ToolCallRequested(call, tool)
                over = answered >= self.max_calls
                warned = warned or over
                finished = yield from self._answer(call, tool, over, cancel)
                answered += 1
                yield finished
                result = finished.output.content
                messages.append(Message("tool", result, tool_name=answered_name(call.name)))
            if cancel.is_set():
                yield ChainEnded("cancelled")
                return
            grown = replace(request.conversation, messages=tuple(messages))
            turn = replace(request, conversation=grown, tool_choice=ToolChoice())

    def _verdict(
        self, draft: AssistantDraft, cancel: threading.Event, spent: bool
    ) -> ChainEnded | None:
        """Why the chain ends after this turn, or None to answer its calls and go on."""
        if cancel.is_set():
            return ChainEnded("cancelled")
        if not draft.calls:
            return ChainEnded("unfinished" if draft.ended == "truncated" else "answered")
        if draft.ended != "call":
            return ChainEnded("unfinished")
        if any(call_record(call) is None or self._unoffered(call) for call in draft.calls):
            return ChainEnded("not_a_tool")
        tools = [self.registry.get(call.name) for call in draft.calls]
        if any(tool is not None and not tool.runnable for tool in tools):
            return ChainEnded("external_call")
        return ChainEnded("limit") if spent else None

    def _unoffered(self, call: ToolCall) -> bool:
        """A call of a built-in this chain does not offer (``browser.search`` without the
        browser): the model reached for its training, not for a tool it was shown."""
        namespace = split_recipient(call.name)[0]
        return namespace in BUILTIN_NAMESPACES and self.registry.get(call.name) is None

    def _refuse(self, calls: list[ToolCall], ended: ChainEnded) -> Iterator[LoopEvent]:
        # The calls of a turn that ends the chain are reported, never run.
        for call in calls:
            yield ToolCallRequested(call, self.registry.get(call.name))
        yield ended

    def _answer(
        self, call: ToolCall, tool: ToolInfo | None, over: bool, cancel: threading.Event
    ) -> Generator[LoopEvent, None, ToolCallFinished]:
        """Approve and run one call (yielding the verdict); returns its `ToolCallFinished`."""
        if call.error:
            text = f"The call was not run: {call.error}. Call {call.name} again with a JSON object."
            return ToolCallFinished(call, ToolOutput(text, error=True))
        if tool is None:
            names = ", ".join(info.name for info in self.registry.infos() if info.runnable)
            text = f"There is no tool named {call.name}. Tools: {names or 'none'}."
            return ToolCallFinished(call, ToolOutput(text, error=True))
        if over:
            text = (
                f"The call was not run: the limit of {self.max_calls} tool calls for this reply "
                "was reached. Answer the user with what you have."
            )
            return ToolCallFinished(call, ToolOutput(text, error=True))
        verdict = self.approvals.decide(call, tool)
        if not verdict.run:
            yield ToolCallDenied(call, verdict.how)
            text = f"The user did not allow this call of {call.name}; answer without it."
            return ToolCallFinished(call, ToolOutput(text, error=True))
        yield ToolCallApproved(call, verdict.how)
        output, seconds = timed(self.registry, call.name, call.arguments, cancel)
        return ToolCallFinished(call, output, seconds)
