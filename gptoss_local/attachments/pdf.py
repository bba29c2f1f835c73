"""A PDF's text, page by page, with pypdf; refused when it is encrypted, damaged, or scanned.

Only the text layer is read: gpt-oss sees no pictures, so a PDF of scanned pages (no text
layer) is refused rather than sent as an empty block the model would answer about anyway.
"""

from __future__ import annotations

import io

from gptoss_local.attachments.model import AttachmentRefused
from gptoss_local.i18n import _


def pdf_block(name: str, data: bytes) -> str:
    """The block the model reads for a PDF: a header with its page count, then each page's
    text after a "--- page N ---" line.

    Raises:
        AttachmentRefused: the PDF is encrypted with a password, damaged, or has no text.
    """
    pages = page_texts(name, data)
    if not any(text.strip() for text in pages):
        raise AttachmentRefused(
            _(
                "{name} has no text to extract: it is probably a scanned PDF (pictures of "
                "pages), and gpt-oss reads text only."
            ).format(name=name),
            hint=_("Run OCR on it (ocrmypdf, for one) and attach the result."),
        )
    count = f"{len(pages)} page" if len(pages) == 1 else f"{len(pages)} pages"
    body = "\n\n".join(
        f"--- page {number} ---\n{text.strip()}" for number, text in enumerate(pages, 1)
    )
    return f"File: {name} (PDF, {count}, text only)\n{body}"


def page_texts(name: str, data: bytes) -> list[str]:
    """The text of every page; an encrypted PDF is opened with the empty password first, since
    many are encrypted only to restrict printing or copying and open without one.

    Raises:
        AttachmentRefused: the PDF is encrypted with a password, or damaged.
    """
    # pypdf takes ~0.1 s to import (measured with pypdf 7.1), so only when a PDF is attached.
    import pypdf

    # pypdf raises many kinds of error on a broken file (its own, ValueError, KeyError,
    # struct.error, ...): whatever it raises, the file is what is wrong.
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
    except Exception as exc:
        raise _damaged(name, exc) from exc
    if reader.is_encrypted:
        try:
            opened = bool(reader.decrypt(""))
        except Exception:  # an unsupported cipher, or cryptography missing: still locked
            opened = False
        if not opened:
            raise AttachmentRefused(
                _("{name} is an encrypted PDF: it cannot be read without its password.").format(
                    name=name
                ),
                hint=_(
                    "Save a copy without the password (most PDF viewers can export or print "
                    "one to PDF) and attach that."
                ),
            )
    try:
        return [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:
        raise _damaged(name, exc) from exc


def _damaged(name: str, exc: Exception) -> AttachmentRefused:
    detail = str(exc) or type(exc).__name__
    return AttachmentRefused(
        _("{name} is a damaged PDF: it cannot be read ({detail}).").format(
            name=name, detail=detail
        ),
        hint=_("Open it in a PDF viewer, save a fresh copy, and attach that."),
    )
