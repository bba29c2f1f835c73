"""The Ollama daemon manager against the stand-in `ollama` and other listeners, on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fake_ollama.helpers import foreign_http, gone, install, not_http, running_fake

from gptoss_local.backends.base import BackendError
from gptoss_local.backends.ollama import daemon as ollama_daemon
from gptoss_local.backends.ollama.daemon import OllamaDaemon
from gptoss_local.backends.ollama.probe import free_port, parse_host, probe, supports_gpt_oss

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the stand-in needs a shebang")


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return install(tmp_path, monkeypatch)


def test_hosts_and_versions_are_read_like_ollama_reads_them() -> None:
    assert parse_host("127.0.0.1:11500") == ("127.0.0.1", 11500)
    assert parse_host("http://localhost") == ("localhost", 11434)
    assert parse_host("0.0.0.0:8080") == ("127.0.0.1", 8080)
    assert parse_host("[::1]:9000") == ("::1", 9000)
    assert [supports_gpt_oss(v) for v in ("0.11.0", "0.12.3-rc1", "0.10.9", "0.0.0", "x")] == [
        True, True, False, True, False,
    ]  # fmt: skip


def test_no_binary_says_how_to_install_or_use_llamacpp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    monkeypatch.setattr(ollama_daemon, "_install_locations", lambda: [tmp_path / "ollama"])
    with pytest.raises(BackendError) as caught:
        OllamaDaemon().ensure()
    assert caught.value.kind == "not_installed"
    assert "ollama.com/download" in str(caught.value) and "--backend llamacpp" in str(caught.value)


def test_a_running_server_is_adopted_and_left_running(program: Path) -> None:
    port = free_port()
    with running_fake(program, port) as theirs:
        notices: list[str] = []
        daemon = OllamaDaemon(notices.append, host=f"127.0.0.1:{port}")
        assert daemon.ensure() == f"http://127.0.0.1:{port}"
        assert daemon.process is None and daemon.version == "0.12.3"
        assert "already running" in notices[0]
        daemon.stop()
        assert theirs.poll() is None and probe("127.0.0.1", port).kind == "ollama"


def test_an_old_server_is_refused_with_a_message(program: Path) -> None:
    port = free_port()
    with running_fake(program, port, FAKE_OLLAMA_VERSION="0.9.6") as theirs:
        with pytest.raises(BackendError) as caught:
            OllamaDaemon(host=f"127.0.0.1:{port}").ensure()
        assert caught.value.kind == "ollama_too_old"
        assert "0.9.6" in str(caught.value) and "0.11" in str(caught.value)
        assert theirs.poll() is None


def test_an_old_installed_binary_is_refused_and_stopped(
    program: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OLLAMA_VERSION", "0.10.1")
    daemon = OllamaDaemon()
    with pytest.raises(BackendError, match=r"0\.10\.1") as caught:
        daemon.ensure()
    assert caught.value.kind == "ollama_too_old" and daemon.process is None


@pytest.mark.parametrize("listener", [foreign_http, not_http])
def test_a_port_held_by_something_else_is_named_and_left_alone(program: Path, listener) -> None:
    with listener() as port:
        expected = "foreign_http" if listener is foreign_http else "not_http"
        assert probe("127.0.0.1", port).kind == expected
        notices: list[str] = []
        daemon = OllamaDaemon(notices.append, host=f"127.0.0.1:{port}")
        try:
            url = daemon.ensure()
            assert daemon.process is not None and url != f"http://127.0.0.1:{port}"
            assert "not Ollama" in notices[0] and "leaving it alone" in notices[0]
        finally:
            daemon.stop()
        assert probe("127.0.0.1", port).kind == expected  # still there, never killed


def test_we_start_a_daemon_log_to_our_folder_and_stop_it(program: Path) -> None:
    daemon = OllamaDaemon()
    url = daemon.ensure()
    assert (
        daemon.process is not None
        and daemon.version == "0.12.3"
        and url.startswith("http://127.0.0.1:")
    )
    assert daemon.process is not None
    pid = daemon.process.pid
    assert os.getpgid(pid) == pid  # its own process group
    daemon.stop()
    assert gone(pid) and probe(daemon.host, daemon.port).kind == "closed"
    assert "Listening on" in daemon.log_path.read_text()


def test_a_daemon_that_exits_at_start_shows_its_log(
    program: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OLLAMA_EXIT_AT_START", "1")
    with pytest.raises(BackendError) as caught:
        OllamaDaemon().ensure()
    assert caught.value.kind == "daemon_failed" and "exited at start" in str(caught.value)
    assert "address already in use" in str(caught.value)  # the last log lines


def test_a_daemon_that_never_answers_times_out_and_is_stopped(
    program: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OLLAMA_NEVER_HEALTHY", "1")
    daemon = OllamaDaemon(start_timeout=1.0)
    spawned: list[int] = []
    real = ollama_daemon.OllamaDaemon._wait_healthy

    def watch(self: OllamaDaemon) -> None:
        assert self.process is not None
        spawned.append(self.process.pid)
        real(self)

    monkeypatch.setattr(ollama_daemon.OllamaDaemon, "_wait_healthy", watch)
    with pytest.raises(BackendError) as caught:
        daemon.ensure()
    assert "did not answer" in str(caught.value) and "waiting for GPU discovery" in str(
        caught.value
    )
    assert gone(spawned[0]) and daemon.process is None


OWNER = textwrap.dedent(
    """
    import threading, time
    from gptoss_local.backends.ollama.daemon import OllamaDaemon
    daemon = OllamaDaemon()
    # Started from a thread that then ends: the daemon must outlive the thread, not the process.
    worker = threading.Thread(target=daemon.ensure)
    worker.start(); worker.join()
    print(daemon.process.pid, flush=True)
    time.sleep(60)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_killing_gptoss_local_with_sigkill_leaves_no_orphan(program: Path) -> None:
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout is not None
        pid = int(owner.stdout.readline())
        assert not gone(pid, within=1.0)  # alive after its starting thread ended
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        assert gone(pid, within=5.0)
    finally:
        owner.kill()
        owner.wait()
