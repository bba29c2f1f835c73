"""The first-run tests download from the loopback file server in a fake home with no caches or
proxies (the store's fixtures), share the catalog that serves the tiny real model, and build the
app as the TUI tests do."""

from __future__ import annotations

from pathlib import Path

import pytest
from first_run_helpers import serve_tiny
from http_fixture import FileServer
from store_fixtures import fixture_http_server, fixture_store_env
from tui_fixtures import fixture_app_on, fixture_history

from gptoss_local.catalog import Catalog

__all__ = ["fixture_app_on", "fixture_history", "fixture_http_server", "fixture_store_env"]


@pytest.fixture(name="cat")
def fixture_cat(http_server: FileServer, tiny_gguf: Path, tmp_path: Path) -> Catalog:
    """Model gpt-oss-tiny (the tiny real GGUF) served from sources `main` and `mirror`."""
    return serve_tiny(http_server, tiny_gguf, tmp_path / "manifest.toml")
