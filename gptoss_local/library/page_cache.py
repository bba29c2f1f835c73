"""The file pages the browser made lately, kept by the file's identity (device, inode, size,
mtime, ctime), so opening an unchanged file again neither reads nor converts it: a model that
opens one large file page after page holds its slot for one conversion, not one per page."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from gptoss_local.library.file_lines import FileLines
from gptoss_local.library.pages import Page

MAX_BYTES = 64 * 1024 * 1024  # the pages of a few of the largest files (10 MiB of text each)


class PageCache:
    """A least-recently-used set of pages, bounded by the memory they hold.

    Args:
        max_bytes: What the pages may hold in all; a larger one is made but not kept.
    """

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.made = 0  # pages made (files read and converted), for the curious and the tests
        self._pages: OrderedDict[Hashable, tuple[Page, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def page(self, key: Hashable, make: Callable[[], Page]) -> Page:
        """The page kept for `key`, else `make()`'s (kept if it fits)."""
        with self._lock:
            kept = self._pages.get(key)
            if kept is not None:
                self._pages.move_to_end(key)
                return kept[0]
        page = make()  # outside the lock: another conversation need not wait for it
        size = page.lines.nbytes if isinstance(page.lines, FileLines) else 0
        with self._lock:
            self.made += 1
            if size > self.max_bytes or key in self._pages:
                return page
            self._pages[key] = (page, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _key, (_page, dropped) = self._pages.popitem(last=False)
                self._bytes -= dropped
        return page
