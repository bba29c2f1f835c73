"""Find, adopt or start an Ollama server, and stop only the one we started.

A server already answering at OLLAMA_HOST is adopted when it is Ollama 0.11 or newer (the first
series with gpt-oss). Otherwise `ollama serve` is started on 127.0.0.1 and a free port, logging to
`logs_dir()/ollama.log`. Something else on the port is named and left alone, never killed.

No orphans: the daemon gets its own process group and, on Linux, PR_SET_PDEATHSIG, so it is
sent SIGTERM when gptoss-local dies, even by kill -9. On Windows it is put into a job object with
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE (`win_job`), which Windows closes, killing the daemon, when
gptoss-local's process ends however it ends.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from gptoss_local import paths
from gptoss_local.backends.base import BackendError
from gptoss_local.backends.ollama import spawn as ollama_spawn
from gptoss_local.backends.ollama.probe import (
    DEFAULT_HOST,
    Probe,
    free_port,
    parse_host,
    probe,
)
from gptoss_local.i18n import N_, _, ngettext, translate

Notice = Callable[[str], None]
INSTALL_HINT = N_(
    "Install Ollama 0.11 or newer from https://ollama.com/download (Linux: "
    "`curl -fsSL https://ollama.com/install.sh | sh`), or use the llama.cpp backend: "
    "--backend llamacpp."
)


def find_executable() -> Path:
    """The `ollama` program: PATH first, then where the installers put it.

    Raises:
        BackendError: kind "not_installed" when it is nowhere.
    """
    found = shutil.which("ollama")
    if found:
        return Path(found)
    for candidate in _install_locations():
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise BackendError(_("Ollama is not installed (no `ollama` program found)"),
                       translate(INSTALL_HINT), kind="not_installed")  # fmt: skip


def _install_locations() -> list[Path]:
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        return [Path(local) / "Programs" / "Ollama" / "ollama.exe"] if local else []
    if sys.platform == "darwin":
        return [Path("/Applications/Ollama.app/Contents/Resources/ollama"),
                Path("/usr/local/bin/ollama")]  # fmt: skip
    return [Path("/usr/local/bin/ollama"), Path("/usr/bin/ollama")]


def _ignore(_message: str) -> None:
    """A notice callback that drops the message."""


class OllamaDaemon:
    """An Ollama server to talk to: adopted, or started (and later stopped) by us.

    Args:
        notice: Told about anything the user should know (adoption, restarts, a foreign port).
        start_timeout: Seconds to wait for a started server to answer.
        max_restarts: How many times a crashed daemon we own is started again.
        host: The address to look at first; default OLLAMA_HOST, else 127.0.0.1:11434.
    """

    def __init__(
        self,
        notice: Notice = _ignore,
        start_timeout: float = 20.0,
        max_restarts: int = 2,
        host: str | None = None,
    ) -> None:
        self.notice = notice
        self.start_timeout = start_timeout
        self.max_restarts = max_restarts
        self.restarts = 0
        self.host, self.port = parse_host(host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST)
        self.version: str | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._executable: Path | None = None
        self.log_path = paths.logs_dir() / "ollama.log"

    @property
    def url(self) -> str:
        """The server's base URL, for `ollama.Client(host=...)`."""
        return f"http://{self.host}:{self.port}"

    def ensure(self) -> str:
        """Adopt a running Ollama or start one; returns the base URL.

        Raises:
            BackendError: not installed, too old, or a started daemon that failed.
        """
        if self.process is not None and self.process.poll() is None:
            return self.url
        found = probe(self.host, self.port)
        if found.kind == "ollama":
            self.version = found.version
            self.notice(
                _("using the Ollama {version} server already running at {url}").format(
                    version=found.version, url=self.url
                )
            )
            return self.url
        if found.kind == "old":
            raise BackendError(
                _(
                    "the Ollama server at {url} is version {version}, too old for "
                    "gpt-oss (it needs 0.11 or newer)"
                ).format(url=self.url, version=found.version),
                _(
                    "Update Ollama (https://ollama.com/download) and restart it, or use "
                    "--backend llamacpp."
                ),
                kind="ollama_too_old",
            )
        if found.kind != "closed":
            self.notice(_("{host}:{port} is held by {detail}, not Ollama; leaving it alone "
                          "and starting Ollama on another port").format(
                host=self.host, port=self.port, detail=found.detail))  # fmt: skip
        self._start(find_executable())
        return self.url

    def _start(self, executable: Path) -> None:
        self._executable = executable
        self.host, self.port = "127.0.0.1", free_port()
        env = {**os.environ, "OLLAMA_HOST": f"{self.host}:{self.port}"}
        log_dir = paths.ensure_dir(self.log_path.parent)
        with open(log_dir / self.log_path.name, "ab") as log:
            log.write(f"--- gptoss-local starts {executable} serve on {self.url}\n".encode())
            log.flush()

            self.process = ollama_spawn.spawn([str(executable), "serve"], env, log)
        atexit.register(self.stop)
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        assert self.process is not None
        deadline, delay = time.monotonic() + self.start_timeout, 0.05
        while True:
            code = self.process.poll()
            if code is not None:
                self.process = None
                raise BackendError(_("`ollama serve` exited at start (code {code})").format(
                    code=code), self._log_hint(), kind="daemon_failed")  # fmt: skip
            found: Probe = probe(self.host, self.port, timeout=1.0)
            if found.kind == "ollama":
                self.version = found.version
                return
            if found.kind == "old":
                self.stop()
                raise BackendError(_("the installed Ollama is version {version}, too old "
                                     "for gpt-oss (it needs 0.11 or newer)").format(
                    version=found.version), translate(INSTALL_HINT),
                    kind="ollama_too_old")  # fmt: skip
            if time.monotonic() >= deadline:
                self.stop()
                raise BackendError(
                    _("`ollama serve` did not answer on {url} within {seconds:g} s").format(
                        url=self.url, seconds=self.start_timeout),
                    self._log_hint(), kind="daemon_failed",
                )  # fmt: skip
            time.sleep(delay)
            delay = min(delay * 2, 0.5)  # back off, like Ollama's own CLI polls every 500 ms

    def _log_hint(self, lines: int = 10) -> str:
        try:
            tail = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            tail = []
        shown = "\n".join(f"  {line}" for line in tail[-lines:])
        if not shown:
            return _("See {path}.").format(path=self.log_path)
        return _("Last lines of {path}:").format(path=self.log_path) + "\n" + shown

    def crashed(self) -> bool:
        """Whether a daemon we started has exited."""
        return self.process is not None and self.process.poll() is not None

    def restart_if_crashed(self, wait: float = 0.0) -> bool:
        """Start our crashed daemon again, a bounded number of times; tells the user.

        Args:
            wait: Seconds to give a dying daemon to exit (its sockets close before it is gone).

        Returns:
            True when it was restarted; False when it had not crashed (or is not ours).

        Raises:
            BackendError: it crashed more than `max_restarts` times, or failed to start.
        """
        if self.process is not None and wait > 0:
            # Still running after `wait`: the connection broke, not the daemon.
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(wait)
        if not self.crashed():
            return False
        assert self.process is not None
        code, self.process = self.process.returncode, None
        if self.restarts >= self.max_restarts:
            times = self.restarts + 1
            raise BackendError(ngettext("`ollama serve` crashed (code {code}) {n} time",
                                        "`ollama serve` crashed (code {code}) {n} times",
                                        times).format(code=code, n=times),
                               self._log_hint(), kind="daemon_failed")  # fmt: skip
        self.restarts += 1
        self.notice(_("the Ollama server crashed (code {code}); restarting it "
                      "({n} of {most})").format(
            code=code, n=self.restarts, most=self.max_restarts))  # fmt: skip
        self._start(self._executable or find_executable())
        return True

    def stop(self, grace: float = 5.0) -> None:
        """Stop the daemon if we started it: SIGTERM, then SIGKILL after `grace` seconds."""
        proc, self.process = self.process, None
        if proc is None:
            return
        atexit.unregister(self.stop)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
