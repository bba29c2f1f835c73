"""Pilot tests of the attachment widgets on their own: `@` completion in a text area, the chips
of pending attachments, and the file picker (at 80×24, the smallest terminal we support).

The text area here is wired to the completer as the module docstring of `mention_menu` says
the chat input is to be, so these tests check that recipe too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events, on
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Button, Label, TextArea
from tui_helpers import wait_for

from gptoss_local.attachments.model import AttachedFile, Kind
from gptoss_local.tui.attachment_widgets import (
    AttachmentChip,
    AttachmentChips,
    AttachmentList,
    attachment_label,
    place_chips,
    short_name,
)
from gptoss_local.tui.file_picker import AttachableTree, FilePickerScreen, PathInput
from gptoss_local.tui.mention_menu import (
    MentionCompleter,
    MentionMenu,
    mention_before,
    mention_text,
)

SMALL = (80, 24)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A working folder: folders (one with a space), a file, and what the picker hides."""
    folder = tmp_path / "work"
    for name in ("src/app.py", "src/util.py", "docs/guide.md", "README.md", ".git/config",
                 "node_modules/left-pad.js", ".env", "my docs/a b.txt"):  # fmt: skip
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n", encoding="utf-8")
    return folder


def attached(path: str, tokens: int = 1234, kind: Kind = "text") -> AttachedFile:
    """An attachment as `read_attachment` would make it (nothing is read here)."""
    name = path.rsplit("/", 1)[-1]
    return AttachedFile(name=name, path=f"/work/{path}", sha256="0" * 64, kind=kind,
                        text=f"text of {name}", tokens=tokens)  # fmt: skip


class MentionBox(TextArea):
    """A text area wired as the chat input is to be: the completer first, Enter sends."""

    completer: MentionCompleter | None = None

    def __init__(self) -> None:
        super().__init__(id="box", soft_wrap=True)
        self.sent: list[str] = []

    async def _on_key(self, event: events.Key) -> None:
        if self.completer is not None and self.completer.handle_key(event):
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.sent.append(self.text)
            return
        await super()._on_key(event)

    @on(TextArea.Changed)
    @on(TextArea.SelectionChanged)
    def _mention(self) -> None:
        if self.completer is not None:
            self.completer.refresh()

    def on_blur(self) -> None:
        if self.completer is not None:
            self.completer.close()


