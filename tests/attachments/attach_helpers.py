"""Files for the attachment tests: PDFs written by hand (pypdf reads text but cannot draw it),
an encrypted one, and the first bytes of a PNG."""

from __future__ import annotations

from pathlib import Path

PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89"


def pdf_bytes(pages: list[str]) -> bytes:
    """A valid PDF whose pages each draw one line of text in Helvetica ("" draws nothing, as
    a scanned page holds no text), with a correct cross-reference table."""
    count = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(count))
    font = 3 + 2 * count
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
    ]
    for i, text in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode() if text else b""
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def write_pdf(path: Path, pages: list[str]) -> Path:
    path.write_bytes(pdf_bytes(pages))
    return path


def write_encrypted_pdf(path: Path, user_password: str, source: Path | None = None) -> Path:
    """A PDF encrypted by pypdf: a copy of `source`, or one blank page."""
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=source) if source else PdfWriter()
    if source is None:
        writer.add_blank_page(612, 792)
    writer.encrypt(user_password, owner_password="owner-secret", algorithm="AES-128")
    with path.open("wb") as out:
        writer.write(out)
    return path


def words(count: int) -> str:
    """`count` words, one token each by the tests' counter."""
    return " ".join(f"w{i}" for i in range(count))
