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

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from gptoss_local.library.file_lines import WIDTH as WIDTH  # the page width, as before
from gptoss_local.library.file_lines import FileLines, FileOrigins, Origin, wrap
from gptoss_local.library.index import Hit
from gptoss_local.library.reading import Document

VIEW_CHARS = 4096  # about 1,024 tokens of text, the reference browser's window
FIND_LINES = 4  # lines shown from each match
MAX_FINDS = 50
# Lines one view shows at most, whatever `num_lines` asks: more would be cut from the result
# anyway (`truncate.RESULT_CHARS`), after joining a whole large file into one string.
MAX_VIEW_LINES = 1000
# Brackets of the page text that would read as links or citations are swapped for look-alikes.
_LOOK_ALIKES = str.maketrans({"【": "〖", "】": "〗"})

PageKind = Literal["search", "file", "find"]


class PageError(Exception):
    """A browser call that cannot be answered; the message is the model's to read."""


@dataclass
class Page:
    """One page the model has seen (`kind`: search results, a file, find results).

    Attributes:
        title: The page's title (a file's heading or name; the query).
        source: Where it comes from, shown after the title: the file's name.
        lines: The page's lines, wrapped (a file's: `FileLines`, compact).
        origins: For each line, the file line it shows (None for headings of results).
        links: The page's links by id: where `open(id=N)` goes.
    """

    kind: PageKind
    title: str
    source: str
    lines: Sequence[str] = field(default_factory=list)
    origins: Sequence[Origin | None] = field(default_factory=list)
    links: dict[int, Origin] = field(default_factory=dict)

    def line_of(self, origin: Origin) -> int:
        """The first page line that shows `origin`'s file line or a later one (0 if none)."""
        if isinstance(self.origins, FileOrigins):
            return self.origins.line_of(origin)
        for number, shown in enumerate(self.origins):
            if shown is not None and shown.path == origin.path and shown.line >= origin.line:
                return number
        return 0


def _add(lines: list[str], origins: list[Origin | None], text: str, origin: Origin | None) -> None:
    """Add a line of text (wrapped into page lines), showing `origin`."""
    for line in wrap(text.translate(_LOOK_ALIKES)):
        lines.append(line)
        origins.append(origin)


def file_page(path: str, name: str, document: Document) -> Page:
    """A file as a page: its title, then its text line by line."""
    lines = FileLines.of(document.text)
    return Page("file", document.title, name, lines, FileOrigins(path, name, lines))


def search_page(query: str, hits: list[Hit]) -> Page:
    """Search results as a page: each hit a link (its title and file) and its snippet."""
    lines: list[str] = []
    origins: list[Origin | None] = []
    page = Page("search", query, "", lines, origins)
    _add(lines, origins, "# Search Results", None)
    _add(lines, origins, "", None)
    if not hits:
        _add(
            lines, origins, f"No results for `{query}` in the folders this browser searches.", None
        )
    for number, hit in enumerate(hits):
        origin = Origin(hit.path, hit.name, hit.line)
        page.links[number] = origin
        snippet = " ".join(hit.snippet.split()).translate(_LOOK_ALIKES)
        title = hit.title.translate(_LOOK_ALIKES).replace("†", "‡")
        for line in wrap(f"  * 【{number}†{title}†{hit.name}】 {snippet}"):
            lines.append(line)
            origins.append(origin)
    return page


def find_page(page: Page, pattern: str) -> Page:
    """The lines of `page` that hold `pattern` (ignoring case), each with the lines after it.

    Raises:
        PageError: `page` is search or find results, which `find` does not search.
    """
    if page.kind != "file":
        raise PageError("Cannot run `find` on search results page or find results page")
    wanted = pattern.lower()
    lines: list[str] = []
    origins: list[Origin | None] = []
    title = f"Find results for text: `{pattern}` in `{page.title}`"
    found = Page("find", title, page.source, lines, origins)
    number = 0
    index = _matching(page.lines, wanted, 0)
    while index is not None and number < MAX_FINDS:
        if number:
            _add(lines, origins, "", None)
        lines.append(f"# 【{number}†match at L{index}】")
        origins.append(page.origins[index])
        shown = range(index, min(index + FIND_LINES, len(page.lines)))
        lines.extend(page.lines[n] for n in shown)
        origins.extend(page.origins[n] for n in shown)
        origin = page.origins[index]
        if origin is not None:
            found.links[number] = origin
        number += 1
        index = _matching(page.lines, wanted, index + FIND_LINES)
    if not number:
        _add(lines, origins, f"No `find` results for pattern: `{pattern}`", None)
    return found


def _matching(lines: Sequence[str], wanted: str, start: int) -> int | None:
    """The first of `lines` from `start` that holds `wanted` (lower case), ignoring case."""
    if isinstance(lines, FileLines):
        return lines.find(wanted, start)
    for index in range(start, len(lines)):
        if wanted in lines[index].lower():
            return index
    return None


def view(page: Page, cursor: int, loc: int, num_lines: int = -1) -> str:
    """What the model reads of `page` shown as `cursor`: the lines from `loc`, `num_lines`
    of them (at most `MAX_VIEW_LINES`; a window of about 1,024 tokens when not given).

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
    wanted = min(num_lines, MAX_VIEW_LINES)
    end = min(loc + wanted, total) if num_lines > 0 else _window_end(lines, loc)
    header = f"{page.title} ({page.source})" if page.source else page.title
    body = "\n".join(f"L{n}: {lines[n]}" for n in range(loc, end))
    return f"[{cursor}] {header}\n**viewing lines [{loc} - {end - 1}] of {total - 1}**\n\n{body}"


def _window_end(lines: Sequence[str], loc: int) -> int:
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
    first = max(first, 0)
    if isinstance(page.origins, FileOrigins):  # one file, its lines in order
        if first >= len(page.origins):
            return None
        return page.origins[first], page.origins[min(last, len(page.origins) - 1)]
    shown = [o for o in page.origins[first : last + 1] if o is not None]
    if not shown:
        return None
    same = [o for o in shown if o.path == shown[0].path]
    return min(same, key=lambda o: o.line), max(same, key=lambda o: o.line)
