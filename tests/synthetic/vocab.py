"""A byte-level BPE vocabulary with Harmony control tokens, laid out like o200k_harmony."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from synthetic.shapes import SyntheticShape

TOKEN_NORMAL = 1
TOKEN_CONTROL = 3

# Words that Harmony prompts and replies use all the time; each becomes one token
# (with and without a leading space) so synthetic prompts tokenize realistically.
HARMONY_WORDS = (
    "system",
    "developer",
    "user",
    "assistant",
    "analysis",
    "commentary",
    "final",
    "functions",
    "json",
    "to",
    "Reasoning",
    "low",
    "medium",
    "high",
    "the",
    "and",
)


@dataclass(frozen=True)
class Vocab:
    """Tokenizer arrays as GGUF stores them."""

    tokens: list[str]
    types: list[int]
    merges: list[str]


def byte_symbols() -> list[str]:
    """Returns GPT-2's printable stand-in for each byte value 0..255, in byte order."""
    keep = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    shifted = iter(range(0x100, 0x200))
    # Printable Latin-1 bytes stand for themselves; the rest move above U+00FF.
    return [chr(b) if b in keep else chr(next(shifted)) for b in range(256)]


def _bpe(symbols: list[str], ranks: dict[tuple[str, str], int]) -> list[str]:
    # Same rule as llama.cpp: repeatedly merge the adjacent pair with the lowest rank.
    while True:
        pairs = [(ranks.get(p, -1), i) for i, p in enumerate(itertools.pairwise(symbols))]
        ranked = [(r, i) for r, i in pairs if r >= 0]
        if not ranked:
            return symbols
        _, i = min(ranked)
        symbols[i : i + 2] = [symbols[i] + symbols[i + 1]]


def _learn_words(words: list[str], tokens: list[str], merges: list[str]) -> None:
    """Appends merges (and their result tokens) that make each word a single token.

    Each word first runs through the merges learned so far; the leftover pieces are
    then glued left to right by new, lower-priority merges. Earlier words stay whole
    because a new merge only fires once no older one applies.
    """
    ranks: dict[tuple[str, str], int] = {}
    known = set(tokens)
    for word in words:
        pieces = _bpe(list(word), ranks)
        while len(pieces) > 1:
            pair = (pieces[0], pieces[1])
            ranks[pair] = len(merges)
            merges.append(f"{pair[0]} {pair[1]}")
            pieces[0:2] = [pair[0] + pair[1]]
            if pieces[0] not in known:
                known.add(pieces[0])
                tokens.append(pieces[0])


def build_vocab(shape: SyntheticShape) -> Vocab:
    """Builds the token list, token types and merges for ``shape``.

    Args:
        shape: Supplies ``vocab_size`` and ``special_base``.

    Returns:
        A `Vocab` with unique token strings: the 256 byte symbols, merged words and
        ``Ġtok{id}`` fillers below ``special_base``; Harmony specials and
        ``<|reserved_{id}|>`` control tokens from there on.

    Raises:
        ValueError: If the ordinary tokens do not fit below ``special_base``.
    """
    symbols = byte_symbols()
    to_symbols = {b: symbols[b] for b in range(256)}
    encoded = ["".join(to_symbols[b] for b in w.encode()) for w in HARMONY_WORDS]
    encoded += [to_symbols[0x20] + w for w in encoded]
    tokens, merges = list(symbols), list[str]()
    _learn_words(encoded, tokens, merges)
    if len(tokens) > shape.special_base:
        raise ValueError(f"{shape.name}: {len(tokens)} base tokens exceed special_base")
    # Fillers decode to " tok<id>", so random output stays readable.
    tokens += [f"{to_symbols[0x20]}tok{i}" for i in range(len(tokens), shape.special_base)]
    by_id = {i: text for text, i in shape.special_ids().items()}
    tokens += [
        by_id.get(i, f"<|reserved_{i}|>") for i in range(shape.special_base, shape.vocab_size)
    ]
    types = [TOKEN_NORMAL] * shape.special_base
    types += [TOKEN_CONTROL] * (shape.vocab_size - shape.special_base)
    return Vocab(tokens, types, merges)
