"""Copying a message or one of its code blocks to the clipboard, through the terminal (OSC 52).

The target is the message in focus (Tab, Shift+Tab or a click focuses one), else the last reply
with an answer. A reply's answer is copied as its Markdown source, without the reasoning.
The chat screen's copy actions call the functions at the end; the ones before are plain text
handling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Label, OptionList

from gptoss_local.i18n import _, ngettext
from gptoss_local.tui.dialog import Dialog
from gptoss_local.tui.reply_view import ReplyView
from gptoss_local.tui.widgets import ChatInput, UserMessage

# An opening fence: ``` or ~~~ (or longer) and an info string whose first word is the language.
# Any indentation is accepted, since models nest code in list items at 2-4 spaces.
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_PICKABLE = 9  # blocks 1-9 have a number key in the picker


@dataclass(frozen=True)
class CodeBlock:
    """One fenced code block: its text without the fences, and the fence's language if any."""

    code: str
    language: str = ""

    def label(self) -> str:
        """One line for the picker: language, length and the first non-blank line."""
        first = next((line.strip() for line in self.code.splitlines() if line.strip()), "")
        first = first if len(first) <= 60 else first[:59] + "…"
        return f"{self.language or _('text')} · {count_lines(self.code)} · {first}"


def count_lines(text: str) -> str:
    """How long `text` is, "1 line" or "12 lines": for notifications and the picker."""
    lines = len(text.rstrip("\n").split("\n"))
    return ngettext("{n} line", "{n} lines", lines).format(n=lines)


def code_blocks(markdown: str) -> list[CodeBlock]:
    """The fenced code blocks of `markdown`, in order; blank ones are left out.

    As in CommonMark, a block closes at a fence of the same character at least as long as the
    one that opened it, and a fence never closed runs to the end (a reply still streaming).
    """
    blocks: list[CodeBlock] = []
    fence, indent, language = "", 0, ""
    body: list[str] = []
    for line in markdown.splitlines():
        if not fence:
            match = _FENCE.match(line)
            if match and not (match["fence"][0] == "`" and "`" in match["info"]):
                fence, indent, body = match["fence"], len(match["indent"]), []
                language = (match["info"].split() or [""])[0]
            continue
        closing = line.strip()
        if len(closing) >= len(fence) and set(closing) == {fence[0]}:
            blocks.append(CodeBlock("\n".join(body), language))
            fence = ""
            continue
        spaces = len(line) - len(line.lstrip(" "))
        body.append(line[min(indent, spaces) :])  # the fence's indentation is not the code's
    if fence:
        blocks.append(CodeBlock("\n".join(body), language))
    return [block for block in blocks if block.code.strip()]


class CodePickerScreen(Dialog[int | None]):
    """Which code block to copy: Enter on one, or its number; Escape cancels."""

    DEFAULT_CSS = """
    CodePickerScreen > Vertical { width: 90; max-height: 80%; }
    CodePickerScreen Label { margin-bottom: 1; color: $text-muted; }
    CodePickerScreen OptionList { height: auto; max-height: 20; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "pick(0)", _("Cancel"), id="code_picker_cancel"),
        *(Binding(str(n), f"pick({n})", show=False) for n in range(1, _PICKABLE + 1)),
    ]

    def __init__(self, blocks: list[CodeBlock]) -> None:
        super().__init__()
        self.blocks = blocks

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(_("Copy which code block? Enter or its number; Esc cancels."))
            labels = [f"{n}. {block.label()}" for n, block in enumerate(self.blocks, 1)]
            yield OptionList(*labels)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a block picks it."""
        event.stop()  # the picker's own list: not a chat picked in the sidebar
        self.dismiss(event.option_index)

    def action_pick(self, number: int) -> None:
        """Pick block `number` (1-based); 0 cancels."""
        if number == 0:
            self.dismiss(None)
        elif number <= len(self.blocks):
            self.dismiss(number - 1)


def copy_message(screen: Screen[Any]) -> None:
    """Copy the focused message, else the last reply's answer (its Markdown source)."""
    target = _copy_target(screen)
    if target is not None:
        _copy(screen, target.text, target.copied)


def copy_code(screen: Screen[Any]) -> None:
    """Copy a code block of the focused message (else the last reply); ask which if several."""
    target = _copy_target(screen)
    if target is None:
        return
    blocks = code_blocks(target.text)
    if len(blocks) == 1:
        _copy_block(screen, blocks[0])
    elif blocks:

        def picked(index: int | None) -> None:
            if index is not None:
                _copy_block(screen, blocks[index])

        screen.app.push_screen(CodePickerScreen(blocks), picked)
    else:
        screen.notify(target.no_code, severity="warning", timeout=3)


def focus_message(screen: Screen[Any], step: int) -> None:
    """Focus the message `step` places from the focused one; past the newest, the input."""
    messages = list(screen.query("UserMessage, ReplyView"))
    current = _message_in_focus(screen)
    if current is None or current not in messages:
        return
    index = messages.index(current) + step
    if index >= len(messages):
        screen.query_one(ChatInput).focus()
    elif index >= 0:
        messages[index].focus()


@dataclass(frozen=True)
class _Target:
    """A message's text to copy from, and the sentences that name it ("{lines}" to fill)."""

    text: str
    copied: str
    no_code: str


def _copy_target(screen: Screen[Any]) -> _Target | None:
    """What to copy from; notifies and gives None when there is nothing."""
    message = _message_in_focus(screen)
    if isinstance(message, UserMessage):
        return _Target(
            message.text, _("Copied your message ({lines})."), _("No code block in your message.")
        )
    if isinstance(message, ReplyView):
        if message.answer_text.strip():
            return _Target(
                message.answer_text,
                _("Copied this reply ({lines})."),
                _("No code block in this reply."),
            )
        screen.notify(_("Nothing to copy: this reply has no answer yet."), severity="warning")
        return None
    answered = [view for view in screen.query(ReplyView) if view.answer_text.strip()]
    if not answered:
        screen.notify(_("Nothing to copy: no reply has an answer yet."), severity="warning")
        return None
    return _Target(
        answered[-1].answer_text,
        _("Copied the last reply ({lines})."),
        _("No code block in the last reply."),
    )


def _message_in_focus(screen: Screen[Any]) -> UserMessage | ReplyView | None:
    node: DOMNode | None = screen.focused
    while node is not None and not isinstance(node, (UserMessage, ReplyView)):
        node = node.parent  # a reply's reasoning title can hold the focus too
    return node if isinstance(node, (UserMessage, ReplyView)) else None


def _copy_block(screen: Screen[Any], block: CodeBlock) -> None:
    if block.language:
        copied = _("Copied the {language} code block ({lines}).")
    else:
        copied = _("Copied the code block ({lines}).")
    _copy(screen, block.code, copied, language=block.language)


def _copy(screen: Screen[Any], text: str, copied: str, **names: str) -> None:
    """Copy `text`; `copied` says so, with "{lines}" (and `names`) to fill."""
    screen.app.copy_to_clipboard(text)
    screen.notify(copied.format(lines=count_lines(text), **names), timeout=2)
