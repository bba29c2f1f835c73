"""Markdown that may link to local files: the answers' citations are ``file://`` links.

markdown-it refuses ``file:`` links by default (it guards web pages against them); here they
are the point, and only the app's own text makes them (`session.export.linked`), so the
answer's parser lets them through, and still refuses ``javascript:`` and the like.
"""

from __future__ import annotations

from markdown_it import MarkdownIt


def file_link_parser() -> MarkdownIt:
    """Textual's "gfm-like" parser, taking ``file://`` links too."""
    parser = MarkdownIt("gfm-like")
    usual = parser.validateLink
    parser.validateLink = lambda url: url.lower().startswith("file://") or usual(url)  # type: ignore[method-assign]
    return parser


def prepare_link_encoding() -> None:
    """Build mdurl's table for encoding links here, on the UI thread. mdurl stores the table
    before filling it, so two Markdown widgets parsing their first links on their threads at
    once could read it half filled (an IndexError that ends the app)."""
    import mdurl  # markdown-it's own dependency, as light as it

    mdurl.encode("")
