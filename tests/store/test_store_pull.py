"""`pull` against a real loopback server: resume, retries, restarts, bad bodies, mirrors, shards."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from http_fixture import Fault, FileServer
from store_files import FAST, Served, gguf_file, models_dir, pull_recorded, write_manifest

from gptoss_local.errors import UnknownSourceError
from gptoss_local.store.download import RetryPolicy
from gptoss_local.store.errors import StoreError
from gptoss_local.store.layout import file_paths
from gptoss_local.store.progress import Progress
from gptoss_local.store.records import recorded_sha256

ONE = "tiny-one.gguf"


def pull(model: str = "tiny-one", **changes: object) -> tuple[Path, list[str], list[Progress]]:
    result, notices, reports = pull_recorded(model, **changes)
    return result.path, notices, reports


def test_a_clean_pull_is_verified_recorded_and_leaves_no_partial(
    http_server: FileServer, served: Served
) -> None:
    path, _, reports = pull()
    assert path == models_dir() / ONE and path.read_bytes() == served.files[ONE]
    assert recorded_sha256(file_paths(ONE)) == hashlib.sha256(served.files[ONE]).hexdigest()
    assert sorted(p.name for p in models_dir().iterdir()) == [f".{ONE}.verified.json", ONE]
    downloads = [r for r in reports if r.phase == "download"]
    assert downloads[-1].done == downloads[-1].total == len(served.files[ONE])
    assert http_server.sent[ONE] == len(served.files[ONE])
    again, notices, _ = pull()  # a second pull finds it verified and fetches nothing
    assert again == path and http_server.sent[ONE] == len(served.files[ONE]) and not notices


def test_a_dropped_connection_resumes_with_range(http_server: FileServer, served: Served) -> None:
    size = len(served.files[ONE])
    http_server.fault("main", ONE, Fault("drop", at=0.4))
    path, notices, _ = pull()
    assert path.read_bytes() == served.files[ONE]
    first, second = http_server.hits
    assert first.start == 0 and second.status == 206
    assert abs(second.start - 0.4 * size) <= 64 * 1024  # resumed where the drop happened
    assert http_server.sent[ONE] == size  # not a byte fetched twice
    assert any("connection closed" in n and "retrying" in n for n in notices)


def test_a_200_answer_to_a_range_request_starts_over(
    http_server: FileServer, served: Served
) -> None:
    http_server.fault("main", ONE, Fault("drop", at=0.5))
    http_server.fault("main", ONE, Fault("ignore_range"))
    path, notices, _ = pull()
    assert path.read_bytes() == served.files[ONE]
    assert [h.status for h in http_server.hits] == [200, 200]
    assert any("ignored the request to resume" in n for n in notices)


def test_flipped_bytes_delete_the_partial_and_name_the_source(
    http_server: FileServer, served: Served
) -> None:
    http_server.fault("main", ONE, Fault("flip"))
    path, notices, _ = pull()  # the mirror serves the right bytes
    assert path.read_bytes() == served.files[ONE]
    assert any("as served by main has sha256" in n and "partial download was deleted" in n
               and "switching to mirror" in n for n in notices)  # fmt: skip
    http_server.fault("main", ONE, Fault("flip"))
    path.unlink()
    with pytest.raises(StoreError, match="as served by main has sha256") as failed:
        pull(source="main")
    assert "could not download tiny-one.gguf" in str(failed.value)
    assert not file_paths(ONE).part.exists() and not path.exists()


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (Fault("empty", times=-1), "served an empty body"),
        (Fault("html", times=-1), "served a web page"),
        (Fault("status", status=404, times=-1), "HTTP 404"),
        (Fault("status", status=403, times=-1), "HTTP 403"),
    ],
)
def test_final_errors_are_not_retried(
    http_server: FileServer, served: Served, fault: Fault, reason: str
) -> None:
    http_server.fault("main", ONE, fault)
    with pytest.raises(StoreError, match=reason) as failed:
        pull(source="main")
    assert len(http_server.hits) == 1 and "main:" in str(failed.value)
    assert not (models_dir() / ONE).exists()


def test_a_5xx_is_retried_a_bounded_number_of_times(
    http_server: FileServer, served: Served
) -> None:
    http_server.fault("main", ONE, Fault("status", status=503, times=2))
    path, notices, _ = pull(source="main")
    assert path.read_bytes() == served.files[ONE]
    assert sum("HTTP 503" in n and "retrying" in n for n in notices) == 2
    http_server.fault("main", ONE, Fault("status", status=503, times=-1))
    path.unlink()
    with pytest.raises(StoreError, match="gave up after 3 failed attempts in a row: HTTP 503"):
        pull(source="main")
    assert [h.status for h in http_server.hits[-3:]] == [503, 503, 503]


def test_backoff_doubles_up_to_its_cap(http_server: FileServer, served: Served) -> None:
    waits: list[float] = []
    policy = RetryPolicy(attempts=5, backoff=0.5, max_backoff=1.5, sleep=waits.append)
    http_server.fault("main", ONE, Fault("status", status=500, times=4))
    pull(source="main", policy=policy)
    assert waits == [0.5, 1.0, 1.5, 1.5]


def test_a_stalled_server_times_out_and_the_retry_resumes(
    http_server: FileServer, served: Served
) -> None:
    http_server.fault("main", ONE, Fault("stall", at=0.3, seconds=1.5))
    policy = RetryPolicy(attempts=3, backoff=0, timeout=0.3, chunk=64 * 1024, sleep=lambda _: 0)
    path, notices, _ = pull(source="main", policy=policy)
    assert path.read_bytes() == served.files[ONE]
    assert any("timed out" in n for n in notices) and http_server.hits[1].start > 0


def test_a_failing_mirror_switches_to_the_next_and_says_so(
    http_server: FileServer, served: Served
) -> None:
    http_server.fault("main", ONE, Fault("status", status=502, times=-1))
    path, notices, _ = pull()
    assert path.read_bytes() == served.files[ONE]
    assert any("main: gave up" in n and "switching to mirror" in n for n in notices)
    assert http_server.hits[-1].path.startswith("/mirror/")


def test_the_preferred_source_goes_first(http_server: FileServer, served: Served) -> None:
    pull(preferred="mirror")
    assert [h.path.split("/")[1] for h in http_server.hits] == ["mirror"]


def test_an_unknown_source_lists_the_choices(served: Served) -> None:
    choices = "unknown source 'nope'; choose one of main, mirror"
    with pytest.raises(UnknownSourceError, match=choices):
        pull(source="nope")


def test_every_shard_of_a_split_model_with_overall_progress(
    http_server: FileServer, served: Served
) -> None:
    shards = [n for n in served.names if n.startswith("tiny-split")]
    http_server.fault("main", shards[1], Fault("drop", at=0.5))
    path, _, reports = pull("tiny-split")
    assert path.name == shards[0]
    for name in shards:
        assert (models_dir() / name).read_bytes() == served.files[name]
    overall = [r for r in reports if r.phase == "download"]
    total = sum(len(served.files[n]) for n in shards)
    assert {r.total for r in overall} == {total} and overall[-1].done == total
    assert [r.done for r in overall] == sorted(r.done for r in overall)


def test_not_enough_disk_is_refused_before_starting_with_the_numbers(
    http_server: FileServer, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gptoss_local.store.pull.free_bytes", lambda _: 1 << 20)
    with pytest.raises(StoreError, match=r"needs 3\.0 MiB more \(3,14.,... bytes\) plus 0 bytes"):
        pull()
    assert not http_server.hits


def test_hf_endpoint_replaces_the_base_of_the_huggingface_source(
    http_server: FileServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = {"m.gguf": gguf_file(1 << 16, seed=5)}
    http_server.files.update(data)
    hf = "https://huggingface.example/{repo}/resolve/{revision}/{file}"
    manifest = write_manifest(tmp_path / "m.toml", {"tiny-m": data}, {"huggingface": hf})
    text = manifest.read_text().replace(hf + '"', hf + '"\nendpoint_env = "HF_ENDPOINT"')
    manifest.write_text(text)
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(manifest))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{http_server.port}")
    path, _, _ = pull("tiny-m")
    assert path.read_bytes() == data["m.gguf"]
    assert http_server.hits[0].path == "/test-org/tiny-GGUF/resolve/abc123/m.gguf"
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.example")  # clear text off this machine
    path.unlink()
    with pytest.raises(StoreError, match="only https:// addresses are used"):
        pull("tiny-m")


def test_a_file_that_is_not_a_gguf_is_refused_at_the_first_bytes(
    http_server: FileServer, served: Served
) -> None:
    pointer = b"version https://git-lfs.github.com/spec/v1\n"
    http_server.files[ONE] = pointer + bytes(len(served.files[ONE]) - len(pointer))
    with pytest.raises(StoreError, match="not a GGUF file"):
        pull(source="main")
    assert FAST.attempts == 3 and len(http_server.hits) == 1


def test_proxies_come_from_the_environment(
    http_server: FileServer, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The source names a port where nothing listens; only the proxy (the test server) answers.
    sources = {"viaproxy": "http://localhost:1/main/{repo}/{file}"}
    one = {ONE: served.files[ONE]}
    manifest = write_manifest(tmp_path / "p.toml", {"tiny-one": one}, sources)
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(manifest))
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{http_server.port}")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    path, _, _ = pull()
    assert path.read_bytes() == served.files[ONE]
    assert http_server.hits[0].path == f"http://localhost:1/main/test-org/tiny-GGUF/{ONE}"
