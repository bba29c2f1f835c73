"""Sources and names: https only (http only to this machine), TLS always verified, no traversal."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import time
from pathlib import Path

import pytest
from http_fixture import Fault, FileServer, start_server, stop_server
from installed_cli import assert_refused, gptoss
from store_files import REPO, Served, gguf_file, options, write_manifest

from gptoss_local import catalog
from gptoss_local.catalog import ManifestError
from gptoss_local.store.errors import StoreError
from gptoss_local.store.http_fetch import build_opener, check_url
from gptoss_local.store.layout import file_paths
from gptoss_local.store.pull import pull_model

SHIPPED = Path(__file__).parents[2] / "models" / "manifest.toml"
HF = 'url = "https://huggingface.co/{repo}/resolve/{revision}/{file}"'


def manifest_with(tmp_path: Path, old: str, new: str) -> Path:
    text = SHIPPED.read_text()
    assert old in text
    path = tmp_path / "m.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    "base", ["http://127.0.0.1:8080", "http://localhost", "http://[::1]:9", "http://127.9.9.9"]
)
def test_http_sources_on_this_machine_are_allowed(tmp_path: Path, base: str) -> None:
    path = manifest_with(tmp_path, HF, f'url = "{base}/{{repo}}/{{file}}"')
    assert catalog.load(path).source("huggingface").url.startswith(base)


@pytest.mark.parametrize(
    "base",
    ["http://huggingface.co", "http://10.0.0.1", "http://127.0.0.1.example.com",
     "http://localhost.example", "ftp://127.0.0.1", "http://0.0.0.0"],
)  # fmt: skip
def test_clear_text_sources_off_this_machine_are_refused(tmp_path: Path, base: str) -> None:
    path = manifest_with(tmp_path, HF, f'url = "{base}/{{repo}}/{{file}}"')
    with pytest.raises(ManifestError, match=r"sources.huggingface.url: must be an https://"):
        catalog.load(path)
    with pytest.raises(StoreError, match="only https:// addresses"):
        check_url(base + "/x")


@pytest.mark.parametrize("name", ["../evil.gguf", "sub/evil.gguf", "..", "C:evil", "a\\\\b"])
def test_a_manifest_with_a_traversal_file_name_is_refused(tmp_path: Path, name: str) -> None:
    path = manifest_with(tmp_path, '"gpt-oss-20b-mxfp4.gguf"', f'"{name}"')
    with pytest.raises(ManifestError, match=r"models.gpt-oss-20b.files\[0\].name: unsafe"):
        catalog.load(path)
    with pytest.raises(ValueError, match="unsafe file name"):
        file_paths(name.replace("\\\\", "\\"))


def test_a_redirect_is_followed_with_its_range_but_never_down_to_http(
    http_server: FileServer, served: Served
) -> None:
    name = "tiny-one.gguf"
    mirror = f"http://127.0.0.1:{http_server.port}/mirror/{REPO}/{name}"
    http_server.fault("main", name, Fault("redirect", location=mirror))
    file_paths(name).part.parent.mkdir(parents=True)
    file_paths(name).part.write_bytes(served.files[name][:1000])
    cat = catalog.load()
    assert pull_model(cat.model("tiny-one"), cat, options(source="main")).path.is_file()
    assert [(h.status, h.start) for h in http_server.hits] == [(302, 1000), (206, 1000)]
    http_server.fault("main", name, Fault("redirect", location="http://example.invalid/x"))
    file_paths(name).final.unlink()
    with pytest.raises(StoreError, match="redirected to an address that is not https"):
        pull_model(cat.model("tiny-one"), cat, options(source="main"))


def test_tls_is_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, http_server: FileServer
) -> None:
    handler = next(h for h in build_opener().handlers if hasattr(h, "_context"))
    assert handler._context.verify_mode == ssl.CERT_REQUIRED and handler._context.check_hostname
    if not shutil.which("openssl"):
        pytest.skip("no openssl to make a self-signed certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = start_server(http_server, tls=context)
    data = {"t.gguf": gguf_file(4096, seed=3)}
    http_server.files.update(data)
    url = f"https://127.0.0.1:{server.server_address[1]}/s/{{repo}}/{{file}}"
    manifest = write_manifest(tmp_path / "m.toml", {"tiny-t": data}, {"selfsigned": url})
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(manifest))
    cat = catalog.load()
    try:
        with pytest.raises(StoreError, match="TLS certificate could not be verified"):
            pull_model(cat.model("tiny-t"), cat, options())
    finally:
        stop_server(server)
    assert not http_server.hits  # refused during the handshake, before any request


def test_a_source_with_a_space_is_refused_at_once_naming_the_entry(tmp_path: Path) -> None:
    # Before: the pull tried the address six times over 31 s, as if the network had failed.
    path = manifest_with(tmp_path, HF, 'url = "https://hugging face.co/{repo}/{revision}/{file}"')
    started = time.monotonic()
    done = gptoss("pull", "20b", env={"GPTOSS_LOCAL_MANIFEST": str(path)})
    assert_refused(done, "sources.huggingface.url", "holds a space")
    assert time.monotonic() - started < 20


def test_an_endpoint_with_a_space_is_refused_before_any_try() -> None:
    with pytest.raises(StoreError, match="holds a space"):
        check_url("https://mirror.example/with space/x.gguf")
