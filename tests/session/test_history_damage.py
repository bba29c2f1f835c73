"""A damaged history file is a clear error that says how to move it aside, never a traceback,
and whatever the user typed survives it. Also: chat ids beyond SQLite's range are unknown chats.

The damage is real: pages 2 and later of the SQLite file are overwritten with junk (page 1, the
header and the schema, stays), as a bad disk block or a stray write would leave them.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from session_helpers import open_history as open_session_history
from tui_helpers import (
    WAIT,
    ScriptedBackend,
    notifications,
    open_history,
    reply,
    scripted_app,
    send,
    wait_for,
    wait_for_model,
)

from gptoss_local.events import AnswerDelta
from gptoss_local.session import errors
from gptoss_local.session.errors import HistoryError
from gptoss_local.session.history import History
from gptoss_local.session.storage import default_path
from gptoss_local.tui.app import ChatApp
from gptoss_local.tui.widgets import ChatInput

COMMAND = Path(sys.executable).parent / "gptoss-local"  # the installed console script
TYPED = "the words I typed, which must not be lost"


def checkpoint(path: Path) -> None:
    """Move everything out of the WAL into the file itself, and empty the WAL.

    Restarting the WAL also makes every connection that has the file open drop its page cache
    at its next read, so what is in the file is what SQLite reads next.
    """
    with sqlite3.connect(path) as other:
        busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0, "the checkpoint could not finish"
    other.close()


def damage(path: Path, pages: range | None = None) -> None:
    """Overwrite pages of the SQLite file at `path` with junk (default: all but page 1); a
    connection that has it open reads the junk next (see `checkpoint`)."""
    checkpoint(path)
    header = path.read_bytes()[:100]
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    count = path.stat().st_size // page_size
    with path.open("r+b") as handle:
        for page in pages or range(2, count + 1):  # pages are numbered from 1
            handle.seek((page - 1) * page_size)
            handle.write(b"\xde\xad\xbe\xef" * (page_size // 4))


def some_chats(path: Path) -> None:
    """A history with three short chats at `path`, closed."""
    with History(path) as history:
        for n in range(3):
            chat = history.create_chat(f"chat {n}")
            history.add_user_message(chat.id, f"question {n}")
            answer = history.begin_assistant_message(chat.id).id
            history.append_to_assistant(answer, answer=f"answer {n}")
            history.finish_assistant(answer)


def run_installed(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the installed `gptoss-local` with this test's GPTOSS_LOCAL_HOME, no terminal."""
    return subprocess.run([str(COMMAND), *argv], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)  # fmt: skip


def assert_damage_message(text: str, path: Path) -> None:
    assert f"the chat history {path} is damaged" in text
    assert f"mv {path} {path}.damaged" in text and ".recover" in text


# --- at start: the check when the history is opened ----------------------------------------------


def test_opening_a_damaged_history_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    some_chats(path)
    damage(path, range(2, 4))
    before = path.read_bytes()
    with pytest.raises(HistoryError) as refused:
        History(path)
    assert isinstance(refused.value, errors.HistoryDamagedError)
    assert_damage_message(str(refused.value), path)
    assert path.read_bytes() == before  # nothing is written to a damaged file


