"""`gptoss-local verify [MODEL]`: hash the downloaded files again and check the GGUF."""

from __future__ import annotations

import argparse
import sys

from rich.cells import cell_len

from gptoss_local import catalog, paths
from gptoss_local.commands.progress_view import ProgressView
from gptoss_local.i18n import N_, _, translate
from gptoss_local.store.errors import StoreError
from gptoss_local.store.inventory import model_state
from gptoss_local.store.verify import verify_model

# The verdicts as the first column shows them (store/verify.py names them in English).
VERDICTS = {
    "ok": N_("ok"),
    "mismatch": N_("mismatch"),
    "wrong size": N_("wrong size"),
    "partial": N_("partial"),
    "missing": N_("missing"),
}


def run_verify(args: argparse.Namespace) -> int:
    """Exit 0 when every checked file is right, 1 when one is damaged or missing."""

    cat = catalog.load()
    if args.model:
        specs = [cat.model(args.model)]
        if model_state(specs[0]).state in ("absent", "partial"):
            raise StoreError(
                _(
                    "{model} is not (completely) downloaded in {folder}: "
                    "`gptoss-local pull {alias}` gets it"
                ).format(model=specs[0].name, folder=paths.models_dir(), alias=args.model)
            )
    else:
        specs = [s for s in cat.models if model_state(s).state not in ("absent", "partial")]
        if not specs:
            print(
                _("no model is downloaded in {folder}; nothing to verify").format(
                    folder=paths.models_dir()
                )
            )
            return 0
    ok = True
    with ProgressView(args.quiet) as view:
        checks = [verify_model(spec, view.progress) for spec in specs]
    for check in checks:
        ok = ok and check.ok
        rows = [(translate(VERDICTS.get(f.verdict, f.verdict)), str(f.path)) for f in check.files]
        if check.gguf_problem:
            rows.append((_("bad gguf"), check.gguf_problem))
        for verdict, what in rows:  # a column of ten cells: a CJK character takes two
            print(f"{verdict}{' ' * max(0, 10 - cell_len(verdict))} {what}")
        if not all(f.recorded for f in check.files):
            print(_("(the result could not be saved in {folder}: it is read-only, so "
                    "`models` cannot show it)").format(folder=paths.models_dir()),
                  file=sys.stderr)  # fmt: skip
        if not check.ok:
            print(_("{model} is damaged: `gptoss-local pull {model}` replaces the bad file(s)")
                  .format(model=check.spec.name), file=sys.stderr)  # fmt: skip
    return 0 if ok else 1
