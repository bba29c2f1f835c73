"""Offline mode, and the guarantee that nothing but `pull` opens a network connection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from http_fixture import FileServer
from store_files import Served, models_dir, options

from gptoss_local import catalog
from gptoss_local.cli import main
from gptoss_local.store.errors import OfflineError
from gptoss_local.store.offline import offline_reason
from gptoss_local.store.pull import pull_model

# Loaded by every Python started with this folder on PYTHONPATH: records each attempt to reach
# the network (a connect other than AF_UNIX, a name lookup) and refuses it.
SITECUSTOMIZE = """
import os, socket

_LOG = os.environ["GPTOSS_TEST_NET_LOG"]
_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def _blocked(what):
    with open(_LOG, "a") as f:
        f.write(what + "\\n")


def _is_unix(sock):
    return sock.family == getattr(socket, "AF_UNIX", None)


def connect(self, address):
    if _is_unix(self):
        return _connect(self, address)
    _blocked(f"connect {address!r}")
    raise ConnectionRefusedError(111, "network blocked by the test")


def connect_ex(self, address):
    if _is_unix(self):
        return _connect_ex(self, address)
    _blocked(f"connect_ex {address!r}")
    return 111


def create_connection(address, *args, **kwargs):
    _blocked(f"create_connection {address!r}")
    raise ConnectionRefusedError(111, "network blocked by the test")


def getaddrinfo(host, *args, **kwargs):
    _blocked(f"getaddrinfo {host!r}")
    raise socket.gaierror(-3, "name lookups blocked by the test")


socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
socket.create_connection, socket.getaddrinfo = create_connection, getaddrinfo
"""


@pytest.mark.parametrize(
    ("flag", "env", "reason"),
    [
        (True, {}, "--offline"),
        (False, {"GPTOSS_LOCAL_OFFLINE": "1"}, "GPTOSS_LOCAL_OFFLINE=1"),
        (False, {"HF_HUB_OFFLINE": "true"}, "HF_HUB_OFFLINE=true"),
    ],
)
def test_offline_pull_fails_at_once_naming_the_files_and_the_folder(
    http_server: FileServer, served: Served, flag: bool, env: dict[str, str], reason: str
) -> None:
    cat = catalog.load()
    with pytest.raises(OfflineError) as failed:
        pull_model(cat.model("tiny-split"), cat, options(offline=flag, env=env))
    message = str(failed.value)
    assert f"offline mode is on ({reason})" in message and str(models_dir()) in message
    assert all(f"tiny-split-0000{i}-of-00003.gguf" in message for i in (1, 2, 3))
    assert "gptoss-local import FILE" in message and not http_server.hits


def test_offline_values() -> None:
    assert offline_reason(env={"HF_HUB_OFFLINE": "0", "GPTOSS_LOCAL_OFFLINE": ""}) is None
    assert offline_reason(env={"GPTOSS_LOCAL_OFFLINE": " YES "}) == "GPTOSS_LOCAL_OFFLINE=YES"


def test_offline_cli_exit_code(
    http_server: FileServer, served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pull", "--offline", "one"]) == 2
    assert "offline mode is on (--offline)" in capsys.readouterr().err and not http_server.hits


@pytest.fixture
def blocked(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose Pythons record and refuse every network attempt, and the log."""
    site = tmp_path / "netblock"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "net.log"
    log.touch()
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "GPTOSS_TEST_NET_LOG": str(log)}, log


def gptoss(extra: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "gptoss_local", *argv]
    env = {**os.environ, **extra}  # read now: fixtures may have set the manifest since
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def test_the_network_block_catches_a_connection(blocked: tuple[dict[str, str], Path]) -> None:
    env, log = blocked
    code = "import urllib.request as u\ntry: u.urlopen('http://127.0.0.1:9/')\nexcept OSError: pass"
    subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, check=True, timeout=60)
    assert "127.0.0.1" in log.read_text()


def test_nothing_but_pull_opens_a_connection(
    blocked: tuple[dict[str, str], Path], tiny_gguf: Path, served: Served
) -> None:
    env, log = blocked
    runs = [
        ("doctor",),
        ("doctor", "--json"),
        ("models",),
        ("list", "--json"),
        ("verify",),
        ("run", "--model-path", str(tiny_gguf), "--max-tokens", "4", "hi"),
    ]
    for argv in runs:
        done = gptoss(env, *argv)
        assert done.returncode == 0, (argv, done.stderr)
    offline = gptoss(env, "pull", "--offline", "one")
    assert offline.returncode == 2 and "offline mode is on" in offline.stderr
    env_offline = {**env, "GPTOSS_LOCAL_OFFLINE": "1"}
    assert gptoss(env_offline, "pull", "one").returncode == 2
    assert log.read_text() == ""
