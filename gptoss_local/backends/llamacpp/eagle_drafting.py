"""Draft tokens with an EAGLE-3 head: a one-layer model that reads the target's own hidden states.

The target context keeps, for every token it decodes, the inputs of three of its layers (the
head's `target_layers`). The head fuses them (its encoder: `fc`) into one row `g[P]` per
position, and its decoder layer, given the token at P + 1 beside `g[P]`, predicts the token at
P + 2. So its cache entry for position P is the pair (token[P + 1], g[P]), and the last position
decoded always waits for the token sampled after it. From there it drafts alone: each step's
pre-norm state stands in for `g` of the next. The target checks the drafts in one decode
(`token_loop.TokenLoop`), as it does n-gram drafts; a head's guess is only a guess, so the
reply is the target's either way.

The draft cache must stay in step with the target's: `usable_prefix` says how much of the
target's cache a new prompt may keep so the head can resume (usually all but one token), and
positions decoded while the head was not told (a reply that did not draft) are evaluated again
by the next prompt. llama.cpp's common/speculative.cpp is the reference for the pairing.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gptoss_local.backends.base import BackendError
from gptoss_local.backends.llamacpp import eagle_native, native
from gptoss_local.backends.llamacpp.drafting import DraftStats
from gptoss_local.backends.llamacpp.saved_states import common_prefix
from gptoss_local.i18n import _

# At most this many drafts per step: EAGLE-3 heads for gpt-oss are trained and reported at 3
# to 4; past that a guess is mostly wrong and widens the target's batch for nothing.
MOST_DRAFTS = 4


@dataclass
class _Decoded:
    """Rows of the target's last decode whose features the head has not taken yet."""

    first: int  # position of the first row
    tokens: list[int]
    kept: int  # how many of them the target kept


