"""Argument types that refuse values the engine cannot use, with argparse's own error (exit 2)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from gptoss_local.config import gpu_list
from gptoss_local.i18n import _
from gptoss_local.serve.keep_alive import parse_keep_alive

LARGEST_ID = 2**63 - 1  # SQLite's largest INTEGER


def positive_int(text: str) -> int:
    """A whole number of at least 1 (`--max-tokens`)."""
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number of at least 0 (`serve --cache-ram`)."""
    return _whole_number(text, 0)


def _whole_number(text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected a whole number, not {text}").format(text=repr(text))
        ) from None
    if value < low:
        raise argparse.ArgumentTypeError(
            _("must be {low} or more, not {value}").format(low=low, value=value)
        )
    return value


def keep_alive(text: str) -> float:
    """Seconds the model stays loaded when idle (`serve --keep-alive`): 300, 5m, 1h, 0
    (unload after each reply), -1 or forever (never)."""
    try:
        return parse_keep_alive(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _(
                "expected a duration such as 300, 5m or 1h (0: unload after each reply; -1 or "
                "forever: never), not {text}"
            ).format(text=repr(text))
        ) from None


def port_number(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535 (`serve --port`)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("expected a port number, not {text}").format(text=repr(text))
        ) from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(_("must be 0 to 65535, not {value}").format(value=value))
    return value


def bounded_float(low: float, high: float, *, low_open: bool = False) -> Callable[[str], float]:
    """A finite number in [low, high] (or (low, high] with `low_open`); nan and inf refused."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                _("expected a number, not {text}").format(text=repr(text))
            ) from None
        too_low = value <= low if low_open else value < low
        if not math.isfinite(value) or too_low or value > high:
            bracket = "(" if low_open else "["
            interval = f"{bracket}{low:g}, {high:g}]"
            raise argparse.ArgumentTypeError(
                _("must be in {interval}, not {text}").format(interval=interval, text=text)
            )
        return value

    return parse


def chat_id(text: str) -> int:
    """The argparse type of a chat id: 1 to 2**63 - 1, else no chat has it (argparse exits 2)."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("{text} is not a chat id; `gptoss-local chats` lists the saved chats").format(
                text=repr(text)
            )
        ) from None
    if not 1 <= number <= LARGEST_ID:
        raise argparse.ArgumentTypeError(
            _("no chat with id {id}; `gptoss-local chats` lists the saved chats").format(id=text)
        )
    return number


def gpu_numbers(text: str) -> tuple[int, ...]:
    """`--gpus 0,1`: cards by `doctor`'s numbers, in llama.cpp's order; "auto" (empty): the
    planner's choice, over the settings file's."""
    try:
        return gpu_list(text) or ()
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
