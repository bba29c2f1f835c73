"""A tool call inside a reply: one line with the tool's name and short arguments, and its result
folded below (closed: the model read it, the user opens it when curious)."""

from __future__ import annotations

import json

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Collapsible, Static

from gptoss_local.events import ToolCall
from gptoss_local.i18n import N_, _, translate
from gptoss_local.tools import ToolOutput
from gptoss_local.tools.python_tool import NAME as PYTHON

SHORT_ARGUMENTS = 72  # characters of arguments on a call's line
VERDICTS = {
    "always": N_("allowed for this chat"),
    "denied": N_("denied"),
    "not_allowed": N_("not allowed"),
}


def arguments_text(call: ToolCall) -> str:
    """A call's arguments in full: python's code as it is, else pretty JSON (or the raw text
    the model wrote, when it was not JSON)."""
    code = call.arguments.get("code")
    if call.name == PYTHON and not call.error and isinstance(code, str):
        return code
    if call.error:
        return _("{raw}\n\n(not run: {error})").format(raw=call.raw, error=call.error)
    return json.dumps(call.arguments, indent=2, ensure_ascii=False)


def short_arguments(call: ToolCall, limit: int = SHORT_ARGUMENTS) -> str:
    """A call's arguments on one line, cut to `limit` characters."""
    code = call.arguments.get("code")
    if call.name == PYTHON and isinstance(code, str):
        text = " ⏎ ".join(line.strip() for line in code.strip().splitlines() if line.strip())
    elif call.error:
        text = " ".join(call.raw.split())
    else:
        text = json.dumps(call.arguments, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ToolCallView(Vertical):
    """One call: its line (name, arguments, what the user decided) and the folded result.

    Args:
        call: The call as the model made it.
        result: A stored result (a chat reopened); None until the call has run.
    """

    DEFAULT_CSS = """
    ToolCallView { height: auto; margin: 0 0 0 2; }
    ToolCallView .call { color: $text-accent; }
    ToolCallView .verdict { color: $text-warning; }
    ToolCallView Collapsible { border-top: none; padding-bottom: 0; }
    ToolCallView .tool-note { color: $text-warning; }
    """

    def __init__(self, call: ToolCall, result: ToolOutput | None = None) -> None:
        super().__init__()
        self.call = call
        self.output = result
        self.seconds: float | None = None
        self.verdict = ""

    def compose(self) -> ComposeResult:
        output = self.output
        yield Static(f"⚙ {self.call.name}  {short_arguments(self.call)}", classes="call",
                     markup=False)  # fmt: skip
        yield Static(self.verdict, classes="verdict", markup=False)
        with Collapsible(title=self._title(), collapsed=True):
            yield Static(output.preview() if output else "", classes="result", markup=False)
            yield Static(output.note if output else "", classes="tool-note", markup=False)

    def on_mount(self) -> None:
        self._show()

    @property
    def result_box(self) -> Collapsible:
        """The Collapsible holding the result."""
        return self.query_one(Collapsible)

    def decided(self, how: str) -> None:
        """Show who let the call run (or that it was denied); nothing for a plain "once"."""
        self.verdict = translate(VERDICTS.get(how, ""))
        self._show()

    def finished(self, output: ToolOutput, seconds: float) -> None:
        """Show the call's result, folded."""
        self.output, self.seconds = output, seconds
        self._show()

    def not_run(self, why: str) -> None:
        """The call never ran (the reply ended first)."""
        if self.output is None:
            self.verdict = why
            self._show()

    def _show(self) -> None:
        if not self.is_mounted:
            return
        verdict = self.query_one(".verdict", Static)
        verdict.update(self.verdict)
        verdict.display = bool(self.verdict)
        box = self.result_box
        box.display = self.output is not None
        if self.output is None:
            return
        box.title = self._title()
        self.query_one(".result", Static).update(self.output.preview())
        note = self.query_one(".tool-note", Static)
        note.update(self.output.note)
        note.display = bool(self.output.note)

    def _title(self) -> str:
        failed = self.output is not None and self.output.error
        if self.seconds is None:
            return _("Error") if failed else _("Result")
        took = _("Error ({seconds:.1f} s)") if failed else _("Result ({seconds:.1f} s)")
        return took.format(seconds=self.seconds)
