"""`gptoss-local chats`, `chats --json`, `chats export ID --format md|json [--output FILE]`."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from installed_cli import Cli
from session_helpers import EXPECTED_MD, open_history, small_chat

from gptoss_local.session.storage import default_path


@pytest.fixture
def two_chats() -> int:
    history, _ = open_history()
    chat_id = small_chat(history)
    history.add_user_message(history.create_chat(model="gpt-oss-120b").id, "Second chat")
    history.close()
    return chat_id


def test_without_a_history_nothing_is_listed_or_created(
    cli: Cli,
) -> None:
    code, out, _ = cli("chats")
    assert code == 0 and "No saved chats yet" in out
    code, out, _ = cli("chats", "--json")
    assert code == 0 and json.loads(out)["chats"] == []
    assert not default_path().exists()


def test_chats_prints_a_table_newest_first(cli: Cli, two_chats: int) -> None:
    code, out, _ = cli("chats")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["ID", "TITLE", "UPDATED", "MESSAGES", "MODEL"]
    assert lines[1].split()[:3] == ["2", "Second", "chat"] and lines[1].endswith("gpt-oss-120b")
    assert lines[2].split()[:3] == ["1", "Sky", "colour"] and lines[2].split()[-2:] == [
        "2",
        "gpt-oss-20b",
    ]
    assert cli("chats", "list")[1] == out


def test_chats_json_and_search(cli: Cli, two_chats: int) -> None:
    for argv in (["chats", "--json"], ["chats", "list", "--json"]):
        code, out, _ = cli(*argv)
        doc = json.loads(out)
        assert code == 0 and doc["history"] == str(default_path())
        assert [c["id"] for c in doc["chats"]] == [2, 1]
        first = doc["chats"][1]
        assert (first["title"], first["messages"], first["model"]) == (
            "Sky colour",
            2,
            "gpt-oss-20b",
        )
        assert set(first) == {
            "id", "title", "created_at", "updated_at", "messages", "model", "backend", "effort"
        }  # fmt: skip
    code, out, _ = cli("chats", "--json", "--search", "SKY")
    assert [c["id"] for c in json.loads(out)["chats"]] == [1]
    code, out, _ = cli("chats", "list", "--search", "nothing like it")
    assert code == 0 and "No chat matches 'nothing like it'" in out


def test_export_markdown_and_json_to_stdout(cli: Cli, two_chats: int) -> None:
    code, out, _ = cli("chats", "export", str(two_chats))
    assert code == 0 and out == EXPECTED_MD
    code, out, _ = cli("chats", "export", str(two_chats), "--format", "json")
    assert code == 0 and json.loads(out)["chat"]["id"] == two_chats


def test_export_to_a_private_file(cli: Cli, two_chats: int, tmp_path: Path) -> None:
    target = tmp_path / "sky.md"
    code, out, err = cli("chats", "export", str(two_chats), "--output", str(target))
    assert code == 0 and out == "" and f"wrote chat {two_chats} (2 messages) to {target}" in err
    assert target.read_text(encoding="utf-8") == EXPECTED_MD
    if os.name != "nt":
        assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_unknown_ids_and_unwritable_outputs_exit_2(
    cli: Cli, two_chats: int, tmp_path: Path
) -> None:
    code, _, err = cli("chats", "export", "42")
    assert code == 2
    assert "gptoss-local: error: no chat with id 42; `gptoss-local chats` lists" in err
    code, _, err = cli("chats", "export", "1", "-o", str(tmp_path / "no" / "dir.md"))
    assert code == 2 and "cannot write" in err


def test_export_without_a_history_is_an_unknown_id(cli: Cli) -> None:
    code, _, err = cli("chats", "export", "1", "--format", "json")
    assert code == 2 and "no chat with id 1" in err and not default_path().exists()
