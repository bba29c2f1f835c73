"""`gptoss-local models` (or `list`): each manifest model, its state, size and path."""

from __future__ import annotations

import argparse
import json
import sys

from gptoss_local import catalog, paths
from gptoss_local.commands.table import table_lines
from gptoss_local.i18n import N_, _, translate
from gptoss_local.store.inventory import model_states
from gptoss_local.units import size_text

_HINTS = {
    "absent": N_("download with `gptoss-local pull {alias}`"),
    "partial": N_("finish with `gptoss-local pull {alias}` (it resumes)"),
    "present": N_("not verified yet: `gptoss-local verify {alias}`"),
    "corrupt": N_(
        "damaged: `gptoss-local verify {alias}` says why, `gptoss-local pull {alias}` "
        "replaces a damaged file"
    ),
}


def run_models(args: argparse.Namespace) -> int:
    """Print the table (or JSON); reads only file sizes and records, never the weights."""

    states = model_states(catalog.load())
    if args.json:
        doc = {"models_dir": str(paths.models_dir()), "models": [s.to_json() for s in states]}
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    rows = [(_("MODEL"), _("STATE"), _("SIZE"), _("PATH"))]
    for s in states:
        state = f"partial {s.percent:.0f}%" if s.state == "partial" else s.state
        rows.append((s.name, state, size_text(s.bytes), str(s.path)))
    print("\n".join(table_lines(rows)))
    hints = [
        f"  {s.name}: " + translate(_HINTS[s.state]).format(alias=(s.aliases or (s.name,))[0])
        for s in states
        if s.state in _HINTS
    ]
    if hints:
        print("\n" + "\n".join(hints))
    return 0
