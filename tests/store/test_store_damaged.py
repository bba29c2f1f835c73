"""A damaged model file is kept until a verified replacement is in place: offline, with every
source down, and when the replacement fails its hash, nothing the user had is deleted."""

from __future__ import annotations

from pathlib import Path

import pytest
from http_fixture import Fault, FileServer
from store_files import Served, models_dir, pull_recorded

from gptoss_local import catalog
from gptoss_local.catalog import ModelSpec
from gptoss_local.cli import main
from gptoss_local.store.errors import OfflineError, StoreError
from gptoss_local.store.inventory import model_state

ONE = "tiny-one.gguf"


def damaged_copy(served: Served, size_delta: int = 0) -> tuple[Path, bytes]:
    """Put a damaged tiny-one.gguf in the models folder: flipped bytes, or a wrong length."""
    good = served.files[ONE]
    bad = bytearray(good[: len(good) + size_delta] if size_delta < 0 else good)
    bad[len(bad) // 2] ^= 0xFF
    path = models_dir() / ONE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(bad))
    return path, bytes(bad)


@pytest.mark.parametrize("size_delta", [0, -4096])
def test_offline_a_damaged_file_is_named_and_kept(
    http_server: FileServer, served: Served, size_delta: int
) -> None:
    path, bad = damaged_copy(served, size_delta)
    with pytest.raises(OfflineError) as failed:
        pull_recorded(offline=True)
    message = str(failed.value)
    assert f"{path} is damaged" in message and "nothing was deleted" in message
    assert "gptoss-local import FILE" in message and "sha256" in message
    assert path.read_bytes() == bad and not http_server.hits


def test_with_every_source_down_the_damaged_file_stays(
    http_server: FileServer, served: Served
) -> None:
    path, bad = damaged_copy(served)
    for prefix in ("main", "mirror"):
        http_server.fault(prefix, ONE, Fault("status", status=404, times=-1))
    with pytest.raises(StoreError, match="it was left in place"):
        pull_recorded()
    assert path.read_bytes() == bad
    assert model_state(served_spec()).state == "corrupt"  # hashed once, remembered as bad


def test_a_replacement_that_fails_its_hash_does_not_cost_the_old_file(
    http_server: FileServer, served: Served
) -> None:
    path, bad = damaged_copy(served)
    for prefix in ("main", "mirror"):
        http_server.fault(prefix, ONE, Fault("flip", times=-1))
    with pytest.raises(StoreError, match="sha256"):
        pull_recorded()
    assert path.read_bytes() == bad


def test_online_the_damaged_file_is_replaced_by_a_verified_one(
    http_server: FileServer, served: Served
) -> None:
    path, _ = damaged_copy(served)
    result, notices, _ = pull_recorded()
    assert result.path == path and path.read_bytes() == served.files[ONE]
    assert any("is damaged" in n and "stays until one is verified" in n for n in notices)
    assert model_state(served_spec()).state == "verified"


def test_the_cli_says_so_offline_and_exits_2(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    path, bad = damaged_copy(served)
    assert main(["pull", "--offline", "one"]) == 2
    assert "is damaged" in capsys.readouterr().err and path.read_bytes() == bad


def served_spec() -> ModelSpec:
    return catalog.load().model("tiny-one")
