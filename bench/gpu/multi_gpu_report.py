"""The verdicts and the table of multi_gpu.py: each card's measured VRAM against the plan's
estimate for that card (on the safe side and within 15 %, and inside the card's usable VRAM),
and our decode speed against llama-bench's tg128 with the same split."""

from __future__ import annotations

MIB = 1 << 20
WITHIN = 1.15  # the estimate may exceed the measurement by this much


def judge(row: dict) -> dict:
    """`row` with each card's verdict and the decode ratio added."""
    plan = row.get("plan") or {}
    cards = plan.get("cards") or []
    loads, fills = row.get("vram_after_load_mib") or [], row.get("vram_after_fill_mib") or []
    verdicts, ok = [], bool(cards) and len(loads) == len(cards) == len(fills)
    for card, load, full in zip(cards, loads, fills, strict=False):
        worst = max(load, full)
        estimate, usable = card["est_vram"] // MIB, card["usable"] // MIB
        safe, close, inside = worst <= estimate, estimate <= worst * WITHIN, worst <= usable
        ok = ok and safe and close and inside
        verdicts.append({"index": card["index"], "estimate_mib": estimate, "measured_mib": worst,
                         "usable_mib": usable, "safe_side": safe, "within_15_percent": close,
                         "inside_usable": inside})  # fmt: skip
    tg = [r for r in row.get("llama_bench") or [] if r["test"].startswith("tg")]
    ours = row.get("decode_tokens_per_second")
    ratio = round(ours / tg[0]["tokens_per_second"], 3) if tg and ours else None
    verdict = "ok" if ok else "CHECK"
    return {**row, "cards_checked": verdicts, "decode_vs_llama_bench": ratio,
            "verdict": f"{row['run']}: {verdict}"}  # fmt: skip


def summary_lines(rows: list[dict]) -> list[str]:
    """One block per run: the plan, each card's estimate against the measurement, the speeds."""
    lines = []
    for row in rows:
        plan = row.get("plan") or {}
        lines.append(f"== {row['run']}")
        if "error" in row:
            lines.append(f"   failed: {row['error'].strip().splitlines()[-1:]}")
            continue
        split = "/".join(map(str, plan.get("tensor_split") or [])) or "one card"
        lines.append(f"   plan: GPUs {plan.get('gpu_indices')} split {split}, experts of "
                     f"{plan.get('cpu_moe_layers')} layers in RAM, context {plan.get('context')},"
                     f" micro-batch {plan.get('n_ubatch')}")  # fmt: skip
        for left in plan.get("left_out") or []:
            lines.append(f"   left out: {left['reason']}")
        checked = {c["index"]: c for c in row.get("cards_checked") or []}
        for card in plan.get("cards") or []:
            first, count = card["first_layer"], card["layers"]
            layers = f"layers {first}-{first + count - 1}" if count > 1 else f"layer {first}"
            layers = layers if count else "output layer only"
            layers += " + output" if card["output"] and count else ""
            line = f"   GPU {card['index']}: {layers:22} estimate {card['est_vram'] // MIB:6} MiB"
            seen = checked.get(card["index"])
            if seen:
                checks = ("safe_side", "within_15_percent", "inside_usable")
                marks = [k for k in checks if not seen[k]]
                verdict = "ok" if not marks else "NOT " + ", ".join(marks)
                line += (
                    f"  measured {seen['measured_mib']:6} MiB  usable {seen['usable_mib']:6} MiB"
                    f"  {verdict}"
                )
            lines.append(line)
        if row.get("decode_tokens_per_second") is not None:
            tg = [r for r in row.get("llama_bench") or [] if r["test"].startswith("tg")]
            bench = f"{tg[0]['tokens_per_second']:.1f}" if tg else "—"
            ours, ratio = row["decode_tokens_per_second"], row.get("decode_vs_llama_bench")
            lines.append(
                f"   decode: ours {ours} t/s, llama-bench tg128 {bench} t/s, ratio {ratio}"
            )
        if row.get("llama_bench_command"):
            lines.append(f"   llama-bench: {row['llama_bench_command']}")
    return lines
