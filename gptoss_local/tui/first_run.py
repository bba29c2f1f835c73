"""The first-run screen: this PC, the plan and why, the choices, and the download.

It returns a `first_run.Ready` (what to load) when the user starts, or None when they quit.
The facts and choices scroll; the download, the problem and the buttons stay below them, in
view on the smallest terminal served (80x24).
Changing a choice re-plans at once (planning is arithmetic, no I/O). The download runs on a
thread worker; cancelling keeps what was fetched, and the next start resumes it.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Label, ProgressBar, Select, Static

from gptoss_local.errors import WishError
from gptoss_local.i18n import N_, _, translate
from gptoss_local.kinds import EFFORTS, BackendName, Effort, effort_word
from gptoss_local.launch import text
from gptoss_local.launch.engines import ENGINES
from gptoss_local.launch.preparation import Preparation, Ready, Weights
from gptoss_local.plan.planner import Plan
from gptoss_local.store.errors import PullCancelled, StoreError
from gptoss_local.store.progress import Progress
from gptoss_local.tui.widgets import ScrollWhenNeeded

INTRO = N_(
    "gpt-oss on this PC, offline and private. Here is what was found and what is suggested; "
    "change anything, then start."
)


class FirstRunScreen(Screen[Ready | None]):
    """Ask what to run (unless the command line said), download it if needed, then start."""

    DEFAULT_CSS = """
    FirstRunScreen { align: center top; }
    FirstRunScreen > ScrollWhenNeeded { width: 100; max-width: 100%; height: 1fr; padding: 0 1; }
    FirstRunScreen > #actions { width: 100; max-width: 100%; height: auto; padding: 0 1; }
    FirstRunScreen .heading { text-style: bold; margin-top: 1; color: $accent; }
    FirstRunScreen .facts { padding: 0 2; }
    FirstRunScreen .choices { height: auto; }
    FirstRunScreen .choice { width: 1fr; height: auto; padding-right: 1; }
    FirstRunScreen #problem { color: $error; padding: 0 2; }
    FirstRunScreen #download-box { height: auto; padding: 0 2; }
    FirstRunScreen #download-note { color: $text-warning; }
    FirstRunScreen .buttons { height: auto; }
    FirstRunScreen Button { margin-right: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel_download", _("Cancel download"), id="first_run_cancel"),
    ]
    # No focus on the first Select as the screen is composed: that scrolls it into view, and a
    # small terminal would open scrolled past the top. `on_mount` focuses Start, not scrolling.
    AUTO_FOCUS = ""

    def __init__(self, setup: Preparation, can_go_back: bool = False) -> None:
        super().__init__()
        self.setup = setup
        self.can_go_back = can_go_back  # opened again from the chat (F9): "Back", not "Quit"
        self.wishes = setup.initial()
        self.plan: Plan = setup.plan(self.wishes)
        self.weights: Weights | None = setup.weights(self.plan)
        self._cancel: threading.Event | None = None
        self._shown: dict[str, list[tuple[str, Any]]] = {}  # each Select's current options

    @property
    def downloading(self) -> bool:
        """Whether a download is running."""
        return self._cancel is not None

    def compose(self) -> ComposeResult:
        setup, fixed = self.setup, self._fixed
        models, contexts = self._options()
        self._shown = {"#model": models, "#context": contexts}
        with ScrollWhenNeeded():
            if self.can_go_back and setup.model_path is not None:
                yield Static(_("Change the context or effort of {file}").format(
                    file=setup.model_path.name), classes="heading", markup=False)  # fmt: skip
            elif self.can_go_back:
                yield Static(_("Change the model, context or engine"), classes="heading")
            else:
                yield Static(_("Welcome to gptoss-local"), classes="heading")
                yield Static(translate(INTRO), classes="facts")
            yield Static(_("This PC"), classes="heading")
            yield Static("\n".join(text.hardware_lines(setup.hardware, setup.engine_advice)),
                         classes="facts", markup=False)  # fmt: skip
            yield Static(_("The plan"), classes="heading")
            yield Static(id="plan", classes="facts", markup=False)
            with Horizontal(classes="choices"):
                yield self._choice(_("Model"), "model", models, self._model_value(),
                                   fixed("model"))  # fmt: skip
                context = self._context_value(contexts)
                yield self._choice(_("Context"), "context", contexts, context, fixed("context"))
            engines: list[tuple[str, Any]] = [  # a server's engine needs its --base-url
                (e.label, e.name) for e in ENGINES.values()
                if not e.remote or e.name == self.wishes.backend
            ]  # fmt: skip
            efforts: list[tuple[str, Any]] = [(effort_word(e), e) for e in EFFORTS]
            with Horizontal(classes="choices"):
                yield self._choice(_("Engine"), "backend", engines, self.wishes.backend,
                                   fixed("backend"))  # fmt: skip
                yield self._choice(_("Reasoning effort"), "effort", efforts, self.wishes.effort,
                                   fixed("effort"))  # fmt: skip
            yield Static(_("Weights"), classes="heading")
            yield Static(id="weights", classes="facts", markup=False)
        # Below the scrolling facts, always in view: the download, what is wrong, the buttons.
        with Vertical(id="actions"):
            with Vertical(id="download-box"):
                yield ProgressBar(id="download-bar", show_eta=False)
                yield Static(id="download-line", markup=False)
                yield Static(id="download-note", markup=False)
            yield Static(id="problem", markup=False)
            with Horizontal(classes="buttons"):
                yield Button(_("Start"), id="start", variant="primary")
                yield Button(_("Cancel download"), id="cancel")
                yield Button(_("Back") if self.can_go_back else _("Quit"), id="quit")
        yield Footer()

    def _choice(
        self, title: str, name: str, options: list[tuple[str, Any]], value: Any, fixed: bool
    ) -> Vertical:
        label = _("{title} (from the command line)").format(title=title) if fixed else title
        select: Select[Any] = Select(options, value=value, allow_blank=False, id=name)
        select.disabled = fixed
        return Vertical(Label(label), select, classes="choice")

    def _fixed(self, name: str) -> bool:
        """Whether the choice `name` (a Select's id) is not to be changed here: a file given
        with --model-path fixes the model and the engine (llama.cpp); a flag answered it, on the
        first run (on F9 the flags' answers are where the choices start: the user asked to
        change them)."""
        if self.setup.model_path is not None and name in ("model", "backend"):
            return True
        return self.setup.given(name) and not self.can_go_back

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc cancels only a download that is running (and shows in the footer only then)."""
        return action != "cancel_download" or self.downloading

    def on_mount(self) -> None:
        self.query_one("#download-box").display = False
        self.query_one("#cancel").display = False
        self._show()
        self.query_one("#start", Button).focus(scroll_visible=False)  # the top stays in view

    # --- choices -------------------------------------------------------------------------------

    @on(Select.Changed)
    def _changed(self, event: Select.Changed) -> None:
        values = {s.id: s.value for s in self.query(Select)}
        choices = dataclasses.replace(
            self.wishes,
            model=None if values["model"] == "auto" else str(values["model"]),
            context=(values["context"] or None) if isinstance(values["context"], int) else None,
            backend=cast(BackendName, values["backend"]),  # the Selects offer only these
            effort=cast(Effort, values["effort"]),
        )
        if choices == self.wishes:
            return
        try:
            plan = self.setup.plan(choices)
        except WishError as exc:
            self._problem(str(exc))
            return
        self.wishes, self.plan, self.weights = choices, plan, self.setup.weights(plan)
        self._show()

    def _show(self) -> None:
        """Refresh the plan, the weights and the start button from the current choices."""
        plan, weights = self.plan, self.weights
        self.query_one("#plan", Static).update("\n".join(text.plan_lines(plan)))
        self.query_one("#weights", Static).update("\n".join(text.weights_lines(weights, plan)))
        models, contexts = self._options()
        self._set_options("#model", models, self._model_value())
        self._set_options("#context", contexts, self._context_value(contexts))
        start = self.query_one("#start", Button)
        start.disabled = plan.model is None
        if weights is not None and not weights.present:
            start.label = _("Download {size} and start").format(
                size=text.size_text(weights.missing)
            )
        else:
            start.label = _("Start")
        self._problem("" if plan.model else _("No model fits this PC as planned: see the plan."))

    def _options(self) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
        """The model and context choices, labelled with what the planner would pick."""
        c = self.wishes
        auto = self.setup.plan(dataclasses.replace(c, model=None)).model
        auto_context = self.setup.plan(dataclasses.replace(c, context=None)).context
        contexts = text.context_options(auto_context, self._context_max(), c.context)
        path = self.setup.model_path
        if path is not None:  # the file is the model: the one choice there is
            return [(path.name, "auto")], contexts
        return text.model_options(self.setup.catalog, auto), contexts

    def _context_max(self) -> int:
        """The most context the planned model (or the file given) was trained for."""
        spec = self.setup.file_spec()
        if spec is not None:
            return spec.shape.context_max
        models = [m for m in self.setup.catalog.models if m.name == self.plan.model]
        return (models or list(self.setup.catalog.models))[0].shape.context_max

    def _model_value(self) -> str:
        return "auto" if self.setup.model_path is not None else self.wishes.model or "auto"

    def _context_value(self, options: list[tuple[str, Any]]) -> int:
        """The option of the wished context, if there is one; else the planner's (0)."""
        wished = self.wishes.context or 0
        return wished if wished in (size for _label, size in options) else 0

    def _set_options(self, selector: str, options: list[tuple[str, Any]], value: Any) -> None:
        select: Select[Any] = self.query_one(selector, Select)
        if self._shown.get(selector) != options:
            select.set_options(options)
            self._shown[selector] = options
        if select.value != value:
            select.value = value

    def _problem(self, message: str) -> None:
        problem = self.query_one("#problem", Static)
        problem.update(message)
        problem.display = bool(message)  # no empty row above the buttons

    # --- start, download, cancel ---------------------------------------------------------------

    @on(Button.Pressed, "#start")
    def _start(self) -> None:
        if self.downloading or self.plan.model is None:
            return
        weights = self.weights
        if weights is not None and not weights.present:
            self._begin_download(weights)
            return
        self._finish()

    @on(Button.Pressed, "#cancel")
    def action_cancel_download(self) -> None:
        """Stop the download; what was fetched stays for next time."""
        if self._cancel is not None:
            self._cancel.set()

    @on(Button.Pressed, "#quit")
    def _quit(self) -> None:
        self.action_cancel_download()
        self.dismiss(None)

    def _begin_download(self, weights: Weights) -> None:
        self._cancel = threading.Event()
        self._problem("")
        self.query_one("#download-note", Static).update("")
        self._set_busy(True)
        self.refresh_bindings()
        bar = self.query_one("#download-bar", ProgressBar)
        bar.update(total=weights.spec.total_bytes, progress=weights.on_disk)
        self._download(weights, self._cancel)

    @work(thread=True, group="download", exit_on_error=False)
    def _download(self, weights: Weights, cancel: threading.Event) -> None:
        app = self.app

        def notice(text: str) -> None:  # retries and source switches, as they happen
            app.call_from_thread(self.query_one("#download-note", Static).update, text)

        try:
            self.setup.download(weights.spec, lambda p: app.call_from_thread(self._progress, p),
                                cancel, notice)  # fmt: skip
        except PullCancelled as exc:
            app.call_from_thread(self._download_ended, str(exc), False)
        except StoreError as exc:
            app.call_from_thread(
                self._download_ended, _("The download failed: {error}").format(error=exc), False
            )
        except Exception as exc:  # a bug must not leave the screen stuck "downloading"
            app.call_from_thread(
                self._download_ended, _("The download failed: {error!r}").format(error=exc), False
            )
        else:
            app.call_from_thread(self._download_ended, "", True)

    def _progress(self, progress: Progress) -> None:
        bar = self.query_one("#download-bar", ProgressBar)
        if progress.phase == "download":
            bar.update(total=progress.total, progress=progress.done)
        self.query_one("#download-line", Static).update(text.download_line(progress))

    def _download_ended(self, message: str, done: bool) -> None:
        self._cancel = None
        self.refresh_bindings()
        self._set_busy(False)
        self.weights = self.setup.weights(self.plan)
        self._show()
        self._problem(message)
        if done:
            self._finish()

    def _set_busy(self, busy: bool) -> None:
        self.query_one("#download-box").display = busy or bool(
            self.weights and self.weights.on_disk and not self.weights.present
        )
        self.query_one("#cancel").display = busy
        self.query_one("#start", Button).display = not busy
        for select in self.query(Select):
            select.disabled = busy or self._fixed(str(select.id))

    def _finish(self) -> None:
        try:
            ready = self.setup.ready(self.wishes, self.plan)
            self.setup.remember(self.wishes, self.plan)
        except (WishError, OSError, ValueError) as exc:
            self._problem(str(exc))
            return
        self.dismiss(ready)
