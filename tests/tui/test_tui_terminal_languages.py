"""The first run and a chat in a real terminal (tmux) with a Chinese and a Brazilian locale, at
80×24: the words are the catalog's, and the status bar and the set-up screen's buttons still fit."""

from __future__ import annotations

import gettext
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from first_run_helpers import FILE
from http_fixture import FileServer
from terminal_helpers import open_session, pane, quit_chat, until
from test_tui_terminal_first_run import _manifest

from gptoss_local import i18n
from gptoss_local.tui.reply_view import NO_ANSWER

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


def _in(language: str, english: str) -> str:
    """`english` in `language`, without changing the language of this process's lookups."""
    catalog = gettext.translation(i18n.DOMAIN, i18n.LOCALE_DIR, [language], fallback=True)
    return catalog.gettext(english)


@pytest.mark.parametrize("language", ["zh_CN", "pt_BR"])
def test_first_run_and_a_chat_in_the_users_language(
    language: str, http_server: FileServer, tiny_gguf: Path, isolated_home: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    data = tiny_gguf.read_bytes()
    http_server.files[FILE] = data
    manifest = _manifest(tmp_path / "manifest.toml", http_server, data)
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "TERM": "xterm-256color",
           "GPTOSS_LOCAL_MANIFEST": str(manifest), "LANG": f"{language}.UTF-8"}  # fmt: skip
    unset = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "GPTOSS_LOCAL_LANG")
    env.update(dict.fromkeys(unset, ""))  # empty: not set (tmux's server may hold others)
    session = f"gptoss-lang-{uuid.uuid4().hex[:8]}"
    marker = tmp_path / "exit"
    command = f"{sys.executable} -m gptoss_local chat; echo $? > {marker}"
    keep = ("GPTOSS_LOCAL_HOME", "GPTOSS_LOCAL_MANIFEST", "LANG", *unset)
    open_session(session, command, env, keep, "80x24")
    welcome = _in(language, "Welcome to gptoss-local")
    try:
        until(lambda: welcome in pane(session), "the first-run screen in its language", 60,
              session)  # fmt: skip
        subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)

        def bar() -> list[str]:  # the status bar: the lines above the footer, after the input
            lines = pane(session).rstrip("\n").splitlines()
            below = max(i for i, line in enumerate(lines) if "▁▁▁" in line)
            return [line for line in lines[below + 1 : -1] if line.strip()]

        until(lambda: any("llamacpp" in line for line in bar()), "the model loaded", 90,
              session)  # fmt: skip
        subprocess.run(["tmux", "send-keys", "-t", session, "hello there", "Enter"], check=True)
        no_answer = _in(language, NO_ANSWER)  # a random model may end at its first token
        ended = lambda: any("tok/s" in line for line in bar()) or no_answer in pane(session)  # noqa: E731
        until(ended, "the end of the reply", 60, session)
        effort = _in(language, "effort {effort}").format(effort=_in(language, "medium"))
        shown = bar()
        assert any(effort in line for line in shown), pane(session)  # the catalog's words
        assert not any(line.rstrip().endswith("…") for line in shown), pane(session)  # not cut
        quit_chat(session, marker)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
