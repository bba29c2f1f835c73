"""What the chat screen does as its model changes: F9 chooses another, a load starts or fails,
the model is ready (and the message held for it is sent, if the chat is still where it was).

The loading banner (`loading.LoadingBanner`) loads and posts what happened; the chat screen's
handlers call these functions with itself, and what they need of it is `ModelScreen`.
"""

from __future__ import annotations

from typing import Protocol

from gptoss_local.chat.chat_state import ChatState
from gptoss_local.chat.model_host import Held
from gptoss_local.i18n import _
from gptoss_local.tui.loading import LoadingBanner
from gptoss_local.tui.messages import BackendLoaded, ModelChosen, ModelLoadFailed, ModelLoadStarted
from gptoss_local.tui.reply_flow import ReplyScreen
from gptoss_local.tui.widgets import ChatInput


class ModelScreen(ReplyScreen, Protocol):
    """What the model's changes need of the chat screen, besides what a reply does."""

    banner: LoadingBanner
    state: ChatState
    input: ChatInput

    def idle(self) -> bool: ...


def choose_again(screen: ModelScreen) -> None:
    """Open the set-up screen again (F9), unless the chat's model was given to it."""
    if not screen.banner.can_choose_again:
        screen.notify(_("This chat's model was given to it: there is nothing to choose here."))
    elif screen.idle():
        screen.banner.choose_again()


def chosen(screen: ModelScreen, message: ModelChosen) -> None:
    """Take the settings just chosen; a new chat takes their effort too."""
    screen.generation = message.generation
    if message.switched:  # the model the prefill was for is going
        screen.prefill.stop()
        screen.status.info = None
    elif screen.state.chat_id is None:
        screen.state.effort = message.generation.effort
        screen.show_status()


def loading(screen: ModelScreen, message: ModelLoadStarted | ModelLoadFailed) -> None:
    """The status bar says so instead of the model's name (the banner shows the rest)."""
    if not screen.status.is_attached:  # the app is closing: the widgets are already gone
        return
    if isinstance(message, ModelLoadStarted):
        screen.status.waiting = _("loading {model}…").format(model=message.model)
    else:
        screen.status.waiting = _("the model is not loaded")


def loaded(screen: ModelScreen, message: BackendLoaded) -> None:
    """The model is ready: show it, prefill, and send the message held for it if the chat, the
    edit and the text in the box are still what they were."""
    if not screen.status.is_attached:  # loaded while the app was closing
        return
    screen.status.info, screen.status.waiting = message.info, ""
    screen.prefill.warm_up()
    held = screen.host.take_held()
    if held is None:
        return
    if held == held_for(screen, screen.input.text.strip()):
        screen.post_message(ChatInput.Submitted(held.text))
    else:  # the user moved on meanwhile: their chat and their box stay as they are
        screen.notify(_("The model is ready. The held message was not sent, as the chat or "
                        "the text changed: press Enter to send what is in the box."),
                      markup=False)  # fmt: skip


def held_for(screen: ModelScreen, text: str) -> Held:
    """`text` as a message held for the model: for the open chat and edit."""
    return Held(screen.state.chat_id, screen.state.editing, text)
