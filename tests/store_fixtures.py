"""The model store's fixtures: a loopback file server, the files and manifest it serves, and a
home with no caches, proxies or offline settings. A folder's conftest.py imports those it needs;
`store_env` is autouse: every test of a folder that imports it runs in that home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_fixture import FileServer, start_server, stop_server
from store_files import Served, gguf_file, write_manifest

__all__ = ["fixture_http_server", "fixture_served", "fixture_store_env"]


@pytest.fixture(name="http_server")
def fixture_http_server() -> Iterator[FileServer]:
    """A FileServer running on 127.0.0.1 for the length of one test."""
    owner = FileServer()
    server = start_server(owner)
    yield owner
    stop_server(server)


@pytest.fixture(name="store_env", autouse=True)
def fixture_store_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home with no caches, no proxies and offline mode off."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for name in ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "LLAMA_CACHE",
                 "XDG_CACHE_HOME", "HF_HUB_OFFLINE", "GPTOSS_LOCAL_OFFLINE", "HF_ENDPOINT",
                 "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy",
                 "ALL_PROXY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(name="served")
def fixture_served(
    http_server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Served:
    """Model `tiny-one` (one 3 MB file) and `tiny-split` (three shards), served from sources
    `main` and `mirror` of the test server, listed in a manifest set as GPTOSS_LOCAL_MANIFEST."""
    one = {"tiny-one.gguf": gguf_file(3 << 20, seed=1)}
    split = {f"tiny-split-{i:05d}-of-00003.gguf": gguf_file(1 << 20, 10 + i, (i - 1, 3))
             for i in (1, 2, 3)}  # fmt: skip
    http_server.files.update(one | split)
    manifest = write_manifest(
        tmp_path / "manifest.toml",
        {"tiny-one": one, "tiny-split": split},
        {"main": http_server.url("main"), "mirror": http_server.url("mirror")},
    )
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(manifest))
    return Served(manifest, one | split)
