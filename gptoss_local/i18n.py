"""Words for people: gettext's `_()`, with English as the message ids and the fallback.

Three audiences read this program's text, and only one is translated: the person (the TUI,
the commands' output, errors and their hints, doctor's and the planner's reasons) reads
strings marked here. The model reads English tool results and instructions (`tools/`,
`harmony/`), and API clients read serve's errors as OpenAI's API words them; neither is
marked, so neither changes with the user's language. Log lines and identifiers are not
marked either.

Rules that keep the catalog extractable (`scripts/extract_messages.py`, enforced by
tests/test_i18n.py): `_()`, `N_()` and `ngettext()` take plain string literals, whole
sentences; placeholders are named (``"{name}"``) and filled with `.format()` after the
lookup, never with an f-string inside the call. A string marked at import time (a table of
labels) is marked with `N_()` and looked up where it is shown, with `translate()`.

Catalogs are `locale/<lang>/LC_MESSAGES/gptoss_local.po` inside the package, compiled beside
them into the `.mo` gettext reads (`scripts/compile_messages.py`, with Babel). The language is
`--lang` or the `language` setting (`cli.choose_language`), else `GPTOSS_LOCAL_LANG`, else
gettext's own order (`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`), else on Windows the display
language; it is read on the first lookup, not at import. This module imports
nothing of the package, so every layer may use it.
"""

from __future__ import annotations

import gettext
import os
import sys
from collections.abc import Mapping
from pathlib import Path

DOMAIN = "gptoss_local"
LOCALE_DIR = Path(__file__).parent / "locale"
# Where the language comes from, first one set wins; LANGUAGE may list several ("pt_BR:en").
LANGUAGE_VARIABLES = ("GPTOSS_LOCAL_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")

_active: gettext.NullTranslations | None = None


def languages_from(environ: Mapping[str, str]) -> list[str]:
    """The languages asked for, best first, as gettext names them ("pt-BR" → "pt_BR").

    Args:
        environ: the environment to read (`os.environ` in the program).

    Returns:
        The first variable of `LANGUAGE_VARIABLES` that is set, split on ":"; empty when none
        is (English).
    """
    for name in LANGUAGE_VARIABLES:
        value = environ.get(name, "").strip()
        if value:
            return _split(value)
    windows = _windows_ui_language()
    return [windows] if windows else []


def _windows_ui_language() -> str | None:
    """The Windows display language ("zh_CN"), where no variable says one (None elsewhere)."""
    if sys.platform != "win32":
        return None
    import ctypes
    import locale

    language_id = ctypes.windll.kernel32.GetUserDefaultUILanguage()
    return locale.windows_locale.get(int(language_id))


def _split(value: str) -> list[str]:
    return [part.strip().replace("-", "_") for part in value.split(":") if part.strip()]


def set_language(
    language: str | None = None, locale_dir: Path | None = None
) -> gettext.NullTranslations:
    """Choose the catalog every later lookup uses.

    Args:
        language: a language such as "pt_BR" or "zh-CN" ("en" or "C": the English ids);
            None reads the environment again.
        locale_dir: where catalogs live (tests point this at a folder of their own).

    Returns:
        The translations now in use; a missing catalog falls back to the English ids.
    """
    global _active
    languages = languages_from(os.environ) if language is None else _split(language)
    _active = gettext.translation(
        DOMAIN, localedir=locale_dir or LOCALE_DIR, languages=languages or ["en"], fallback=True
    )
    return _active


def active_language() -> str:
    """The language of the catalog in use ("zh_CN", "pt_BR"), "en" for the English ids."""
    info = _catalog().info()
    return info.get("language", "en").replace("-", "_") or "en"


def _catalog() -> gettext.NullTranslations:
    return _active if _active is not None else set_language()


def _(message: str) -> str:
    """`message` (a string literal, English) in the user's language."""
    return _catalog().gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message for `n` things (both literals; fill "{n}" with `.format()`)."""
    return _catalog().ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Mark a literal for the catalog without looking it up (tables built at import time)."""
    return message


def translate(message: str) -> str:
    """Look up a string marked elsewhere with `N_()`, where it is shown ("" stays "": gettext
    would give the catalog's header)."""
    return _catalog().gettext(message) if message else ""
