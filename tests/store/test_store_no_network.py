"""No network at all (every host name fails to resolve): `pull` and the first-run download give up
at once, one try per source, and say how to bring the file from another PC with `import`."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path

import pytest
from first_run_helpers import FILE, MODEL, setup_for
from installed_cli import assert_refused, gptoss
from store_files import FAST, options, write_manifest
from textual.widgets import Static
from tui_helpers import open_history, scripted_app, wait_for

from gptoss_local import catalog
from gptoss_local.catalog import Catalog
from gptoss_local.store.download import RetryPolicy
from gptoss_local.store.errors import NoNetworkError
from gptoss_local.store.pull import pull_model
from gptoss_local.tui.first_run import FirstRunScreen

SOURCES = {
    "huggingface": "https://huggingface.co/{repo}/resolve/{revision}/{file}",
    "modelscope": "https://modelscope.cn/models/{repo}/resolve/master/{file}",
}
DATA = b"GGUF" + bytes(60_000)

# Loaded by the installed command's Python: every name lookup fails as it does with no network.
SITECUSTOMIZE = """
import os, socket

def getaddrinfo(host, *args, **kwargs):
    with open(os.environ["GPTOSS_TEST_DNS_LOG"], "a") as log:
        log.write(f"{host}\\n")
    raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

socket.getaddrinfo = getaddrinfo
"""


@pytest.fixture
def cat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Catalog:
    """Model gpt-oss-tiny from two real-looking sources, set as GPTOSS_LOCAL_MANIFEST."""
    manifest = write_manifest(tmp_path / "manifest.toml", {MODEL: {FILE: DATA}}, SOURCES)
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(manifest))
    return catalog.load(manifest)


@pytest.fixture
def no_dns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Name lookups in this process fail; returns the hosts that were looked up."""
    looked_up: list[str] = []

    def getaddrinfo(host: str, *args: object, **kwargs: object) -> None:
        looked_up.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return looked_up


def assert_says_how_to_import(message: str) -> None:
    sha = hashlib.sha256(DATA).hexdigest()
    assert "seems to have no internet connection" in message
    assert "huggingface.co, modelscope.cn" in message
    assert f"{FILE} ({len(DATA):,} bytes, sha256 {sha})" in message
    assert "gptoss-local import FILE" in message


def test_pull_tries_each_source_once_and_never_waits(cat: Catalog, no_dns: list[str]) -> None:
    waits: list[float] = []
    policy = RetryPolicy(attempts=6, backoff=1.0, timeout=5.0, sleep=waits.append)
    with pytest.raises(NoNetworkError) as failed:
        pull_model(cat.model(MODEL), cat, options(policy=policy))
    assert no_dns == ["huggingface.co", "modelscope.cn"] and waits == []
    assert_says_how_to_import(str(failed.value))


def test_a_source_that_resolves_but_fails_is_reported_as_usual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only unresolvable names everywhere mean "no network": one loopback source that answers
    # 404 keeps the ordinary per-source report.
    sources = {"local": "http://127.0.0.1:9/{repo}/{file}", **SOURCES}
    manifest = write_manifest(tmp_path / "manifest.toml", {MODEL: {FILE: DATA}}, sources)
    cat = catalog.load(manifest)
    real = socket.getaddrinfo

    def lookup(host: str, *args: object, **kwargs: object) -> object:
        if host == "127.0.0.1":
            return real(host, *args, **kwargs)  # type: ignore[arg-type]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    with pytest.raises(Exception) as failed:
        pull_model(cat.model(MODEL), cat, options(policy=FAST))
    assert not isinstance(failed.value, NoNetworkError)
    assert "could not download" in str(failed.value)


def test_the_installed_pull_says_how_to_import(cat: Catalog, tmp_path: Path) -> None:
    site = tmp_path / "no-dns"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "dns.log"
    done = gptoss("pull", "tiny",
                  env={"PYTHONPATH": str(site), "GPTOSS_TEST_DNS_LOG": str(log)})  # fmt: skip
    assert_refused(done)
    assert_says_how_to_import(done.stderr)
    assert log.read_text().split() == ["huggingface.co", "modelscope.cn"]
    assert "retrying" not in done.stderr


async def test_the_first_run_screen_says_how_to_import(
    tmp_path: Path, cat: Catalog, no_dns: list[str]
) -> None:
    app = scripted_app(open_history(tmp_path), setup=setup_for(cat))
    async with app.run_test(size=(100, 50)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, FirstRunScreen), what="first run")
        await pilot.click("#start")
        problem = lambda: str(app.screen.query_one("#problem", Static).render())  # noqa: E731
        await wait_for(pilot, lambda: "gptoss-local import" in problem(), 20, "the advice")
        assert_says_how_to_import(" ".join(problem().split()))
    assert no_dns == ["huggingface.co", "modelscope.cn"]
