"""`gptoss-local rm MODEL`: delete a model's files, after asking."""

from __future__ import annotations

import argparse
import sys

from gptoss_local import catalog, paths
from gptoss_local.store.errors import StoreError
from gptoss_local.store.remove import model_files, remove_model, shared_bytes
from gptoss_local.units import size_text


def run_rm(args: argparse.Namespace) -> int:
    """Delete after a yes; exit 1 when the answer is no."""

    spec = catalog.load().model(args.model)
    files = model_files(spec)
    if not files:
        print(f"{spec.name} has no files in {paths.models_dir()}; nothing to delete")
        return 0
    size = sum(p.stat().st_size for p in files)
    shared = shared_bytes(files)
    note = f" ({size_text(shared)} of it also linked elsewhere, so not freed)" if shared else ""
    if not args.yes:
        if not sys.stdin.isatty():
            raise StoreError(
                f"not deleting {spec.name} without a confirmation, and there is no terminal to "
                "ask on; run `gptoss-local rm --yes ...` to delete it"
            )
        question = f"Delete {spec.name}: {len(files)} file(s), {size_text(size)}{note}? [y/N] "
        if input(question).strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return 1
    removed, freed = remove_model(spec)
    print(f"deleted {len(removed)} file(s) of {spec.name}, {size_text(freed)}{note}")
    return 0
