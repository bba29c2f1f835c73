"""An HTML file's title and text, with the standard library's parser: what a reader sees,
line by line (blocks on lines of their own, headings as Markdown headings), without scripts,
styles or tags."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_HIDDEN = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_BLOCKS = frozenset({
    "p", "div", "br", "li", "ul", "ol", "tr", "table", "pre", "section", "article", "header",
    "footer", "nav", "main", "aside", "blockquote", "dd", "dt", "dl", "hr", "figure", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "title",
})  # fmt: skip
_SPACES = re.compile(r"[ \t\r\f\v]+")
_BLANKS = re.compile(r"\n{3,}")


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.heading: list[str] = []
        self._hidden = 0
        self._pre = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in _HIDDEN:
            self._hidden += 1
        if tag == "pre":
            self._pre += 1
        if tag in _BLOCKS:
            self.parts.append("\n")
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.parts.append("#" * int(tag[1]) + " ")
            self.heading.append("")
        if tag == "li":
            self.parts.append("* ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _HIDDEN and self._hidden:
            self._hidden -= 1
        if tag == "pre" and self._pre:
            self._pre -= 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
            return
        if self._hidden:
            return
        text = data if self._pre else _SPACES.sub(" ", data.replace("\n", " "))
        self.parts.append(text)
        if self.heading and not self.heading[-1].strip():
            self.heading[-1] += text


def html_text(html: str) -> tuple[str, str]:
    """The title (<title>, else the first heading; "" when neither) and the text of `html`."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    lines = [line.strip() for line in "".join(reader.parts).split("\n")]
    text = _BLANKS.sub("\n\n", "\n".join(lines)).strip()
    title = " ".join("".join(reader.title).split())
    if not title and reader.heading:
        title = reader.heading[0].strip()
    return title, text + "\n" if text else ""
