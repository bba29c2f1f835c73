"""`gptoss-local import PATH`: adopt a model file downloaded by hand, after verifying it."""

from __future__ import annotations

import argparse
import sys

from gptoss_local import catalog
from gptoss_local.commands.progress_view import ProgressView
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
    words = {"present": "already in place", "linked": "hard-linked", "copied": "copied",
             "moved": "moved"}  # fmt: skip
    print(f"{result.file.name} verified and {words[result.how]}: {result.path}")
    if state.state != "verified":
        missing = [f.name for f in state.files if f.state != "verified"]
        print(f"{result.spec.name} still needs: {', '.join(missing)}", file=sys.stderr)
    return 0
