"""The closed sets of names that several layers share: reasoning efforts and backends, with the
facts about each backend that layers below the engine registry (`setup.engines`) need."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from gptoss_local.i18n import N_, translate

Effort = Literal["low", "medium", "high"]
EFFORTS: tuple[Effort, ...] = get_args(Effort)
# The efforts as people read them; the names above are what --effort, settings and the model take.
_EFFORT_WORDS = {"low": N_("low"), "medium": N_("medium"), "high": N_("high")}


def effort_word(effort: str) -> str:
    """`effort` ("medium") in the user's language; an unknown name as it is."""
    return translate(_EFFORT_WORDS[effort]) if effort in _EFFORT_WORDS else effort


# What a chat does when its next prompt would leave the reply too little room.
ContextPolicy = Literal["compact", "drop_oldest", "stop"]
CONTEXT_POLICIES: tuple[ContextPolicy, ...] = get_args(ContextPolicy)

# Speculative decoding's drafters as settings and flags name them ("off": none).
DRAFTERS = ("off", "ngram", "eagle3")

BackendName = Literal["llamacpp", "ollama", "openai"]
BACKENDS: tuple[BackendName, ...] = get_args(BackendName)


@dataclass(frozen=True)
class Traits:
    """What an engine is, for the planner and `doctor` (how it opens a model is in
    `setup.engines`).

    Attributes:
        label: How the first-run screen names it (marked: look it up with `translate`).
        in_process: It runs in this process, so the installed llama-cpp-python build matters.
        uses_models_folder: Its weights are files in gptoss-local's models folder; otherwise it
            keeps its own store.
        experts_in_ram: It can keep only the MoE experts of some layers in system RAM.
        remote: The model runs on a server elsewhere: this PC's plan does not apply, the model
            is the server's, and there is nothing to download here.
    """

    label: str
    in_process: bool
    uses_models_folder: bool
    experts_in_ram: bool
    remote: bool = False


TRAITS: dict[BackendName, Traits] = {
    "llamacpp": Traits(N_("llama.cpp, in this process"), True, True, True),
    "ollama": Traits(N_("Ollama, managed daemon"), False, False, False),
    "openai": Traits(N_("OpenAI-compatible server"), False, False, False, remote=True),
}
