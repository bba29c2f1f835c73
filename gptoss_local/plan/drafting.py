"""Whether speculative decoding pays with a plan's placement.

Drafts save decodes only when checking several tokens at once costs little more than one.
With the whole model on the GPU it does (1.15x one decode for one draft, 2.05x for four, the
20b on an H200); with experts in system RAM each extra token of a batch brings other experts
through the CPU (1.63x for one draft, 3.44x for four), and on the CPU alone the same holds:
there drafts would have to be kept nearly every time to break even, and they slow replies at
the acceptance real drafters reach (bench/results/gpu/eagle.txt, bench/RESULTS.md).
"""

from __future__ import annotations

from gptoss_local.i18n import _
from gptoss_local.plan.chosen import Plan
from gptoss_local.plan.wishes import Wishes

# An EAGLE-3 head's cache holds one layer's keys and values per position: 8 KV heads of 64, in
# F16 (published gpt-oss heads); and its compute buffers, beside the model's.
HEAD_KV_BYTES_PER_TOKEN = 2 * 8 * 64 * 2
HEAD_COMPUTE_BYTES = 128 << 20
HEAD_CONTEXT = 32_768  # counted for the head's cache when the context is not yet chosen


def why_drafts_do_not_pay(plan: Plan) -> str | None:
    """None when drafts pay with `plan`'s placement; else why they are left off."""
    if plan.gpu_layers == 0:
        return _(
            "Speculative decoding is off: the model runs on the CPU, where checking drafted "
            "tokens costs nearly as much as decoding them one by one."
        )
    if plan.cpu_moe_layers > 0 or plan.gpu_layers > 0:
        return _(
            "Speculative decoding is off: with part of the model in system RAM, checking "
            "drafted tokens costs nearly as much as decoding them one by one (1.6x a decode for "
            "one draft, measured on an H200), so drafts would slow replies."
        )
    return None


def head_vram(wishes: Wishes) -> int:
    """The VRAM an EAGLE-3 head asked for takes beside the model (0: none asked, or no file:
    the engine says so when it loads)."""
    head = wishes.draft_model if wishes.draft == "eagle3" else None
    if head is None or not head.is_file():
        return 0
    tokens = wishes.context or HEAD_CONTEXT
    return head.stat().st_size + HEAD_KV_BYTES_PER_TOKEN * tokens + HEAD_COMPUTE_BYTES
