"""Which tokens grammars allow, asking them only about tokens whose prefix they allow.

A grammar that refuses some bytes refuses everything that starts with them. In a byte-level
vocabulary every token's longest proper prefix that is itself a token (its parent) leads down
to a one-byte token, so the tokens form a tree, and a grammar pass level by level (the one-byte
tokens, then the children of those allowed, ...) finds exactly the tokens a pass over the whole
vocabulary would, asking about far fewer of them: between JSON values (digits, punctuation,
spaces) a few thousand of gpt-oss's 201,088. Inside a free string nearly every token is allowed
and nearly every token is asked about, as before.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

_BUILDS: weakref.WeakKeyDictionary[Any, _Build] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def prepare(pieces: Any, n_vocab: int) -> None:
    """Start building the tree of the vocabulary `pieces` (a `llama_native.PieceCache`) reads,
    once per model, on a thread of its own (~1 s for gpt-oss's vocabulary): a reply reasons
    first, so the tree is usually there when its grammar first refuses a token."""
    with _LOCK:
        if pieces not in _BUILDS:
            _BUILDS[pieces] = _Build(pieces.copy(), n_vocab)


def token_trie(pieces: Any, n_vocab: int) -> TokenTrie:
    """The tree for `pieces`, waiting for its build."""
    prepare(pieces, n_vocab)
    return _BUILDS[pieces].result()


def release(pieces: Any) -> None:
    """Before the model `pieces` reads is freed: stop a build still reading its vocabulary
    (a read after the free would crash the process) and wait for it to let go."""
    with _LOCK:
        build = _BUILDS.pop(pieces, None)
    if build is not None:
        build.stop()


class _Build:
    def __init__(self, pieces: Any, n_vocab: int) -> None:
        self._trie: TokenTrie | None = None
        self._error: BaseException | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(pieces, n_vocab), name="token-trie", daemon=True
        )
        self._thread.start()

    def _run(self, pieces: Any, n_vocab: int) -> None:
        try:
            texts = []
            for token in range(n_vocab):
                if token % 4096 == 0 and self._stopping.is_set():
                    return
                texts.append(b"" if pieces.is_control(token) else pieces(token))
            self._trie = TokenTrie(texts)
        except BaseException as exc:  # handed to whoever waits for the tree
            self._error = exc

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()

    def result(self) -> TokenTrie:
        self._thread.join()
        if self._trie is None:
            raise RuntimeError("the token tree could not be built") from self._error
        return self._trie


class TokenTrie:
    """Tokens under their parents; control tokens (and empty pieces) are roots of their own."""

    def __init__(self, texts: list[bytes]) -> None:
        """`texts`: each token's bytes, empty for a control token."""
        n_vocab = len(texts)
        by_text = {text: t for t, text in enumerate(texts) if text}
        parent = np.full(n_vocab, -1, dtype=np.int64)
        for t, text in enumerate(texts):
            for end in range(len(text) - 1, 0, -1):
                found = by_text.get(text[:end])
                if found is not None:
                    parent[t] = found
                    break
        self.roots = np.flatnonzero(parent < 0)
        has_parent = np.flatnonzero(parent >= 0)
        order = np.argsort(parent[has_parent], kind="stable")
        self._children = has_parent[order]
        counts = np.bincount(parent[has_parent], minlength=n_vocab)
        self._offsets = np.concatenate(([0], np.cumsum(counts)))
        self._n = n_vocab

    def allowed(self, allows: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """A mask over the vocabulary of the tokens `allows` (ids → mask of those allowed)
        lets through, asking it level by level."""
        mask = np.zeros(self._n, dtype=bool)
        level = self.roots
        while level.size:
            kept = level[allows(level)]
            mask[kept] = True
            level = self._children_of(kept)
        return mask

    def _children_of(self, nodes: np.ndarray) -> np.ndarray:
        starts, ends = self._offsets[nodes], self._offsets[nodes + 1]
        counts = ends - starts
        total = int(counts.sum())
        if not total:
            return np.empty(0, dtype=np.int64)
        before = np.cumsum(counts) - counts
        within = np.arange(total) - np.repeat(before, counts)
        return self._children[np.repeat(starts, counts) + within]
