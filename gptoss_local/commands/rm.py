"""`gptoss-local rm MODEL`: delete a model's files, after asking."""

from __future__ import annotations

import argparse
import sys

from gptoss_local import catalog, paths
from gptoss_local.i18n import _, ngettext
from gptoss_local.store.errors import StoreError
from gptoss_local.store.remove import model_files, remove_model, shared_bytes
from gptoss_local.units import size_text


def run_rm(args: argparse.Namespace) -> int:
    """Delete after a yes; exit 1 when the answer is no."""

    spec = catalog.load().model(args.model)
    files = model_files(spec)
    if not files:
        print(
            _("{model} has no files in {folder}; nothing to delete").format(
                model=spec.name, folder=paths.models_dir()
            )
        )
        return 0
    size = sum(p.stat().st_size for p in files)
    shared = shared_bytes(files)
    note = (
        " " + _("({size} of it also linked elsewhere, so not freed)").format(size=size_text(shared))
        if shared
        else ""
    )
    if not args.yes:
        if not sys.stdin.isatty():
            raise StoreError(
                _(
                    "not deleting {model} without a confirmation, and there is no terminal to "
                    "ask on; run `gptoss-local rm --yes ...` to delete it"
                ).format(model=spec.name)
            )
        question = ngettext(
            "Delete {model}: {n} file(s), {size}{note}? [y/N] ",
            "Delete {model}: {n} file(s), {size}{note}? [y/N] ",
            len(files),
        ).format(model=spec.name, n=len(files), size=size_text(size), note=note)
        if input(question).strip().lower() not in ("y", "yes"):
            print(_("nothing deleted"))
            return 1
    removed, freed = remove_model(spec)
    deleted = ngettext(
        "deleted {n} file(s) of {model}, {size}{note}",
        "deleted {n} file(s) of {model}, {size}{note}",
        len(removed),
    )
    print(deleted.format(n=len(removed), model=spec.name, size=size_text(freed), note=note))
    return 0
