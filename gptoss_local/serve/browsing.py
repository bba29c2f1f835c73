"""The browser in `serve --browser`: the server runs the model's browser calls itself, over
the operator's `docs` folders, and the client gets one reply (as a hosted search tool works).

Each request browses with pages of its own. A turn that ends on browser calls is answered
and continued here, its calls and the turn's end kept from the client (which could not run
them); the reasoning of every turn and the last turn's answer, calls of the client's own
functions and end pass through. Usage sums the turns' tokens. Without `--browser` nothing
of this runs: the browser is offered only where the operator asked for it. A request of our
own client that offers its own browser (`serve.ours`) keeps it: its calls go to the client.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Generator
from dataclasses import replace

from gptoss_local.backends.base import Reply, ReplyRequest, Stats
from gptoss_local.conversation import (
    AssistantDraft,
    Message,
    answered_name,
    call_record,
    split_recipient,
)
from gptoss_local.events import Event, ToolCall, TurnEnded
from gptoss_local.library import Library
from gptoss_local.serve.generation import Streamer
from gptoss_local.tools import MAX_CALLS
from gptoss_local.tools.browser import BrowserTool
from gptoss_local.tools.browser_tool import NAME as BROWSER


class BrowsingStreamer:
    """A `Streamer` that offers the browser and answers its calls.

    Args:
        stream: How a model turn is asked for (`Backend.stream`, or a test's steering).
        library: The open index of `folders`.
        folders: The folders the browser opens files from.
        max_calls: Browser calls answered per request; past them the model must answer.
    """

    def __init__(
        self,
        stream: Streamer,
        library: Library,
        folders: tuple[str, ...],
        max_calls: int = MAX_CALLS,
    ) -> None:
        self._stream, self.library, self.folders = stream, library, folders
        self.max_calls = max_calls

    def __call__(self, request: ReplyRequest, cancel: threading.Event) -> Reply:
        return Reply(self._run(request, cancel))

    def _run(self, request: ReplyRequest, cancel: threading.Event) -> Generator[Event, None, Stats]:
        conversation = request.conversation
        if any(b.name == BROWSER for b in conversation.builtin_tools):
            # Our own client offers its browser (over its own library) and runs its calls.
            reply = self._stream(request, cancel)
            yield from reply
            return reply.stats or Stats()
        browser = BrowserTool(self.library, self.folders)  # this request's pages
        builtins = (*conversation.builtin_tools, browser.builtin)
        conversation = replace(conversation, builtin_tools=builtins)
        messages, spent = list(conversation.messages), Stats()
        for answered in range(self.max_calls + 1):
            now = replace(conversation, messages=tuple(messages))
            draft, ended = AssistantDraft(), None
            reply = self._stream(replace(request, conversation=now), cancel)
            for event in reply:
                draft.add(event)
                if isinstance(event, TurnEnded):
                    ended = event
                elif not _browsing(event):
                    yield event
            spent = _summed(spent, reply.stats)
            calls = [c for c in draft.calls if _browsing(c)]
            if not _goes_on(draft, calls, ended, cancel) or answered == self.max_calls:
                if ended is not None:
                    yield ended
                return spent
            messages.append(draft.message())
            for call in calls:
                output = browser.call(split_recipient(call.name)[1], call.arguments)
                messages.append(Message("tool", output.content, tool_name=answered_name(call.name)))
        return spent  # not reached: the last round returns


def _browsing(event: Event) -> bool:
    """A call the server's browser answers: one of its namespace whose name a tool can have.
    Another (``browser.x-y``) could not go back into the conversation with its answer, so it
    goes to the client as the model wrote it, as a call of any tool not offered does."""
    if not isinstance(event, ToolCall) or split_recipient(event.name)[0] != BROWSER:
        return False
    return call_record(event) is not None


def _goes_on(
    draft: AssistantDraft, calls: list[ToolCall], ended: TurnEnded | None, cancel: threading.Event
) -> bool:
    """Whether the turn ended on browser calls only, so the server answers them (a call
    with bad arguments too: the browser tells the model what is wrong)."""
    if cancel.is_set() or ended is None or ended.reason != "call" or not calls:
        return False
    return len(calls) == len(draft.calls)


def _summed(spent: Stats, turn: Stats | None) -> Stats:
    """The last turn's figures, with the tokens generated in all turns so far."""
    if turn is None:
        return spent
    return dataclasses.replace(
        turn,
        generated_tokens=spent.generated_tokens + turn.generated_tokens,
        reasoning_tokens=spent.reasoning_tokens + turn.reasoning_tokens,
        answer_tokens=spent.answer_tokens + turn.answer_tokens,
        ttft_seconds=spent.ttft_seconds if spent.ttft_seconds is not None else turn.ttft_seconds,
    )
