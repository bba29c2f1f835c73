"""The command line: --version, --help, and doctor in both forms, with described and real GPUs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fake_nvml import FakeNvml
from installed_cli import Cli

from gptoss_local import __version__, config
from gptoss_local.cli import HANDLERS, build_parser, main
from gptoss_local.config import Settings
from gptoss_local.hardware import machine as hardware


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"gptoss-local {__version__}"


def test_help_lists_exactly_the_commands_that_have_handlers(
    cli: Cli,
) -> None:
    code, out, _ = cli()
    assert code == 0 and "doctor" in out
    listed = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert listed == set(HANDLERS)
    for command in listed:
        with pytest.raises(SystemExit) as done:
            main([command, "--help"])
        assert done.value.code == 0


def test_python_dash_m_works() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gptoss_local", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and __version__ in done.stdout


def test_doctor_json_schema(cli: Cli, rtx_4090: None) -> None:
    code, out, _ = cli("doctor", "--json")
    doc = json.loads(out)
    assert code == 0 and set(doc) == {"gpus", "ram", "disk", "engine", "plan"}
    (gpu,) = doc["gpus"]
    assert gpu["name"] == "NVIDIA GeForce RTX 4090" and gpu["gpu_class"] == "geforce"
    assert gpu["driver_version"] and gpu["cuda_driver_version"] == "13.0"
    assert gpu["total_vram"] > gpu["free_vram"] > 0
    assert doc["ram"]["total"] >= doc["ram"]["available"] > 0 and doc["ram"]["cpu_cores"] >= 1
    assert doc["disk"]["free"] > 0
    assert doc["engine"]["llama_cpp"]["installed"] is True
    assert isinstance(doc["engine"]["llama_cpp"]["gpu_offload"], bool)
    assert doc["engine"]["nvml"] == {"available": True, "error": None}
    plan = doc["plan"]
    assert plan["model"] == "gpt-oss-20b" and plan["placement"] == "gpu" and plan["fits"] is True
    for key in (
        "gpu_layers",
        "cpu_moe_layers",
        "context",
        "kv_type",
        "est_vram",
        "est_ram",
        "reasons",
        "warnings",
    ):
        assert key in plan


def test_cpu_only_engine_beside_a_gpu_is_a_loud_warning_with_the_fix(
    cli: Cli, rtx_4090: None
) -> None:
    import llama_cpp

    if llama_cpp.llama_supports_gpu_offload():
        pytest.skip("this llama-cpp-python build can offload: the warning does not apply")
    code, out, _ = cli("doctor")
    assert code == 0
    assert "CPU-only" in out and "gptoss-local engine install --cuda" in out
    doc = json.loads(cli("doctor", "--json")[1])
    assert any("CPU-only" in w for w in doc["engine"]["warnings"])


def test_doctor_text_without_gpu(cli: Cli, monkeypatch) -> None:
    monkeypatch.setattr(hardware, "load_nvml", lambda: FakeNvml([], init_error=12))
    code, out, _ = cli("doctor")
    assert code == 0
    assert "no NVIDIA driver is installed" in out
    assert "placement  CPU only" in out and "\x1b[" not in out  # no colour when not a terminal
    assert "CPU-only build" in out and "Warnings" not in out  # no GPU: nothing to warn about


def test_doctor_wishes_and_settings(cli: Cli, rtx_4090: None) -> None:
    config.save(Settings(model="120b", effort="high"))
    doc = json.loads(cli("doctor", "--json")[1])
    assert doc["plan"]["model"] == "gpt-oss-120b"
    doc = json.loads(cli("doctor", "--json", "--model", "20b", "--context", "8192")[1])
    assert (doc["plan"]["model"], doc["plan"]["context"]) == ("gpt-oss-20b", 8192)
    assert any("High reasoning effort" in w for w in doc["plan"]["warnings"])


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["doctor", "--model", "gpt-oss-7b"], "unknown model 'gpt-oss-7b'"),
        (["doctor", "--context", "-1"], "--context must be positive"),
    ],
)
def test_bad_choices_exit_2_with_a_message(
    cli: Cli, rtx_4090: None, argv: list[str], words: str
) -> None:
    code, _, err = cli(*argv)
    assert code == 2 and words in err


def test_bad_settings_file_exits_2(cli: Cli) -> None:
    from gptoss_local import paths

    paths.ensure_dir(paths.config_dir())
    paths.settings_file().write_text("effort = 'extreme'\n")
    code, _, err = cli("doctor")
    assert code == 2 and "effort must be one of" in err


@pytest.mark.parametrize("command", ["run", "chat"])
def test_the_key_sent_to_a_server_is_named_apart_from_the_key_serve_asks_for(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from gptoss_local.plan.wishes import wishes_from

    parser = build_parser()
    given = parser.parse_args([command, "--server-key", "sent"])
    assert wishes_from(given, Settings()).api_key == "sent"
    old = parser.parse_args([command, "--api-key", "old"])  # the old name still works
    assert wishes_from(old, Settings()).api_key == "old"
    assert capsys.readouterr().err == ""  # and says nothing about it
    assert parser.parse_args(["serve", "--api-key", "asked"]).api_key == "asked"
    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = capsys.readouterr().out
    assert "--server-key KEY" in shown and "--api-key" not in shown
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "--api-key KEY" in capsys.readouterr().out
