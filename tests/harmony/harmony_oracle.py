"""openai-harmony as a test oracle for our Harmony renderer and parser.

openai-harmony needs o200k_base's vocabulary file and downloads it unless
TIKTOKEN_ENCODINGS_BASE names a folder that holds it. toktok-rs has the same vocabulary
compiled in: ranks 0-199,997 written as ``base64(token bytes) rank`` lines give the exact
published file (its sha256 is checked here, and again by openai-harmony), so the oracle
works offline. Both packages are in the dev extra only.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gptoss_local.harmony import neutralise

VOCAB_FILE = "o200k_base.tiktoken"
SHA256_HEAD, SHA256_TAIL = "446a9538cb6c348e", "1a2d"
BASE_RANKS = 199_998  # o200k_base's ordinary tokens; the specials come from openai-harmony


def write_vocab(folder: Path) -> Path:
    """Write o200k_base.tiktoken from toktok's compiled-in vocabulary into `folder`."""
    import toktok

    values = toktok._encoding("o200k_base").token_byte_values()
    if len(values) != BASE_RANKS:
        raise RuntimeError(f"toktok's o200k_base has {len(values)} ranks, not {BASE_RANKS}")
    data = b"".join(base64.b64encode(v) + b" %d\n" % rank for rank, v in enumerate(values))
    digest = hashlib.sha256(data).hexdigest()
    if not (digest.startswith(SHA256_HEAD) and digest.endswith(SHA256_TAIL)):
        raise RuntimeError(f"o200k_base.tiktoken from toktok has sha256 {digest}")
    path = folder / VOCAB_FILE
    path.write_bytes(data)
    return path


@contextmanager
def _variable(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def load_encoding(folder: Path) -> Any:
    """openai-harmony's gpt-oss encoding, read from `folder` (never downloaded)."""
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    write_vocab(folder)
    with _variable("TIKTOKEN_ENCODINGS_BASE", str(folder)):
        return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)


class Oracle:
    """openai-harmony's encoding with the helpers the comparisons need."""

    def __init__(self, encoding: Any, folder: Path) -> None:
        self.encoding = encoding
        self.folder = folder  # where o200k_base.tiktoken is
        self._special = {t: encoding.is_special_token(t) for t in range(BASE_RANKS, 201_088)}

    def is_special(self, token: int) -> bool:
        """Whether `token` is a special (control) token rather than text."""
        return self._special.get(token, False)

    def piece(self, token: int) -> bytes:
        """The bytes one token stands for (a special token as its text)."""
        return bytes(self.encoding._inner.decode_bytes([token]))

    def encode(self, text: str) -> list[int]:
        """Tokens of `text`, control-token strings becoming control tokens (as llama.cpp)."""
        return list(self.encoding.encode(text, allowed_special="all"))

    def text(self, tokens: Sequence[int]) -> str:
        """Tokens as our renderer writes them: special tokens as their text, each run of
        ordinary tokens neutralised (openai-harmony encodes text without special tokens, so
        ``<|end|>`` in a message is ordinary tokens there; we break it with a word joiner)."""
        out, run = [], []
        for token in tokens:
            if self.is_special(token):
                out.append(neutralise(self.encoding.decode_utf8(run)))
                out.append(self.encoding.decode_utf8([token]))
                run = []
            else:
                run.append(token)
        out.append(neutralise(self.encoding.decode_utf8(run)))
        return "".join(out)
