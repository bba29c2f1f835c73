"""Switching the machine's engine to the model a command wants (`POST
/gptoss-local/engine/switch`), rather than loading a second copy beside it: the question a
command asks first (on a terminal: `ask_on_terminal`; `--switch` answers yes), and the switch
itself (`switch_engine`), whose refusal (the model in use, another switch) is the engine's own
words."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gptoss_local.errors import WishError
from gptoss_local.i18n import _
from gptoss_local.serve.find_engine import Engine, SwitchRefused, ask_switch, find_engine

Ask = Callable[[Engine, str], bool]  # whether to switch the engine to the model named
SWITCH_SECONDS = 900.0  # the engine loads the other model before it answers


def users(state: dict[str, Any]) -> str:
    """Who uses the engine now, as `ps` names them ("" when nobody)."""
    names = [_("{client} (running)").format(client=h.get("client") or "?")
             for h in state.get("running") or () if isinstance(h, dict)]  # fmt: skip
    names += [_("{client} (waiting)").format(client=h.get("client") or "?")
              for h in state.get("waiting") or () if isinstance(h, dict)]  # fmt: skip
    return ", ".join(names)


def question(found: Engine, wanted: str) -> str:
    """What to ask before switching the engine (`found`) to `wanted`: what it holds, who uses
    it, and that they are affected."""
    held = _("The engine on this machine (PID {pid}) holds {model}.").format(
        pid=found.record.pid, model=found.record.model)  # fmt: skip
    using = users(found.state)
    if using:
        held += " " + _("Used now by: {users}.").format(users=using)
    return (
        held
        + " "
        + _(
            "Switching it to {wanted} lets {model} go for every program that uses the engine."
        ).format(wanted=wanted, model=found.record.model)
    )


def ask_on_terminal(yes: bool) -> Ask:
    """The question asked on a terminal (stdin and stderr both one): "switch? [y/N]";
    `yes` (`--switch`) answers it without asking; without a terminal the answer is no."""

    def ask(found: Engine, wanted: str) -> bool:
        if yes:
            return True
        if not (sys.stdin and sys.stdin.isatty() and sys.stderr.isatty()):
            return False
        sys.stderr.write(question(found, wanted) + "\n")
        sys.stderr.write(_("Switch the engine to {wanted}? [y/N] ").format(wanted=wanted))
        sys.stderr.flush()
        answer = sys.stdin.readline().strip().lower()
        return answer in ("y", "yes", _("y"), _("yes"))

    return ask


def switch_body(model: str, model_path: Path | None) -> dict[str, str]:
    """The switch's body: the file asked for (absolute: the engine's folder is not ours), or
    the model's name."""
    if model_path is not None:
        return {"model_path": str(model_path.expanduser().resolve())}
    return {"model": model}


def switch_engine(found: Engine, body: dict[str, str]) -> Engine:
    """Have the engine load the model `body` names instead of its own; the engine found
    again, holding it.

    Raises:
        WishError: the engine refused (its model in use, another switch, an unknown model) or
            failed, in its own words; or it is gone.
    """
    try:
        ask_switch(found.record, body, SWITCH_SECONDS)
    except SwitchRefused as exc:
        raise WishError(
            _("the engine did not switch: {reason}").format(reason=exc.message),
            _("Try again once it is free, or end it with `gptoss-local stop`.")
            if exc.status == 409 else None,
        ) from None  # fmt: skip
    except OSError as exc:
        message = _("the engine did not answer the switch: {error}").format(error=exc)
        raise WishError(message) from None
    again = find_engine()
    if again is None or again.starting:
        raise WishError(_("the engine ended while it switched models"))
    return again
