"""History: chats CRUD, search, counts, cascade delete, permissions, threads, no side effects."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from session_helpers import START

from gptoss_local.session.errors import HistoryError, UnknownChatError
from gptoss_local.session.history import History

posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_create_get_and_update_a_chat(history: History) -> None:
    chat = history.create_chat("Plans", effort="high", model="gpt-oss-20b", backend="llamacpp")
    assert (chat.title, chat.effort, chat.model, chat.backend) == (
        "Plans",
        "high",
        "gpt-oss-20b",
        "llamacpp",
    )
    assert chat.created_at == START and chat.message_count == 0 and chat.instructions is None
    history.rename_chat(chat.id, "Holiday plans")
    history.set_effort(chat.id, "low")
    history.set_instructions(chat.id, "Answer in French.")
    again = history.get_chat(chat.id)
    assert (again.title, again.effort, again.instructions) == (
        "Holiday plans",
        "low",
        "Answer in French.",
    )
    assert (again.model, again.backend) == ("gpt-oss-20b", "llamacpp")
    assert again.updated_at > chat.updated_at
    history.set_instructions(chat.id, "")
    assert history.get_chat(chat.id).instructions is None


def test_bad_effort_and_unknown_ids_are_clear_errors(history: History) -> None:
    chat = history.create_chat()
    with pytest.raises(ValueError, match="effort must be one of low, medium, high"):
        history.set_effort(chat.id, "max")
    with pytest.raises(ValueError, match="effort"):
        history.create_chat(effort="extreme")
    for call in (
        lambda: history.get_chat(99),
        lambda: history.rename_chat(99, "x"),
        lambda: history.delete_chat(99),
        lambda: history.add_user_message(99, "hi"),
        lambda: history.begin_assistant_message(99),
        lambda: history.messages(99),
    ):
        with pytest.raises(UnknownChatError, match="no chat with id 99; `gptoss-local chats`"):
            call()
    with pytest.raises(HistoryError, match="no message with id 5"):
        history.get_message(5)


def test_the_first_user_message_titles_an_untitled_chat(history: History) -> None:
    chat = history.create_chat()
    history.add_user_message(chat.id, "\n  Why is the sky blue?\nAnd why are sunsets red?")
    history.add_user_message(chat.id, "Another question")
    assert history.get_chat(chat.id).title == "Why is the sky blue?"
    long = history.create_chat()
    history.add_user_message(long.id, "x" * 200)
    assert len(history.get_chat(long.id).title) == 60
    assert history.get_chat(long.id).title.endswith("…")
    named = history.create_chat("Mine")
    history.add_user_message(named.id, "hello")
    assert history.get_chat(named.id).title == "Mine"


def test_messages_are_numbered_in_order_and_counted(history: History) -> None:
    chat = history.create_chat()
    user = history.add_user_message(chat.id, "hi")
    reply = history.begin_assistant_message(chat.id)
    tool = history.add_tool_message(chat.id, "get_weather", '{"temp": 21}')
    assert [m.seq for m in history.messages(chat.id)] == [1, 2, 3]
    assert (user.role, user.status, user.content) == ("user", "complete", "hi")
    assert (reply.role, reply.status, reply.effort) == ("assistant", "partial", "medium")
    assert (tool.role, tool.tool_name) == ("tool", "get_weather")
    assert history.get_chat(chat.id).message_count == 3


def test_list_is_newest_first_with_counts_and_limit(history: History) -> None:
    first, second, third = (history.create_chat(t) for t in ("one", "two", "three"))
    history.add_user_message(first.id, "bump")  # now the most recently updated
    chats = history.list_chats()
    assert [c.title for c in chats] == ["one", "three", "two"]
    assert [c.message_count for c in chats] == [1, 0, 0]
    assert [c.id for c in history.list_chats(limit=2)] == [first.id, third.id]
    assert second.id in {c.id for c in history.list_chats()}


def test_search_matches_title_or_text_ignoring_case(history: History) -> None:
    rust = history.create_chat("Rust lifetimes")
    street = history.create_chat("German")
    history.add_user_message(street.id, "How do I spell Straße?")
    other = history.create_chat("Cooking")
    history.add_user_message(other.id, "100% of the pasta_water")
    reply = history.begin_assistant_message(other.id)
    history.append_to_assistant(reply.id, reasoning="secret thoughts", answer="Salt it.")
    assert [c.id for c in history.list_chats("LIFETIME")] == [rust.id]
    assert [c.id for c in history.list_chats("STRASSE")] == [street.id]  # Unicode case folding
    assert [c.id for c in history.list_chats("salt IT")] == [other.id]  # buffered text too
    assert [c.id for c in history.list_chats("%")] == [other.id]  # no LIKE wildcards
    assert [c.id for c in history.list_chats("_water")] == [other.id]
    assert history.list_chats("secret") == []  # reasoning is not searched
    assert len(history.list_chats("")) == 3


def test_deleting_a_chat_deletes_its_messages(history: History) -> None:
    keep, drop = history.create_chat("keep"), history.create_chat("drop")
    history.add_user_message(keep.id, "a")
    history.add_user_message(drop.id, "b")
    reply = history.begin_assistant_message(drop.id)
    history.append_to_assistant(reply.id, answer="streaming")
    history.delete_chat(drop.id)
    count = history._conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    assert count == 1 and [c.id for c in history.list_chats()] == [keep.id]
    with pytest.raises(HistoryError, match="not a reply in progress"):
        history.append_to_assistant(reply.id, answer=" more")
    with pytest.raises(UnknownChatError):
        history.get_chat(drop.id)


def test_delete_from_removes_a_message_and_what_follows(history: History) -> None:
    chat = history.create_chat()
    history.add_user_message(chat.id, "q1")
    history.finish_assistant(history.begin_assistant_message(chat.id).id)
    second = history.add_user_message(chat.id, "q2")
    history.finish_assistant(history.begin_assistant_message(chat.id).id)
    assert history.delete_from(second.id) == 2
    assert [m.content for m in history.messages(chat.id)] == ["q1", ""]
    assert history.add_user_message(chat.id, "q2 edited").seq == 3


@posix_only
def test_the_file_and_folder_are_private(isolated_home: Path) -> None:
    old = os.umask(0o022)  # a typical umask, so the modes come from the code
    try:
        with History() as history:
            history.add_user_message(history.create_chat().id, "hello")
            folder = isolated_home / "data"
            assert mode(folder) == 0o700 and mode(folder / "history.sqlite3") == 0o600
            for side in ("-wal", "-shm"):
                assert mode(folder / f"history.sqlite3{side}") == 0o600
    finally:
        os.umask(old)


@posix_only
def test_looser_modes_are_tightened_on_open(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    path = folder / "history.sqlite3"
    History(path).close()
    os.chmod(path, 0o644)
    os.chmod(folder, 0o775)
    History(path).close()
    assert mode(folder) == 0o700 and mode(path) == 0o600


@posix_only
def test_a_shared_sticky_folder_is_left_alone(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    History(shared / "h.sqlite3").close()
    assert mode(shared) == 0o1777 and mode(shared / "h.sqlite3") == 0o600


def test_a_worker_thread_may_stream_while_the_ui_thread_reads(tmp_path: Path) -> None:
    with History(tmp_path / "h.sqlite3", flush_interval=0.0) as history:
        chat = history.create_chat()
        reply = history.begin_assistant_message(chat.id)
        errors: list[BaseException] = []

        def stream() -> None:
            try:
                for i in range(2000):
                    history.append_to_assistant(reply.id, answer=f"{i} ")
                history.finish_assistant(reply.id)
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        worker = threading.Thread(target=stream)
        worker.start()
        while worker.is_alive():
            history.list_chats("1")
            history.messages(chat.id)
        worker.join()
        assert not errors
        assert history.get_message(reply.id).content == "".join(f"{i} " for i in range(2000))


def test_importing_creates_nothing_and_never_imports_textual(tmp_path: Path) -> None:
    code = (
        "import sys, gptoss_local.session.history, gptoss_local.session.export, "
        "gptoss_local.commands.chats, gptoss_local.errors\n"
        "assert 'textual' not in sys.modules, 'textual imported'\n"
    )
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(tmp_path / "home")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert not (tmp_path / "home").exists()
    light = "import sys, gptoss_local.errors; assert 'sqlite3' not in sys.modules"
    subprocess.run([sys.executable, "-c", light], check=True, env=env)


def test_another_process_can_read_while_a_reply_is_being_written(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with History(path) as writer:
        chat = writer.create_chat("busy")
        writer._conn.execute("BEGIN IMMEDIATE")  # as if mid-write for a long time
        try:
            with History(path) as reader:  # e.g. `gptoss-local chats` while the TUI streams
                assert [c.title for c in reader.list_chats()] == ["busy"]
        finally:
            writer._conn.execute("COMMIT")
        writer.add_user_message(chat.id, "still writable")
