"""Folders for the browser's tests: a generated corpus of notes, code and pages with one file
about a known topic, and the grammars that steer the tiny model through search, open and an
answer that cites what it opened."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "attachments"))
from attach_helpers import PNG, pdf_bytes

WORDS = (
    "river mountain engine market garden letter window silver harbour orbit meadow "
    "lantern copper violin census glacier bakery tunnel ledger compass pepper thunder "
    "marble cactus falcon quarry velvet anchor biscuit cobalt dolphin ember fjord "
    "granite hammock iris jasmine kettle lagoon magnet nectar oyster pylon quiver raven "
    "saddle timber umbra"
)
WORDS_LIST = WORDS.split()
ZEBRA_NOTE = (
    "# Zebra stripes\n"
    "\n"
    "Field notes from the savanna.\n"
    "Zebras have stripes that deter biting flies, which land less often on them.\n"
    "The stripes may also cool them and confuse predators.\n"
)


def sentence(rng: random.Random, words: int = 12) -> str:
    """Words of `WORDS` (never the known topic's), as a sentence."""
    return " ".join(rng.choice(WORDS_LIST) for _ in range(words)).capitalize() + "."


def write_corpus(folder: Path, files: int, seed: int = 7) -> Path:
    """`files` files of generated text (Markdown, Python, HTML, plain text) in nested folders,
    plus notes/zebras.md about the known topic; returns the folder."""
    rng = random.Random(seed)
    for number in range(files):
        sub = folder / f"part{number % 10}" / f"group{number % 7}"
        sub.mkdir(parents=True, exist_ok=True)
        kind = number % 4
        if kind == 0:
            text = f"# {sentence(rng, 3)}\n\n" + "\n\n".join(sentence(rng) for _ in range(6))
            (sub / f"note{number}.md").write_text(text + "\n")
        elif kind == 1:
            body = "\n".join(f"    # {sentence(rng, 6)}\n    x{i} = {i}" for i in range(6))
            (sub / f"module{number}.py").write_text(f"def f{number}():\n{body}\n    return 0\n")
        elif kind == 2:
            page = f"<html><head><title>{sentence(rng, 3)}</title></head><body><p>"
            page += "</p><p>".join(sentence(rng) for _ in range(5)) + "</p></body></html>"
            (sub / f"page{number}.html").write_text(page)
        else:
            (sub / f"log{number}.txt").write_text("\n".join(sentence(rng) for _ in range(8)))
    (folder / "notes").mkdir(parents=True, exist_ok=True)
    (folder / "notes" / "zebras.md").write_text(ZEBRA_NOTE)
    return folder


def write_skipped_kinds(folder: Path, outside: Path) -> None:
    """One file of each kind the index skips: an image, a binary with NUL bytes, a file over
    the size limit (sparse), a damaged PDF, and a link to a file outside the folder."""
    (folder / "photo.png").write_bytes(PNG + b"\0" * 64)
    (folder / "blob.dat").write_bytes(b"zebra\0\1\2stripes")
    with (folder / "huge.log").open("wb") as handle:
        handle.truncate(11 * 1024 * 1024)
    (folder / "broken.pdf").write_bytes(pdf_bytes(["zebra"])[:200])
    secret = outside / "secret.md"
    secret.write_text("# Outside\n\nThe zebra password is hunter2.\n")
    (folder / "link.md").symlink_to(secret)


# The tiny model, grammar-steered: it searches, opens the first result, and answers citing
# line 3 of the page it opened (cursor 1), which is line 4 of notes/zebras.md.
SEARCHES = (
    'root ::= <|channel|> "analysis" <|message|> "Let me search" <|end|> '
    '<|start|> "assistant" <|channel|> "analysis to=browser.search code" <|message|> '
    '"{\\"query\\": \\"zebra stripes\\"}"'
)
OPENS = (
    'root ::= <|channel|> "analysis" <|message|> "Open the first" <|end|> '
    '<|start|> "assistant" <|channel|> "analysis to=browser.open code" <|message|> '
    '"{\\"id\\": 0}"'
)
CITED_ANSWER = "Their stripes deter biting flies 【1†L3】."
CITES = (
    'root ::= <|channel|> "analysis" <|message|> "Found it" <|end|> '
    f'<|start|> "assistant" <|channel|> "final" <|message|> "{CITED_ANSWER}"'
)
