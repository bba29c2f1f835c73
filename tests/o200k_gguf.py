"""A vocabulary-only GGUF with gpt-oss's real tokenizer, for tests of exact tokenization.

The synthetic models have a small made-up vocabulary; tokenization questions need the real one.
o200k_base's ranks come from toktok-rs (compiled in, as for the Harmony oracle); GGUF stores a
BPE vocabulary as byte-level token strings plus merges, and the merges are recovered from the
ranks the usual way: a token's merge is the pair that BPE over its own bytes, using only lower
ranks, ends with. The Harmony control tokens sit at o200k_harmony's ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

BASE_RANKS = 199_998


def _last_merge(ranks: dict[bytes, int], token: bytes) -> tuple[bytes, bytes] | None:
    """The two parts BPE joins last to make `token` (None if it is not reached so)."""
    limit = ranks[token]
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best, at = limit, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1], limit)
            if rank < best:
                best, at = rank, i
        if at < 0:
            return None
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return (parts[0], parts[1]) if len(parts) == 2 else None


def write_o200k_vocab(path: Path) -> Path:
    """Write a gpt-oss GGUF holding only hyper-parameters and the o200k_harmony vocabulary
    (load it with `vocab_only`)."""
    import gguf
    from synthetic.shapes import TINY_VOCAB
    from synthetic.writer import _add_hparams

    writer = gguf.GGUFWriter(str(path), "gpt-oss")
    _add_hparams(writer, TINY_VOCAB)
    add_o200k_tokenizer(writer)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def add_o200k_tokenizer(writer: Any) -> None:
    """Put o200k_harmony's tokens, types and merges in `writer` (a `gguf.GGUFWriter` for a
    shape of 201,088 tokens with the specials from id 199,998, as gpt-oss's)."""
    import toktok
    from synthetic.shapes import TINY_VOCAB
    from synthetic.vocab import TOKEN_CONTROL, TOKEN_NORMAL, byte_symbols

    values: list[bytes] = list(toktok._encoding("o200k_base").token_byte_values())
    assert len(values) == BASE_RANKS
    ranks = {value: rank for rank, value in enumerate(values)}
    symbols = byte_symbols()

    def spelled(piece: bytes) -> str:
        return "".join(symbols[b] for b in piece)

    merges = []
    for value in values:
        if len(value) > 1 and (pair := _last_merge(ranks, value)) is not None:
            merges.append(f"{spelled(pair[0])} {spelled(pair[1])}")
    by_id = {i: text for text, i in TINY_VOCAB.special_ids().items()}
    specials = [by_id.get(i, f"<|reserved_{i}|>") for i in range(BASE_RANKS, 201_088)]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-4o")
    writer.add_token_list([spelled(v) for v in values] + specials)
    writer.add_token_types([TOKEN_NORMAL] * BASE_RANKS + [TOKEN_CONTROL] * len(specials))
    writer.add_token_merges(merges)
    writer.add_bos_token_id(by_id_of(by_id, "<|startoftext|>"))
    writer.add_eos_token_id(by_id_of(by_id, "<|return|>"))
    writer.add_add_bos_token(False)


def by_id_of(by_id: dict[int, str], text: str) -> int:
    """The id of control token `text`."""
    return next(i for i, t in by_id.items() if t == text)
