"""Before a chat's reply: fit its prompt into the context by the chat's policy, saving what was
done (`History.add_compaction`) so the chat goes on from it and the user can see it.

Runs on the reply's worker, with the model loaded: counting the prompt takes the engine's
tokenizer (`count_prompt`, where `capabilities.tokenizer` says it has one; an engine without is
estimated from the text), and a summary is the model's own reply. The whole history stays saved;
what changes is which messages the next prompts are made of
(`session.conversation.conversation_entries`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from gptoss_local.attachments.message import estimate_tokens
from gptoss_local.backends.base import Backend, GenerationSettings, ReplyRequest
from gptoss_local.chat.compaction import SUMMARY_INSTRUCTIONS, Summary, summarise
from gptoss_local.chat.context_budget import (
    Budget,
    ContextFull,
    ContextPolicy,
    Counter,
    Fit,
    fit,
)
from gptoss_local.conversation import Conversation, Message
from gptoss_local.session.history import History
from gptoss_local.session.records import Compaction

__all__ = ["Compacting", "ContextFull", "ContextKeeper", "prompt_counter"]


@dataclass(frozen=True)
class Compacting:
    """Reported when older turns start being summarised (`messages` of them)."""

    messages: int


def prompt_counter(backend: Backend, request: ReplyRequest) -> Counter:
    """Counts the prompt of `request` (its instructions, tools and format) with other messages:
    by the engine's tokenizer where it has one, else estimated."""
    exact = backend.capabilities.tokenizer

    def counter(messages: Sequence[Message]) -> int:
        shown = replace(request.conversation, messages=tuple(messages))
        if exact:
            return backend.count_prompt(replace(request, conversation=shown))
        return estimate_prompt(shown)

    return counter


def estimate_prompt(conversation: Conversation) -> int:
    """About the tokens of the prompt, for engines that keep their tokenizer to themselves:
    the texts, the tools' descriptions, and the framing of each message."""
    texts = [conversation.instructions or ""]
    texts += [json.dumps([t.name for t in conversation.tools])]
    texts += [m.content + m.reasoning for m in conversation.messages]
    return 120 + 8 * len(conversation.messages) + sum(estimate_tokens(t) for t in texts)


class ContextKeeper:
    """Fits chat `chat_id`'s next prompt by `policy`, saving a compaction when it leaves turns
    out. `report` hears `Compacting` before a summary is written and the saved `Compaction`."""

    def __init__(
        self,
        history: History,
        chat_id: int,
        policy: ContextPolicy,
        report: Callable[[Compacting | Compaction], object] = lambda _event: None,
    ) -> None:
        self.history, self.chat_id, self.policy, self.report = history, chat_id, policy, report

    def fit(
        self, backend: Backend, request: ReplyRequest, cancel: threading.Event | None = None
    ) -> ReplyRequest:
        """`request` (its conversation the chat as `History.to_conversation` gives it, with the
        tools the reply offers), or the same on a shorter conversation that fits.

        Raises:
            ContextFull: it cannot fit (or the policy is "stop"); nothing was saved.
            BackendError: the summary failed.
        """
        context_size = backend.info().context_size
        if not context_size:
            return request  # an engine that does not say: it will say when it is full
        count = prompt_counter(backend, request)
        settings = request.settings
        budget = Budget(context_size, settings.effort)
        entries = self.history.conversation_entries(self.chat_id)
        messages = [message for _seq, message in entries]
        if len(messages) != len(request.conversation.messages):  # not the chat's own
            return request
        chosen = fit(messages, count, budget, self.policy)
        if not chosen.leaves_out:
            return request
        before_seq = entries[chosen.keep_from][0]
        assert before_seq is not None  # a cut falls on a user message, never on a summary
        summary = self._summary(backend, messages, chosen, budget, settings, cancel)
        if cancel is not None and cancel.is_set():
            return request  # stopped while summarising: nothing saved, the reply stops too
        compaction = self.history.add_compaction(
            self.chat_id,
            before_seq,
            summary.text if summary else "",
            messages_left_out=chosen.keep_from,
            prompt_tokens_before=count(messages),
            seconds=summary.seconds if summary else 0.0,
            summary_tokens=summary.generated_tokens if summary else 0,
        )
        self.report(compaction)
        kept = [message for _seq, message in self.history.conversation_entries(self.chat_id)]
        return replace(request, conversation=replace(request.conversation, messages=tuple(kept)))

    def _summary(
        self,
        backend: Backend,
        messages: Sequence[Message],
        chosen: Fit,
        budget: Budget,
        settings: GenerationSettings,
        cancel: threading.Event | None,
    ) -> Summary | None:
        if not chosen.summarise:
            return None
        self.report(Compacting(chosen.keep_from))
        base = Conversation((), SUMMARY_INSTRUCTIONS)  # as the summary requests are made
        count_text = prompt_counter(backend, ReplyRequest(base, replace(settings, effort="low")))
        return summarise(
            backend,
            messages[: chosen.keep_from],
            window=budget.context_size,
            max_tokens=budget.summary_tokens,
            count_text=count_text,
            settings=settings,
            cancel=cancel,
        )
