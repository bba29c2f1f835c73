"""A folder is a listing, then its text files, shallow first, as far as the token budget goes;
hidden and dependency folders are skipped, binaries listed but not sent."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from attach_helpers import PNG, words

from gptoss_local.attachments import AttachedFile, AttachmentRefused, read_attachment


def count(text: str) -> int:
    return len(text.split())


def read(path: Path | str, root: Path, budget: int = 8000, room: int | None = None) -> AttachedFile:
    return read_attachment(
        Path(path), root=root, count_tokens=count, folder_budget=budget, room=room
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """proj/ with a README, a big top-level file, code two levels down, a PNG, and the hidden,
    dependency and cache folders a real project has."""
    root = tmp_path / "proj"
    for folder in ("src/lib", ".git", ".venv/lib", "node_modules/left-pad", "__pycache__"):
        (root / folder).mkdir(parents=True)
    (root / "README.md").write_text("# Proj\n")
    (root / "notes.txt").write_text(words(500))
    (root / "logo.png").write_bytes(PNG)
    (root / "src" / "app.py").write_text("import lib\n")
    (root / "src" / "lib" / "deep.py").write_text("X = 1\n")
    (root / ".env").write_text("TOKEN=1")
    (root / ".git" / "config").write_text("[core]")
    (root / ".venv" / "lib" / "site.py").write_text("")
    (root / "node_modules" / "left-pad" / "index.js").write_text("")
    (root / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\0\0")
    return root


def test_a_folder_lists_what_is_in_it_and_sends_its_text_files(project: Path) -> None:
    attached = read("proj", project.parent)
    assert attached.kind == "folder" and attached.name == "proj"
    assert attached.text == (
        "Folder: proj (5 files, 2 folders; 4 text files included, 0 left out for the token "
        "budget; 1 not text (listed only))\n"
        "```\nREADME.md\nlogo.png\nnotes.txt\nsrc/\nsrc/app.py\nsrc/lib/\nsrc/lib/deep.py\n```"
        "\n\nFile: proj/README.md\n```markdown\n# Proj\n```"
        f"\n\nFile: proj/notes.txt\n```\n{words(500)}\n```"
        "\n\nFile: proj/src/app.py\n```python\nimport lib\n```"
        "\n\nFile: proj/src/lib/deep.py\n```python\nX = 1\n```"
    )
    assert attached.sha256 == hashlib.sha256(attached.text.encode()).hexdigest()
    assert attached.tokens == count(attached.text)


def test_what_does_not_fit_the_budget_is_left_out_and_smaller_files_still_go(
    project: Path,
) -> None:
    attached = read(project, project.parent, budget=100)
    assert "3 text files included, 1 left out for the token budget" in attached.text
    assert "File: proj/notes.txt" not in attached.text
    assert "notes.txt\n" in attached.text  # still listed
    assert "File: proj/src/lib/deep.py" in attached.text
    assert attached.tokens <= 100


def test_files_go_shallow_first_until_the_budget_is_spent(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "z.txt").write_text(words(20))
    (tmp_path / "a" / "b" / "deep.txt").write_text(words(20))
    (tmp_path / "a" / "mid.txt").write_text(words(20))
    attached = read(tmp_path, tmp_path, budget=60)
    assert attached.name == "."
    assert "File: z.txt" in attached.text and "File: a/mid.txt" in attached.text
    assert "File: a/b/deep.txt" not in attached.text
    assert "2 text files included, 1 left out for the token budget" in attached.text


def test_a_long_listing_is_cut_with_a_count_of_the_rest(tmp_path: Path) -> None:
    many = tmp_path / "many"
    many.mkdir()
    for i in range(620):
        (many / f"f{i:04}.txt").write_text("x")
    text = read("many", tmp_path, budget=0).text
    assert "\nf0499.txt\n… 120 more\n```" in text and "f0500.txt" not in text
    assert text.startswith("Folder: many (620 files, 0 folders; 0 text files included, ")


def test_an_empty_folder_says_so(tmp_path: Path) -> None:
    (tmp_path / "void").mkdir()
    assert read("void", tmp_path).text == (
        "Folder: void (0 files, 0 folders; 0 text files included, 0 left out for the token "
        "budget)\n```\n(empty)\n```"
    )


def test_a_linked_folder_is_listed_not_followed(tmp_path: Path) -> None:
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "a.txt").write_text("a")
    (tmp_path / "loop" / "back").symlink_to(tmp_path / "loop")
    text = read("loop", tmp_path).text
    assert "```\na.txt\nback\n```" in text
    assert "1 text file included" in text and "1 not text" in text


def test_a_folder_too_long_for_the_room_is_refused(project: Path) -> None:
    with pytest.raises(AttachmentRefused, match=r"^proj is [\d,]+ tokens; the context has room"):
        read("proj", project.parent, room=10)
