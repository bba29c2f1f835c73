"""Speculative decoding as a user runs it: `run --draft ngram` and `run --draft-model HEAD`
decode with drafts and say how many were kept where the whole model is on a GPU (here a
stand-in RTX 4090: the CPU engine runs the plan as it would there); on the CPU alone the plan
leaves drafts off and says why; the settings are checked."""

from __future__ import annotations

import json
from pathlib import Path

from test_run_cli import gptoss, json_lines

from gptoss_local import config

PROMPT = "the red fox jumps over the lazy dog; " * 12


def _stats(out: str) -> dict:
    return [json.loads(line) for line in out.splitlines()][-1]["stats"]


def _run(model: Path, *extra: str) -> list[str]:
    return ["run", "--model-path", str(model), "--json", "--temperature", "0",
            "--max-tokens", "150", *extra, PROMPT]  # fmt: skip


def test_run_with_ngram_drafts_reports_them(
    isolated_home: Path, tiny_gguf: Path, cli, rtx_4090: None
) -> None:
    code, out, err = cli(*_run(tiny_gguf, "--draft", "ngram"))
    assert code == 0, err
    stats = _stats(out)
    assert stats["draft_tokens"] > 0 and 0 < stats["accepted_tokens"] <= stats["draft_tokens"]
    code, out, err = cli(*_run(tiny_gguf))
    assert code == 0 and _stats(out)["draft_tokens"] == 0


def test_run_with_an_eagle_head_drafts_with_it(
    isolated_home: Path, tiny_gguf: Path, eagle_gguf: Path, cli, rtx_4090: None
) -> None:
    code, out, err = cli(*_run(tiny_gguf, "--draft-model", str(eagle_gguf)))
    assert code == 0, err
    drafted = _stats(out)
    assert drafted["draft_tokens"] > 0 and drafted["accepted_tokens"] <= drafted["draft_tokens"]
    code, out, err = cli(*_run(tiny_gguf, "--draft-model", str(eagle_gguf), "--draft", "off"))
    assert code == 0 and _stats(out)["draft_tokens"] == 0
    code, out, err = cli(*_run(tiny_gguf, "--draft-model", str(tiny_gguf)))
    assert code != 0 and "is not an EAGLE-3 head for this model" in err


def test_on_the_cpu_alone_drafts_are_left_off_with_the_reason(
    isolated_home: Path, tiny_gguf: Path
) -> None:
    done = gptoss(isolated_home, *_run(tiny_gguf, "--draft", "ngram"))
    assert done.returncode == 0, done.stderr
    assert "Speculative decoding is off: the model runs on the CPU" in done.stderr
    assert json_lines(done.stdout)[-1]["stats"]["draft_tokens"] == 0


def test_a_head_is_needed_and_must_exist(isolated_home: Path, tiny_gguf: Path) -> None:
    done = gptoss(isolated_home, *_run(tiny_gguf, "--draft", "eagle3"))
    assert done.returncode == 2 and "--draft eagle3 needs an EAGLE-3 head" in done.stderr
    missing = isolated_home / "nowhere.gguf"
    done = gptoss(isolated_home, *_run(tiny_gguf, "--draft-model", str(missing)))
    assert done.returncode == 2 and f"no EAGLE-3 head at {missing}" in done.stderr


def test_the_draft_settings_are_checked(isolated_home: Path) -> None:
    config.save(config.Settings(draft="ngram"))
    assert config.load().draft == "ngram"
    settings = config.paths.settings_file()
    settings.write_text(settings.read_text().replace('"ngram"', '"eagle"'))
    done = gptoss(isolated_home, "run", "--print-prompt", "hi")
    assert done.returncode == 2
    assert "draft must be one of off, ngram, eagle3, not 'eagle'" in done.stderr
    settings.write_text(settings.read_text().replace('"eagle"', '"eagle3"'))
    done = gptoss(isolated_home, "run", "--print-prompt", "hi")
    assert done.returncode == 2 and "needs draft_model" in done.stderr
