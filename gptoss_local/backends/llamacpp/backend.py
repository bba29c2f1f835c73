"""The in-process llama.cpp backend: a gpt-oss GGUF loaded through llama-cpp-python's C API.

Per generated token the Python side does one `llama_decode`, one native sampler call, a dict
lookup for the token's bytes and one Harmony parser step; logits never leave native memory.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Generator
from dataclasses import replace
from pathlib import Path
from typing import Any

from gptoss_local.backends.base import (
    BackendError,
    BackendInfo,
    Capabilities,
    LoadProgress,
    Reply,
    ReplyRequest,
    Stats,
    StopReason,
    UnsupportedRequest,
    check_request,
    no_load_progress,
)
from gptoss_local.backends.llamacpp import native
from gptoss_local.backends.llamacpp.drafting import NgramDrafter
from gptoss_local.backends.llamacpp.eagle_drafting import EagleDrafter
from gptoss_local.backends.llamacpp.load import LoadSettings, load
from gptoss_local.backends.llamacpp.options import LlamaOptions
from gptoss_local.backends.llamacpp.parallel import ParallelDecoder, Request
from gptoss_local.backends.llamacpp.prompt_cache import PromptCache
from gptoss_local.backends.llamacpp.sampling import KeptSampler
from gptoss_local.backends.llamacpp.saved_states import StateShelf
from gptoss_local.backends.llamacpp.structured import ToolChoiceError, reply_grammar, token_trie
from gptoss_local.backends.llamacpp.structured.gate import Constraint, HeaderTokens, grammar_taken
from gptoss_local.backends.llamacpp.token_chunks import (
    TokenizeCancelled,
    Tokenized,
    tokenize_reusing,
)
from gptoss_local.backends.llamacpp.token_loop import TokenLoop
from gptoss_local.events import Event
from gptoss_local.harmony import render_next_turn_prefix, render_prompt
from gptoss_local.i18n import _
from gptoss_local.schemas import SchemaError, SchemaLoop
from gptoss_local.store.gguf_check import GgufError
from gptoss_local.store.gguf_model import check_loadable

# End-of-generation tokens and the stop reason each means.
STOP_TOKENS: dict[str, StopReason] = {
    "<|return|>": "return",
    "<|call|>": "call",
    "<|endoftext|>": "end_of_stream",
}
CLOSE_WAIT_SECONDS = 60.0  # a generous bound on one batch of a big model on a slow CPU
# Recent prompts' tokens, whose shared start the next prompt of the same conversation takes as
# it is: llama.cpp spends ~1 ms on each run of text between control tokens, 3.1 s for a chat of
# 1,000 messages on a 2-core CPU. A few, for `serve`'s conversations taking turns; each with
# its cache key, as a prompt reuses only its own key's (a quicker reply would tell a client
# that another had sent the same text).
RECENT_PROMPTS = 4
HARMONY_TOKENS = ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>")


def _harmony_options(request: ReplyRequest) -> dict[str, Any]:
    """What the Harmony renderer needs besides the messages (a response format is shown to the
    model in the developer message, so it reasons knowing the shape its answer must have)."""
    conversation, settings, asked = request.conversation, request.settings, request.response_format
    return {
        "effort": settings.effort,
        "instructions": conversation.instructions,
        "tools": list(conversation.tools),
        "current_date": conversation.current_date,
        "builtin_tools": list(conversation.builtin_tools),
        "response_format": asked.prompt_text() if asked is not None else None,
    }


class LlamaCppBackend:
    """One gpt-oss model loaded in this process.

    Args:
        path: The GGUF file (the first shard of a split model).
        settings: How to load it (placement, context).
        log_path: Where llama.cpp's own log goes.
        progress: Load progress; returning False stops the load.
        options: llama.cpp-only options of every reply, unless a call gives its own.
    """

    capabilities = Capabilities(
        prefill=True, tools=True, namespaces=True, freeform_tools=True, builtin_tools=True,
        response_format=True, tool_choice=True, penalties=True, logit_bias=True,
        keep_conversations=True, tokenizer=True,
    )  # fmt: skip

    def __init__(
        self,
        path: Path,
        settings: LoadSettings,
        log_path: Path | None = None,
        progress: LoadProgress = no_load_progress,
        options: LlamaOptions | None = None,
    ) -> None:
        self.path = Path(path)
        self.settings = settings
        self.options = options or LlamaOptions()
        try:
            check_loadable(self.path)  # what llama.cpp would abort on never reaches it
        except GgufError as exc:
            raise BackendError(str(exc), kind="bad_file") from None
        self._log = native.route_logs(log_path)
        self._native = load(self.path, settings, self._log, progress)
        self._lock = threading.Lock()  # the context: decoding, the cache, the samplers
        self._vocab_lock = threading.Lock()  # the vocabulary, which close() frees
        # Under _vocab_lock: (cache key, tokens) of recent prompts.
        self._recent: deque[tuple[str | None, Tokenized]] = deque(maxlen=RECENT_PROMPTS)
        self._samplers = KeptSampler()
        self._grammars_taken: deque[str] = deque(maxlen=16)  # read by llama.cpp once already
        self._closed = False  # before _special_ids, which closes on a foreign vocabulary
        self._eagle: EagleDrafter | None = None
        ids = self._special_ids(tuple(STOP_TOKENS))
        self._stops: dict[int, StopReason] = {ids[t]: r for t, r in STOP_TOKENS.items()}
        # A vocab without Harmony's control tokens is refused here.
        self._ids = {**ids, **self._special_ids(HARMONY_TOKENS)}
        i = self._ids
        self._header = HeaderTokens(
            i["<|channel|>"], i["<|message|>"], i["<|constrain|>"],
            frozenset([i["<|start|>"], i["<|end|>"], *self._stops]),
        )  # fmt: skip
        window = int(native.model_meta(self._native.model, "gpt-oss.attention.sliding_window") or 0)
        self._caches = [
            PromptCache(self._native.context, window, sequence=n) for n in range(settings.sequences)
        ]
        self.cache = self._caches[0]
        self._pieces = native.PieceCache(self._native.vocab)
        self._n_vocab = int(native.lib().llama_vocab_n_tokens(self._native.vocab))
        self._parallel: ParallelDecoder | None = None
        if settings.sequences > 1:
            self._parallel = ParallelDecoder(
                self._native, self._caches, self._pieces, self._stops, settings.context, self._lock
            )
        # Prefill warms the one sequence a chat uses; replies decoded together have no "next".
        self.capabilities = replace(
            self.capabilities, prefill=self._parallel is None, parallel=settings.sequences
        )
        self._name = native.model_meta(self._native.model, "general.name") or self.path.stem
        if settings.draft_model and self._parallel is None:
            try:
                self._eagle = EagleDrafter(
                    Path(settings.draft_model), self._native, settings.context,
                    settings.n_batch, settings.gpu_layers != 0, self._native.threads,
                )  # fmt: skip
            except BaseException:
                self.close()
                raise

    def info(self) -> BackendInfo:
        """What is loaded and where."""
        s = self.settings
        gpus = "GPU" if len(s.tensor_split) < 2 else f"{len(s.tensor_split)} GPUs"
        if s.gpu_layers == 0:
            placement = "CPU"
        elif s.cpu_moe_layers:
            placement = f"{gpus}, experts of {s.cpu_moe_layers} layers in RAM"
        else:
            placement = gpus
        return BackendInfo(
            "llamacpp", self._name, placement, s.context, {"threads": str(self._native.threads)}
        )

    def keep_conversations(self, max_bytes: int) -> None:
        """Keep up to `max_bytes` of RAM of other conversations' caches, so that turns of
        several conversations taking turns (`serve`) each reuse their own prefix; 0: none."""
        with self._lock:
            shelf = StateShelf(max_bytes) if max_bytes > 0 else None
            for cache in self._caches:
                cache.shelf = shelf

    def tokenize(self, text: str, special: bool = True) -> list[int]:
        """Text to token ids with this model's vocabulary."""
        return self._tokenize(text, special)

    def _tokenize(
        self,
        text: str,
        special: bool = True,
        cancel: threading.Event | None = None,
        limit: int | None = None,
        key: str | None = None,
    ) -> list[int]:
        # Native, and ctypes lets go of the GIL: under a lock of its own, so that close()
        # cannot free the vocabulary under it, while replies decode (the vocabulary is only
        # read: requests of `serve` tokenize beside the decoding thread, not between its steps).
        # In pieces (token_chunks.py): a long word would overflow llama.cpp's stack, and a
        # huge prompt must stop when its request is cancelled.
        with self._vocab_lock:
            self._check_open()
            recent = self._recent
            own = [tokens for held, tokens in recent if held == key]
            done = tokenize_reusing(text, special, self._tokenize_piece, own, cancel, limit)
            if len(done.text) > 1_000:  # not the short control strings looked up at load
                # The newest prompt of a conversation stands in for its earlier ones.
                for older in [e for e in own if e.reusable(done.text, special)[0]]:
                    recent.remove((key, older))
                recent.append((key, done))
            return done.tokens.tolist()

    def count_prompt(self, request: ReplyRequest) -> int:
        """The tokens of the prompt `request` would send (a chat fits its context with it;
        recent prompts are reused, so counting a conversation again and again is cheap)."""
        messages = list(request.conversation.messages)
        text = render_prompt(messages, **_harmony_options(request))
        return len(self._tokenize(text, True, key=request.cache_key))

    def _tokenize_piece(self, text: str, special: bool) -> list[int]:
        return native.tokenize(self._native.vocab, text, special)

    def stream(
        self,
        request: ReplyRequest,
        cancel: threading.Event | None = None,
        options: LlamaOptions | None = None,
    ) -> Reply:
        """The assistant's next turn (see `Backend.stream`); `options` replace the backend's
        own llama.cpp options for this reply.

        Raises:
            UnsupportedRequest: also for a response format or tool choice the grammar cannot
                hold (a schema keyword it cannot express, a tool that is not offered).
        """
        check_request(self.capabilities, request, "llamacpp")
        self._check_biases(request)
        constraint = self._constraint(request)
        return Reply(self._generate(request, cancel, options or self.options, constraint))

    def _check_biases(self, request: ReplyRequest) -> None:
        """Refuse a logit bias for a token this vocabulary does not have (llama.cpp would
        abort on it when it samples on the GPU)."""
        for token, _bias in request.settings.logit_bias:
            if token >= self._n_vocab:
                raise UnsupportedRequest(
                    _("logit_bias names token {token}; this model has {size:,} tokens").format(
                        token=token, size=self._n_vocab
                    ),
                    _("Use token ids of this model's vocabulary."),
                    "logit_bias",
                )

    def _constraint(self, request: ReplyRequest) -> Constraint | None:
        """What the reply's response format or forced tool choice holds it to (None: nothing).

        Raises:
            UnsupportedRequest: naming "response_format" or "tool_choice", with the schema's
                `SchemaError` (its keyword and path) as the cause.
        """
        field = "tool_choice" if request.tool_choice.forced else "response_format"
        try:
            grammar = reply_grammar(request)
        except (SchemaError, ToolChoiceError) as exc:
            hint = _("Leave that keyword out of the schema, or check the answer afterwards.")
            if isinstance(exc, SchemaLoop):
                hint = _("Give each loop of refs a way out (an optional property, null).")
            elif isinstance(exc, ToolChoiceError):
                hint = _("Offer the tool, or ask for another.")
            raise UnsupportedRequest(str(exc), hint, field) from exc
        if grammar is None:
            return None
        if grammar.gbnf not in self._grammars_taken:  # a refusal is the schema's, not the reply's
            if not grammar_taken(self._native.vocab, grammar.gbnf):
                raise UnsupportedRequest(
                    _("llama.cpp refused the grammar made from the schema (see llama.log)"),
                    _("Simplify the schema, or check the answer afterwards."),
                    field,
                )
            self._grammars_taken.append(grammar.gbnf)
        barred = tuple(self._ids[token] for token in grammar.barred)
        until_final = tuple(self._ids[token] for token in grammar.barred_until_final)
        return Constraint(grammar.gbnf, grammar.from_final, barred, self._header, until_final)

    def _generate(
        self,
        request: ReplyRequest,
        cancel: threading.Event | None,
        options: LlamaOptions,
        constraint: Constraint | None,
    ) -> Generator[Event, None, Stats]:
        started = time.perf_counter()
        settings = request.settings
        messages = request.conversation.messages
        prompt = render_prompt(list(messages), **_harmony_options(request))
        turn_start = bool(messages) and messages[-1].role == "user"
        context_size, key = self.settings.context, request.cache_key
        if self._parallel is not None:
            try:
                tokens = self._fitting(self._tokenize(prompt, True, cancel, context_size, key))
            except TokenizeCancelled:
                return Stats(stop_reason="cancelled", context_size=context_size)
            decoding = Request(tokens, settings, options, cancel or threading.Event(),
                               turn_start=turn_start, constraint=constraint,
                               cache_key=key)  # fmt: skip
            return (yield from self._parallel.stream(decoding))
        with self._lock:  # every native call of a reply, tokenizing included, holds it
            self._check_open()
            try:
                tokens = self._fitting(self._tokenize(prompt, True, cancel, context_size, key))
            except TokenizeCancelled:
                return Stats(stop_reason="cancelled", context_size=context_size)
            loop = self._loop(cancel, key)
            if options.draft == "ngram":
                loop.drafter = NgramDrafter()
            loop.speculate = bool(options.draft) and loop.drafter is not None
            loop.graph_later = options.backend_sampling
            vocab, context = self._native.vocab, self._native.context
            sampler = self._samplers.get(
                vocab, settings, options, context, constraint, self._pieces
            )
            try:
                return (yield from loop.run(tokens, sampler, settings.max_tokens, started,
                                            turn_start, constraint))  # fmt: skip
            finally:
                self._samplers.release(sampler)

    def _fitting(self, tokens: list[int]) -> list[int]:
        """`tokens` (cut short at the context's size, see `_tokenize`), if the context holds
        them with room for a reply."""
        context_size = self.settings.context
        if len(tokens) >= context_size:
            raise BackendError(
                _(
                    "The conversation is {tokens:,} tokens or more, more than the "
                    "{context:,}-token context holds."
                ).format(tokens=len(tokens), context=context_size),
                hint=_("Start a new chat, or load the model with a larger --context."),
                kind="context_full",
            )
        return tokens

    def prefill(
        self,
        request: ReplyRequest,
        cancel: threading.Event | None = None,
        options: LlamaOptions | None = None,
    ) -> int:
        """Evaluate the next turn's known start into the KV cache (see `Backend.prefill`).

        The sampler chain for the request's settings is attached here too, so llama.cpp
        re-reserves its graph for GPU sampling now rather than in the reply.
        """
        check_request(self.capabilities, request, "llamacpp")
        settings = request.settings
        try:
            self._check_biases(request)
            constraint = self._constraint(request)
        except UnsupportedRequest:
            return 0  # the reply itself will say why
        prefix = render_next_turn_prefix(
            list(request.conversation.messages), **_harmony_options(request)
        )
        if self._parallel is not None:
            return 0  # see `capabilities`
        with self._lock:
            self._check_open()
            if cancel is not None and cancel.is_set():
                return 0  # superseded while it waited: leave the cache to the newer work
            key = request.cache_key
            try:
                tokens = self._tokenize(prefix, True, cancel, self.settings.context, key)
            except TokenizeCancelled:
                return 0
            if not tokens or len(tokens) >= self.settings.context - 1:
                return 0  # the reply will say the context is full
            loop = self._loop(cancel, key)
            vocab, context = self._native.vocab, self._native.context
            sampler = self._samplers.get(
                vocab, settings, options or self.options, context, constraint, self._pieces
            )
            try:
                return loop.prefill(tokens)
            finally:
                self._samplers.release(sampler)

    def _loop(self, cancel: threading.Event | None, key: str | None) -> TokenLoop:
        """A decode loop over sequence 0 for prompts of cache key `key`; an EAGLE-3 head, when
        loaded, follows its prompts (and drafts for replies that ask for drafts)."""
        loop = TokenLoop(
            self._native, self.cache, self._pieces, self._stops, self.settings.context, cancel
        )
        loop.drafter, loop.cache_key = self._eagle, key
        return loop

    def close(self) -> None:
        """Free the context and the model."""
        if self._closed:
            return
        if self._parallel is not None and not self._parallel.close(CLOSE_WAIT_SECONDS):
            self._closed = True  # stuck inside a decode: the memory goes when we exit
            return
        # A reply or prefill on another thread stops soon after its cancel is set; freeing
        # under it would crash. One that never lets go keeps the memory (freed at exit).
        if not self._lock.acquire(timeout=CLOSE_WAIT_SECONDS):
            self._closed = True  # nothing new starts on it; the memory goes when we exit
            return
        try:
            with self._vocab_lock:
                self._closed = True
                self._samplers.drop()
                token_trie.release(self._pieces)
                if self._eagle is not None:  # it borrows the model's embeddings
                    self._eagle.close()
                bindings = native.lib()
                bindings.llama_free(self._native.context)
                bindings.llama_model_free(self._native.model)
        finally:
            self._lock.release()

    def _check_open(self) -> None:
        if self._closed:
            raise BackendError(_("the model was closed"))

    def _special_ids(self, texts: tuple[str, ...]) -> dict[str, int]:
        ids = {}
        for text in texts:
            found = self._tokenize(text, special=True)
            if len(found) != 1:
                self.close()
                raise BackendError(
                    _(
                        "{name} has no {token} control token: it is not a gpt-oss model "
                        "with the Harmony vocabulary."
                    ).format(name=self.path.name, token=text),
                    kind="bad_file",
                )
            ids[text] = found[0]
        return ids

    def __enter__(self) -> LlamaCppBackend:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
