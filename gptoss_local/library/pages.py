"""The pages the browser shows the model, in the formats gpt-oss was trained to read.

These follow the reference browser of openai/gpt-oss (gpt_oss/tools/simple_browser): a page
is text wrapped at 80 columns; a display starts with ``[{cursor}] {title} ({source})`` and
``**viewing lines [{first} - {last}] of {last line}**``, then each line as ``L{n}: {text}``;
search results are a "# Search Results" list of ``【{id}†{title}†{source}】`` links; `find`
lists ``# 【{n}†match at L{line}】`` with the four lines from the match. The window holds
about 1,024 tokens, as there. The text is the model's, so it stays English.

Every page line remembers the file line it shows (`Origin`), so a citation of page lines
(``【3†L10-L15】``) names the file and its own lines, whichever page it cites.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Literal

from gptoss_local.library.index import Hit
from gptoss_local.library.reading import Document

WIDTH = 80
VIEW_CHARS = 4096  # about 1,024 tokens of text, the reference browser's window
FIND_LINES = 4  # lines shown from each match
MAX_FINDS = 50
# Brackets of the page text that would read as links or citations are swapped for look-alikes.
_LOOK_ALIKES = str.maketrans({"【": "〖", "】": "〗"})

PageKind = Literal["search", "file", "find"]


class PageError(Exception):
    """A browser call that cannot be answered; the message is the model's to read."""


@dataclass(frozen=True)
class Origin:
    """The file a page line shows and its line there (from 0)."""

    path: str
    name: str
    line: int


@dataclass
class Page:
    """One page the model has seen (`kind`: search results, a file, find results).

    Attributes:
        title: The page's title (a file's heading or name; the query).
        source: Where it comes from, shown after the title: the file's name.
        lines: The page's lines, wrapped.
        origins: For each line, the file line it shows (None for headings of results).
        links: The page's links by id: where `open(id=N)` goes.
    """

    kind: PageKind
    title: str
    source: str
    lines: list[str] = field(default_factory=list)
    origins: list[Origin | None] = field(default_factory=list)
    links: dict[int, Origin] = field(default_factory=dict)

    def add(self, text: str, origin: Origin | None) -> None:
        """Add a line of text (wrapped into page lines), showing `origin`."""
        for line in wrap(text.translate(_LOOK_ALIKES)):
            self.lines.append(line)
            self.origins.append(origin)

    def line_of(self, origin: Origin) -> int:
        """The first page line that shows `origin`'s file line or a later one (0 if none)."""
        for number, shown in enumerate(self.origins):
            if shown is not None and shown.path == origin.path and shown.line >= origin.line:
                return number
        return 0


def wrap(line: str) -> list[str]:
    """A line as page lines of at most `WIDTH` columns (an empty line stays one line)."""
    if not line:
        return [""]
    return textwrap.wrap(line, width=WIDTH, replace_whitespace=False, drop_whitespace=False)


def file_page(path: str, name: str, document: Document) -> Page:
    """A file as a page: its title, then its text line by line."""
    page = Page("file", document.title, name)
    for number, line in enumerate(document.text.split("\n")):
        page.add(line, Origin(path, name, number))
    if page.lines[-1:] == [""] and len(page.lines) > 1:  # the text's final newline
        page.lines.pop()
        page.origins.pop()
    return page


def search_page(query: str, hits: list[Hit]) -> Page:
    """Search results as a page: each hit a link (its title and file) and its snippet."""
    page = Page("search", query, "")
    page.add("# Search Results", None)
    page.add("", None)
    if not hits:
        page.add(f"No results for `{query}` in the folders this browser searches.", None)
    for number, hit in enumerate(hits):
        origin = Origin(hit.path, hit.name, hit.line)
        page.links[number] = origin
        snippet = " ".join(hit.snippet.split()).translate(_LOOK_ALIKES)
        title = hit.title.translate(_LOOK_ALIKES).replace("†", "‡")
        for line in wrap(f"  * 【{number}†{title}†{hit.name}】 {snippet}"):
            page.lines.append(line)
            page.origins.append(origin)
    return page


def find_page(page: Page, pattern: str) -> Page:
    """The lines of `page` that hold `pattern` (ignoring case), each with the lines after it.

    Raises:
        PageError: `page` is search or find results, which `find` does not search.
    """
    if page.kind != "file":
        raise PageError("Cannot run `find` on search results page or find results page")
    wanted = pattern.lower()
    found = Page("find", f"Find results for text: `{pattern}` in `{page.title}`", page.source)
    number = index = 0
    while index < len(page.lines) and number < MAX_FINDS:
        if wanted not in page.lines[index].lower():
            index += 1
            continue
        if number:
            found.add("", None)
        found.lines.append(f"# 【{number}†match at L{index}】")
        found.origins.append(page.origins[index])
        for shown in range(index, min(index + FIND_LINES, len(page.lines))):
            found.lines.append(page.lines[shown])
            found.origins.append(page.origins[shown])
        origin = page.origins[index]
        if origin is not None:
            found.links[number] = origin
        number += 1
        index += FIND_LINES
    if not number:
        found.add(f"No `find` results for pattern: `{pattern}`", None)
    return found


def view(page: Page, cursor: int, loc: int, num_lines: int = -1) -> str:
    """What the model reads of `page` shown as `cursor`: the lines from `loc`, `num_lines`
    of them (or a window of about 1,024 tokens when not given).

    Raises:
        PageError: `loc` is past the page's end.
    """
    lines = page.lines or [""]
    total = len(lines)
    if loc >= total:
        raise PageError(
            f"Invalid location parameter: `{loc}`. Cannot exceed page maximum of {total - 1}."
        )
    loc = max(loc, 0)
    end = min(loc + num_lines, total) if num_lines > 0 else _window_end(lines, loc)
    header = f"{page.title} ({page.source})" if page.source else page.title
    body = "\n".join(f"L{n}: {lines[n]}" for n in range(loc, end))
    return f"[{cursor}] {header}\n**viewing lines [{loc} - {end - 1}] of {total - 1}**\n\n{body}"


def _window_end(lines: list[str], loc: int) -> int:
    used, end = 0, loc
    while end < len(lines):
        used += len(lines[end]) + len(f"L{end}: \n")
        if used > VIEW_CHARS and end > loc:
            break
        end += 1
    return end


def cited(page: Page, first: int, last: int) -> tuple[Origin, Origin] | None:
    """The first and last file lines that page lines `first` to `last` show (of the file of
    the first of them that shows one), or None when they show none."""
    shown = [o for o in page.origins[max(first, 0) : last + 1] if o is not None]
    if not shown:
        return None
    same = [o for o in shown if o.path == shown[0].path]
    return min(same, key=lambda o: o.line), max(same, key=lambda o: o.line)
