"""Bad input of every kind gets a message and exit code 2, never a traceback: each case runs the
installed `gptoss-local` command as a user would."""

from __future__ import annotations

from pathlib import Path

import pytest
from installed_cli import assert_refused, gptoss, read_only
from store_files import gguf_file, write_manifest

from gptoss_local import paths

SHIPPED = Path(__file__).parent.parent / "models" / "manifest.toml"


@pytest.fixture
def tiny_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A manifest model `tiny-one` (a valid 1 MiB GGUF) set as GPTOSS_LOCAL_MANIFEST; returns
    the file, not yet in the models folder."""
    data = gguf_file(1 << 20, seed=3)
    source = tmp_path / "tiny-one.gguf"
    source.write_bytes(data)
    manifest = write_manifest(tmp_path / "manifest.toml", {"tiny-one": {source.name: data}},
                              {"main": "https://example.org/{repo}/{file}"})  # fmt: skip
    monkeypatch.setenv("GPTOSS_LOCAL_MANIFEST", str(manifest))
    return source


def shipped_manifest_with(tmp_path: Path, old: str, new: str) -> dict[str, str]:
    """The environment for a copy of the shipped manifest with `old` replaced by `new`."""
    text = SHIPPED.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "manifest.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return {"GPTOSS_LOCAL_MANIFEST": str(path)}


def test_verify_on_a_read_only_models_folder_still_verifies(tiny_model: Path) -> None:
    folder = paths.ensure_dir(paths.models_dir())
    (folder / tiny_model.name).write_bytes(tiny_model.read_bytes())
    with read_only(folder):
        done = gptoss("verify", "one")
    assert_refused(done, "could not be saved", "read-only", code=0)
    assert "ok" in done.stdout


def test_import_into_a_read_only_models_folder(tiny_model: Path) -> None:
    folder = paths.ensure_dir(paths.models_dir())
    with read_only(folder):
        done = gptoss("import", str(tiny_model))
    assert_refused(done, "cannot write into the models folder", str(folder))


@pytest.mark.parametrize("command", ["models", "verify", "pull", "chats"])
def test_a_home_that_is_a_file(tmp_path: Path, command: str) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a folder")
    done = gptoss(command, env={"GPTOSS_LOCAL_HOME": str(home)})
    assert_refused(done, f"GPTOSS_LOCAL_HOME={home} is a file, not a folder")


def test_stdin_that_is_not_utf8() -> None:
    done = gptoss("run", stdin=b"caf\xe9 \xff\xfe")
    assert_refused(done, "not UTF-8 text (byte 0xe9 at offset 3)")


def test_a_settings_file_that_is_not_utf8() -> None:
    settings = paths.settings_file()
    paths.ensure_dir(settings.parent)
    settings.write_bytes(b'model = "caf\xe9"\n')
    assert_refused(gptoss("doctor"), str(settings), "not UTF-8")


def test_a_manifest_that_is_not_utf8(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.toml"
    manifest.write_bytes(SHIPPED.read_bytes() + b"\n# \xff\n")
    done = gptoss("models", env={"GPTOSS_LOCAL_MANIFEST": str(manifest)})
    assert_refused(done, str(manifest), "not UTF-8")


def test_manifest_aliases_that_are_not_names(tmp_path: Path) -> None:
    env = shipped_manifest_with(tmp_path, 'aliases = ["20b"]', "aliases = [1, 2]")
    done = gptoss("pull", "--offline", "nope", env=env)
    assert_refused(done, "models.gpt-oss-20b.aliases: expected a list of names")


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("https://huggingface.co/{repo}/{branch}/{file}", "unknown field {branch}"),
        ("https://huggingface.co/{revision!s}/{file}", "unknown field {revision!s}"),
        ("https://huggingface.co/{repo}/}/{file}", "not a valid template"),
    ],
)
def test_a_url_template_with_an_unknown_field(tmp_path: Path, template: str, said: str) -> None:
    env = shipped_manifest_with(
        tmp_path, "https://huggingface.co/{repo}/resolve/{revision}/{file}", template
    )
    assert_refused(gptoss("models", env=env), "sources.huggingface.url", said)


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (("--max-tokens", "0"), "--max-tokens: must be 1 or more, not 0"),
        (("--max-tokens", "-1"), "--max-tokens: must be 1 or more, not -1"),
        (("--temperature", "nan"), "--temperature: must be in [0, 100], not nan"),
        (("--temperature", "-0.5"), "--temperature: must be in [0, 100]"),
        (("--top-p", "0"), "--top-p: must be in (0, 1], not 0"),
    ],
)
def test_run_refuses_numbers_the_engine_cannot_use(option: tuple[str, str], said: str) -> None:
    assert_refused(gptoss("run", *option, "hi"), said)


def test_tools_nested_100000_deep(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text("[" * 100_000 + "]" * 100_000)
    done = gptoss("run", "--tools", str(tools), "--print-prompt", "hi")
    assert_refused(done, str(tools), "nested too deeply")


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"name": "x"}', "expected a JSON list of function tools"),
        ('[{"description": "no name"}]', 'tool 0 needs a "name"'),
        ('[{"name": "x", "parameters": {"properties": 5}}]', "schema is malformed"),
        ('[{"name": "not a name"}]', "must be letters, digits, underscores, hyphens"),
    ],
)
def test_tools_files_that_are_not_tools(tmp_path: Path, content: str, said: str) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(content)
    assert_refused(gptoss("run", "--tools", str(tools), "--print-prompt", "hi"), said)
