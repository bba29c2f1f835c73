"""argparse's own words ("usage:", "options", its errors) follow --lang like ours do, and
English stays argparse's own."""

from __future__ import annotations

import argparse
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gptoss_local.commands.argparse_words import WORDS

ENGLISH = ("usage:", "options:", "positional arguments:", "show this help message and exit")
ERRORS = ("usage:", "error:", "invalid choice", "the following arguments are required",
          "unrecognized arguments", "expected one argument")  # fmt: skip


def gptoss(home: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(home), "LANG": "C"}
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "GPTOSS_LOCAL_LANG"):
        env.pop(name, None)
    command = [sys.executable, "-m", "gptoss_local", *argv]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize(
    ("language", "usage", "options"), [("zh_CN", "用法：", "选项:"), ("pt_BR", "uso: ", "opções:")]
)
def test_help_has_no_english_words_of_argparse(
    isolated_home: Path, language: str, usage: str, options: str
) -> None:
    for argv in (["--help"], ["run", "--help"]):
        done = gptoss(isolated_home, "--lang", language, *argv)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(usage) and options in done.stdout
        assert not [word for word in ENGLISH if word in done.stdout], done.stdout


@pytest.mark.parametrize("language", ["zh_CN", "pt_BR"])
@pytest.mark.parametrize(
    "argv", [["run", "--effort", "x"], ["chats", "export"], ["pull", "--bogus"], ["run", "--seed"]]
)
def test_argument_errors_have_no_english_words_of_argparse(
    isolated_home: Path, language: str, argv: list[str]
) -> None:
    done = gptoss(isolated_home, "--lang", language, *argv)
    assert done.returncode == 2 and done.stderr
    assert not [word for word in ERRORS if word in done.stderr], done.stderr


def test_english_is_argparse_own(isolated_home: Path) -> None:
    done = gptoss(isolated_home, "--lang", "en", "--help")
    assert done.stdout.startswith("usage: gptoss-local") and "options:" in done.stdout
    assert "show this help message and exit" in done.stdout
    wrong = gptoss(isolated_home, "run", "--effort", "x")
    assert "gptoss-local run: error: argument --effort: invalid choice: 'x'" in wrong.stderr


def test_the_words_are_those_this_python_argparse_looks_up() -> None:
    source = inspect.getsource(argparse)
    unknown = [word for word in WORDS if word.replace("\n", "\\n") not in source]
    assert not unknown
