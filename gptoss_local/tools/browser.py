"""The browser tool over the user's folders: `search`, `open` and `find` answered from the
local index, and the citations the model writes resolved to files and lines.

Each conversation browses in a `BrowserSession`: the pages it has seen, numbered by cursor in
the order seen, as in the reference browser (every call shows a new page, a scroll too). A
chat keeps one session per chat (`switch`), `run` and each `serve` request one of their own.
Errors are the model's news, in the reference browser's words, not failures.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gptoss_local.conversation import BuiltinTool, Citation
from gptoss_local.library import Library, LibraryError
from gptoss_local.library.confined import identity, opened, read
from gptoss_local.library.page_cache import PageCache
from gptoss_local.library.pages import (
    Page,
    PageError,
    cited,
    file_page,
    find_page,
    search_page,
    view,
)
from gptoss_local.library.reading import Skipped, left_out, read_document
from gptoss_local.tools.browser_tool import BROWSER, FUNCTION_NAMES, NAME
from gptoss_local.tools.result import ToolOutput

MAX_RESULTS = 10  # results a search shows at most (the model's `topn` is read up to this)
# 【3†L10-L15】, 【3†L10】: a citation of a page's lines (a link 【3†Title】 has no line range).
CITATION = re.compile(r"【(\d+)†L(\d+)(?:-L(\d+))?】")


@dataclass
class BrowserSession:
    """The pages one conversation has seen, by cursor."""

    pages: list[Page] = field(default_factory=list)

    def page(self, cursor: int) -> Page:
        """The page at `cursor` (-1: the latest).

        Raises:
            PageError: There is none.
        """
        if not self.pages:
            raise PageError("No pages to access!")
        if cursor == -1:
            return self.pages[-1]
        if not 0 <= cursor < len(self.pages):
            raise PageError(
                f"Cursor `{cursor}` is out of range. Available cursor indices: "
                f"[0 - {len(self.pages) - 1}]."
            )
        return self.pages[cursor]

    def show(self, page: Page, loc: int = 0, num_lines: int = -1) -> str:
        """Add `page` as the next cursor and display it (taken back if it cannot be shown)."""
        self.pages.append(page)
        try:
            return view(page, len(self.pages) - 1, loc, num_lines)
        except PageError:
            self.pages.pop()
            raise


class BrowserTool:
    """The browser of one chat, run or server: the index of the settings' folders, and a
    session per conversation.

    Args:
        library: The open index.
        folders: The folders it covers (absolute paths): only files inside them open.
    """

    def __init__(self, library: Library, folders: tuple[str, ...]) -> None:
        self.library = library
        self.folders = folders
        self._sessions: dict[object, BrowserSession] = {}
        self._key: object = None
        self._lock = threading.Lock()
        self.pages = PageCache()

    @property
    def builtin(self) -> BuiltinTool:
        """The tool as the renderer offers it (openai-harmony's browser)."""
        return BROWSER

    @property
    def note(self) -> str:
        """What it searches, for listings and approval prompts (English, as `ToolInfo.note`)."""
        files = sum(info.files for info in self.library.folders())
        counted = "1 file" if files == 1 else f"{files:,} files"
        return f"searches {counted} in: " + ", ".join(self.folders)

    @property
    def session(self) -> BrowserSession:
        """The session of the conversation browsing now."""
        with self._lock:
            return self._sessions.setdefault(self._key, BrowserSession())

    def switch(self, key: object) -> None:
        """Browse as conversation `key` from now on (a chat's id): its own pages and cursors."""
        with self._lock:
            self._key = key

    def fresh(self) -> None:
        """Forget the current conversation's pages (a new `run`, a new request)."""
        with self._lock:
            self._sessions[self._key] = BrowserSession()

    def call(self, function: str, arguments: dict[str, Any]) -> ToolOutput:
        """Run ``browser.FUNCTION``; a mistake of the model's is an error result for it."""
        try:
            if function == "search":
                text = self._search(arguments)
            elif function == "open":
                text = self._open(arguments)
            elif function == "find":
                text = self._find(arguments)
            else:
                names = ", ".join(f"{NAME}.{f}" for f in FUNCTION_NAMES)
                return ToolOutput(f"Unknown function: {function}. Functions: {names}.", True)
        except PageError as exc:
            return ToolOutput(str(exc), error=True)
        except (TypeError, ValueError) as exc:
            return ToolOutput(f"Invalid function arguments: {exc}", error=True)
        except LibraryError as exc:
            return ToolOutput(f"The index cannot be searched: {exc.for_model}", error=True)
        return ToolOutput.of(text)

    def cite(self, text: str) -> tuple[Citation, ...]:
        """The citations in `text` that point at lines of this conversation's pages, as
        files and file lines (one per distinct marker, in order)."""
        found: dict[str, Citation] = {}
        session = self.session
        for match in CITATION.finditer(text):
            cursor, first = int(match.group(1)), int(match.group(2))
            last = int(match.group(3) or first)
            if match.group(0) in found or not 0 <= cursor < len(session.pages):
                continue
            lines = cited(session.pages[cursor], first, max(first, last))
            if lines is None:
                continue
            start, end = lines
            found[match.group(0)] = Citation(match.group(0), start.path, start.name,
                                             start.line + 1, end.line + 1)  # fmt: skip
        return tuple(found.values())

    def close(self) -> None:
        """Close the index."""
        self.library.close()

    # --- the three functions ---------------------------------------------------------------

    def _search(self, arguments: dict[str, Any]) -> str:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise PageError("`search` needs a `query`: the words to look for.")
        topn = _number(arguments.get("topn"), MAX_RESULTS)
        hits = self.library.search(query, max(1, min(topn, MAX_RESULTS)))
        return self.session.show(search_page(query, hits))

    def _open(self, arguments: dict[str, Any]) -> str:
        session = self.session
        target = arguments.get("id", -1)
        loc = _number(arguments.get("loc"), -1)
        num_lines = _number(arguments.get("num_lines"), -1)
        if isinstance(target, str):
            page = self._file(*self._path_of(target))
            return session.show(page, max(loc, 0), num_lines)
        link = _number(target, -1)
        current = session.page(_number(arguments.get("cursor"), -1))
        if link < 0:  # scroll the page
            return session.show(current, max(loc, 0), num_lines)
        origin = current.links.get(link)
        if origin is None:
            raise PageError(f"Invalid link id `{link}`.")
        page = self._file(self._folder_of(origin.path), origin.path)
        if loc < 0:  # at the passage the link points to, with a few lines before it
            at = page.line_of(origin)
            loc = at - 4 if at > 4 else 0
        return session.show(page, loc, num_lines)

    def _find(self, arguments: dict[str, Any]) -> str:
        pattern = arguments.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise PageError("`find` needs a `pattern`: the text to look for on the page.")
        page = self.session.page(_number(arguments.get("cursor"), -1))
        return self.session.show(find_page(page, pattern))

    def _file(self, folder: str, path: str) -> Page:
        """The file at `path` as a page, as it is now: opened once, inside `folder` and never
        through a link out of it (`confined`); an unchanged file's page is not made again."""
        name = self.library.file_name(path) or self._name_of(path)
        try:
            with opened(folder, path) as (fd, info):
                return self.pages.page(
                    (path, name, identity(info)),
                    lambda: file_page(path, name, read_document(Path(path), read(fd, path))),
                )
        except Skipped as skip:
            if skip.reason == "outside":
                raise PageError(f"No file `{name}` in the folders this browser searches.") from None
            if skip.reason == "too_large":
                raise PageError(f"`{name}` is too large to open.") from None
            why = skip.reason.replace("_", " ")
            raise PageError(f"`{name}` cannot be opened: {why}.") from None
        except OSError as exc:
            raise PageError(
                f"Error opening `{name}`: {exc.strerror or exc}. The index may be out of date."
            ) from None

    def _path_of(self, given: str) -> tuple[str, str]:
        """A path the model named (absolute, or as results name it: ``notes/setup.md``) as the
        folder it is in and its absolute path there (`_file` opens it without leaving it).

        Raises:
            PageError: It is a URL, or not a file of these folders.
        """
        if "://" in given and not given.startswith("file://"):
            raise PageError(
                f"Cannot open `{given}`: this browser is offline and opens files of the "
                "searched folders only. Use `search` to find them."
            )
        wanted = Path(given.removeprefix("file://"))
        for folder in self.folders:
            base = Path(folder)
            tried = [wanted] if wanted.is_absolute() else [base.parent / wanted, base / wanted]
            for inside in tried:
                try:  # a link changing as it is resolved: EINVAL
                    real, root = inside.resolve(), base.resolve()
                except (OSError, RuntimeError):
                    continue
                # Which file is meant; `_file` then opens it without ever leaving the folder.
                # Only what the index would hold: never a hidden file (a key, a token) opened
                # by name though the search never shows it.
                if real.is_relative_to(root) and real.is_file() and not left_out(root, real):
                    return folder, str(inside)
        raise PageError(f"No file `{given}` in the folders this browser searches.")

    def _folder_of(self, path: str) -> str:
        """The folder a result's file is in (results name files by their folder's path)."""
        for folder in self.folders:
            if Path(path).is_relative_to(folder):
                return folder
        raise PageError(f"No file `{path}` in the folders this browser searches.")

    def _name_of(self, path: str) -> str:
        for folder in self.folders:
            if Path(path).is_relative_to(folder):
                return f"{Path(folder).name}/{Path(path).relative_to(folder).as_posix()}"
        return path


def _number(value: object, default: int) -> int:
    """A whole number from the model's JSON (it may write 3.0 or "3"); `default` if none."""
    if value is None or isinstance(value, bool):
        return default
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise ValueError(f"expected a number, not {value!r}")
