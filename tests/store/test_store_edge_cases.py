"""Unlucky cases of the model store: names with control characters, a lock left by another
computer, and a file whose sha256 is right but whose GGUF structure is not."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from http_fixture import FileServer
from store_files import REPO, Served, models_dir, pull_recorded, write_manifest

from gptoss_local import catalog
from gptoss_local.catalog import ManifestError
from gptoss_local.cli import main
from gptoss_local.store.errors import LockedError
from gptoss_local.store.gguf_check import GgufError
from gptoss_local.store.http_fetch import Final, build_opener, open_at
from gptoss_local.store.inventory import model_state
from gptoss_local.store.layout import file_paths

ONE = "tiny-one.gguf"


@pytest.mark.parametrize("escape", ["\\u0007", "\\n", "\\u007f", "\\u0085"])
def test_a_file_name_with_a_control_character_is_refused_by_the_manifest_check(
    tmp_path: Path, escape: str
) -> None:
    manifest = write_manifest(tmp_path / "m.toml", {"tiny-one": {"tinyXX.gguf": b"GGUF"}},
                              {"main": "https://example.org/{repo}/{file}"})  # fmt: skip
    manifest.write_text(manifest.read_text().replace("tinyXX", "tiny" + escape))  # TOML escape
    with pytest.raises(ManifestError, match="unsafe file name"):
        catalog.load(manifest)


def test_a_url_with_a_control_character_fails_at_once_without_a_retry(
    http_server: FileServer, served: Served
) -> None:
    # HF_ENDPOINT can bring one in past the manifest check: it is refused as final, not retried.
    url = http_server.url("main").format(repo=REPO, file=ONE).replace("main", "ma\x01in")
    with pytest.raises(Final, match="control character"):
        open_at(build_opener(), url, 0, 5.0)
    assert not http_server.hits


def test_a_lock_from_another_computer_names_it_and_does_not_wait(served: Served) -> None:
    models_dir().mkdir(parents=True)
    lock = file_paths(ONE).lock
    lock.write_text(json.dumps({"pid": os.getpid(), "host": "the-other-pc"}))
    failures: list[BaseException] = []

    def pull_waiting_forever() -> None:  # lock_timeout None: wait as long as a holder lives
        try:
            pull_recorded(lock_timeout=None)
        except BaseException as exc:
            failures.append(exc)

    worker = threading.Thread(target=pull_waiting_forever, daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "pull is waiting for a lock held on another computer"
    (failure,) = failures
    assert isinstance(failure, LockedError)
    assert "'the-other-pc'" in str(failure) and str(lock) in str(failure)
    assert "delete the lock file" in str(failure) and lock.exists()


@pytest.fixture
def not_a_model(http_server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """A manifest model whose file has the right size and sha256 but is no gpt-oss GGUF."""
    data = b"GGUF" + bytes(4096)
    http_server.files[ONE] = data
    manifest = write_manifest(tmp_path / "m.toml", {"tiny-one": {ONE: data}},
                              {"main": http_server.url("main")})  # fmt: skip
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(manifest))
    return data


def test_a_file_the_gguf_check_refuses_is_not_called_verified(
    not_a_model: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = catalog.load().model("tiny-one")
    with pytest.raises(GgufError):
        pull_recorded()
    assert (models_dir() / ONE).read_bytes() == not_a_model  # right hash: kept
    assert model_state(spec).state == "corrupt"
    assert main(["verify", "one"]) == 1
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "corrupt" in out and "verified" not in out
    assert "`gptoss-local verify one` says why" in out
