"""Streaming parser for gpt-oss output in the Harmony format.

Output comes in one of two ways, one per parser. `feed`: text with control tokens written
out (``<|channel|>`` ...), in chunks of any size, for callers that only have text. Then
anything spelling a control token is one. `feed_token`: one sampled token at a time with
whether it is a control token, as the llama.cpp backend knows; then only real control
tokens are markers, and ordinary tokens stay text even where they spell ``<|end|>``.

The prompt ended with ``<|start|>assistant``, so the first header usually starts with
``<|channel|>``. Output is a list of `gptoss_local.events` per call.

Guarantees: text deltas stream as soon as they are known not to be part of a marker; fed as
text, no control token or piece of one ever appears in delta text, and the merged events do
not depend on how the input was chunked; malformed output never raises. Text whose purpose
is unclear becomes reasoning, never answer.
"""

from __future__ import annotations

import codecs

from gptoss_local.events import (
    AnswerDelta,
    Event,
    PreambleDelta,
    ReasoningDelta,
    TurnEnded,
    merge_events,
)
from gptoss_local.harmony import header as hdr
from gptoss_local.harmony.calls import tool_call
from gptoss_local.harmony.header import CHANNEL, CONSTRAIN, ESCAPED_LT
from gptoss_local.harmony.neutralise import WORD_JOINER, is_control_token, partial_token_start
from gptoss_local.harmony.scan import LEAKS, next_token

START, END, MESSAGE = "<|start|>", "<|end|>", "<|message|>"
_STOPS = ("<|return|>", "<|call|>", "<|endoftext|>")
_DELTAS: dict[str, type[ReasoningDelta | AnswerDelta | PreambleDelta]] = {
    "reasoning": ReasoningDelta,
    "answer": AnswerDelta,
    "preamble": PreambleDelta,
}
# A real header is one short line; past this many characters, or past a line break, it is
# text written without a header.
_HEADER_LIMIT = 256
_UNESCAPE = str.maketrans({ESCAPED_LT: "<"})


