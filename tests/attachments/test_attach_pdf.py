"""PDFs, known by "%PDF-" whatever their name, become their pages' text; encrypted, damaged
and scanned ones are refused saying which."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from attach_helpers import pdf_bytes, write_encrypted_pdf, write_pdf

from gptoss_local.attachments import AttachedFile, AttachmentRefused, read_attachment


def read(name: str, root: Path) -> AttachedFile:
    return read_attachment(Path(name), root=root, count_tokens=lambda s: len(s.split()))


def test_the_hand_written_pdf_is_one_pypdf_reads() -> None:
    import io

    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(pdf_bytes(["Hello PDF"])), strict=True)
    assert reader.pages[0].extract_text() == "Hello PDF"


def test_a_pdf_is_its_text_page_by_page(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "paper.pdf", ["Hello PDF", "Second page"])
    attached = read("paper.pdf", tmp_path)
    assert attached.kind == "pdf"
    assert attached.text == (
        "File: paper.pdf (PDF, 2 pages, text only)\n"
        "--- page 1 ---\nHello PDF\n\n--- page 2 ---\nSecond page"
    )
    assert attached.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_pdf_is_known_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    write_pdf(tmp_path / "download", ["Hello PDF"])
    assert read("download", tmp_path).text.startswith("File: download (PDF, 1 page, text only)")


def test_an_encrypted_pdf_is_refused(tmp_path: Path) -> None:
    write_encrypted_pdf(tmp_path / "locked.pdf", "secret")
    with pytest.raises(AttachmentRefused) as refused:
        read("locked.pdf", tmp_path)
    assert str(refused.value).startswith("locked.pdf is an encrypted PDF")
    assert refused.value.hint and "without the password" in refused.value.hint


def test_a_pdf_encrypted_without_a_user_password_opens(tmp_path: Path) -> None:
    source = write_pdf(tmp_path / "plain.pdf", ["Hello PDF"])
    write_encrypted_pdf(tmp_path / "restricted.pdf", "", source)
    assert "--- page 1 ---\nHello PDF" in read("restricted.pdf", tmp_path).text


@pytest.mark.parametrize("cut", [b"%PDF-1.4\ngarbage", b"%PDF-1.7\n" + bytes(10)])
def test_a_damaged_pdf_is_refused(tmp_path: Path, cut: bytes) -> None:
    (tmp_path / "broken.pdf").write_bytes(cut)
    with pytest.raises(AttachmentRefused, match=r"^broken\.pdf is a damaged PDF"):
        read("broken.pdf", tmp_path)


def test_a_truncated_pdf_is_refused(tmp_path: Path) -> None:
    data = pdf_bytes(["Hello PDF"])
    (tmp_path / "half.pdf").write_bytes(data[: len(data) // 2])
    with pytest.raises(AttachmentRefused, match="damaged PDF"):
        read("half.pdf", tmp_path)


def test_a_pdf_without_text_is_refused_as_scanned(tmp_path: Path) -> None:
    write_pdf(tmp_path / "scan.pdf", ["", ""])
    with pytest.raises(AttachmentRefused) as refused:
        read("scan.pdf", tmp_path)
    assert "scan.pdf has no text to extract: it is probably a scanned PDF" in str(refused.value)
    assert refused.value.hint and "OCR" in refused.value.hint
