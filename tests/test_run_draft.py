"""`--draft ngram` as a user runs it: `run` decodes with drafts and says how many it kept; the
setting is checked."""

from __future__ import annotations

from pathlib import Path

from test_run_cli import gptoss, json_lines

from gptoss_local import config


def test_run_with_drafts_reports_them(isolated_home: Path, tiny_gguf: Path) -> None:
    argv = ["run", "--model-path", str(tiny_gguf), "--json", "--temperature", "0",
            "--max-tokens", "150", "the red fox jumps over the lazy dog; " * 12]  # fmt: skip
    drafted = gptoss(isolated_home, *argv, "--draft", "ngram")
    assert drafted.returncode == 0, drafted.stderr
    stats = json_lines(drafted.stdout)[-1]["stats"]
    assert stats["draft_tokens"] > 0 and 0 < stats["accepted_tokens"] <= stats["draft_tokens"]
    plain = gptoss(isolated_home, *argv)
    assert json_lines(plain.stdout)[-1]["stats"]["draft_tokens"] == 0


def test_the_draft_setting_is_checked(isolated_home: Path) -> None:
    config.save(config.Settings(draft="ngram"))
    assert config.load().draft == "ngram"
    settings = config.paths.settings_file()
    settings.write_text(settings.read_text().replace('"ngram"', '"eagle"'))
    done = gptoss(isolated_home, "run", "--print-prompt", "hi")
    assert done.returncode == 2 and "draft must be one of off, ngram, not 'eagle'" in done.stderr