class HarmonyStreamParser:
    """Turns one assistant turn of Harmony output into events, piece by piece."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._by_token: bool | None = None  # fed by `feed_token` (True) or `feed` (False)
        self._pending = ""  # input not yet decided (could still become a marker)
        self._mode = "header"  # "header", "content" or "done"
        self._header = ""  # header so far, with <|channel|>/<|constrain|> kept as text
        self._idle = False  # between messages (after <|end|>), not inside one
        self._kind = "reasoning"  # what the open message's text is: reasoning/answer/...
        self._stripped = False  # the open message began with a leaked header word
        self._recipient: str | None = None
        self._channel = "commentary"  # channel of the open tool call
        self._raw: list[str] = []  # tool-call arguments collected so far
        self._finished = False
        self._tails: dict[str, str] = {}  # last text emitted per delta kind
        self._seams: set[str] = set()  # kinds whose next text needs a leading word joiner
        # Headers read back as message text (`_recover`), and the kind of the last one: lets a
        # caller counting tokens count those it saw go into a header as that kind's text.
        self.recovered = 0
        self.recovered_kind = "reasoning"

    @property
    def content_kind(self) -> str | None:
        """What the message being read is ("reasoning", "answer", "preamble", "tool"); None
        while a header is read or between messages."""
        return self._kind if self._mode == "content" else None

    def feed(self, chunk: str | bytes) -> list[Event]:
        """Consume the next piece of output, as text.

        Args:
            chunk: Text, or UTF-8 bytes (a character may be split across chunks).

        Returns:
            Events that became certain with this chunk.

        Raises:
            ValueError: If this parser was fed tokens before.
        """
        self._fed(by_token=False)
        if isinstance(chunk, bytes):
            text = self._decoder.decode(chunk)
        else:  # flush bytes left over from an earlier bytes chunk first
            text = self._decoder.decode(b"", final=True) + chunk
        return self._take(text)

    def feed_token(self, piece: str | bytes, *, control: bool) -> list[Event]:
        """Consume one token of output.

        Args:
            piece: The token's text or UTF-8 bytes (a character may span tokens).
            control: Whether the token is a control token. A control token acts as the
                Harmony marker it is (one the format does not use is dropped, never text);
                any other token is text, whatever it spells.

        Returns:
            Events that became certain with this token.

        Raises:
            ValueError: If this parser was fed text before.
        """
        self._fed(by_token=True)
        if not control:
            text = self._decoder.decode(piece) if isinstance(piece, bytes) else piece
            if self._plain_text_next():  # most tokens of a reply: no scan for markers
                out: list[Event] = []
                if text:
                    self._on_text(text.replace("<", ESCAPED_LT), out)
                return out
            return self._take(text.replace("<", ESCAPED_LT))
        # A character cut off by a control token can no longer be completed.
        text = self._decoder.decode(b"", final=True).replace("<", ESCAPED_LT)
        token = piece.decode("utf-8", "replace") if isinstance(piece, bytes) else piece
        return self._take(text + token if is_control_token(token) else text)

    def finish(self) -> list[Event]:
        """Signal the end of output and return the remaining events, ending with `TurnEnded`.

        Returns:
            The last events; empty if the turn already ended or finish was called before.
        """
        if self._finished:
            return []
        self._finished = True
        tail = self._decoder.decode(b"", final=True)
        self._pending += tail.replace("<", ESCAPED_LT) if self._by_token else tail
        if self._mode == "done":
            return []
        # A marker cut off by the end of output is not text the model meant to write.
        cut = partial_token_start(self._pending, opener_only=True)
        self._pending = self._pending if cut is None else self._pending[:cut]
        out = self._drain(eof=True)
        head = self._header
        if self._mode == "header" and hdr.has_garbage(head) and not hdr.unfinished(head):
            self._recover("")
            out += self._drain(eof=True)
        if self._mode == "content":
            if self._kind == "tool":
                call = tool_call(
                    self._recipient or "", self._arguments(), cut=True, channel=self._channel
                )
                out.append(call)
            out.append(TurnEnded("truncated"))
        elif self._mode == "header":
            out.append(TurnEnded("end_of_stream" if self._idle else "truncated"))
        self._mode = "done"
        return out

    # -- scanning ------------------------------------------------------------------------

    def _fed(self, *, by_token: bool) -> None:
        if self._by_token is None:
            self._by_token = by_token
        elif self._by_token != by_token:
            raise ValueError("feed a parser either text (feed) or tokens (feed_token), not both")

    def _plain_text_next(self) -> bool:
        """Whether an ordinary token's text goes straight to the open message: inside one
        opened by a real header (where no leaked header word is looked for), nothing held
        back. Its `<` escaped, such text holds no marker nor the start of one, so scanning it
        would find none (`_drain`)."""
        return (
            self._mode == "content"
            and not self._pending
            and not self._finished
            and not (self._stripped and self._kind == "reasoning")
        )

    def _take(self, text: str) -> list[Event]:
        if self._finished or self._mode == "done":
            return []
        self._pending += text
        return self._drain(eof=False)

    def _drain(self, *, eof: bool) -> list[Event]:
        out: list[Event] = []
        while self._pending and self._mode != "done":
            leaks = self._mode == "content" and self._kind == "reasoning" and self._stripped
            start, end, token = next_token(self._pending, leaks=leaks, eof=eof)
            if start > 0:  # text first; it may change the mode, so scan again after it
                text, self._pending = self._pending[:start], self._pending[start:]
                self._on_text(text, out)
            elif token is None:
                break  # all that is left might still become a marker
            else:
                self._pending = self._pending[end:]
                self._on_token(token, out)
        return out

    def _on_text(self, text: str, out: list[Event]) -> None:
        if self._mode == "content":
            if self._kind == "tool":
                self._raw.append(text)
            else:
                self._emit(self._kind, text, out)
            return
        self._header += text
        body = self._header.lstrip()
        # Wait while a channel name may still be growing, so the verdict never depends on
        # where the input happened to be cut.
        too_long = len(body) > _HEADER_LIMIT or "\n" in body.rstrip()
        if too_long and not hdr.channel_growing(body):
            self._recover("")

    def _mark_seams(self) -> None:
        # Text on both sides of consumed input could join into a control token once a UI
        # concatenates the deltas ("a<|e" + <|message|> + "nd|>"): mark the seam for a joiner.
        # Fed by token, text may spell a control token anyway: it is what the model wrote.
        if not self._by_token:
            seams = (k for k, t in self._tails.items() if partial_token_start(t) is not None)
            self._seams.update(seams)

    def _on_token(self, token: str, out: list[Event]) -> None:
        self._mark_seams()
        if token in LEAKS:
            self._kind = LEAKS[token]
        elif self._mode == "content":
            self._content_token(token, out)
        else:
            self._header_token(token, out)

    def _content_token(self, token: str, out: list[Event]) -> None:
        # A header marker inside content means the model began a new message without
        # closing this one: close it implicitly. Other markers are dropped.
        if token in _STOPS:
            called = self._end_message(out)
            out.append(TurnEnded("call" if called else "return"))
            self._mode = "done"
        elif token in (END, START, CHANNEL):
            self._end_message(out)
            self._idle = token == END
            self._header = CHANNEL if token == CHANNEL else ""

    def _header_token(self, token: str, out: list[Event]) -> None:
        if token in (CHANNEL, CONSTRAIN):
            self._header += token
        elif token == MESSAGE:
            self._open_message(out)
        elif token in (START, END) or token in _STOPS:
            if hdr.has_garbage(self._header):
                self._recover(token)  # the header was text; let the content rules see token
                return
            self._header = ""
            self._idle = token == END
            if token in _STOPS:
                out.append(TurnEnded("return"))
                self._mode = "done"

    # -- messages ------------------------------------------------------------------------

    def _open_message(self, out: list[Event]) -> None:
        found = hdr.read_header(self._header)
        if found.before:  # text before the header: keep it, as reasoning
            self._emit("reasoning", found.before, out)
            self._mark_seams()
        recipient = found.recipient.translate(_UNESCAPE) if found.recipient else None
        self._begin(found.kind, recipient)
        self._channel = found.channel or "commentary"

    def _emit(self, kind: str, text: str, out: list[Event]) -> None:
        text = text.translate(_UNESCAPE) if self._by_token else text
        if kind in self._seams:
            text = WORD_JOINER + text
            self._seams.discard(kind)
        self._tails[kind] = (self._tails.get(kind, "") + text)[-32:]
        out.append(_DELTAS[kind](text))

    def _begin(self, kind: str, recipient: str | None, *, stripped: bool = False) -> None:
        self._mode, self._kind, self._recipient = "content", kind, recipient
        self._stripped = stripped
        self._header, self._raw, self._idle = "", [], False

    def _arguments(self) -> str:
        raw = "".join(self._raw)
        return raw.translate(_UNESCAPE) if self._by_token else raw

    def _end_message(self, out: list[Event]) -> bool:
        """Close the open message; True when it was a tool call."""
        called = self._kind == "tool"
        if called:
            out.append(tool_call(self._recipient or "", self._arguments(), channel=self._channel))
        self._mode, self._kind, self._recipient, self._raw = "header", "reasoning", None, []
        return called

    def _recover(self, token: str) -> None:
        """Treat a header that never reached <|message|> as message text (`token`, the
        marker that showed it, is read again as content)."""
        head = self._header
        kind, used, stripped = hdr.recover_header(head)
        self.recovered, self.recovered_kind = self.recovered + 1, kind
        self._begin(kind, None, stripped=stripped)
        self._pending = head[used:] + token + self._pending


def parse_completion(text: str | bytes) -> list[Event]:
    """Parse a whole completion at once, as text.

    Args:
        text: The complete output of one turn.

    Returns:
        Its events with adjacent deltas of the same kind merged.
    """
    parser = HarmonyStreamParser()
    return merge_events(parser.feed(text) + parser.finish())