def test_damage_that_quick_check_reports_without_failing_is_refused_too(tmp_path: Path) -> None:
    # A page of zeros can be one that SQLite reads without error but quick_check reports (a
    # table page that no longer parses): find one, so that this branch is tested as well.
    path = tmp_path / "history.sqlite3"
    some_chats(path)
    checkpoint(path)  # every page is in the file itself
    good = path.read_bytes()
    page_size = int.from_bytes(good[16:18], "big")
    for page in range(2, len(good) // page_size + 1):
        start = (page - 1) * page_size
        path.write_bytes(good[:start] + bytes(page_size) + good[start + page_size :])
        with sqlite3.connect(path) as probe:
            try:
                reported = probe.execute("PRAGMA quick_check").fetchone()[0] != "ok"
            except sqlite3.DatabaseError:
                reported = False
        probe.close()
        if reported:
            break
    else:
        pytest.skip("no page of this schema is reported by quick_check without an error")
    with pytest.raises(HistoryError) as refused:
        History(path)
    assert isinstance(refused.value, errors.HistoryDamagedError)
    assert "quick_check" in str(refused.value)
    assert_damage_message(str(refused.value), path)


@pytest.mark.parametrize(
    "argv",
    [["chats"], ["chats", "--json"], ["chats", "export", "1"], ["chat"], ["chat", "--chat", "1"]],
    ids=" ".join,
)
def test_installed_commands_refuse_a_damaged_history_with_exit_2(argv: list[str]) -> None:
    path = default_path()
    some_chats(path)
    damage(path, range(2, 4))
    done = run_installed(*argv)  # `chat` must fail before its TUI starts, not time out here
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("gptoss-local: error: ")
    assert_damage_message(done.stderr, path)


@pytest.mark.parametrize("argv", [["chats", "export"], ["chat", "--chat"]], ids=" ".join)
@pytest.mark.parametrize("chat_id", ["12345678901234567890", str(2**63)])
def test_ids_too_large_for_sqlite_are_unknown_chats(argv: list[str], chat_id: str) -> None:
    some_chats(default_path())
    done = run_installed(*argv, chat_id)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "OverflowError" not in done.stderr
    assert f"no chat with id {chat_id}" in done.stderr


def test_the_chat_id_type_accepts_sqlite_integers_only() -> None:
    import argparse

    from gptoss_local.commands import arg_types

    assert arg_types.chat_id("1") == 1 and arg_types.chat_id(str(2**63 - 1)) == 2**63 - 1
    for text in ("0", "-3", str(2**63), "12345678901234567890"):
        with pytest.raises(argparse.ArgumentTypeError, match=f"no chat with id {text}"):
            arg_types.chat_id(text)
    with pytest.raises(argparse.ArgumentTypeError, match="'seven' is not a chat id"):
        arg_types.chat_id("seven")


# --- mid-session: damage that appears after the history was opened --------------------------------


def test_every_call_on_a_history_damaged_underneath_says_so(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    some_chats(path)
    history, _clock = open_session_history(path)
    chat = history.create_chat("mine").id
    streaming = history.begin_assistant_message(chat).id
    history.append_to_assistant(streaming, answer="buffered, not yet written")
    damage(path)
    calls: list[Callable[[], object]] = [
        history.list_chats,
        lambda: history.get_chat(1),
        lambda: history.messages(1),
        lambda: history.create_chat("new"),
        lambda: history.add_user_message(chat, TYPED),
        lambda: history.rename_chat(1, "renamed"),
        lambda: history.delete_chat(2),
        lambda: history.to_conversation(1),
        lambda: history.begin_assistant_message(chat),
        history.flush,  # the buffered text cannot be written
        lambda: history.finish_assistant(streaming),
        history.recover_interrupted,
    ]
    for call in calls:
        with pytest.raises(errors.HistoryDamagedError) as failed:
            call()
        assert_damage_message(str(failed.value), path)
    with pytest.raises(errors.HistoryDamagedError):
        history.close()  # the buffered text still cannot be written, but the file is closed
    assert history._closed


def test_other_sqlite_failures_become_history_errors(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    history = History(path)
    chat = history.create_chat("mine").id
    history._conn.close()  # the connection fails underneath (ProgrammingError)
    for call in (history.list_chats, lambda: history.add_user_message(chat, TYPED)):
        with pytest.raises(HistoryError, match=f"cannot use the chat history {path}"):
            call()


# --- the TUI: what was typed stays, the error is remembered and reported at exit ------------------


async def _type_into_a_damaged_history(app: ChatApp, path: Path) -> None:
    async with app.run_test() as pilot:
        await wait_for_model(pilot)
        damage(path)
        await send(pilot, TYPED)
        await wait_for(pilot, lambda: app.history_error is not None, what="the history error")
        assert app.query_one(ChatInput).text == TYPED  # still there, to send again or save
        assert any(f"{path} is damaged" in text for text in notifications(app))
        assert app.is_running
        await pilot.press("ctrl+q")


async def test_sending_into_a_damaged_history_keeps_the_text_and_remembers_why(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.sqlite3"
    some_chats(path)
    app = scripted_app(History(path), ScriptedBackend(reply("r", "never written")))
    await _type_into_a_damaged_history(app, path)
    assert isinstance(app.history_error, errors.HistoryDamagedError)
    assert app.unsent_text() == TYPED


async def test_damage_while_a_reply_streams_is_remembered(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    some_chats(path)
    backend = ScriptedBackend([AnswerDelta("first words "), WAIT, AnswerDelta("and more")])
    app = scripted_app(open_history(tmp_path), backend)
    async with app.run_test() as pilot:
        await send(pilot, "tell me")
        await wait_for(
            pilot, lambda: app.chat_screen.busy and bool(backend.calls), what="the reply"
        )
        damage(path)
        backend.gate.set()
        await wait_for(pilot, lambda: not app.chat_screen.busy, what="the reply to end")
        assert isinstance(app.history_error, errors.HistoryDamagedError)
        assert any(f"{path} is damaged" in text for text in notifications(app))


def test_chat_exits_2_and_saves_the_unsent_text_privately(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gptoss_local import paths
    from gptoss_local.cli import main
    from gptoss_local.tui import app as app_module

    path = default_path()
    some_chats(path)

    def make_app(history: History, **_options: object) -> ChatApp:
        # The real app on a scripted backend; `run` drives it as a user would.
        app = scripted_app(history, ScriptedBackend(reply("r", "never written")))
        app.run = lambda *_a, **_k: asyncio.run(_type_into_a_damaged_history(app, path))  # type: ignore[method-assign]
        return app

    monkeypatch.setattr(app_module, "make_app", make_app)
    assert main(["chat"]) == 2
    err = capsys.readouterr().err
    (saved,) = paths.data_dir().glob("unsent-*.txt")
    assert saved.read_text(encoding="utf-8") == TYPED
    if os.name != "nt":
        assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert "Traceback" not in err and TYPED not in err
    assert_damage_message(err, path)
    assert str(saved) in err
