"""`doctor` says whether the planned model's weights are here, and how to get them when not:
a manifest whose one model is the tiny GGUF, absent from the isolated home, then placed."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from installed_cli import Cli
from store_files import write_manifest
from store_fixtures import fixture_store_env

from gptoss_local import paths
from gptoss_local.doctor.report import gather
from gptoss_local.doctor.weights import weights_line, weights_status
from gptoss_local.plan.wishes import Wishes

__all__ = ["fixture_store_env"]  # autouse: no caches or proxies of this machine's user


@pytest.fixture(name="tiny_manifest")
def fixture_tiny_manifest(tiny_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The manifest lists only `tiny-one` (alias `one`): the tiny GGUF's bytes and sha256."""
    models = {"tiny-one": {"tiny-one.gguf": tiny_gguf.read_bytes()}}
    manifest = write_manifest(
        tmp_path / "manifest.toml", models, {"main": "http://127.0.0.1:9/{file}"}
    )
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(manifest))
    return "tiny-one"


def test_doctor_names_the_pull_command_until_the_weights_are_here(
    cli: Cli, tiny_manifest: str, tiny_gguf: Path
) -> None:
    code, out, _ = cli("doctor", "--model", tiny_manifest)
    assert code == 0
    assert "weights    not downloaded: get them with `gptoss-local pull one`" in out
    weights = json.loads(cli("doctor", "--json", "--model", tiny_manifest)[1])["plan"]["weights"]
    assert weights["model"] == "tiny-one" and weights["state"] == "absent"
    assert weights["downloaded"] is False and weights["pull"] == "gptoss-local pull one"

    paths.models_dir().mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tiny_gguf, paths.models_dir() / "tiny-one.gguf")
    code, out, _ = cli("doctor", "--model", tiny_manifest)
    where = paths.models_dir() / "tiny-one.gguf"
    assert (
        code == 0 and f"weights    downloaded ({where})" in out and "gptoss-local pull" not in out
    )
    weights = json.loads(cli("doctor", "--json", "--model", tiny_manifest)[1])["plan"]["weights"]
    assert weights["downloaded"] is True and weights["pull"] is None
    assert weights["path"] == str(where) and weights["bytes_on_disk"] == weights["bytes"]
    # The command doctor named is one `pull` takes: offline, it finds the placed file.
    code, out, err = cli("pull", "one", "--offline", "--no-reuse", "--quiet")
    assert code == 0 and out.strip() == str(where), err


def test_a_partial_download_is_said_to_resume(
    cli: Cli, tiny_manifest: str, tiny_gguf: Path
) -> None:
    part = paths.models_dir() / "tiny-one.gguf.incomplete"
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_bytes(tiny_gguf.read_bytes()[:4096])
    code, out, _ = cli("doctor", "--model", tiny_manifest)
    assert code == 0 and "downloaded: `gptoss-local pull one` finishes them" in out
    weights = json.loads(cli("doctor", "--json", "--model", tiny_manifest)[1])["plan"]["weights"]
    assert (weights["state"], weights["bytes_on_disk"]) == ("partial", 4096)


@pytest.mark.parametrize(
    ("listener", "tags", "line"),
    [
        ("ollama", ["gpt-oss:20b"], "weights    in Ollama's store"),
        ("ollama", [], "get them with `gptoss-local pull 20b --backend ollama`"),
        ("closed", [], None),  # Ollama is not running: its store is not known
    ],
)
def test_with_ollama_its_tags_say_whether_the_model_is_there(
    listener: str, tags: list[str], line: str | None
) -> None:
    planned = dataclasses.replace(gather(Wishes())[2], model="gpt-oss-20b", backend="ollama")
    status = weights_status(planned, {"listener": listener, "gpt_oss_tags": tags})
    assert status is not None and status["model"] == "gpt-oss-20b"
    said = weights_line(status)
    assert said == line if line is None else line in (said or "")
