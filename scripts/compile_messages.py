#!/usr/bin/env python3
"""Compile every catalog (gptoss_local/locale/<lang>/LC_MESSAGES/gptoss_local.po) into the .mo
file gettext reads beside it, with Babel; `--check` compiles in memory and exits 1 when a
committed .mo differs from its .po (tests/test_i18n_catalogs.py runs the same check).

Usage: scripts/compile_messages.py [--check]
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "gptoss_local" / "locale"
FIXED_DATE = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def compiled(po: Path) -> bytes:
    """The .mo bytes of catalog `po` (fuzzy entries left out, as msgfmt does)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as source:
        catalog = read_po(source)
    # Babel dates a catalog whose header has no dates "now": fixed, the .mo is the same each
    # time it is compiled.
    catalog.creation_date = catalog.revision_date = FIXED_DATE
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def catalogs() -> list[Path]:
    """Every language's .po file."""
    return sorted(LOCALE.glob("*/LC_MESSAGES/gptoss_local.po"))


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line: only `--check` (and `--help`)."""
    parser = argparse.ArgumentParser(
        prog="scripts/compile_messages.py",
        description="Compile every catalog's .po file into the .mo file beside it.",
    )
    parser.add_argument(
        "--check", action="store_true",
        help="compile in memory and exit 1 when a committed .mo differs from its .po",
    )  # fmt: skip
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    """Compile (or check) every catalog; 1 when `--check` finds one out of date."""
    check = parse_args(argv).check
    stale = []
    for po in catalogs():
        mo = po.with_suffix(".mo")
        data = compiled(po)
        if check:
            if not mo.exists() or mo.read_bytes() != data:
                stale.append(mo)
        else:
            mo.write_bytes(data)
            print(f"{po.relative_to(ROOT)} → {mo.name}")
    for mo in stale:
        print(f"{mo.relative_to(ROOT)} is out of date: run scripts/compile_messages.py")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
