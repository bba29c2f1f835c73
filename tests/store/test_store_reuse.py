"""Reuse before download: verified copies from the Hugging Face, llama.cpp and LM Studio caches."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest
from http_fixture import FileServer
from store_files import REPO, Served, pull_recorded

from gptoss_local.store import adopt
from gptoss_local.store.layout import file_paths
from gptoss_local.store.records import recorded_sha256

ONE = "tiny-one.gguf"


def hf_cache(root: Path, data: bytes, revision: str = "abc123") -> Path:
    """The hub layout: snapshots/<rev>/<file> is a relative symlink into blobs/<sha256>."""
    repo = root / ("models--" + REPO.replace("/", "--"))
    blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(data)
    link = repo / "snapshots" / revision / ONE
    link.parent.mkdir(parents=True)
    link.symlink_to(os.path.relpath(blob, link.parent))
    return blob


@pytest.fixture
def hf_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HF_HOME set to a fresh folder; returns its hub cache (where `hf_cache` puts a copy)."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    return tmp_path / "hf" / "hub"


def test_a_copy_in_the_hf_cache_is_hard_linked_not_downloaded(
    http_server: FileServer, served: Served, hf_hub: Path
) -> None:
    blob = hf_cache(hf_hub, served.files[ONE])
    result, notices, _ = pull_recorded()
    assert result.files[0].how == "linked" and result.files[0].source == "the Hugging Face cache"
    assert result.path.stat().st_ino == blob.stat().st_ino and not http_server.hits
    assert recorded_sha256(file_paths(ONE)) == hashlib.sha256(served.files[ONE]).hexdigest()
    assert any("found tiny-one.gguf in the Hugging Face cache" in n for n in notices)


def test_hf_hub_cache_and_other_revisions_are_searched(
    http_server: FileServer, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    hf_cache(tmp_path / "hub", served.files[ONE], revision="0ld5ha")
    result, _, _ = pull_recorded()
    assert result.files[0].how == "linked" and not http_server.hits


def test_a_copy_with_the_wrong_hash_is_not_used(
    http_server: FileServer, served: Served, hf_hub: Path
) -> None:
    data = bytearray(served.files[ONE])
    data[-1] ^= 1
    hf_cache(hf_hub, bytes(data))
    result, notices, _ = pull_recorded()
    assert result.files[0].how == "downloaded" and len(http_server.hits) == 1
    assert any("does not match the manifest's sha256; not using it" in n for n in notices)


def test_lm_studio_and_llama_cpp_caches(
    http_server: FileServer, served: Served, store_env: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    lms = store_env / ".lmstudio" / "models" / "lmstudio-community" / "tiny-GGUF" / ONE
    lms.parent.mkdir(parents=True)
    lms.write_bytes(served.files[ONE])
    result, _, _ = pull_recorded()
    assert result.files[0].source == "LM Studio's models folder" and not http_server.hits
    result.path.unlink()
    lms.unlink()
    monkeypatch.setenv("LLAMA_CACHE", str(tmp_path / "llama"))
    cached = tmp_path / "llama" / f"{REPO.replace('/', '_')}_{ONE}"
    cached.parent.mkdir()
    cached.write_bytes(served.files[ONE])
    result, _, _ = pull_recorded()
    assert result.files[0].source == "llama.cpp's cache" and not http_server.hits


def test_without_hard_links_the_copy_is_copied_with_progress(
    http_server: FileServer, served: Served, hf_hub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blob = hf_cache(hf_hub, served.files[ONE])

    def no_links(src: object, dst: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(adopt.os, "link", no_links)
    result, _, reports = pull_recorded()
    assert result.files[0].how == "copied" and result.path.stat().st_ino != blob.stat().st_ino
    assert result.path.read_bytes() == served.files[ONE]
    copies = [r for r in reports if r.phase == "copy"]
    assert copies[-1].done == copies[-1].total == len(served.files[ONE])
    monkeypatch.setattr(adopt, "same_device", lambda *_: False)  # another drive: copy at once
    result.path.unlink()
    result, _, reports = pull_recorded()
    assert result.files[0].how == "copied" and not [r for r in reports if r.phase == "check"]


def test_no_reuse_downloads(http_server: FileServer, served: Served, hf_hub: Path) -> None:
    hf_cache(hf_hub, served.files[ONE])
    result, _, _ = pull_recorded(reuse=False)
    assert result.files[0].how == "downloaded" and len(http_server.hits) == 1


def test_offline_a_cached_copy_is_still_adopted(
    http_server: FileServer, served: Served, hf_hub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hf_cache(hf_hub, served.files[ONE])
    result, _, _ = pull_recorded()
    assert result.files[0].how == "linked" and not http_server.hits
