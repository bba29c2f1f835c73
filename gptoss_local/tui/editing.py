"""Changing the open chat from its screen: a message sent from the input box, the effort, the
instructions, the last message (edit it in the box, or cancel that edit) and the last reply
(write it again).

The chat screen's actions call these functions with itself; what they need of it is
`EditedScreen`. A failure of the history is shown and remembered (`reports_history_errors`),
never the end of the app. Each change to what the next prompt starts with prefills it anew.
"""

from __future__ import annotations

from typing import Any, Protocol

from textual.app import App

from gptoss_local.chat.chat_state import ChatState
from gptoss_local.i18n import N_, _
from gptoss_local.kinds import effort_word
from gptoss_local.tui import model_changes
from gptoss_local.tui.attachment_bar import AttachmentBar
from gptoss_local.tui.history_errors import reports_history_errors
from gptoss_local.tui.loading import LoadingBanner
from gptoss_local.tui.modals import InstructionsScreen
from gptoss_local.tui.reply_flow import ReplyFlow, ReplyScreen
from gptoss_local.tui.widgets import ChatInput


class EditedScreen(ReplyScreen, Protocol):
    """What the editing actions need of the chat screen, besides what a reply does."""

    state: ChatState
    input: ChatInput
    reply: ReplyFlow
    banner: LoadingBanner
    attachments: AttachmentBar

    @property
    def app(self) -> App[Any]: ...

    @property
    def busy(self) -> bool: ...

    def idle(self) -> bool: ...


async def send(screen: EditedScreen, text: str) -> bool:
    """Save `text` (with the attached files) as the open chat's next message and start its
    reply; whether it went (then the box and the chips are emptied, else they keep it all)."""
    if not text:
        return False
    if screen.busy:
        screen.notify(_("A reply is still being written: wait, or press Esc to stop it."))
        return False
    if screen.banner.hold(model_changes.held_for(screen, text)):  # the load failed: it retries
        return False
    attachments = screen.attachments.for_message(text)
    if attachments is None:  # refused: the text and the chips stay, to fix and send again
        return False
    if not await screen.reply.send(text, attachments):
        return False  # the box keeps the text, to send again or keep at exit
    screen.input.clear()
    screen.attachments.clear()
    screen.input.remember(text)
    return True


def stop(screen: EditedScreen) -> None:
    """Stop the reply being written (saved as stopped), or cancel an edit (Ctrl+L)."""
    if screen.reply.cancel():
        return
    if screen.state.cancel_edit():
        screen.input.clear()
        screen.notify(_("Edit cancelled: your message and its reply are kept."), timeout=3)


@reports_history_errors(N_("Cannot save the effort"))
def cycle_effort(screen: EditedScreen) -> None:
    """Switch to the next reasoning effort, stored with the chat."""
    effort = screen.state.cycle_effort()
    screen.show_status()
    screen.notify(_("Reasoning effort: {effort}").format(effort=effort_word(effort)), timeout=2)
    screen.prefill.warm_up()  # the system message says the effort: the next prompt starts anew


@reports_history_errors(N_("Cannot regenerate the reply"))
async def regenerate(screen: EditedScreen) -> None:
    """Delete the last reply and write it again."""
    chat_id = screen.state.chat_id
    if not screen.idle() or chat_id is None:
        return
    dropped = screen.state.drop_last_reply()
    if dropped is None:  # an empty chat: nothing to answer
        return
    if dropped:
        await screen.render_chat()
    await screen.reply.start(chat_id)


@reports_history_errors(N_("Cannot edit the last message"))
def edit_last(screen: EditedScreen) -> None:
    """Put the last user message into the input box to edit; sending it replaces the old
    message and what followed, Esc keeps them (nothing is deleted before that)."""
    if not screen.idle() or screen.state.chat_id is None:
        return
    text = screen.state.start_edit()
    if text is not None:
        screen.input.begin_edit(text)
        screen.notify(_("Editing your last message: Enter sends it in place of the old one "
                        "and its reply; Esc keeps them."), timeout=6)  # fmt: skip


@reports_history_errors(N_("Cannot read the instructions"))
def edit_instructions(screen: EditedScreen) -> None:
    """Edit the open chat's instructions; a new chat gets them when it is saved."""
    chat_id = screen.state.chat_id
    current = screen.state.current_instructions()
    screen.app.push_screen(InstructionsScreen(current),
                           lambda text: _set_instructions(screen, chat_id, text))  # fmt: skip


@reports_history_errors(N_("Cannot save the instructions"))
def _set_instructions(screen: EditedScreen, chat_id: int | None, text: str | None) -> None:
    if text is None:
        return
    screen.state.set_instructions(chat_id, text)
    screen.notify(_("Instructions saved.") if text else _("Instructions removed."), timeout=2)
    screen.prefill.warm_up()  # they are in the developer message, at the start of the prompt
