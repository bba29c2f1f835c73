"""The banner above the chat while the model loads: what is happening, a progress bar, and, if
loading fails, why and what to do (it stays until the next attempt, unlike a notification).

The chat screen drives it from what `chat.model_host.ModelHost` reports (already thinned out:
llama.cpp reports per tensor)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static


class LoadingBanner(Vertical):
    """Hidden once the model is loaded; shown again only for a failure."""

    DEFAULT_CSS = """
    LoadingBanner { height: auto; padding: 0 1; margin: 0 1; border: round $accent; }
    LoadingBanner.-failed { border: round $error; }
    LoadingBanner #load-title { text-style: bold; }
    LoadingBanner.-failed #load-title { color: $error; }
    LoadingBanner ProgressBar { margin-top: 0; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Loading the model…", id="load-title", markup=False)
        yield ProgressBar(total=100, show_eta=False, id="load-bar")
        yield Static("", id="load-what", markup=False)

    def start(self, model: str) -> None:
        """Show the banner for loading `model`."""
        self.remove_class("-failed")
        self.query_one("#load-title", Static).update(f"Loading {model}…")
        self.query_one("#load-bar", ProgressBar).display = True
        self.query_one("#load-bar", ProgressBar).update(progress=0)
        self.query_one("#load-what", Static).update("")
        self.display = True

    def show_progress(self, fraction: float, what: str) -> None:
        """Move the bar and say what is being done."""
        self.query_one("#load-bar", ProgressBar).update(progress=round(fraction * 100, 1))
        self.query_one("#load-what", Static).update(what)

    def loaded(self) -> None:
        """The model is ready: hide the banner."""
        self.display = False

    def failed(self, message: str) -> None:
        """Show why loading failed; the next message sent tries again."""
        self.add_class("-failed")
        self.query_one("#load-title", Static).update("The model could not be loaded")
        self.query_one("#load-bar", ProgressBar).display = False
        self.query_one("#load-what", Static).update(
            f"{message}\n\nF9 chooses another model; sending a message tries again; Ctrl+Q quits."
        )
        self.display = True
