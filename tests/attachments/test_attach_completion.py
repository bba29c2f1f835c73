"""Completing "@partial" in the chat box from the working folder, and finding the "@path"
mentions in a message."""

from __future__ import annotations

from pathlib import Path

import pytest

from gptoss_local.attachments import as_mention, complete_path, mentions


@pytest.fixture
def root(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    for folder in ("src/lib", "Docs", ".hidden", "scripts"):
        (work / folder).mkdir(parents=True)
    for file in ("README.md", "readme.txt", "setup.py", ".env", "src/app.py", "src/App2.py"):
        (work / file).write_text("")
    return work


def test_everything_visible_folders_first(root: Path) -> None:
    assert complete_path("", root) == [
        "Docs/", "scripts/", "src/", "README.md", "readme.txt", "setup.py",
    ]  # fmt: skip


def test_the_last_name_matches_without_case(root: Path) -> None:
    assert complete_path("s", root) == ["scripts/", "src/", "setup.py"]
    assert complete_path("READ", root) == ["README.md", "readme.txt"]
    assert complete_path("doc", root) == ["Docs/"]


def test_a_slash_goes_down_into_a_folder(root: Path) -> None:
    assert complete_path("src/", root) == ["src/lib/", "src/app.py", "src/App2.py"]
    assert complete_path("src/a", root) == ["src/app.py", "src/App2.py"]
    assert complete_path("src/lib/", root) == []


def test_hidden_entries_only_when_the_name_starts_with_a_dot(root: Path) -> None:
    assert complete_path(".", root) == [".hidden/", ".env"]
    assert complete_path(".e", root) == [".env"]


def test_nothing_for_a_folder_that_is_not_there(root: Path) -> None:
    assert complete_path("nope/", root) == []
    assert complete_path("setup.py/", root) == []


def test_absolute_and_home_paths(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert complete_path(f"{root}/sr", Path("/")) == [f"{root}/src/"]
    monkeypatch.setenv("HOME", str(root))
    assert complete_path("~", Path("/")) == ["~/"]
    assert complete_path("~/D", Path("/")) == ["~/Docs/"]


def test_the_limit(root: Path) -> None:
    assert complete_path("", root, limit=2) == ["Docs/", "scripts/"]


def test_mentions_at_the_start_or_after_whitespace() -> None:
    text = "@src/app.py and\t@docs/ but not me@example.com or x@y"
    assert mentions(text) == ["src/app.py", "docs/"]


def test_a_quoted_mention_holds_spaces() -> None:
    assert mentions('read @"my notes/todo list.md" now') == ["my notes/todo list.md"]


def test_sentence_punctuation_ends_a_mention() -> None:
    assert mentions("see @notes.md, then (and @a.py) @b.txt.") == ["notes.md", "a.py", "b.txt"]
    assert mentions("attach @. please") == ["."]


def test_each_mention_once_and_none_half_typed() -> None:
    assert mentions('@a.py @a.py @ @"unclosed') == ["a.py"]
    assert mentions("no mentions here") == []


def test_a_path_with_spaces_is_written_quoted() -> None:
    assert as_mention("src/app.py") == "@src/app.py"
    assert as_mention("my notes.md") == '@"my notes.md"'
    assert mentions(as_mention("my notes.md")) == ["my notes.md"]
