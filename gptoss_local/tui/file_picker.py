"""A modal that picks a file or a folder to attach, from the tree of the working folder or by
typing its path.

The tree hides what nobody attaches and what would drown the rest: hidden entries, version
control, dependency folders and caches. A typed path may still name any of them (or a file
outside the folder): the picker only says which path; what may be attached is decided by
`gptoss_local.attachments`, which refuses with a message of its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Button, DirectoryTree, Input, Label

from gptoss_local.attachments.completion import complete_path
from gptoss_local.i18n import N_, _, translate
from gptoss_local.tui.dialog import Dialog

SKIPPED = frozenset({".git", "node_modules", "__pycache__", ".venv"})
FILTER_DELAY = 0.25  # seconds of no typing before the tree is filtered again (it reads disks)
SHOWN = 6  # completions named in the hint when Tab finds several


class AttachableTree(DirectoryTree):
    """The working folder's tree without hidden entries or `SKIPPED` folders; when `pattern`
    is set, only the files whose name holds it (any case) show, and every folder."""

    pattern: str = ""  # set by the picker as the user types, then the tree reloads

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        wanted = self.pattern.lower()
        return [
            path
            for path in paths
            if not path.name.startswith(".")
            and path.name not in SKIPPED
            and (not wanted or wanted in path.name.lower() or self._safe_is_dir(path))
        ]

    @property
    def highlighted_path(self) -> Path | None:
        """The path of the highlighted entry."""
        node = self.cursor_node
        return None if node is None or node.data is None else node.data.path


class PathInput(Input):
    """The path box: Tab completes the path typed (the picker's `action_complete`), Down goes
    to the tree."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "screen.complete", _("Complete"), id="picker_complete"),
        Binding("down", "app.focus_next", _("Tree"), show=False, id="picker_down"),
    ]

    def __init__(self) -> None:
        placeholder = _("Type a path (Tab completes) or choose below")
        super().__init__(placeholder=placeholder, id="picker-path")
        self.completed: str | None = None  # the value Tab wrote, which is not typing


class FilePickerScreen(Dialog[Path | None]):
    """Pick a file or folder under `root` to attach; returns its absolute path, or None.

    Enter on a file in the tree picks it, A picks the highlighted entry (a folder as a whole);
    a path typed in the box (relative to `root`, or absolute) is picked with Enter.
    """

    DEFAULT_CSS = """
    FilePickerScreen > Vertical {
        width: 90%; max-width: 100; height: 90%; max-height: 40; padding: 0 1;
    }
    FilePickerScreen #picker-title { width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    FilePickerScreen AttachableTree { height: 1fr; min-height: 3; }
    FilePickerScreen #picker-hint { width: 1fr; height: auto; max-height: 2; color: $text-muted; }
    FilePickerScreen #picker-hint.-error { color: $error; }
    FilePickerScreen Horizontal { margin-top: 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", _("Cancel"), id="picker_cancel"),
        Binding("a", "pick_highlighted", _("Attach folder"), id="picker_folder"),
    ]
    HINT = N_("Enter attaches a file, A the highlighted folder, Tab completes a path, Esc cancels.")

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = Path(os.path.abspath(root))
        self._filter_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            title = _("Attach from {folder}").format(folder=self.root)
            yield Label(title, id="picker-title", markup=False)
            yield PathInput()
            yield AttachableTree(self.root, id="picker-tree")
            yield Label(translate(self.HINT), id="picker-hint", markup=False)
            with Horizontal():
                yield Button(_("Cancel"), id="picker-cancel")
                yield Button(_("Attach"), id="picker-attach", variant="primary")

    def on_mount(self) -> None:
        self.query_one(PathInput).focus()

    @property
    def folder_tree(self) -> AttachableTree:
        """The folder's tree."""
        return self.query_one(AttachableTree)

    @on(DirectoryTree.FileSelected)
    def _file_chosen(self, event: DirectoryTree.FileSelected) -> None:
        event.stop()
        self.dismiss(self._absolute(event.path))

    @on(Input.Submitted)
    def _path_typed(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.pick_typed(event.value.strip())
        else:
            self.folder_tree.focus()

    @on(Input.Changed)
    def _typing(self, event: Input.Changed) -> None:
        """Filter the tree on the last part of the path typed, once the typing pauses."""
        if event.value != self.query_one(PathInput).completed:  # else it names completions
            self._hint(translate(self.HINT))
        if self._filter_timer is not None:
            self._filter_timer.stop()
        pattern = event.value.rsplit("/", 1)[-1]
        self._filter_timer = self.set_timer(FILTER_DELAY, lambda: self._filter(pattern))

    def _filter(self, pattern: str) -> None:
        if pattern != self.folder_tree.pattern:
            self.folder_tree.pattern = pattern
            self.folder_tree.reload()

    @on(Button.Pressed, "#picker-attach")
    def _attach_pressed(self) -> None:
        typed = self.query_one(PathInput).value.strip()
        if typed:
            self.pick_typed(typed)
        else:
            self.action_pick_highlighted()

    @on(Button.Pressed, "#picker-cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    def action_complete(self) -> None:
        """Complete the typed path as far as its completions agree, and name them if several;
        on an empty box, move on as Tab does elsewhere."""
        box = self.query_one(PathInput)
        if not box.value:
            self.focus_next()
            return
        paths = complete_path(box.value, self.root)
        if not paths:
            self.app.bell()
            return
        # Letter by letter, as a shell completes: "src/ap" + "src/app.py", "src/apps/".
        common = os.path.commonprefix(paths)  # noqa: RUF071
        if len(common) > len(box.value):
            box.completed = box.value = common
            box.cursor_position = len(common)
        if len(paths) > 1:
            self._hint("  ".join(paths[:SHOWN]) + ("…" if len(paths) > SHOWN else ""))

    def pick_typed(self, typed: str) -> None:
        """Pick the path typed (relative to the root, or absolute; ~ is the home folder), or
        say that nothing is there."""
        path = self._absolute(Path(typed).expanduser())
        if path.exists():
            self.dismiss(path)
        else:
            self._hint(_("Nothing is at {path}.").format(path=path), error=True)

    def action_pick_highlighted(self) -> None:
        """Pick the highlighted entry of the tree: a file, or a folder as a whole."""
        path = self.folder_tree.highlighted_path
        if path is not None:
            self.dismiss(self._absolute(path))

    def action_cancel(self) -> None:
        """Close without picking anything."""
        self.dismiss(None)

    def _absolute(self, path: Path) -> Path:
        return Path(os.path.normpath(self.root / path))  # `/` keeps an absolute `path` as is

    def _hint(self, text: str, *, error: bool = False) -> None:
        hint = self.query_one("#picker-hint", Label)
        hint.update(text)
        hint.set_class(error, "-error")