class EagleDrafter:
    """An EAGLE-3 head loaded beside a target model (`loaded`), drafting for its sequence 0.

    Args:
        path: The head's GGUF (architecture "eagle3").
        loaded: The target's `llama_load.Loaded`.
        context: The target's context size (the head's cache holds as many positions).
        n_batch: The target's batch size (the head takes a whole batch's features at once).
        on_gpu: Put the head on the GPU (beside a target that uses one).
        threads: CPU threads for the head's decodes.
    """

    # A refused single draft costs the wider batch and the head's two calls: 0.47 of a decode
    # with the 20b on an H200 (bench/results/gpu/eagle.txt).
    break_even = 0.5
    resumes_after_pause = False  # it lapses: see `propose`

    def __init__(
        self,
        path: Path,
        loaded: Any,
        context: int,
        n_batch: int,
        on_gpu: bool,
        threads: int,
        most: int = MOST_DRAFTS,
    ) -> None:
        self.most = most
        self.stats = DraftStats()
        self._b = b = native.lib()
        self._target = loaded.context
        if not eagle_native.available():
            raise BackendError(
                _("This build of llama.cpp cannot run EAGLE-3 draft heads."),
                hint=_(
                    "Reinstall the engine (`gptoss-local engine install`), or use --draft ngram."
                ),
                kind="load_failed",
            )
        params = b.llama_model_default_params()
        params.n_gpu_layers = 999 if on_gpu else 0
        self._model = b.llama_model_load_from_file(str(path).encode(), params)
        if not self._model:
            raise BackendError(
                _("llama.cpp could not load the draft head {name}").format(name=Path(path).name),
                hint=_("Check that the file is an EAGLE-3 head in GGUF form (see the log)."),
                kind="load_failed",
            )
        self._context = None
        self._sampler = None
        self._batch = None
        try:
            self._check_fits(Path(path), loaded)
            self._context = self._new_context(loaded, context, n_batch, threads)
            self._batch = b.llama_batch_ext_init(self._context)
            self._sampler = b.llama_sampler_chain_init(b.llama_sampler_chain_default_params())
            b.llama_sampler_chain_add(self._sampler, b.llama_sampler_init_greedy())
            # Picked inside the head's graph: no logits row copied out per draft.
            self.sampled_in_graph = on_gpu and bool(
                b.llama_set_sampler(self._context, 0, self._sampler)
            )
        except BaseException:
            self.close()
            raise
        for layer in self._layers:
            eagle_native.function("llama_set_embeddings_layer_inp")(self._target, layer, True)
        # The head's pre-norm state, of the rows asked for: the encoder's g, a step's next input.
        eagle_native.function("llama_set_embeddings_nextn")(self._context, True, True)
        self._width = int(b.llama_model_n_embd(self._model))
        self._tokens: list[int] = []  # the target's tokens the entries were made from
        self._valid = 0  # entries 0..valid-1 are in the head's cache and right
        self._pending: np.ndarray | None = None  # g[valid], waiting for token[valid + 1]
        self._decoded: _Decoded | None = None
        # Stopped following the reply (drafting no longer pays in it): its decodes cost the
        # head nothing more, and the next prompt has the target evaluate them again for it.
        self._lapsed = False

    def _check_fits(self, path: Path, loaded: Any) -> None:
        """Refuse a head that is not EAGLE-3 or was trained for another model."""
        b = self._b
        layers = eagle_native.target_layers(self._model)
        target_layers = int(b.llama_model_n_layer(loaded.model))
        if len(layers) != 3 or not all(0 <= layer < target_layers for layer in layers):
            raise BackendError(
                _(
                    "{name} is not an EAGLE-3 head for this model (it reads layers {layers}; "
                    "the model has {count})."
                ).format(name=path.name, layers=layers or "none", count=target_layers),
                hint=_("Use the head trained for this model, or --draft ngram."),
                kind="bad_file",
            )
        width = native.model_meta(self._model, "eagle3.target_hidden_size")
        target_width = int(b.llama_model_n_embd(loaded.model))
        vocab = b.llama_vocab_n_tokens(b.llama_model_get_vocab(self._model))
        if width != str(target_width) or vocab != b.llama_vocab_n_tokens(loaded.vocab):
            raise BackendError(
                _("{name} was made for another model (hidden size {width}, {vocab} tokens; "
                  "this one has {target_width} and {target_vocab}).").format(
                    name=path.name, width=width, vocab=vocab, target_width=target_width,
                    target_vocab=b.llama_vocab_n_tokens(loaded.vocab),
                ),
                hint=_("Use the head trained for this model, or --draft ngram."),
                kind="bad_file",
            )  # fmt: skip
        self._layers = layers

    def _new_context(self, loaded: Any, size: int, n_batch: int, threads: int) -> Any:
        b = self._b
        params = b.llama_context_default_params()
        params.n_ctx = size
        params.n_batch = n_batch + 1  # a target batch, and the position before it
        params.n_ubatch = min(params.n_batch, 512)
        params.n_seq_max = 1
        params.n_threads = params.n_threads_batch = threads
        params.flash_attn_type = b.LLAMA_FLASH_ATTN_TYPE_AUTO
        params.no_perf = True
        params.ctx_other = loaded.context  # the head borrows the target's token embeddings
        context = b.llama_init_from_model(self._model, params)
        if not context:
            raise BackendError(
                _("llama.cpp could not make a context for the draft head"),
                hint=_("Memory may be short: choose a smaller --context, or leave the head out."),
                kind="out_of_memory",
            )
        return context

    # The target's cache and the head's.

    def usable_prefix(self, prompt: list[int]) -> int:
        """How many leading tokens of `prompt` the target's cache may keep for the head to
        resume from them (the target evaluates the rest, and the head takes their features)."""
        self._settle()
        self._lapsed = False
        same = common_prefix(self._tokens, prompt)
        usable = min(same - 1, self._valid)  # entry P needs token P + 1 unchanged
        if self._pending is not None and self._valid + 1 <= same:
            usable = max(usable, self._valid + 1)  # g[valid] is at hand for the new token
        return max(usable, 0)

    def resume(self, kept: int) -> None:
        """The target's cache now keeps its first `kept` tokens (at most `usable_prefix`)."""
        if not (kept == self._valid + 1 and self._pending is not None):
            self._valid = min(self._valid, kept)
            self._pending = None
            self._forget_from(self._valid)
        del self._tokens[kept:]

    def observe(self, tokens: list[int], first: int) -> None:
        """The target has just decoded `tokens` from position `first`: take their features."""
        self._settle()
        self._take(first, tokens, None)

    # Drafting.

    def decoded(self, tokens: list[int], first: int) -> None:
        """The target decoded the sampled token and its drafts at `first`; which of them it
        keeps is told by `kept` before the next `propose`."""
        if not self._lapsed:
            self._decoded = _Decoded(first, tokens, len(tokens))

    def kept(self, length: int) -> None:
        """The target's context holds `length` tokens now (drafts after them were refused)."""
        if self._decoded is not None:
            self._decoded.kept = max(
                0, min(len(self._decoded.tokens), length - self._decoded.first)
            )

    def propose(self, token: int, room: int) -> list[int]:
        """Up to `room` (and `most`) drafts to follow `token`, the target's newest sample.
        With no room (the loop stopped drafting in this reply), the head lapses till the next
        prompt."""
        limit = min(room, self.most)
        if limit <= 0 or self._lapsed:
            self._decoded, self._lapsed = None, True
            return []
        first_draft = self._settle(token)
        if first_draft is None:  # the head missed part of this reply: it cannot catch up in it
            self._lapsed = True
            return []
        drafts = [first_draft]
        b, next_in = self._b, eagle_native.function("llama_get_embeddings_nextn_ith")
        position = self._valid  # the seed went in at valid - 1
        while len(drafts) < limit:
            state = next_in(self._context, -1)
            if not state:
                break
            row = np.ctypeslib.as_array(state, shape=(self._width,)).copy()
            self._decode([(drafts[-1], row, position, True)])
            drafts.append(int(b.llama_sampler_sample(self._sampler, self._context, -1)))
            position += 1
        return drafts

    def begin(self, context: list[int]) -> None:
        pass  # the head follows the cache through `observe` and `resume`

    def finish(self, clean: bool = True) -> None:
        """The reply is over: take the features of what the target kept of its last decode
        (not after a failed decode: then the head stops before it)."""
        if not clean and self._decoded is not None:
            self._decoded.kept = 0
        self._settle()

    def _settle(self, seed: int | None = None) -> int | None:
        """Take the features of the target's last decode (the rows it kept); with `seed`, the
        token sampled after them, decode the waiting entry with it and return the first draft."""
        decoded, self._decoded = self._decoded, None
        if decoded is not None:
            kept = decoded.tokens[: decoded.kept]
            if kept:
                return self._take(decoded.first, kept, seed)
            self._forget_from(min(self._valid, decoded.first))
            self._valid, self._pending = min(self._valid, decoded.first), None
        if seed is None or self._pending is None or self._valid != len(self._tokens) - 1:
            return None
        entry = (seed, self._pending, self._valid, True)
        self._valid += 1
        self._pending = None
        self._forget_from(self._valid - 1)
        self._decode([entry])
        return int(self._b.llama_sampler_sample(self._sampler, self._context, -1))

    def _take(self, first: int, tokens: list[int], seed: int | None) -> int | None:
        """Make the head's entries for target rows `tokens` at `first` (their features are in
        the target's buffers), then the seed entry if given; returns the seed's draft."""
        if len(self._tokens) < first or not (
            self._valid >= first or (self._valid == first - 1 and self._pending is not None)
        ):
            self._lose(first, tokens)  # a stretch the head never saw
            return None
        g = self._encode(len(tokens))
        entries: list[tuple[int, np.ndarray, int, bool]] = []
        if self._valid == first - 1:
            assert self._pending is not None
            entries.append((tokens[0], self._pending, first - 1, False))
        start = min(self._valid, first - 1) if entries else first
        entries += [(tokens[k + 1], g[k], first + k, False) for k in range(len(tokens) - 1)]
        del self._tokens[first:]
        self._tokens.extend(tokens)
        self._valid, self._pending = first + len(tokens) - 1, g[-1]
        if seed is not None:
            entries.append((seed, self._pending, self._valid, True))
            self._valid += 1
            self._pending = None
        self._forget_from(start)
        self._decode(entries)
        if seed is None:
            return None
        return int(self._b.llama_sampler_sample(self._sampler, self._context, -1))

    def _lose(self, first: int, tokens: list[int]) -> None:
        """The head missed some of the target's positions: it stops at what it had, and the
        next prompt has the target evaluate again from there."""
        self._valid = min(self._valid, first, len(self._tokens))
        self._pending = None
        self._forget_from(self._valid)
        del self._tokens[self._valid :]

    def _encode(self, rows: int) -> np.ndarray:
        """The head's g for the target's first `rows` rows of its last decode."""
        b, width = self._b, self._width
        get = eagle_native.function("llama_get_embeddings_layer_inp")
        parts = []
        for layer in self._layers:
            pointer = get(self._target, layer)
            if not pointer:
                raise BackendError(_("llama.cpp kept no hidden states for the draft head"))
            parts.append(np.ctypeslib.as_array(pointer, shape=(rows, width)))
        features = np.ascontiguousarray(np.concatenate(parts, axis=1), dtype=np.float32)
        out = np.empty((rows, width), dtype=np.float32)
        step = int(b.llama_n_ubatch(self._context))
        memory = b.llama_get_memory(self._context)
        nextn = eagle_native.function("llama_get_embeddings_nextn")
        for start in range(0, rows, step):
            chunk = features[start : start + step]
            b.llama_batch_ext_clear(self._batch)
            # The encoder reads no positions; these only keep llama.cpp's checks content.
            position = int(b.llama_memory_seq_pos_max(memory, 0)) + 1
            for i in range(len(chunk)):
                index = b.llama_batch_ext_add_embd(self._batch, 0, _embd(b, chunk[i]))
                b.llama_batch_ext_set_pos(
                    self._batch, index, ctypes.byref(ctypes.c_int32(position + i))
                )
                b.llama_batch_ext_set_output_embd(self._batch, index, True)
            self._process(b.LLAMA_PROCESS_TYPE_ENCODE)
            pointer = nextn(self._context)
            out[start : start + len(chunk)] = np.ctypeslib.as_array(
                pointer, shape=(len(chunk), width)
            )
        return out

    def _decode(self, entries: list[tuple[int, np.ndarray, int, bool]]) -> None:
        """Decode (token, g, position, logits wanted) entries into the head's cache."""
        if not entries:
            return
        b = self._b
        b.llama_batch_ext_clear(self._batch)
        keep = []
        for token, g, position, output in entries:
            row = np.ascontiguousarray(g, dtype=np.float32)
            keep.append(row)
            index = b.llama_batch_ext_add_token(self._batch, 0, token)
            b.llama_batch_ext_set_pos(self._batch, index, ctypes.byref(ctypes.c_int32(position)))
            b.llama_batch_ext_set_embd_token(self._batch, index, _embd(b, row))
            b.llama_batch_ext_set_output_logits(self._batch, index, output)
        self._process(b.LLAMA_PROCESS_TYPE_DECODE)

    def _process(self, kind: int) -> None:
        status = self._b.llama_process(self._context, kind, self._batch)
        if status != 0:
            raise BackendError(
                _("the draft head failed to evaluate (status {status})").format(status=status),
                hint=_("Leave the draft head out (no --draft-model) and tell us what happened."),
                kind="decode_failed",
            )

    def _forget_from(self, position: int) -> None:
        memory = self._b.llama_get_memory(self._context)
        self._b.llama_memory_seq_rm(memory, 0, max(position, 0), -1)

    def close(self) -> None:
        """Free the head (before the target it borrows from)."""
        b = self._b
        if self._context is not None:
            for layer in getattr(self, "_layers", []):
                eagle_native.function("llama_set_embeddings_layer_inp")(self._target, layer, False)
        if self._context is not None and getattr(self, "sampled_in_graph", False):
            b.llama_set_sampler(self._context, 0, None)
        for handle, free in ((self._batch, b.llama_batch_ext_free),
                             (self._sampler, b.llama_sampler_free),
                             (self._context, b.llama_free),
                             (self._model, b.llama_model_free)):  # fmt: skip
            if handle:
                free(handle)
        self._batch = self._sampler = self._context = self._model = None


_FLOATS = ctypes.POINTER(ctypes.c_float)


def _embd(b: Any, row: np.ndarray) -> Any:
    """A llama_embd view of one contiguous float32 row (the row must outlive its use)."""
    return b.llama_embd(ctypes.cast(row.ctypes.data, _FLOATS), 1, row.shape[-1])
