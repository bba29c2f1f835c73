"""Sampling under grammars without running a grammar over the whole vocabulary per token.

llama.cpp's grammar stage checks every candidate: over gpt-oss's 201,088 tokens that is 70 to
200 ms a token on a CPU (measured against the real vocabulary), slower than the model. So, as
llama.cpp's own `common_sampler` does, `GrammarGate` samples first without the grammars, asks
each grammar about that one token (~20 µs), and only when one refuses it samples again among
what the grammars allow: by a race over the tokens in order of score (`race.py`) when the chain
allows it, else by the chain over the allowed tokens. For temperature sampling this
draws exactly from the constrained distribution (a token the grammar allows is kept with its own
probability, and the rest of the mass goes to the constrained draw); greedy picks the same token
too. While most first draws are refused (a random-weight model), the draw is left out and the
chain draws among the allowed tokens (found by the token tree, `token_trie.py`) straight away.

The grammars are llama.cpp's own (not lazy: llama.cpp's lazy grammar searches its whole trigger
buffer with std::regex after every token, 4.5 ms a token after 16,000 tokens of reasoning, and
aborts the process if the text it replays does not fit the grammar). A grammar that starts
with the final message is switched on here instead, by `FinalHeaderWatch`, which reads the
control tokens themselves, so text that only spells ``<|channel|>final`` never sets it off.
Until then the reply may be sampled in llama.cpp's graph (`holding` says when it may not).
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gptoss_local.backends.base import BackendError
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.structured.race import TOKEN_DATA, Race
from gptoss_local.backends.llamacpp.structured.token_trie import token_trie
from gptoss_local.backends.llamacpp.structured.utf8 import Utf8Prefix
from gptoss_local.i18n import _

# A grammar that refuses the first draw is asked again with what it allows; a draw it allows
# that breaks UTF-8 is left out and drawn again, at most this many times.
REDRAWS = 32
# How often a draw is refused (a moving average) before tokens are drawn among the allowed ones
# without a free draw first; one is still tried every `_RETRY`th token, so the average can fall.
_SKIP_DRAW_ABOVE = 0.5
_RETRY = 8
# What may follow <|channel|> in the header of the final answer: "final", then perhaps a
# content type (" json", " <|constrain|>json").
_FINAL_HEADER = re.compile(rb"final(?:(?:\s+|\s*<\|constrain\|>)[A-Za-z0-9_.-]*)?\s*")


def grammar_taken(vocab: Any, text: str) -> bool:
    """Whether llama.cpp's grammar reader takes `text` (the sampler it builds is freed again):
    asked before a reply, so that a grammar it refuses is the request's fault, not the reply's."""
    bindings = native.lib()
    sampler = bindings.llama_sampler_init_grammar(vocab, text.encode(), b"root")
    if not sampler:
        return False
    bindings.llama_sampler_free(sampler)
    return True


@dataclass(frozen=True)
class HeaderTokens:
    """The control tokens a header is read by, and those that end a header without a message."""

    channel: int
    message: int
    constrain: int
    breaks: frozenset[int]


@dataclass(frozen=True)
class Constraint:
    """A grammar a reply is held to (`structured.ReplyGrammar`, its tokens looked up)."""

    grammar: str
    from_final: bool
    barred: tuple[int, ...]
    header: HeaderTokens
    until_final: tuple[int, ...] = ()


class FinalHeaderWatch:
    """Reads sampled tokens; says when the final message's content begins."""

    def __init__(self, header: HeaderTokens, pieces: Callable[[int], bytes]) -> None:
        self._header = header
        self._pieces = pieces
        self._head: bytes | None = None  # the header after <|channel|>, while one is open

    def reset(self) -> None:
        self._head = None

    def feed(self, token: int) -> bool:
        """Take the next token; True when it is the <|message|> of a final message's header."""
        h = self._header
        if token == h.channel:
            self._head = b""
        elif self._head is None:
            return False
        elif token == h.message:
            head, self._head = self._head, None
            return _FINAL_HEADER.fullmatch(head) is not None
        elif token in h.breaks:
            self._head = None
        else:
            self._head += b"<|constrain|>" if token == h.constrain else self._pieces(token)
            if len(self._head) > 64:  # no header is that long: text, not a header
                self._head = None
        return False


