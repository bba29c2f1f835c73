"""`gptoss-local codex`'s pieces that need no Codex: the profile it writes, and where its own
options end and Codex's begin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gptoss_local.agents.codex_profile import PROFILE, Served, write_profile
from gptoss_local.cli import _parse
from gptoss_local.tomlread import load_toml

SERVED = Served("http://127.0.0.1:8080/v1", "gpt-oss-20b", 65_536, "high")


def test_the_profile_points_codex_at_the_server_with_the_models_metadata(tmp_path: Path) -> None:
    path = write_profile(SERVED, tmp_path).path
    assert path == tmp_path / f"{PROFILE}.config.toml"
    profile = load_toml(path)
    assert profile["model"] == "gpt-oss-20b" and profile["model_provider"] == "gptoss-local"
    provider = profile["model_providers"]["gptoss-local"]
    assert provider["base_url"] == SERVED.url and provider["wire_api"] == "responses"
    assert "env_key" not in provider
    assert profile["model_context_window"] == 65_536
    assert profile["model_auto_compact_token_limit"] < 65_536
    assert profile["model_reasoning_effort"] == "high"
    assert profile["model_reasoning_summary"] == "none" and profile["show_raw_agent_reasoning"]
    assert profile["web_search"] == "disabled"
    assert profile["agents"]["enabled"] is False and profile["features"]["goals"] is False
    (model,) = json.loads(Path(profile["model_catalog_json"]).read_text())["models"]
    assert model["slug"] == "gpt-oss-20b" and model["context_window"] == 65_536
    assert [level["effort"] for level in model["supported_reasoning_levels"]] == [
        "low", "medium", "high"
    ]  # fmt: skip
    assert model["default_reasoning_summary"] == "none"
    assert model["supports_parallel_tool_calls"] is False
    assert model["apply_patch_tool_type"] == "freeform"
    assert "apply_patch" in model["base_instructions"]
    assert not list(tmp_path.glob("*.part"))


def test_a_key_and_an_engine_without_freeform_tools_are_written_so(tmp_path: Path) -> None:
    served = Served(SERVED.url, "gpt-oss:20b", 32_768, key_variable="GPTOSS_LOCAL_API_KEY",
                    freeform_tools=False)  # fmt: skip
    profile = load_toml(write_profile(served, tmp_path).path)
    assert profile["model_providers"]["gptoss-local"]["env_key"] == "GPTOSS_LOCAL_API_KEY"
    (model,) = json.loads(Path(profile["model_catalog_json"]).read_text())["models"]
    assert "apply_patch_tool_type" not in model  # Codex then edits with shell commands


@pytest.mark.parametrize(
    ("argv", "ours", "passed_on"),
    [
        (["--port", "9", "--strict-config", "exec", "hi"], {"port": 9},
         ["--strict-config", "exec", "hi"]),
        (["--effort=high", "--new-server", "-s", "workspace-write"],
         {"effort": "high", "new_server": True}, ["-s", "workspace-write"]),
        (["exec", "--port", "1"], {"port": 8080}, ["exec", "--port", "1"]),
        (["--", "--model", "x"], {"model": None}, ["--model", "x"]),
        ([], {"port": 8080}, []),
    ],
)  # fmt: skip
def test_everything_after_its_own_options_goes_to_codex(argv, ours, passed_on) -> None:
    args = _parse(["codex", *argv])
    assert args.codex_args == passed_on
    assert {key: getattr(args, key) for key in ours} == ours
