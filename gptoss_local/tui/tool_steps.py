"""The chat screen's part in tool calls: each step shown in the reply, and the approval dialog.

Functions of the `ChatScreen` (kept apart so its module stays about sending and streaming). The
reply worker reports every step (`ToolCallReported`): a requested call becomes a line in the
reply view of its model turn, the verdict and the folded result are added to that line. A call
the loop asks about arrives as `ToolApprovalAsked`: the dialog's answer sets the worker's future.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gptoss_local.tools import (
    ToolCallApproved,
    ToolCallDenied,
    ToolCallFinished,
    ToolCallRequested,
)
from gptoss_local.tools.approvals import Decision
from gptoss_local.tui.approval import ApprovalScreen
from gptoss_local.tui.messages import ToolApprovalAsked

if TYPE_CHECKING:
    from gptoss_local.tui.chat_screen import ChatScreen

# How a chain that ended otherwise than with an answer is noted under its last turn.
ENDED = {
    "limit": "stopped: the model kept calling tools past the limit of calls per reply",
    "not_a_tool": "stopped: the model called a tool that is not offered here",
    "external_call": "stopped: the model called a function this chat cannot run",
}

Step = ToolCallRequested | ToolCallApproved | ToolCallDenied | ToolCallFinished


async def show_step(screen: ChatScreen, step: Step) -> None:
    """Show one step of a call in the reply being written."""
    reply = screen.live_reply
    if reply is None:
        return
    if isinstance(step, ToolCallRequested):
        screen.pending_calls.append(await reply.add_call(step.call))
        return
    view = next((v for v in screen.pending_calls if v.call is step.call), None)
    if view is None:
        return
    if isinstance(step, ToolCallFinished):
        view.finished(step.output, step.seconds)
        screen.pending_calls.remove(view)
    else:
        view.decided(step.how)


def ask_approval(screen: ChatScreen, asked: ToolApprovalAsked) -> None:
    """Show the dialog about a call; its answer goes to the waiting worker."""
    answer = asked.answer
    if screen.live_reply is None or answer.done():  # the reply ended before the question came
        if not answer.done():
            answer.set_result("deny")
        return

    def answered(decision: Decision | None) -> None:
        screen.asking = None
        if not answer.done():
            answer.set_result(decision or "deny")

    screen.asking = ApprovalScreen(asked.call, asked.tool)
    screen.app.push_screen(screen.asking, answered)


def end_calls(screen: ChatScreen) -> None:
    """The reply ended: calls that never ran say so, and an open dialog closes (deny)."""
    for view in screen.pending_calls:
        view.not_run("not run")
    screen.pending_calls.clear()
    asking, screen.asking = screen.asking, None
    if asking is not None and asking.is_current:
        asking.dismiss("deny")
