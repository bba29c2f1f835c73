"""`models`, `verify` and `rm`: states that survive restarts, re-hashing, deleting after asking."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from http_fixture import FileServer
from store_files import Served, models_dir, options

from gptoss_local import catalog
from gptoss_local.cli import main
from gptoss_local.store.inventory import model_state
from gptoss_local.store.layout import file_paths
from gptoss_local.store.pull import pull_model

ONE = "tiny-one.gguf"
SHARD = "tiny-split-{:05d}-of-00003.gguf"


def state(model: str = "tiny-one") -> str:
    return model_state(catalog.load().model(model)).state


def pulled(model: str = "tiny-one") -> Path:
    cat = catalog.load()
    return pull_model(cat.model(model), cat, options()).path


def place(name: str, data: bytes) -> Path:
    models_dir().mkdir(parents=True, exist_ok=True)
    path = models_dir() / name
    path.write_bytes(data)
    return path


def test_each_state(http_server: FileServer, served: Served) -> None:
    assert state() == "absent"
    place(ONE + ".incomplete", served.files[ONE][: len(served.files[ONE]) // 4])
    assert state() == "partial"
    assert model_state(catalog.load().model("tiny-one")).percent == pytest.approx(25, abs=0.1)
    path = place(ONE, served.files[ONE])
    assert state() == "present"  # right size, not hashed yet
    pulled()  # finds it, hashes it, records it, and removes the leftover partial
    assert state() == "verified" and not file_paths(ONE).part.exists()
    mtime = path.stat().st_mtime
    path.write_bytes(served.files[ONE][:-1] + b"\x00")  # changed since: no longer trusted
    os.utime(path, (mtime + 1, mtime + 1))  # file clocks tick coarsely; make the change visible
    assert state() == "present"
    place(ONE, b"short")
    assert state() == "corrupt"


def test_a_split_model_is_partial_until_every_shard_is_there(served: Served) -> None:
    place(SHARD.format(1), served.files[SHARD.format(1)])
    split = model_state(catalog.load().model("tiny-split"))
    assert split.state == "partial" and [f.state for f in split.files] == [
        "present", "absent", "absent"
    ]  # fmt: skip


def test_models_text_json_and_the_list_alias(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    pulled()
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "tiny-one  " in out and "verified" in out and str(models_dir() / ONE) in out
    assert "tiny-split: download with `gptoss-local pull split`" in out
    assert main(["list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    one = doc["models"][0]
    assert doc["models_dir"] == str(models_dir())
    assert (one["name"], one["state"], one["percent"]) == ("tiny-one", "verified", 100.0)
    assert one["files"][0]["bytes"] == len(served.files[ONE])


def test_verify_rehashes_and_records_a_damaged_file(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    path = pulled()
    assert main(["verify", "--quiet"]) == 0
    assert f"ok         {path}" in capsys.readouterr().out
    data = bytearray(served.files[ONE])
    data[-5] ^= 0xFF
    stat = path.stat()
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # a quiet bit flip
    assert main(["verify", "--quiet", "one"]) == 1
    captured = capsys.readouterr()
    assert "mismatch" in captured.out and "`gptoss-local pull tiny-one` replaces" in captured.err
    assert state() == "corrupt"  # the verdict is recorded
    pulled()  # and pull replaces it
    assert state() == "verified" and path.read_bytes() == served.files[ONE]


def test_verify_says_what_is_missing(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify"]) == 0
    assert "no model is downloaded" in capsys.readouterr().out
    assert main(["verify", "one"]) == 2
    assert "tiny-one is not (completely) downloaded" in capsys.readouterr().err


def test_verify_checks_the_gguf_of_a_split_model(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    pulled("tiny-split")
    assert main(["verify", "--quiet", "split"]) == 0
    assert capsys.readouterr().out.count("ok ") == 3


def test_rm_asks_and_refuses_without_a_terminal(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    pulled()
    place(ONE + ".incomplete", b"x")
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False)
    assert main(["rm", "one"]) == 2
    assert "run `gptoss-local rm --yes" in capsys.readouterr().err
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda question: "n")
    assert main(["rm", "one"]) == 1 and (models_dir() / ONE).exists()
    monkeypatch.setattr("builtins.input", lambda question: "y")
    assert main(["rm", "one"]) == 0
    assert "deleted 3 file(s) of tiny-one" in capsys.readouterr().out
    assert list(models_dir().iterdir()) == [] and state() == "absent"
    assert main(["rm", "--yes", "one"]) == 0
    assert "nothing to delete" in capsys.readouterr().out


def test_rm_yes_says_when_a_hard_link_frees_nothing_and_refuses_during_a_pull(
    served: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / ONE
    src.write_bytes(served.files[ONE])
    assert main(["import", "--quiet", str(src)]) == 0
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as other:
        lock = file_paths(ONE).lock
        lock.write_text(json.dumps({"pid": other.pid, "host": socket.gethostname()}))
        assert main(["rm", "--yes", "one"]) == 2
        other.kill()
    assert f"is running (process {other.pid})" in capsys.readouterr().err
    assert main(["rm", "--yes", "one"]) == 0
    assert "also linked elsewhere, so not freed" in capsys.readouterr().out
    assert src.exists()
