"""The browser tool on a real index of real files: the trained page formats of `search`, `open`
and `find`, cursors, scrolling, the model's mistakes answered in words, nothing opened outside
the folders, and citations resolved to the file and its own lines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from library_helpers import ZEBRA_NOTE, write_corpus

from gptoss_local.config import Settings
from gptoss_local.conversation import Citation
from gptoss_local.library import Library
from gptoss_local.library.pages import WIDTH
from gptoss_local.tools import Approvals, ToolRegistry, browser_tool, open_tools
from gptoss_local.tools.browser import BrowserTool


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = write_corpus(tmp_path / "notes", 30)
    long_lines = [
        f"Paragraph {n}: " + "a rather long sentence about okapis " * 4 for n in range(60)
    ]
    (folder / "okapi.md").write_text("# Okapi\n\n" + "\n".join(long_lines) + "\n")
    return folder


@pytest.fixture
def browser(corpus: Path, tmp_path: Path) -> Iterator[BrowserTool]:
    library = Library.open(tmp_path / "library.sqlite3")
    library.update([str(corpus)])
    tool = BrowserTool(library, (str(corpus),))
    yield tool
    tool.close()


def test_search_shows_ranked_results_as_links_naming_their_files(browser: BrowserTool) -> None:
    out = browser.call("search", {"query": "zebras stripes flies river", "topn": 3})
    assert not out.error
    lines = out.content.split("\n")
    assert lines[0] == "[0] zebras stripes flies river"
    assert lines[1].startswith("**viewing lines [0 - ") and lines[2] == ""
    assert lines[3:5] == ["L0: # Search Results", "L1: "]
    assert lines[5].startswith("L2:   * 【0†Zebra stripes†notes/notes/zebras.md】 ")
    assert sum("】" in line for line in lines) == 3  # topn results, each a link


def test_open_a_result_then_scroll_and_find(browser: BrowserTool, corpus: Path) -> None:
    browser.call("search", {"query": "okapis"})
    opened = browser.call("open", {"id": 0})
    head = opened.content.split("\n")
    assert head[0] == "[1] Okapi (notes/okapi.md)"
    assert head[1].startswith("**viewing lines [0 - ") and head[1].endswith("**")
    assert head[3] == "L0: # Okapi"
    assert all(len(line.split(": ", 1)[1]) <= WIDTH for line in head[3:])  # wrapped at 80
    total = int(head[1].rstrip("*").rsplit(" ", 1)[1])
    assert total > 100  # 60 long lines, wrapped

    scrolled = browser.call("open", {"loc": 50, "num_lines": 5}).content.split("\n")
    assert scrolled[0] == "[2] Okapi (notes/okapi.md)"
    assert scrolled[1] == f"**viewing lines [50 - 54] of {total}**"
    assert scrolled[3].startswith("L50: ") and len(scrolled) == 8

    found = browser.call("find", {"pattern": "Paragraph 42:"}).content.split("\n")
    assert found[0] == "[3] Find results for text: `Paragraph 42:` in `Okapi` (notes/okapi.md)"
    assert found[3].startswith("L0: # 【0†match at L") and found[4].startswith("L1: Paragraph 42:")
    again = browser.call("open", {"id": 0})  # a find result's link opens the file there
    assert again.content.split("\n")[0] == "[4] Okapi (notes/okapi.md)"
    assert "Paragraph 42:" in again.content
    none = browser.call("find", {"pattern": "no such words", "cursor": 1}).content
    assert "No `find` results for pattern: `no such words`" in none


def test_open_by_name_or_path_inside_the_folders_only(
    browser: BrowserTool, corpus: Path, tmp_path: Path
) -> None:
    by_name = browser.call("open", {"id": "notes/notes/zebras.md"})
    assert by_name.content.startswith("[0] Zebra stripes (notes/notes/zebras.md)")
    assert "L3: Zebras have stripes that deter biting flies" in by_name.content
    by_path = browser.call("open", {"id": str(corpus / "okapi.md")})
    assert by_path.content.startswith("[1] Okapi (notes/okapi.md)")
    (tmp_path / "secret.md").write_text("secret\n")
    for outside in ("../secret.md", str(tmp_path / "secret.md"), "https://example.org/"):
        refused = browser.call("open", {"id": outside})
        assert refused.error and "secret" not in refused.content.split("`", 2)[-1]
    assert "offline" in browser.call("open", {"id": "https://example.org/"}).content
    # Inside the folder too, only what the index would hold: no hidden files, no dependencies.
    (corpus / ".env").write_text("TOKEN=secret\n")
    (corpus / ".ssh").mkdir()
    (corpus / ".ssh" / "id_ed25519").write_text("secret key\n")
    (corpus / "node_modules").mkdir()
    (corpus / "node_modules" / "lib.md").write_text("secret dependency\n")
    for hidden in ("notes/.env", str(corpus / ".ssh" / "id_ed25519"), "notes/node_modules/lib.md"):
        refused = browser.call("open", {"id": hidden})
        assert refused.error and "secret" not in refused.content


def test_the_models_mistakes_are_answered_in_words(browser: BrowserTool) -> None:
    assert browser.call("open", {}).content == "No pages to access!"
    browser.call("search", {"query": "zebras"})
    cases = {
        ("open", '{"id": 9}'): "Invalid link id `9`.",
        ("open", '{"cursor": 5}'): "Cursor `5` is out of range. Available cursor indices: [0 - 0].",
        ("find", '{"pattern": "x"}'): "Cannot run `find` on search results page",
        ("open", '{"loc": 999}'): "Invalid location parameter: `999`.",
        ("search", "{}"): "`search` needs a `query`",
        ("open", '{"id": 0, "loc": "soon"}'): "Invalid function arguments",
        ("browse", "{}"): "Unknown function: browse.",
    }
    import json

    for (function, arguments), expected in cases.items():
        out = browser.call(function, json.loads(arguments))
        assert out.error and out.content.startswith(expected), (function, out.content)
    assert len(browser.session.pages) == 1  # failed calls add no page


def test_citations_name_the_file_and_its_own_lines(browser: BrowserTool, corpus: Path) -> None:
    browser.call("search", {"query": "zebras stripes"})
    browser.call("open", {"id": 0})
    browser.call("search", {"query": "okapis"})
    browser.call("open", {"id": 0, "loc": 0})
    okapi_page = browser.session.pages[3]
    wrapped_line = next(n for n, o in enumerate(okapi_page.origins) if o and o.line == 10)
    answer = (
        "Stripes deter flies 【1†L3】 and may cool them 【1†L3-L4】. Okapis 【3†L"
        f"{wrapped_line}-L{wrapped_line + 2}】; a link 【0†Zebra stripes】, a bad cursor 【9†L1】."
    )
    cited = browser.cite(answer)
    zebra = str(corpus / "notes" / "zebras.md")
    assert cited[:2] == (
        Citation("【1†L3】", zebra, "notes/notes/zebras.md", 4, 4),
        Citation("【1†L3-L4】", zebra, "notes/notes/zebras.md", 4, 5),
    )
    assert cited[2].path == str(corpus / "okapi.md") and cited[2].first_line == 11
    assert len(cited) == 3 and cited[0].label == "notes/notes/zebras.md:4"
    assert ZEBRA_NOTE.split("\n")[3].startswith("Zebras have stripes")  # file line 4


def test_each_conversation_browses_its_own_pages(browser: BrowserTool) -> None:
    browser.switch(1)
    browser.call("search", {"query": "zebras"})
    browser.switch(2)
    assert browser.call("search", {"query": "okapis"}).content.startswith("[0] okapis")
    browser.switch(1)
    assert browser.call("open", {"id": 0}).content.startswith("[1] Zebra stripes")


def test_the_registry_offers_the_browser_and_runs_its_functions(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(docs=(str(corpus),))
    registry = open_tools(settings, label="t", python=False, mcp=False, browser=True)
    try:
        assert registry.problems == []
        tool = registry.get("browser.open")
        assert tool is not None and tool.name == "browser" and tool.kind == "builtin"
        assert "searches 32 files in: " in tool.note
        assert registry.get("browser.fetch") is None
        assert registry.call("browser.search", {"query": "zebras"}).content.startswith("[0]")
        from gptoss_local.events import ToolCall

        approvals = Approvals(["browser"])
        assert approvals.decide(ToolCall("browser.find", {}, "{}"), tool).run
        assert not Approvals(["python"]).decide(ToolCall("browser.find", {}, "{}"), tool).run
    finally:
        registry.close()
    off = open_tools(Settings(), label="t", python=False, mcp=False, browser=True)
    assert off.get("browser.search") is None
    assert "no folders to search" in off.problems[0] and "docs add" in off.problems[0]
    assert ToolRegistry().cite("【0†L1】") == ()
    tool = browser_tool(settings)
    try:
        assert tool.folders == (str(corpus),)
    finally:
        tool.close()
