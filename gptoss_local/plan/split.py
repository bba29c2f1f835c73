"""How the layers are shared among several cards, as llama.cpp's layer split will place them.

llama.cpp (split mode "layer", `llama-model.cpp` `load_tensors`) takes the layers and then the
output layer as `layers + 1` slots and gives slot `s` to the first card whose running share of
`tensor_split` is above `s / (layers + 1)`, in float32: each card gets one run of whole slots,
the output layer the last card's. A `tensor_split` of whole slot counts therefore places exactly
those counts (tests/test_planner_gpus.py repeats llama.cpp's arithmetic to hold the two
together). The input embedding never leaves the CPU.

The slots are not worth the same: a layer whose experts stay in system RAM (the first
`cpu_moe_layers`) weighs about a twentieth of one that keeps them, and the last card carries the
output layer and the logits. So the split is chosen in bytes, not in layers: `best_split` gives
each card the run that fills every card to the same fraction of its usable VRAM, as near as
whole layers allow (the fraction the fullest card reaches is as small as it can be), which is
"proportional to each card's usable VRAM" for what the cards actually hold.
"""

from __future__ import annotations

from gptoss_local.catalog import ModelSpec
from gptoss_local.plan.memory import CardLoads, Placement


def best_split(spec: ModelSpec, placement: Placement, budgets: tuple[int, ...]) -> tuple[int, ...]:
    """Slots per card (every card at least one) that make the fullest card, as a fraction of
    its budget, as empty as possible; one card takes every slot.

    Args:
        spec: The model.
        placement: Where its parts go (context, experts in RAM, micro-batch); its own `split`
            is ignored.
        budgets: Each card's usable VRAM in bytes, in llama.cpp's order (all above zero).
    """
    slots = spec.shape.layers + 1
    cards = len(budgets)
    if cards <= 1:
        return (slots,)
    loads = CardLoads(spec, placement)

    def fill(card: int, start: int, end: int) -> float:
        return loads.card(card, start, end, cards) / budgets[card]

    # worst[end] for the cards so far: the least "fullest fill" covering slots 0..end-1;
    # each card leaves at least one slot to every card after it.
    worst = {end: fill(0, 0, end) for end in range(1, slots - cards + 2)}
    cuts: list[dict[int, int]] = []
    for card in range(1, cards):
        last = card == cards - 1  # the last card ends at the last slot
        ends = range(slots, slots + 1) if last else range(card + 1, slots - cards + card + 2)
        best: dict[int, float] = {}
        cut: dict[int, int] = {}
        for end in ends:
            for start in range(card, end):
                value = max(worst[start], fill(card, start, end))
                if end not in best or value < best[end]:
                    best[end], cut[end] = value, start
        worst = best
        cuts.append(cut)
    counts, end = [], slots
    for cut in reversed(cuts):
        start = cut[end]
        counts.append(end - start)
        end = start
    counts.append(end)
    return tuple(reversed(counts))