class GrammarGate:
    """The grammars of one reply and the sampling under them (see the module's docstring).

    `always`: grammars from the first token; `final`: one from the final message's content on,
    switched on by `watch`; `banned`: tokens the chain bans (a logit bias of -inf), so that a
    grammar that leaves only those is an error, not a draw among nothing. With `pieces`, what
    a grammar holds is also kept well-formed UTF-8 (`utf8.Utf8Prefix`). `counting`: the chain
    counts the tokens it is given (penalties), so a draw the grammars refuse must not reach it.
    `race`: how the chain draws among allowed tokens without a full grammar pass (None: it
    cannot, `race.raceable`); `until_final`: tokens the chain bars until the final message.
    """

    def __init__(
        self,
        vocab: Any,
        always: list[str],
        final: str | None = None,
        watch: FinalHeaderWatch | None = None,
        banned: tuple[int, ...] = (),
        pieces: Callable[[int], bytes] | None = None,
        counting: bool = True,
        race: Race | None = None,
        until_final: tuple[int, ...] = (),
    ) -> None:
        bindings = self._bindings = native.lib()
        self._counting = counting
        self._always: list[Any] = []
        self._final: Any = None
        self._watch = watch
        self._banned = list(banned)
        self._pieces = pieces
        self._utf8 = Utf8Prefix()
        self._final_on = False
        self._race = race
        self._until_final = list(until_final)
        self._refusals = 0.0  # moving average of refused first draws
        self._tokens = 0
        try:
            for text in always:
                self._always.append(self._grammar(vocab, text))
            if final is not None:
                self._final = self._grammar(vocab, final)
        except BaseException:
            self.free()
            raise
        self._n_vocab = int(bindings.llama_vocab_n_tokens(vocab))
        self._buffer: Any = None
        self._probe: Any = None
        self._one = (bindings.llama_token_data * 1)()

    def _grammar(self, vocab: Any, text: str) -> Any:
        sampler = self._bindings.llama_sampler_init_grammar(vocab, text.encode(), b"root")
        if not sampler:
            raise BackendError(_("llama.cpp refused the reply's grammar (see llama.log)"))
        return sampler

    def reset(self) -> None:
        """A new reply: every grammar from its root, the final one off again."""
        for sampler in self._grammars():
            self._bindings.llama_sampler_reset(sampler)
        self._final_on = False
        self._utf8.reset()
        self._refusals, self._tokens = 0.0, 0
        if self._race is not None:
            self._race.reset()
        if self._watch is not None:
            self._watch.reset()

    def free(self) -> None:
        for sampler in self._grammars():
            self._bindings.llama_sampler_free(sampler)
        self._always, self._final = [], None

    @property
    def final_on(self) -> bool:
        """Whether the final message's grammar has started."""
        return self._final_on

    @property
    def holding(self) -> bool:
        """Whether a grammar holds the next token (until the final header, none may)."""
        return bool(self._always) or self._final_on

    def _grammars(self) -> list[Any]:
        return [*self._always, *([self._final] if self._final else [])]

    def sample(self, chain: Any, context: Any, index: int) -> int:
        """The next token from `chain` at batch `index`, within every grammar that is on."""
        active = [*self._always, *([self._final] if self._final_on else [])]
        if active:
            token = self._constrained(chain, context, index, active)
        else:
            token = int(self._bindings.llama_sampler_sample(chain, context, index))
        if self._watch is not None and self._final is not None and not self._final_on:
            self._final_on = self._watch.feed(token)
        return token

    def _constrained(self, chain: Any, context: Any, index: int, grammars: list[Any]) -> int:
        b = self._bindings
        self._tokens += 1
        token, refused = -1, list[int]()
        skip = self._refusals > _SKIP_DRAW_ABOVE and self._tokens % _RETRY != 0
        if not skip:
            token = self._draw(chain, context, index)
            fits = self._fits(grammars, token)
            self._refusals = 0.9 * self._refusals + (0.0 if fits else 0.1)
            if not fits:
                refused.append(token)
        if refused and self._race is not None:
            token = self._raced(chain, context, index, grammars, refused)
        elif skip or refused:
            token = self._among_allowed(chain, context, index, grammars, refused)
        for grammar in grammars:
            b.llama_sampler_accept(grammar, token)
        if self._counting:
            b.llama_sampler_accept(chain, token)
        if self._pieces is not None:
            self._utf8.take(self._pieces(token))
        return token

    def _draw(self, chain: Any, context: Any, index: int) -> int:
        """The chain's own draw, with no grammar."""
        b = self._bindings
        if not self._counting:  # giving it a token changes nothing: llama.cpp draws itself
            return int(b.llama_sampler_sample(chain, context, index))
        candidates = self._candidates(context, index)
        b.llama_sampler_apply(chain, ctypes.byref(candidates))
        return int(candidates.data[candidates.selected].id)

    def _raced(
        self, chain: Any, context: Any, index: int, grammars: list[Any], refused: list[int]
    ) -> int:
        assert self._race is not None
        candidates = self._candidates(context, index)
        excluded = [*refused, *self._barred()]

        def keeps(token: int) -> bool:
            return self._pieces is None or self._utf8.extends(self._pieces(token))

        token = self._race.draw(
            chain, candidates, self._buffer["logit"], excluded,
            lambda ids: self._allowed(grammars, ids),
            lambda: self._all_allowed(grammars), keeps,
        )  # fmt: skip
        if token is None:
            raise BackendError(_("the reply's grammar leaves no token to sample"))
        return token

    def _among_allowed(
        self, chain: Any, context: Any, index: int, grammars: list[Any], refused: list[int]
    ) -> int:
        """The chain's draw among the tokens every grammar allows (and UTF-8 keeps)."""
        b = self._bindings
        allowed = self._all_allowed(grammars)
        allowed[self._barred()] = False  # the chain bans them: what is left after both
        allowed[refused] = False
        for _attempt in range(REDRAWS):
            if not allowed.any():
                break
            candidates = self._candidates(context, index, allowed)
            b.llama_sampler_apply(chain, ctypes.byref(candidates))
            token = int(candidates.data[candidates.selected].id)
            if self._pieces is None or self._utf8.extends(self._pieces(token)):
                return token
            allowed[token] = False
        raise BackendError(_("the reply's grammar leaves no token to sample"))

    def _barred(self) -> list[int]:
        """Tokens the chain bans now: always, and those barred until the final message."""
        return self._banned if self._final_on else [*self._banned, *self._until_final]

    def _allowed(self, grammars: list[Any], ids: Any) -> Any:
        """Which of `ids` every grammar allows now (one grammar pass over just those)."""
        import numpy as np

        b = self._bindings
        if self._probe is None:
            self._probe = np.zeros(self._n_vocab, dtype=TOKEN_DATA)
        count = len(ids)
        probe = self._probe[:count]
        probe["id"], probe["logit"], probe["p"] = ids, 0.0, 0.0
        data = self._probe.ctypes.data_as(b.llama_token_data_p)
        batch = b.llama_token_data_array(data, count, -1, False)
        for grammar in grammars:
            b.llama_sampler_apply(grammar, ctypes.byref(batch))
        return np.isfinite(probe["logit"])

    def _all_allowed(self, grammars: list[Any]) -> Any:
        """A mask over the vocabulary of the tokens every grammar allows now."""
        import numpy as np

        if self._pieces is not None and isinstance(self._pieces, native.PieceCache):
            trie = token_trie(self._pieces, self._n_vocab)
            return trie.allowed(lambda ids: self._allowed(grammars, ids))
        return self._allowed(grammars, np.arange(self._n_vocab, dtype=np.int32))

    def _fits(self, grammars: list[Any], token: int) -> bool:
        """Whether every grammar allows `token`, and the bytes stay well-formed UTF-8."""
        if self._pieces is not None and not self._utf8.extends(self._pieces(token)):
            return False
        one = self._one
        for grammar in grammars:
            one[0].id, one[0].logit, one[0].p = token, 0.0, 0.0
            single = self._bindings.llama_token_data_array(one, 1, -1, False)
            self._bindings.llama_sampler_apply(grammar, ctypes.byref(single))
            if math.isinf(one[0].logit):
                return False
        return True

    def _candidates(self, context: Any, index: int, only: Any = None) -> Any:
        """The logits at batch `index` as llama.cpp's candidate array: every token in id
        order, or those `only` (a mask) keeps."""
        import numpy as np  # llama-cpp-python's own dependency, loaded with it

        b, n = self._bindings, self._n_vocab
        if self._buffer is None:
            self._buffer = np.zeros(n, dtype=TOKEN_DATA)
            self._ids = np.arange(n, dtype=np.int32)
        pointer = b.llama_get_logits_ith(context, index)
        if not pointer:
            raise BackendError(_("llama.cpp has no logits for the reply's next token"))
        logits = np.ctypeslib.as_array(pointer, shape=(n,))
        if only is None:
            count = n
            self._buffer["id"], self._buffer["logit"] = self._ids, logits
        else:
            ids = np.flatnonzero(only)
            count = ids.size
            self._buffer["id"][:count], self._buffer["logit"][:count] = ids, logits[ids]
        self._buffer["p"][:count] = 0.0
        data = self._buffer.ctypes.data_as(b.llama_token_data_p)
        return b.llama_token_data_array(data, count, -1, False)
