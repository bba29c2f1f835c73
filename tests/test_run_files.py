"""`gptoss-local run --file`: files go after the prompt as the model reads them (checked in the
exact prompt), a refused file is a clear error, and a prompt too large for the context is
refused with its figures before anything is generated."""

from __future__ import annotations

from pathlib import Path

from test_run_cli import gptoss


def test_files_go_after_the_prompt_in_fenced_blocks(isolated_home: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.py").write_text("print('```')\n", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n", encoding="utf-8")
    done = gptoss(isolated_home, "run", "--print-prompt", "--file", str(tmp_path / "notes.py"),
                  "--file", str(tmp_path / "docs"), "What is in these?")  # fmt: skip
    assert done.returncode == 0, done.stderr
    question = done.stdout.index("What is in these?")
    block = done.stdout.index("````python\nprint('```')\n````")
    assert question < block < done.stdout.index("# A")


def test_an_image_is_refused_with_what_to_do(isolated_home: Path, tmp_path: Path) -> None:
    image = tmp_path / "photo.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    done = gptoss(isolated_home, "run", "--print-prompt", "--file", str(image), "Describe it")
    assert done.returncode == 2 and "photo.png" in done.stderr and "text" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_prompt_too_large_for_the_context_is_refused_before_generating(
    isolated_home: Path, tiny_gguf: Path, tmp_path: Path
) -> None:
    big = tmp_path / "big.txt"
    big.write_text("the weather today is fine and warm\n" * 600, encoding="utf-8")
    done = gptoss(isolated_home, "run", "--model-path", str(tiny_gguf), "--context", "2048",
                  "--file", str(big), "Summarise it")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "the prompt is" in done.stderr and "2,048-token context has room for" in done.stderr
    assert "--context" in done.stderr and done.stdout == ""
