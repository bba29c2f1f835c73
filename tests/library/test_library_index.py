"""The browser's index on real files and real SQLite: a generated corpus and the project's own
docs, where a known query finds its file first; incremental re-indexing (changed, added,
deleted, touched files); the kinds of file that are skipped, and how they are counted."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest
from library_helpers import pdf_bytes, write_corpus, write_skipped_kinds

from gptoss_local.library import Library, LibraryError, display_name
from gptoss_local.library.html_text import html_text
from gptoss_local.library.reading import kind_of

DOCS = Path(__file__).parents[2] / "docs"


@pytest.fixture
def library(tmp_path: Path) -> Library:
    opened = Library.open(tmp_path / "index" / "library.sqlite3")
    yield opened
    opened.close()


def test_a_known_query_finds_its_file_first_in_a_generated_corpus(
    library: Library, tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "corpus", 400)
    report = library.update([str(corpus)])
    assert (report.added, report.changed, report.removed) == (401, 0, 0)
    assert not report.skipped
    hits = library.search("why do zebras have stripes")
    assert hits[0].path == str(corpus / "notes" / "zebras.md")
    assert hits[0].name == "corpus/notes/zebras.md" and hits[0].title == "Zebra stripes"
    assert "deter biting flies" in hits[0].snippet
    assert len(library.search("harbour glacier", topn=5)) == 5  # one hit per file, at most topn
    assert library.search("!!! ???") == []  # no words: nothing, not an FTS syntax error


def test_the_projects_own_docs(library: Library) -> None:
    library.update([str(DOCS)])
    first = library.search("sliding window checkpoint prefix reuse")[0]
    assert first.path == str(DOCS / "architecture.md")
    assert library.search("doctor json top-level keys")[0].path == str(DOCS / "doctor-json.md")
    assert library.search("llama-cpp-python engine json")[0].path == str(DOCS / "engine-json.md")


def test_the_best_passage_of_a_long_file_is_where_the_hit_points(
    library: Library, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    lines = [f"Line {n} about rivers and mountains." for n in range(400)]
    lines[300] = "The okapi is a relative of the giraffe."
    (folder / "long.md").write_text("\n\n".join(lines) + "\n")
    library.update([str(folder)])
    (hit,) = library.search("okapi giraffe")
    assert hit.line <= 600 < hit.line + 80  # the passage that holds line 600 (of the text)
    assert "okapi" in hit.snippet


def _touch(path: Path, text: str | None = None) -> None:
    """Rewrite (or only touch) `path` with an mtime clearly later than before."""
    if text is not None:
        path.write_text(text)
    later = time.time() + 5
    os.utime(path, (later, later))


def test_reindexing_picks_up_changed_added_and_deleted_files(
    library: Library, tmp_path: Path
) -> None:
    corpus = write_corpus(tmp_path / "corpus", 40)
    library.update([str(corpus)])
    zebra = corpus / "notes" / "zebras.md"
    _touch(zebra, "# Zebras\n\nZebras sleep standing up, in short naps.\n")
    (corpus / "notes" / "okapi.md").write_text("# Okapi\n\nThe okapi has striped legs.\n")
    (corpus / "part0" / "group0" / "note0.md").unlink()
    _touch(corpus / "part1" / "group1" / "module1.py")  # new mtime, same bytes: not re-read

    report = library.update([str(corpus)])
    assert (report.added, report.changed, report.removed, report.unchanged) == (1, 1, 1, 39)
    assert library.search("sleep standing naps")[0].path == str(zebra)
    assert library.search("biting flies") == []  # the old text left the index
    assert library.search("okapi")[0].name == "corpus/notes/okapi.md"
    assert library.file_name(str(corpus / "part0" / "group0" / "note0.md")) is None
    (info,) = library.folders()
    assert info.files == 41 and info.indexed_at is not None

    again = library.update([str(corpus)])  # nothing changed: nothing read
    assert (again.added, again.changed, again.removed, again.unchanged) == (0, 0, 0, 41)


def test_a_folder_left_out_of_the_settings_leaves_the_index(
    library: Library, tmp_path: Path
) -> None:
    one, two = write_corpus(tmp_path / "one", 8), write_corpus(tmp_path / "two", 8, seed=2)
    library.update([str(one), str(two)])
    assert [f.path for f in library.folders()] == [str(one), str(two)]
    library.update([str(two)])
    assert [f.path for f in library.folders()] == [str(two)]
    assert {hit.path for hit in library.search("zebras", topn=10)} == {
        str(two / "notes" / "zebras.md")
    }


def test_the_skipped_kinds_are_skipped_and_counted(library: Library, tmp_path: Path) -> None:
    folder, outside = tmp_path / "notes", tmp_path / "elsewhere"
    folder.mkdir()
    outside.mkdir()
    write_skipped_kinds(folder, outside)
    (folder / "ok.md").write_text("# Fine\n\nA zebra note that is text.\n")
    (folder / ".hidden.md").write_text("zebra in a hidden file\n")
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / "dep.md").write_text("zebra in a dependency\n")
    (folder / "loop").symlink_to(folder)  # a link back inside: followed once, no loop
    (folder / "away").symlink_to(outside)  # a folder outside: not followed

    report = library.update([str(folder)])
    assert dict(report.skipped) == {"binary": 2, "too_large": 1, "unreadable": 1, "outside": 2}
    assert report.added == 1
    hits = library.search("zebra password hunter2 dependency hidden")
    assert [hit.name for hit in hits] == ["notes/ok.md"]
    (info,) = library.folders()
    assert info.skipped == {"binary": 2, "outside": 2, "too_large": 1, "unreadable": 1}


def test_html_is_read_as_text_and_pdf_as_its_pages(library: Library, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "page.html").write_text(
        "<html><head><title>Okapi facts</title><script>var zebra = 1;</script>"
        "<style>p { color: red }</style></head><body><h1>Okapi</h1><p>The okapi &amp; the "
        "giraffe are kin.</p><ul><li>striped legs</li></ul></body></html>"
    )
    (folder / "paper.pdf").write_bytes(pdf_bytes(["Quokkas smile a lot.", "Second page."]))
    library.update([str(folder)])
    (page,) = library.search("okapi giraffe kin")
    assert page.title == "Okapi facts"
    assert library.search("zebra color red") == []  # scripts and styles are not text
    (paper,) = library.search("quokkas smile")
    assert paper.name == "docs/paper.pdf"
    title, text = html_text("<h2>Heading</h2><p>one\ntwo</p><pre>a\n  b</pre>")
    assert (title, text) == ("Heading", "## Heading\n\none two\n\na\nb\n")


def test_kinds_and_names() -> None:
    assert [kind_of(n) for n in ("a.md", "b.HTML", "c.py", "d.pdf", "e.txt", "Makefile")] == [
        "markdown",
        "html",
        "code",
        "pdf",
        "text",
        "code",
    ]
    assert display_name("/home/u/notes", "/home/u/notes/a/b.md") == "notes/a/b.md"


def test_the_index_is_private(library: Library, tmp_path: Path) -> None:
    assert library.path is not None
    assert library.path.stat().st_mode & 0o077 == 0
    assert library.path.parent.stat().st_mode & 0o077 == 0


class _WithoutFts5(sqlite3.Connection):
    """A connection as a SQLite built without FTS5 answers (the module is missing)."""

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:  # type: ignore[override]
        if "fts5" in sql:
            raise sqlite3.OperationalError("no such module: fts5")
        return super().execute(sql, *args)  # type: ignore[arg-type]


def test_a_sqlite_without_fts5_is_refused_with_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = sqlite3.connect
    monkeypatch.setattr(
        sqlite3, "connect", lambda *a, **k: real(*a, **{**k, "factory": _WithoutFts5})
    )
    with pytest.raises(LibraryError, match="no full-text search \\(FTS5\\)") as refused:
        Library.open(tmp_path / "library.sqlite3")
    assert refused.value.hint is not None and "FTS5" in refused.value.hint
    assert not (tmp_path / "library.sqlite3").exists()  # refused before anything is made
