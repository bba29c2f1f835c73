"""What the user asked for (command line over settings file) before the planner decides."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from gptoss_local import config
from gptoss_local.errors import WishError


@dataclass(frozen=True)
class Wishes:
    """What the user asked for; None leaves the choice to the planner."""

    model: str | None = None
    context: int | None = None
    effort: str = "medium"
    backend: str = "llamacpp"
    cpu_moe_layers: int | None = None
    kv_type: str = "f16"


def wishes_from(args: argparse.Namespace, settings: config.Settings) -> Wishes:
    """Command-line choices over the settings file's defaults."""
    model = args.model or settings.model
    context = args.context if args.context is not None else settings.context
    if context < 0:
        raise WishError(f"--context must be positive, not {context}")
    if args.cpu_moe is not None and args.cpu_moe < 0:
        raise WishError(f"--cpu-moe must be 0 or more, not {args.cpu_moe}")
    return Wishes(
        model=None if model == "auto" else model,
        context=context or None,
        effort=args.effort or settings.effort,
        backend=getattr(args, "backend", None) or settings.backend,
        cpu_moe_layers=args.cpu_moe,
    )
