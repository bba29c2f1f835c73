"""Prompt text cut into pieces that llama.cpp can tokenize one at a time, safely.

llama.cpp splits text into words with `std::regex` (gpt-oss's pre-tokenizer), whose matcher
recurses once per character of a word: a "word" of ~30,000 letters with no space overflows an
8 MiB stack and kills the process. And one call over a whole prompt cannot be interrupted: 200,000
tiny messages kept a request busy for minutes.

So a prompt is cut where the pre-tokenizer would cut anyway, and each piece is tokenized on its
own, with a look at the cancel event between pieces. The cuts keep the tokens exact:

- before a space that follows a character that is not whitespace: no pattern of the
  pre-tokenizer reaches across that boundary (a space only ever starts a word, or belongs to a
  run of whitespace, and the character before it is neither), and nothing before it looks
  ahead past it;
- before `<|start|>` when control tokens are parsed: llama.cpp cuts the text at every control
  token before the regex runs.

A piece whose longest stretch without such a cut is long (a long word, or text in a script
written without spaces) goes to a thread with a stack big enough for it. Only a stretch longer
than that stack can serve (hundreds of thousands of letters in one word, which no language has)
is cut where it stands, and its tokens then differ from one call's at the cut.
"""

from __future__ import annotations

import re
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

# A piece's size: a cancel check at least every second or so of tokenizing, even of text
# dense with control tokens (llama.cpp compiles its regex anew for each run of text between
# two of them, ~1 ms each).
CHUNK_CHARS = 8_192
# The matcher takes 260-420 bytes of stack per character of a word (measured: 4,000 letters
# overflow 1 MiB, 400,000 fit in 256 MiB). Threads may have as little as 512 KiB (macOS),
# so a piece with a longer stretch than this without a cut goes to a thread of its own.
SAFE_STRETCH = 1_000
BIG_STACK_BYTES = 256 << 20  # reserved, not committed on Linux: only the depth used is touched
LONGEST_STRETCH = 400_000  # what that stack holds with room to spare; longer ones are cut

_START = "<|start|>"
# A space after a character that is not whitespace (Python's whitespace includes every
# character llama.cpp counts as whitespace, so this never cuts where llama.cpp would not).
_SPACE_CUT = re.compile(r"(?<=\S) ")


class TokenizeCancelled(Exception):
    """The cancel event was set while the prompt was being tokenized."""


def exact_cuts(text: str, special: bool) -> list[int]:
    """Positions in `text` where tokenizing the two sides apart gives the same tokens."""
    cuts = {m.start() for m in _SPACE_CUT.finditer(text)}
    if special:
        start = text.find(_START, 1)
        while start > 0:
            cuts.add(start)
            start = text.find(_START, start + 1)
    return sorted(cuts)


def pieces(text: str, special: bool) -> Iterator[tuple[str, bool]]:
    """`text` in pieces of about `CHUNK_CHARS`, each with whether it needs a big stack.

    Pieces end only at exact cuts, except inside a stretch of more than `LONGEST_STRETCH`
    characters without one.
    """
    begin, last_cut, stretch = 0, 0, 0
    for cut in [*exact_cuts(text, special), len(text)]:
        while cut - last_cut > LONGEST_STRETCH:  # no stack holds it: cut where it stands
            if last_cut > begin:
                yield text[begin:last_cut], stretch > SAFE_STRETCH
            forced = _forced_cut(text, last_cut + LONGEST_STRETCH)
            yield text[last_cut:forced], True
            begin = last_cut = forced
            stretch = 0
        if cut - begin > CHUNK_CHARS and last_cut > begin:
            yield text[begin:last_cut], stretch > SAFE_STRETCH
            begin, stretch = last_cut, 0
        stretch = max(stretch, cut - last_cut)
        last_cut = cut
    if len(text) > begin:
        yield text[begin:], stretch > SAFE_STRETCH


def _forced_cut(text: str, at: int) -> int:
    """`at`, or the start of a control-token name that `at` would split (`<|message|>`)."""
    opening = text.rfind("<|", at - 64, at)
    if opening > 0 and text.find("|>", opening, at) < 0:
        return opening
    return at


@dataclass
class Tokenized:
    """A text's tokens and where its pieces ended, as (characters, tokens) so far: a later
    text that starts the same way takes the tokens up to one of those ends as they are."""

    text: str
    special: bool
    tokens: array[int]
    marks: list[tuple[int, int]]

    def reusable(self, text: str, special: bool) -> tuple[int, int]:
        """(characters, tokens) of `text` that these tokens already cover exactly."""
        if special != self.special or not self.marks:
            return 0, 0
        shared = _shared_length(self.text, text)
        for chars, count in reversed(self.marks):
            # A piece end is only kept where `text` is cut there too (what follows may differ).
            if chars <= shared and _is_exact_cut(text, chars, special):
                return chars, count
        return 0, 0


def tokenize_reusing(
    text: str,
    special: bool,
    tokenize: Callable[[str, bool], list[int]],
    earlier: Iterable[Tokenized],
    cancel: threading.Event | None = None,
    limit: int | None = None,
) -> Tokenized:
    """Tokens of `text`, through `tokenize` one piece at a time (only the first pieces once
    there are `limit` tokens or more: the rest could not be used anyway), taking what one of
    `earlier` texts shares with it from that text's tokens (a chat's next prompt repeats the
    last one).

    Raises:
        TokenizeCancelled: `cancel` was set between two pieces.
    """
    start, count, source = 0, 0, None
    for known in earlier:
        chars, covered = known.reusable(text, special)
        if chars > start:
            start, count, source = chars, covered, known
    tokens = array("i", source.tokens[:count] if source else ())
    marks = [m for m in source.marks if m[0] <= start] if source else []
    offset = start
    for number, (piece, deep) in enumerate(pieces(text[start:], special)):
        if number and cancel is not None and cancel.is_set():  # between pieces, not before
            raise TokenizeCancelled
        if limit is not None and len(tokens) >= limit:
            break
        tokens.extend(on_big_stack(tokenize, piece, special) if deep else tokenize(piece, special))
        offset += len(piece)
        marks.append((offset, len(tokens)))
    return Tokenized(text[:offset], special, tokens, marks)


def _is_exact_cut(text: str, at: int, special: bool) -> bool:
    if at <= 0 or at >= len(text):
        return False
    if text[at] == " " and not text[at - 1].isspace():
        return True
    return special and text.startswith(_START, at)


def _shared_length(a: str, b: str) -> int:
    """The length of the longest common start of `a` and `b` (slices compare in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # by bisection; a[:low] is known equal, so only the part after it is compared
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def on_big_stack(tokenize: Callable[[str, bool], list[int]], text: str, special: bool) -> list[int]:
    """`tokenize(text, special)` on a thread of its own with a `BIG_STACK_BYTES` stack."""
    result: list[list[int]] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            result.append(tokenize(text, special))
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    with _STACK_SIZE_LOCK:  # the size applies to threads started after it is set
        previous = threading.stack_size(BIG_STACK_BYTES)
        try:
            worker = threading.Thread(target=work, name="tokenize-deep", daemon=True)
            worker.start()
        finally:
            threading.stack_size(previous)
    worker.join()
    if failure:
        raise failure[0]
    return result[0]


_STACK_SIZE_LOCK = threading.Lock()
