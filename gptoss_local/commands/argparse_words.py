"""argparse's own words ("usage: ", "options", its errors) in the user's language.

argparse looks its words up through the `_` and `ngettext` it imported from gettext, under
gettext's domain "argparse", for which no catalog ships. `translate_argparse` points those two
names at our catalog instead, which holds the msgids below (marked here so that the
extraction keeps them); any other word falls back to argparse's English. The msgids are those
of Python 3.10 to 3.13; a word a later version changes stays English until it is added here.
Left out: words only a mistake in our own parser shows (conflicting options), and the plural
"expected %s arguments" (no option here takes a fixed count above one).
"""

from __future__ import annotations

import argparse

from gptoss_local.i18n import N_, ngettext, translate

WORDS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("show program's version number and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"),
    N_("one of the arguments %s is required"),
    N_("unrecognized arguments: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("not allowed with argument %s"),
    N_("ignored explicit argument %r"),
    N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
    N_("unexpected option string: %s"),
)


def _gettext(message: str) -> str:
    # argparse also passes None (`_(kwargs.pop('description', None))`): give it back.
    return translate(message) if message else message


def translate_argparse() -> None:
    """Make argparse look its words up in our catalog, in the language `i18n` chose. Cheap:
    two names rebound, nothing read until a word is shown. Call it before building a parser:
    argparse looks up the group titles and the help option's words as it builds one."""
    argparse._ = _gettext  # type: ignore[attr-defined]
    argparse.ngettext = ngettext  # type: ignore[attr-defined]
