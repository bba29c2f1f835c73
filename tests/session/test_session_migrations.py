"""History schema: migrations from an empty file, re-opening, newer files, failures, bad files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gptoss_local.session import storage
from gptoss_local.session.errors import HistoryError, SchemaTooNewError
from gptoss_local.session.history import History
from gptoss_local.session.migrations import MIGRATIONS, Migration, migrate, schema_version


def version_of(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return schema_version(conn)


def test_a_new_history_is_migrated_from_0_to_the_latest_version(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with sqlite3.connect(path) as conn:
        assert schema_version(conn) == 0
    with History(path) as history:
        conn = history._conn
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"chats", "messages"} <= tables
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert version_of(path) == len(MIGRATIONS) >= 1


def test_the_default_location_is_the_data_folder(isolated_home: Path) -> None:
    with History() as history:
        assert history.path == isolated_home / "data" / "history.sqlite3"
    assert history.path.is_file()


def test_reopening_runs_no_migration_again(tmp_path: Path) -> None:
    calls: list[int] = []

    def step(n: int) -> Migration:
        return lambda conn: calls.append(n)

    path = tmp_path / "h.sqlite3"
    known = len(MIGRATIONS)
    migrations = (*MIGRATIONS, step(known + 1), step(known + 2))
    History(path, migrations=migrations).close()
    assert calls == [known + 1, known + 2] and version_of(path) == known + 2
    with History(path, migrations=migrations) as history:
        history.create_chat("still works")
    assert calls == [known + 1, known + 2] and version_of(path) == known + 2


def test_only_missing_migrations_run_in_order(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "h.sqlite3", isolation_level=None)
    first = "CREATE TABLE t (x INTEGER);\nINSERT INTO t VALUES (1);"
    assert migrate(conn, (first,)) == 1
    second = "INSERT INTO t VALUES (2); -- a comment; with a semicolon\nINSERT INTO t VALUES (';');"
    assert migrate(conn, (first, second)) == 2
    assert [r[0] for r in conn.execute("SELECT x FROM t")] == [1, 2, ";"]


def test_a_failing_migration_leaves_the_previous_version(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "h.sqlite3", isolation_level=None)
    good = "CREATE TABLE t (x INTEGER);"
    bad = "INSERT INTO t VALUES (1);\nINSERT INTO missing VALUES (2);"
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, (good, bad))
    assert schema_version(conn) == 1 and not conn.in_transaction
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0  # the half is rolled back


def test_a_history_from_a_newer_version_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 4}")
    before = path.read_bytes()
    with pytest.raises(SchemaTooNewError) as refused:
        History(path)
    message = str(refused.value)
    assert str(path) in message and "newer gptoss-local" in message
    assert f"version {len(MIGRATIONS) + 4}" in message and "Upgrade gptoss-local" in message
    assert path.read_bytes() == before  # no WAL switch, no tables


def test_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    path.write_bytes(b"not a database at all, just some text " * 100)
    with pytest.raises(HistoryError, match=r"not a usable chat history.*move it away"):
        History(path)


def test_an_unwritable_folder_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(HistoryError, match="cannot open the chat history"):
        storage.connect(blocker / "h.sqlite3")
