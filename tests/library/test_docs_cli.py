"""`gptoss-local docs`: add folders (indexed at once, written to the settings), list them with
their files, skips, index size and last update, re-index what changed, remove one; mistakes
are messages. Run as the user runs it (the installed command) and in-process."""

from __future__ import annotations

import json
from pathlib import Path

from installed_cli import Cli, assert_refused, gptoss
from library_helpers import write_corpus, write_skipped_kinds

from gptoss_local import config


def test_add_list_reindex_and_remove(cli: Cli, tmp_path: Path) -> None:
    notes = write_corpus(tmp_path / "notes", 12)
    outside = tmp_path / "outside"
    outside.mkdir()
    write_skipped_kinds(notes, outside)
    code, out, err = cli("docs", "add", str(notes))
    assert code == 0, err
    assert "13 added, 0 changed, 0 removed" in err
    assert config.load().docs == (str(notes),)
    first = out.splitlines()
    assert first[0].split() == ["FOLDER", "FILES", "SKIPPED", "UPDATED"]
    assert first[1].startswith(str(notes)) and " 13 " in first[1]
    assert "2 binary, 1 too large, 1 unreadable, 1 links outside" in first[1]
    assert "13 files indexed · index " in out and "library.sqlite3" in out

    (notes / "notes" / "okapi.md").write_text("# Okapi\n")
    code, out, err = cli("docs", "reindex")
    assert code == 0 and "1 added, 0 changed, 0 removed, 13 unchanged" in err
    code, out, _err = cli("docs", "--json")
    doc = json.loads(out)
    (folder,) = doc["folders"]
    assert (folder["path"], folder["files"]) == (str(notes), 14)
    assert folder["skipped"] == {"binary": 2, "outside": 1, "too_large": 1, "unreadable": 1}
    assert doc["index_bytes"] > 0 and folder["indexed_at"]

    code, out, _err = cli("docs", "rm", str(notes))
    assert code == 0 and config.load().docs == ()
    code, out, _err = cli("docs", "list", "--json")
    assert json.loads(out)["folders"] == []
    assert cli("docs")[1].startswith("The browser searches no folders yet")


def test_a_folder_named_in_the_settings_but_not_indexed_says_so(cli: Cli, tmp_path: Path) -> None:
    notes = write_corpus(tmp_path / "notes", 2)
    config.save(config.Settings(docs=(str(notes),)))
    code, out, _err = cli("docs")
    assert code == 0 and "not indexed: run `gptoss-local docs reindex`" in out


def test_mistakes_are_messages(tmp_path: Path) -> None:
    notes = write_corpus(tmp_path / "notes", 2)
    assert_refused(gptoss("docs", "add", str(tmp_path / "missing")), "is not a folder")
    assert gptoss("docs", "add", str(notes)).returncode == 0
    assert_refused(gptoss("docs", "add", str(notes / "notes")), "overlaps", "docs rm PATH")
    assert_refused(gptoss("docs", "rm", str(tmp_path)), "does not search", "gptoss-local docs")
    bad = tmp_path / "bad.toml"
    bad.write_text('docs = ["relative/path"]\n')
    try:
        config.load(bad)
    except config.SettingsError as exc:
        assert "absolute paths" in str(exc)
    else:
        raise AssertionError("a relative docs path was accepted")


def test_run_allows_the_browser_only_with_folders(tmp_path: Path) -> None:
    assert_refused(gptoss("run", "--allow-tool", "browser", "--print-prompt", "hi"),
                   "--allow-tool browser: no such tool", "docs add")  # fmt: skip
    notes = write_corpus(tmp_path / "notes", 2)
    assert gptoss("docs", "add", str(notes)).returncode == 0
    done = gptoss("run", "--allow-tool", "browser", "--print-prompt", "--date", "2026-12-02", "hi")
    assert done.returncode == 0, done.stderr
    assert "# Tools\n\n## browser\n\n// Tool for browsing." in done.stdout
    assert "## python" not in done.stdout and "namespace browser {" in done.stdout
    listed = gptoss("tools", "--json")
    names = [tool["name"] for tool in json.loads(listed.stdout)["tools"]]
    assert "browser" in names
