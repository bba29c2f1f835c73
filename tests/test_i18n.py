"""The words a person reads: marked for gettext, extractable, and looked up in a catalog.

The package's marked calls must hold plain literals (an f-string or a variable inside `_()`
cannot reach the catalog), the template must come out of the tree, and a compiled catalog
must change what `_()` and `ngettext()` return while a missing one leaves the English ids.
"""

from __future__ import annotations

import ast
import importlib.util
import struct
import sys
from pathlib import Path

import pytest

from gptoss_local import i18n
from gptoss_local.errors import UserError
from gptoss_local.i18n import _, ngettext

ROOT = Path(__file__).parent.parent


def _load_extractor():
    spec = importlib.util.spec_from_file_location(
        "extract_messages", ROOT / "scripts" / "extract_messages.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


extractor = _load_extractor()


@pytest.fixture(autouse=True)
def _english():
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def _write_mo(path: Path, catalog: dict[str, str]) -> None:
    """A GNU .mo file (what msgfmt writes), small enough to write here: header, two tables."""
    keys = sorted(catalog)
    ids = [k.encode() for k in keys]
    strs = [catalog[k].encode() for k in keys]
    start = 7 * 4 + 16 * len(keys)
    ids_blob, strs_blob, id_table, str_table = b"", b"", [], []
    for raw in ids:
        id_table.append((len(raw), start + len(ids_blob)))
        ids_blob += raw + b"\0"
    for raw in strs:
        str_table.append((len(raw), start + len(ids_blob) + len(strs_blob)))
        strs_blob += raw + b"\0"
    header = struct.pack("<7I", 0x950412DE, 0, len(keys), 7 * 4, 7 * 4 + 8 * len(keys), 0, 0)
    tables = b"".join(struct.pack("<2I", *e) for e in id_table + str_table)
    path.parent.mkdir(parents=True)
    path.write_bytes(header + tables + ids_blob + strs_blob)


def test_the_package_marks_only_literals_and_never_shadows_the_marker() -> None:
    found = extractor.extract()
    assert found.problems == []


def test_the_walk_refuses_what_cannot_be_extracted(tmp_path: Path) -> None:
    module = tmp_path / "pkg" / "bad.py"
    module.parent.mkdir()
    module.write_text(
        "from gptoss_local.i18n import _, ngettext\n"
        "name = 'x'\n"
        "a = _(f'no model named {name}')\n"
        "b = _(name)\n"
        "c = _('one ' + 'two')\n"
        "d = ngettext('{n} chat', '{n} chats')\n"
        "e = _('fine, {name}').format(name=name)\n"
        "for _ in range(2):\n"
        "    pass\n"
    )
    found = extractor.Extraction()
    extractor.extract_file(module, found, tmp_path)
    problems = "\n".join(found.problems)
    assert "pkg/bad.py:3: _() is given an f-string" in problems
    assert "pkg/bad.py:4: _() is given 'name'" in problems
    assert "pkg/bad.py:5: _() is given" in problems
    assert "pkg/bad.py:6: ngettext() takes 2" in problems
    assert "pkg/bad.py:8: assigns to _" in problems
    assert list(found.messages) == [("fine, {name}", None)]


def test_modules_that_do_not_import_the_markers_are_not_read(tmp_path: Path) -> None:
    module = tmp_path / "other.py"
    module.write_text("_ = print\n_(f'{1}')\n")
    found = extractor.Extraction()
    extractor.extract_file(module, found, tmp_path)
    assert found.problems == [] and found.messages == {}


def test_the_template_comes_out_of_the_tree(tmp_path: Path) -> None:
    output = tmp_path / "gptoss_local.pot"
    assert extractor.main(["--output", str(output)]) == 0
    text = output.read_text(encoding="utf-8")
    assert text.startswith("# Catalog template of gptoss-local")
    # Samples from the planner's reasons, the TUI, the history's errors and the store's.
    assert '#, python-brace-format\nmsgid "{model} was asked for."\nmsgstr ""\n' in text
    assert 'msgid "Chat deleted."' in text
    assert 'msgid "the chat history is closed"' in text
    assert 'msgid "{src} is not a file"' in text
    assert 'msgid "{n} line"\nmsgid_plural "{n} lines"\nmsgstr[0] ""\nmsgstr[1] ""' in text
    assert "#: gptoss_local/tui/chat_screen.py:" in text
    assert len(extractor.extract().messages) > 250


def test_the_template_quotes_like_a_po_file() -> None:
    found = extractor.Extraction()
    found.messages[('say "hi"\nthen go', None)] = extractor.Message(
        'say "hi"\nthen go', None, ["x.py:1"]
    )
    text = extractor.template(found)
    assert '#: x.py:1\nmsgid ""\n"say \\"hi\\"\\n"\n"then go"\nmsgstr ""\n' in text


def test_english_is_the_message_itself() -> None:
    assert _("Try again.") == "Try again."
    assert ngettext("{n} chat", "{n} chats", 1).format(n=1) == "1 chat"
    assert ngettext("{n} chat", "{n} chats", 3).format(n=3) == "3 chats"


def test_a_catalog_changes_the_words(tmp_path: Path) -> None:
    _write_mo(
        tmp_path / "pt_BR" / "LC_MESSAGES" / "gptoss_local.mo",
        {
            "": "Content-Type: text/plain; charset=UTF-8\n"
            "Plural-Forms: nplurals=2; plural=(n > 1);\n",
            "Try again.": "Tente de novo.",
            "{n} chat\0{n} chats": "{n} conversa\0{n} conversas",
        },
    )
    i18n.set_language("pt-BR", tmp_path)
    assert _("Try again.") == "Tente de novo."
    assert ngettext("{n} chat", "{n} chats", 2).format(n=2) == "2 conversas"
    assert _("Not in the catalog.") == "Not in the catalog."
    assert i18n.translate(i18n.N_("Try again.")) == "Tente de novo."


def test_the_language_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_mo(
        tmp_path / "zh_CN" / "LC_MESSAGES" / "gptoss_local.mo",
        {"": "Content-Type: text/plain; charset=UTF-8\n", "Try again.": "再试一次。"},
    )
    for name in i18n.LANGUAGE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.setenv("GPTOSS_LOCAL_LANG", "zh-CN")
    i18n.set_language(None, tmp_path)
    assert _("Try again.") == "再试一次。"
    monkeypatch.setenv("GPTOSS_LOCAL_LANG", "")
    i18n.set_language(None, tmp_path)
    assert _("Try again.") == "Try again."


def test_languages_follow_gettexts_order() -> None:
    assert i18n.languages_from({}) == []
    assert i18n.languages_from({"LANG": "de_DE.UTF-8", "LC_ALL": "fr_FR"}) == ["fr_FR"]
    assert i18n.languages_from({"LANGUAGE": "pt-BR:en", "LANG": "C"}) == ["pt_BR", "en"]
    assert i18n.languages_from({"GPTOSS_LOCAL_LANG": "zh-CN", "LANG": "de"}) == ["zh_CN"]


def test_the_i18n_module_imports_nothing_of_the_package() -> None:
    tree = ast.parse((ROOT / "gptoss_local" / "i18n.py").read_text(encoding="utf-8"))
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in modules if m.startswith("gptoss_local")]


def test_a_user_error_is_translated_where_it_is_made(tmp_path: Path) -> None:
    _write_mo(tmp_path / "pt_BR" / "LC_MESSAGES" / "gptoss_local.mo", {"Try again.": "De novo."})
    i18n.set_language("pt_BR", tmp_path)
    assert str(UserError(_("Try again."))) == "De novo."
