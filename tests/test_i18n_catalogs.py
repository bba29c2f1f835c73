"""The shipped catalogs (zh_CN, pt_BR): every message the code marks is translated, none is
stale, placeholders match, the compiled .mo files are those of their .po files, and the
language follows --lang, the setting and the locale; machine output stays English."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from gptoss_local import i18n

ROOT = Path(__file__).parent.parent
LOCALE = ROOT / "gptoss_local" / "locale"
LANGUAGES = ("zh_CN", "pt_BR")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _catalog(language: str):
    with (LOCALE / language / "LC_MESSAGES" / "gptoss_local.po").open("rb") as po:
        return read_po(po)


@pytest.fixture(autouse=True)
def _english():
    i18n.set_language("en")
    yield
    i18n.set_language("en")


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_marked_message_is_translated_and_none_is_stale(language: str) -> None:
    marked = set(_script("extract_messages").extract().messages)
    catalog = _catalog(language)
    found = {(m.id[0], m.id[1]) if isinstance(m.id, tuple) else (m.id, None): m
             for m in catalog if m.id}  # fmt: skip
    missing = sorted(key[0] for key in marked - set(found))
    stale = sorted(key[0] for key in set(found) - marked)
    assert not missing, f"{language} lacks {len(missing)}: {missing[:5]}"
    assert not stale, f"{language} has {len(stale)} stale: {stale[:5]}"

    def done(string: str | tuple[str, ...]) -> bool:
        return all(string) if isinstance(string, tuple) else bool(string)

    untranslated = [m.id for m in found.values() if not done(m.string)]
    assert not untranslated, f"{language}: empty translations: {untranslated[:5]}"
    assert not [m.id for m in found.values() if m.fuzzy]


@pytest.mark.parametrize("language", LANGUAGES)
def test_placeholders_match_the_english(language: str) -> None:
    wrong = []
    for message in _catalog(language):
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        wanted = set(PLACEHOLDER.findall(ids[-1])) | set(PLACEHOLDER.findall(ids[0]))
        for string in strings:
            got = set(PLACEHOLDER.findall(string))
            # A plural's {count} may be left out of a one-form language's single string.
            if not got <= wanted or not (set(PLACEHOLDER.findall(ids[0])) - {"{count}", "{n}"}
                                         - {"{count:,}"}) <= got:  # fmt: skip
                wrong.append((ids[0], string))
    assert not wrong, f"{language}: placeholders differ: {wrong[:3]}"


def test_the_compiled_catalogs_are_those_of_their_sources() -> None:
    compiler = _script("compile_messages")
    assert [p.parent.parent.name for p in compiler.catalogs()] == sorted(LANGUAGES)
    for po in compiler.catalogs():
        assert po.with_suffix(".mo").read_bytes() == compiler.compiled(po), (
            f"{po.with_suffix('.mo')} is out of date: run scripts/compile_messages.py"
        )


@pytest.mark.parametrize(
    ("language", "word"), [("zh_CN", "用法"), ("pt_BR", "uso"), ("en", "usage")]
)
def test_the_lang_option_and_the_locale_choose_the_language(
    language: str, word: str, isolated_home: Path
) -> None:
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "LANG": "C"}
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "GPTOSS_LOCAL_LANG"):
        env.pop(name, None)
    by_option = subprocess.run([sys.executable, "-m", "gptoss_local", "--lang", language,
                                "--help"], env=env, capture_output=True, text=True)  # fmt: skip
    by_locale = subprocess.run([sys.executable, "-m", "gptoss_local", "--help"],
                               env={**env, "LANG": f"{language}.UTF-8"},
                               capture_output=True, text=True)  # fmt: skip
    assert by_option.returncode == by_locale.returncode == 0
    translated = i18n.set_language(language).gettext("answer one prompt and exit (scriptable)")
    assert translated in by_option.stdout and translated in by_locale.stdout


def test_machine_output_stays_english(isolated_home: Path) -> None:
    env = {**os.environ, "GPTOSS_LOCAL_HOME": str(isolated_home), "LANG": "zh_CN.UTF-8"}
    done = subprocess.run([sys.executable, "-m", "gptoss_local", "chats", "--json"], env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert json.loads(done.stdout)["chats"] == [] and done.stderr == ""


def test_a_chinese_locale_downloads_from_the_mirrors_first() -> None:
    from gptoss_local import catalog as catalogs
    from gptoss_local.store.pull import ordered_sources

    known = catalogs.load()
    names = [s.name for s in ordered_sources(known, None, "huggingface", "zh_CN")]
    assert names[:2] == ["modelscope", "hf-mirror"] and "huggingface" in names
    first = next(s.name for s in ordered_sources(known, None, "huggingface", "pt_BR"))
    assert first == "huggingface"
    chosen = [s.name for s in ordered_sources(known, None, "hf-mirror", "zh_CN")]
    assert chosen[0] == "hf-mirror"  # a source the user chose comes first