class AttachApp(App[None]):
    """The chips, the box and the menu, as the chat screen will hold them."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.changes: list[tuple[str, ...]] = []

    def compose(self) -> ComposeResult:
        yield AttachmentChips(id="chips")
        yield MentionBox()
        yield MentionMenu(id="menu")

    def on_mount(self) -> None:
        box = self.query_one(MentionBox)
        box.completer = MentionCompleter(box, self.query_one(MentionMenu), self.root)
        box.focus()

    @on(AttachmentChips.Changed)
    def _changed(self, message: AttachmentChips.Changed) -> None:
        self.changes.append(tuple(a.name for a in message.attachments))


# --- @ completion ----------------------------------------------------------------------------


def test_the_mention_word_starts_at_an_at_after_whitespace() -> None:
    assert mention_before("see @sr", 7) == (4, "sr", False)
    assert mention_before("@", 1) == (0, "", False)
    assert mention_before('see @"my no', 11) == (4, "my no", True)
    assert mention_before("me@example.com", 14) is None
    assert mention_before("see @src/app.py now", 19) is None  # the cursor is past the word
    assert mention_text("src/", False) == "@src/"
    assert mention_text("my docs/", False) == '@"my docs/'  # left open: the menu goes on
    assert mention_text("my docs/a b.txt", True) == '@"my docs/a b.txt" '
    assert mention_text("src/app.py", False) == "@src/app.py "


async def test_at_completes_a_folder_then_a_file_with_tab(root: Path) -> None:
    app = AttachApp(root)
    async with app.run_test(size=SMALL) as pilot:
        box, menu = app.query_one(MentionBox), app.query_one(MentionMenu)
        await pilot.press(*"see @sr")
        await wait_for(pilot, lambda: menu.shown, what="the menu")
        assert menu.paths == ["src/"] and menu.choice == "src/"
        await pilot.press("tab")
        assert box.text == "see @src/"
        await wait_for(pilot, lambda: menu.paths == ["src/app.py", "src/util.py"])
        assert menu.shown and box.has_focus  # the menu never takes the focus
        await pilot.press("down", "tab")
        assert box.text == "see @src/util.py " and box.cursor_location == (0, 17)
        await pilot.pause()
        assert not menu.shown
        await pilot.press("enter")  # the menu is closed: Enter sends
        assert box.sent == ["see @src/util.py "]


async def test_enter_accepts_without_a_newline_and_escape_closes(root: Path) -> None:
    app = AttachApp(root)
    async with app.run_test(size=SMALL) as pilot:
        box, menu = app.query_one(MentionBox), app.query_one(MentionMenu)
        await pilot.press(*"@R")
        await wait_for(pilot, lambda: menu.paths == ["README.md"])
        await pilot.press("enter")
        assert box.text == "@README.md " and box.sent == []
        await pilot.press(*"and @")
        await wait_for(pilot, lambda: menu.shown)
        # No hidden entries (the picker's tree hides more: completion is for any path).
        assert menu.paths == ["docs/", "my docs/", "node_modules/", "src/", "README.md"]
        await pilot.press("escape")
        assert not menu.shown
        await pilot.press("enter")  # closed: Enter is the box's again
        assert box.sent == ["@README.md and @"] and "\n" not in box.text
        await pilot.press("d")  # typing on opens it again
        await wait_for(pilot, lambda: menu.paths == ["docs/"])
        box.blur()
        await wait_for(pilot, lambda: not menu.shown, what="closed on blur")


async def test_the_menu_floats_above_the_cursor_at_the_bottom(root: Path) -> None:
    app = AttachApp(root)
    async with app.run_test(size=SMALL) as pilot:
        box, menu = app.query_one(MentionBox), app.query_one(MentionMenu)
        box.styles.dock = "bottom"  # as the chat input sits
        box.styles.height = 3
        await pilot.pause()
        await pilot.press(*"x @")
        await wait_for(pilot, lambda: menu.shown and menu.region.height > 0)
        await pilot.pause()
        cursor = box.cursor_screen_offset
        assert menu.region.bottom <= cursor.y and menu.region.x == cursor.x - 1
        assert Region(0, 0, *SMALL).contains_region(menu.region)


async def test_a_path_with_spaces_is_quoted_and_a_click_accepts(root: Path) -> None:
    app = AttachApp(root)
    async with app.run_test(size=SMALL) as pilot:
        box, menu = app.query_one(MentionBox), app.query_one(MentionMenu)
        await pilot.press(*"@my")
        await wait_for(pilot, lambda: menu.paths == ["my docs/"])
        await pilot.press("tab")
        assert box.text == '@"my docs/'
        await wait_for(pilot, lambda: menu.paths == ["my docs/a b.txt"])
        await pilot.click(menu, offset=(2, 1))  # the first entry, under the border
        assert box.text == '@"my docs/a b.txt" ' and box.has_focus
        await pilot.pause()
        assert not menu.shown


async def test_a_key_typed_ahead_of_the_menu_completes_what_is_typed(root: Path) -> None:
    app = AttachApp(root)
    async with app.run_test(size=SMALL) as pilot:
        box, menu = app.query_one(MentionBox), app.query_one(MentionMenu)
        await pilot.press(*"@do")
        await wait_for(pilot, lambda: menu.paths == ["docs/"])
        assert box.completer is not None
        box.insert("c")  # its refresh is still queued when Tab comes
        assert box.completer.handle_key(events.Key("tab", None)) is True
        assert box.text == "@docs/"  # not "@docs/c": the menu caught up first
        await wait_for(pilot, lambda: menu.paths == ["docs/guide.md"])
        box.insert("x")
        assert box.completer.handle_key(events.Key("tab", None)) is False  # none: the box's
        assert not menu.shown


async def test_no_menu_for_a_complete_file_or_a_mid_word_at(root: Path) -> None:
    app = AttachApp(root)
    async with app.run_test(size=SMALL) as pilot:
        box, menu = app.query_one(MentionBox), app.query_one(MentionMenu)
        await pilot.press(*"me@src")
        await pilot.pause()
        assert not menu.shown
        box.text = ""
        await pilot.press(*"@README.md")  # already whole: Enter must send it
        await pilot.pause()
        assert not menu.shown
        await pilot.press("enter")
        assert box.sent == ["@README.md"]


# --- chips -----------------------------------------------------------------------------------


def test_chip_labels_and_placement() -> None:
    assert attachment_label(attached("a/notes.md")) == "📄 notes.md · 1,234 tok"
    assert attachment_label(attached("x.pdf", 5, "pdf")).startswith("📕 x.pdf")
    assert attachment_label(attached("src", 10, "folder")).startswith("📁 src")
    assert short_name("a" * 50, 11) == "aaaaa…aaaaa"
    assert place_chips([10, 10, 10], 25, None) == [(0, 0), (11, 0), (0, 1)]
    # The second line slides left to show the focused chip past its edge.
    assert place_chips([20, 20, 20], 25, 2) == [(0, 0), (-16, 1), (5, 1)]


async def test_chips_add_replace_and_remove_by_key(root: Path) -> None:
    app = AttachApp(root)
    async with app.run_test(size=SMALL) as pilot:
        chips = app.query_one(AttachmentChips)
        assert not chips.display
        chips.add(attached("notes.md", 100))
        chips.add(attached("src", 50, "folder"))
        chips.add(attached("notes.md", 300))  # the same path: replaced, in its place
        await pilot.pause()
        assert [a.tokens for a in chips.attachments] == [300, 50] and chips.total_tokens == 350
        assert chips.display and chips.region.height == 1
        assert app.changes == [("notes.md",), ("notes.md", "src"), ("notes.md", "src")]
        first, second = chips.query(AttachmentChip)
        assert "📄 notes.md · 300 tok ✕" in str(first.render())
        first.focus()
        await pilot.press("right")
        assert second.has_focus
        await pilot.press("backspace")
        await pilot.pause()
        assert [a.name for a in chips.attachments] == ["notes.md"] and first.has_focus
        await pilot.press("delete")
        await pilot.pause()
        assert chips.attachments == () and not chips.display
        assert app.changes[-2:] == [("notes.md",), ()]


async def test_a_click_on_the_cross_removes_a_chip_and_many_wrap_to_two_lines(
    root: Path,
) -> None:
    app = AttachApp(root)
    async with app.run_test(size=SMALL) as pilot:
        chips = app.query_one(AttachmentChips)
        for n in range(8):
            chips.add(attached(f"file-number-{n}.txt"))
        await pilot.pause()
        assert chips.region.height == 2
        chip = chips.query(AttachmentChip).first()
        await pilot.click(chip, offset=(chip.size.width // 2, 0))  # not on the ✕: stays
        assert len(chips.attachments) == 8
        await pilot.click(chip, offset=(chip.size.width - 2, 0))
        await pilot.pause()
        assert len(chips.attachments) == 7 and "file-number-0.txt" not in str(app.changes[-1])
        assert chips.discard("/work/nowhere") is False
        chips.clear()
        await pilot.pause()
        assert app.changes[-1] == () and not chips.display


async def test_a_sent_message_lists_its_attachments(root: Path) -> None:
    app = AttachApp(root)
    async with app.run_test(size=SMALL) as pilot:
        listed = AttachmentList([attached("a.md", 12), attached("b.pdf", 3456, "pdf")])
        await app.mount(listed)
        await pilot.pause()
        shown = str(listed.render())
        assert "📄 a.md · 12 tok" in shown and "📕 b.pdf · 3,456 tok" in shown
        assert listed.region.height == 2 and not listed.can_focus


# --- the file picker -------------------------------------------------------------------------


async def open_picker(
    pilot: Pilot[None], root: Path, results: list[Path | None]
) -> FilePickerScreen:
    """Open the picker on `root` (its answers go to `results`) and wait for its tree."""
    picker = FilePickerScreen(root)
    pilot.app.push_screen(picker, results.append)
    await wait_for(pilot, lambda: pilot.app.screen is picker and picker.is_mounted)
    await wait_for(pilot, lambda: bool(picker.query(AttachableTree)), what="the picker")
    tree = picker.query_one(AttachableTree)
    await wait_for(pilot, lambda: len(tree.root.children) > 0, what="the tree")
    return picker


def shown_names(tree: AttachableTree) -> list[str]:
    return [str(node.label) for node in tree.root.children]


async def test_the_picker_fits_80x24_and_hides_git(root: Path) -> None:
    app = AttachApp(root)
    results: list[Path | None] = []
    async with app.run_test(size=SMALL) as pilot:
        picker = await open_picker(pilot, root, results)
        names = shown_names(picker.query_one(AttachableTree))
        assert names == ["docs", "my docs", "src", "README.md"]
        screen = Region(0, 0, *SMALL)
        for widget in (*picker.query(Button), picker.query_one("#picker-hint", Label),
                       picker.query_one(PathInput)):  # fmt: skip
            assert widget.region.area > 0 and screen.contains_region(widget.region), widget
        assert picker.query_one(AttachableTree).region.height >= 5
        await pilot.press("escape")
        await wait_for(pilot, lambda: results == [None], what="cancelled")


async def test_the_picker_picks_a_file_by_enter_and_a_folder_by_a(root: Path) -> None:
    app = AttachApp(root)
    results: list[Path | None] = []
    async with app.run_test(size=SMALL) as pilot:
        picker = await open_picker(pilot, root, results)
        tree = picker.query_one(AttachableTree)
        await pilot.press("down")  # from the path box to the tree
        assert tree.has_focus
        readme = next(n for n in tree.root.children if str(n.label) == "README.md")
        tree.move_cursor(readme)
        await pilot.press("enter")
        await wait_for(pilot, lambda: results == [root / "README.md"])
        picker = await open_picker(pilot, root, results)
        tree = picker.query_one(AttachableTree)
        tree.focus()
        tree.move_cursor(next(n for n in tree.root.children if str(n.label) == "src"))
        await pilot.press("a")
        await wait_for(pilot, lambda: results[-1] == root / "src")


async def test_the_picker_takes_a_typed_path_and_completes_it(root: Path) -> None:
    app = AttachApp(root)
    results: list[Path | None] = []
    async with app.run_test(size=SMALL) as pilot:
        picker = await open_picker(pilot, root, results)
        box = picker.query_one(PathInput)
        assert box.has_focus
        await pilot.press(*"sr", "tab")
        assert box.value == "src/"
        await pilot.press("tab")  # two files: as far as they agree, and the hint names them
        hint = str(picker.query_one("#picker-hint", Label).render())
        assert "src/app.py" in hint and "src/util.py" in hint
        (root / "docs" / "guide-2.md").write_text("two\n", encoding="utf-8")
        box.value = ""
        await pilot.press(*"docs/g", "tab")  # both extended and named
        assert box.value == "docs/guide"
        await pilot.pause()
        hint = str(picker.query_one("#picker-hint", Label).render())
        assert "docs/guide-2.md" in hint and "docs/guide.md" in hint
        await pilot.press(*"nothing", "enter")
        assert "Nothing is at" in str(picker.query_one("#picker-hint", Label).render())
        assert app.screen is picker
        box.value = ""
        await pilot.press(*"src/app.py", "enter")
        await wait_for(pilot, lambda: results == [root / "src" / "app.py"])


async def test_typing_filters_the_tree(root: Path) -> None:
    app = AttachApp(root)
    results: list[Path | None] = []
    async with app.run_test(size=SMALL) as pilot:
        picker = await open_picker(pilot, root, results)
        tree = picker.query_one(AttachableTree)
        await pilot.press(*"READX")
        # Folders stay, to go into (waited for whole: the tree is empty while it refills).
        filtered = ["docs", "my docs", "src"]
        await wait_for(pilot, lambda: shown_names(tree) == filtered, what="filtered")
        await pilot.press("backspace")
        await wait_for(pilot, lambda: "README.md" in shown_names(tree), what="unfiltered")
