"""`gptoss-local ps` and `gptoss-local stop`: the engine of this machine, as its runtime file
and its own answer (`GET /gptoss-local/engine`) tell it."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from typing import Any

from gptoss_local.commands.table import table_lines
from gptoss_local.i18n import _
from gptoss_local.launch.engine_switch import users
from gptoss_local.serve.find_engine import Engine, find_engine
from gptoss_local.serve.runtime_file import as_dict, pid_alive
from gptoss_local.units import duration, gib

STOP_WAIT_SECONDS = 30.0  # a reply stuck in native code is left to the process's exit


def run_ps(args: argparse.Namespace) -> int:
    """Print the engine; exit 0 (also when none runs: nothing is loaded)."""
    engine = find_engine()
    if args.json:
        found = None if engine is None else {**as_dict(engine.record), "state": engine.state}
        print(json.dumps({"engine": found}, indent=2, ensure_ascii=False))
        return 0
    if engine is None:
        print(_("no engine runs on this machine (`gptoss-local serve` starts one)"),
              file=sys.stderr)  # fmt: skip
        return 0
    for line in table_lines(engine_rows(engine)):
        print(line.rstrip())
    return 0


def engine_rows(engine: Engine) -> list[list[str]]:
    """`ps`'s table: its heading, then the engine's row."""
    state, record = engine.state, engine.record
    heading = [_("MODEL"), _("LOADED"), _("MEMORY"), _("UNLOADS"), _("PID"), _("USED BY")]
    if engine.starting:
        return [heading, [record.model, _("starting"), "-", "-", str(record.pid), "-"]]
    row = [
        record.model,
        _("yes") if state.get("loaded") else _("no"),
        _memory(state.get("memory") or {}) if state.get("loaded") else "-",
        _unloads(state),
        str(record.pid),
        users(state) or "-",
    ]
    return [heading, row]


def _memory(memory: dict[str, Any]) -> str:
    """What the model takes, as planned: the VRAM part only when it has one."""
    ram = gib(memory.get("ram", 0))
    if not memory.get("vram"):
        return _("RAM {ram}").format(ram=ram)
    return _("VRAM {vram}, RAM {ram}").format(vram=gib(memory["vram"]), ram=ram)


def _unloads(state: dict[str, Any]) -> str:
    if not state.get("loaded"):
        return _("loads on the next request")
    if state.get("running") or state.get("waiting"):
        return _("in use")
    expires = state.get("expires_at")
    if expires is None:
        return _("never")
    return _("in {time}").format(time=duration(max(0.0, float(expires) - time.time())))


def run_stop(args: argparse.Namespace) -> int:
    """End the engine; exit 0 once it has ended, 1 when none runs."""
    engine = find_engine()  # a foreign server or a recycled PID is refused here, never signalled
    if engine is None:
        print(_("no engine runs on this machine: nothing to stop"), file=sys.stderr)
        return 1
    pid = engine.record.pid
    if engine.starting:  # not yet answering: nothing proves the PID is still the engine's
        print(_("the engine (PID {pid}) is still starting: stop it once it serves").format(
            pid=pid), file=sys.stderr)  # fmt: skip
        return 1
    os.kill(pid, signal.SIGTERM)  # serve stops cleanly on TERM: replies cancelled, model freed
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)  # polling the process's end, with a deadline
    if pid_alive(pid):
        print(_("the engine (PID {pid}) is still stopping").format(pid=pid), file=sys.stderr)
        return 1
    print(_("stopped the engine (PID {pid}, {model})").format(pid=pid, model=engine.record.model),
          file=sys.stderr)  # fmt: skip
    return 0
