"""Whether the planned model's weights are on this PC, and the command that gets them.

Cheap, as doctor must be: the models folder is only `stat`ed (`store.inventory`), and Ollama's
tags come from the status doctor already asked for.
"""

from __future__ import annotations

from typing import Any

from gptoss_local import catalog as catalog_mod
from gptoss_local.catalog import ModelSpec
from gptoss_local.i18n import _
from gptoss_local.kinds import TRAITS, BackendName
from gptoss_local.plan.planner import Plan
from gptoss_local.store.inventory import model_state
from gptoss_local.units import size_text

_HERE = ("present", "verified")


def pull_command(spec: ModelSpec, backend: BackendName) -> str:
    """The `gptoss-local pull` line that fetches `spec` for `backend` (its short name, as
    `pull` takes it)."""
    name = spec.aliases[0] if spec.aliases else spec.name
    where = "" if TRAITS[backend].uses_models_folder else f" --backend {backend}"
    return f"gptoss-local pull {name}{where}"


def weights_status(plan: Plan, ollama: dict[str, Any]) -> dict[str, Any] | None:
    """The `plan.weights` part of the doctor JSON (docs/doctor-json.md); None when no model
    is planned. `ollama`: `ollama_status()`'s result."""
    if plan.model is None:
        return None
    spec = catalog_mod.load().model(plan.model)
    command = pull_command(spec, plan.backend)
    if TRAITS[plan.backend].uses_models_folder:
        state = model_state(spec)
        found = {"state": state.state, "bytes": state.bytes, "bytes_on_disk": state.on_disk,
                 "path": str(state.path), "downloaded": state.state in _HERE}  # fmt: skip
    elif ollama.get("listener") == "ollama":  # its tags are known only while it runs
        here = spec.ollama_tag in ollama.get("gpt_oss_tags", [])
        found = {"state": "present" if here else "absent", "downloaded": here}
    else:
        found = {"state": "unknown", "downloaded": None}
    pull = None if found["downloaded"] in (True, None) else command
    return {"model": spec.name, "backend": plan.backend, **found, "pull": pull}


def weights_line(status: dict[str, Any] | None) -> str | None:
    """The doctor text's line about the weights (None: nothing to say)."""
    if status is None or status["state"] == "unknown":
        return None
    pull, state = status["pull"], status["state"]
    if "path" not in status:  # in Ollama's store
        if status["downloaded"]:
            return _("weights    in Ollama's store")
        return _("weights    not in Ollama's store: get them with `{command}`").format(command=pull)
    if status["downloaded"]:
        return _("weights    downloaded ({path})").format(path=status["path"])
    if state == "partial":
        here, size = size_text(status["bytes_on_disk"]), size_text(status["bytes"])
        return _("weights    {here} of {size} downloaded: `{command}` finishes them").format(
            here=here, size=size, command=pull
        )
    if state == "corrupt":
        return _("weights    damaged (see `gptoss-local verify`): `{command}` fetches them again"
                 ).format(command=pull)  # fmt: skip
    return _("weights    not downloaded: get them with `{command}`").format(command=pull)
