"""`gptoss-local import PATH`: a hand-downloaded file is verified before it is adopted."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_files import Served, models_dir

from gptoss_local import catalog
from gptoss_local.cli import main
from gptoss_local.store import adopt
from gptoss_local.store.errors import StoreError
from gptoss_local.store.gguf_check import GgufError
from gptoss_local.store.importer import import_file
from gptoss_local.store.inventory import model_state

ONE = "tiny-one.gguf"


def downloaded(tmp_path: Path, data: bytes, name: str = ONE) -> Path:
    path = tmp_path / "Downloads" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return path


def test_import_links_a_verified_file_and_the_model_is_verified(
    served: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = downloaded(tmp_path, served.files[ONE])
    assert main(["import", "--quiet", str(src)]) == 0
    out = capsys.readouterr().out
    assert "tiny-one.gguf verified and hard-linked" in out and str(models_dir()) in out
    assert (models_dir() / ONE).stat().st_ino == src.stat().st_ino
    assert model_state(catalog.load().model("tiny-one")).state == "verified"
    assert main(["import", "--quiet", str(src)]) == 0
    assert "already in place" in capsys.readouterr().out


def test_a_renamed_file_is_matched_by_size_and_installed_under_its_real_name(
    served: Served, tmp_path: Path
) -> None:
    src = downloaded(tmp_path, served.files[ONE], name="download (1).gguf")
    result = import_file(src, catalog.load(), move=True)
    assert result.path == models_dir() / ONE and result.how == "moved" and not src.exists()


def test_one_shard_of_a_split_model_is_imported_and_the_rest_named(
    served: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = "tiny-split-00002-of-00003.gguf"
    assert main(["import", "--quiet", str(downloaded(tmp_path, served.files[name], name))]) == 0
    err = capsys.readouterr().err
    assert "still needs: tiny-split-00001-of-00003.gguf, tiny-split-00003-of-00003.gguf" in err


def test_a_cross_drive_import_is_copied(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adopt, "same_device", lambda *_: False)
    src = downloaded(tmp_path, served.files[ONE])
    result = import_file(src, catalog.load(), move=True)
    assert result.how == "moved" and not src.exists()
    assert result.path.read_bytes() == served.files[ONE]


def test_a_wrong_hash_is_refused_and_nothing_is_left(served: Served, tmp_path: Path) -> None:
    data = bytearray(served.files[ONE])
    data[len(data) // 2] ^= 0xFF
    src = downloaded(tmp_path, bytes(data))
    with pytest.raises(StoreError, match="right size but not the manifest's sha256"):
        import_file(src, catalog.load())
    assert sorted(p.name for p in models_dir().iterdir()) == []
    assert src.exists()


def test_a_wrong_size_or_unknown_file_is_refused_with_the_expected_sizes(
    served: Served, tmp_path: Path
) -> None:
    with pytest.raises(StoreError, match=r"is 10 bytes, but the manifest's tiny-one.gguf is"):
        import_file(downloaded(tmp_path, bytes(10)), catalog.load())
    with pytest.raises(StoreError, match=r"not a file of the manifest. Expected one of:\n  - tiny"):
        import_file(downloaded(tmp_path, bytes(10), "other.gguf"), catalog.load())


def test_a_file_that_is_not_a_gguf_is_refused_before_it_is_hashed(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"<html>" + served.files[ONE][6:]
    monkeypatch.setattr(adopt, "sha256_file", lambda *_: pytest.fail("hashed"))
    with pytest.raises(GgufError, match="not a GGUF file"):
        import_file(downloaded(tmp_path, data), catalog.load())


def test_import_of_a_folder_is_refused(served: Served, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is not a file"):
        import_file(tmp_path, catalog.load())
