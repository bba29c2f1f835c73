"""Which `model` names a request may use for the loaded model.

The server has one model, listed by `GET /v1/models` (and Ollama's `/api/tags`) under its
first name and the names a user would type for it (`listed`). Clients and guides
spell gpt-oss many ways ("gpt-oss-20b", "gpt-oss:20b" as Ollama tags it, "openai/gpt-oss-20b"
as Hugging Face names it, "GPT-OSS-20B"), so a request names the loaded model when its name,
compared loosely (`normal`), is one of the server's names, or names the same gpt-oss model
(`family`: "gpt-oss-20b" for a file called gpt-oss-20b-mxfp4.gguf, Ollama's gpt-oss:20b, or
a GGUF whose general.name is "Gpt Oss 20b"). A name that is clearly another model
("gpt-oss-120b" for a 20b, "gpt-4o") stays a 404.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SPACER = re.compile(r"[\s_:]+")
_FAMILY = re.compile(r"gpt-oss-(\d+b)(?![a-z0-9])")
_SIZE = re.compile(r"\d+b")
BARE = "gpt-oss"  # the family without its size: the one gpt-oss loaded


def normal(name: str) -> str:
    """A name as it is compared: lower case, without an owner ("openai/") or a ".gguf" or
    "-gguf" ending, with spaces, underscores and colons as hyphens."""
    text = name.strip().lower().rsplit("/", 1)[-1]
    text = _SPACER.sub("-", text.removesuffix(".gguf"))
    return text.removesuffix("-gguf").strip("-")


def family(name: str) -> str | None:
    """The gpt-oss model a name stands for ("gpt-oss-20b"), or None when it names none."""
    found = _FAMILY.match(normal(name))
    return f"gpt-oss-{found.group(1)}" if found else None


def accepts(asked: str, names: Sequence[str]) -> bool:
    """Whether `asked` names the model the server calls `names`."""
    wanted = normal(asked)
    if wanted in {normal(n) for n in names}:
        return True
    families = {f for f in map(family, names) if f is not None}
    if not families:
        return False
    if wanted == BARE:
        return True
    if _SIZE.fullmatch(wanted):  # an alias of the catalog's kind: "20b"
        wanted = f"{BARE}-{wanted}"
    return family(wanted) in families


def listed(names: Sequence[str]) -> tuple[str, ...]:
    """The names a model list shows for the model the server calls `names`: its id, then the
    ones a user would type for its gpt-oss model ("gpt-oss:20b" as Ollama tags it, and
    "gpt-oss-20b"), so that any app's model picker finds it. A model of no gpt-oss family
    (a file of one's own) is listed under its id alone."""
    shown = [names[0]]
    for found in dict.fromkeys(f for f in map(family, names) if f is not None):
        size = found.removeprefix(f"{BARE}-")
        shown += [f"{BARE}:{size}", found]
    return tuple(dict.fromkeys(shown))
