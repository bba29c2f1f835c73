"""The request of a chat's next reply, made in one place for the reply and for its prefill.

The prefill (`tui.prefill`) evaluates the prompt a reply will start with while the user types;
it saves time only where its prompt is the reply's, token for token: the same tools offered (as
far as the engine can offer them), the same instructions and the same effort. So both make
their request here: the prefill from the chat as it stands, the reply (`tui.pump.run_reply`)
from the chat with the new message, and what is prefilled matches what the reply sends by
construction rather than by two copies kept alike.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gptoss_local.backends.base import Backend, GenerationSettings, ReplyRequest
from gptoss_local.conversation import Conversation
from gptoss_local.kinds import Effort
from gptoss_local.tools import ToolRegistry


@dataclass(frozen=True)
class NextReply:
    """What the next reply answers, and how.

    Attributes:
        conversation: The chat as the reply (or its prefill) reads it, without tools.
        generation: The model's sampling settings (F9 may change them).
        effort: The chat's reasoning effort, which replaces the one in `generation`.
    """

    conversation: Conversation
    generation: GenerationSettings
    effort: Effort

    def request(self, backend: Backend, registry: ToolRegistry) -> ReplyRequest:
        """The request sent to `backend`: the conversation offering `registry`'s tools as the
        engine can offer them (as `ToolLoop.offer` does), sampled with the chat's effort. No
        cache key: the chat has the engine to itself, one reply at a time."""
        offered = registry.offer(self.conversation, backend.capabilities)
        return ReplyRequest(offered, replace(self.generation, effort=self.effort))
