"""`gptoss-local import PATH`: adopt a model file downloaded by hand, after verifying it."""

from __future__ import annotations

import argparse
import sys

from gptoss_local import catalog
from gptoss_local.commands.progress_view import ProgressView
from gptoss_local.i18n import _
from gptoss_local.store.importer import import_file
from gptoss_local.store.inventory import model_state


def run_import(args: argparse.Namespace) -> int:
    """Verify and adopt; print where the file now is."""

    cat = catalog.load()
    with ProgressView(args.quiet) as view:
        result = import_file(
            args.path.expanduser(), cat, move=args.move, progress=view.progress, notice=view.notice
        )
    state = model_state(result.spec)
    done = {
        "present": _("{file} verified and already in place: {path}"),
        "linked": _("{file} verified and hard-linked: {path}"),
        "copied": _("{file} verified and copied: {path}"),
        "moved": _("{file} verified and moved: {path}"),
    }
    print(done[result.how].format(file=result.file.name, path=result.path))
    if state.state != "verified":
        missing = ", ".join(f.name for f in state.files if f.state != "verified")
        print(
            _("{model} still needs: {files}").format(model=result.spec.name, files=missing),
            file=sys.stderr,
        )
    return 0
