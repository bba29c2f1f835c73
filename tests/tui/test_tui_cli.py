"""`gptoss-local chat` on the command line: its options, and a clear error when loading fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from gptoss_local.cli import HANDLERS, build_parser, main


def test_chat_is_a_command_with_its_options() -> None:
    assert HANDLERS["chat"] == "gptoss_local.commands.chat:run_chat"
    args = build_parser().parse_args(
        ["chat", "--model-path", "m.gguf", "--effort", "high", "--context", "4096", "--chat", "3"]
    )
    assert (args.model_path, args.effort, args.context, args.chat) == (
        Path("m.gguf"), "high", 4096, 3,
    )  # fmt: skip


def test_a_model_that_cannot_load_is_an_error_not_an_empty_screen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf at all")
    assert main(["chat", "--model-path", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "gptoss-local: error:" in err and "broken.gguf" in err


def test_an_unknown_chat_is_an_error_before_loading(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chat", "--chat", "99", "--model-path", "nothing.gguf"]) == 2
    assert "99" in capsys.readouterr().err
