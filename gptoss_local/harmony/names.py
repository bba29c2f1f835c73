"""Tool names as a client gives them, and the names the model sees in their place.

Harmony addresses a function as ``functions.NAME`` and declares it as ``type NAME = ...``, so
NAME must be an identifier; clients name tools otherwise (Claude Code's MCP tools are
``mcp__my-server__do_thing``, MCP servers name theirs ``fs.read``). `ToolNames` gives each name
of one request that is not an identifier a safe one (``mcp__my_server__do_thing``: every other
character an underscore, a digit first behind one, and ``_2``, ``_3`` ... after a name another
tool has already), the same for every use of that name in the request, and maps the model's
calls back. A name that is an identifier already is left as it is, so its prompt does not
change. Each API takes names of its own form (`NameRule`); others are refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from gptoss_local.conversation import FUNCTIONS, is_identifier, split_recipient

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class NameRule:
    """The tool names an API takes: `pattern` matches the whole name; `words` says it."""

    pattern: re.Pattern[str]
    words: str

    def check(self, name: str, what: str = "tool") -> None:
        """Refuse a name this API refuses.

        Raises:
            ValueError: `name` is not a string of the API's form.
        """
        if not isinstance(name, str) or not self.pattern.fullmatch(name):
            raise ValueError(f"{what} name {name!r} must be {self.words}")


# OpenAI's `^[a-zA-Z0-9_-]{1,64}$` and Anthropic's `{1,128}`, with the dots of MCP tool names
# (`fs.read`) besides, and no cap on the length: a local server need not refuse a long name
# (an MCP tool's full name runs long), and the model is shown any length.
OPENAI_NAMES = ANTHROPIC_NAMES = NameRule(
    re.compile(r"[A-Za-z0-9_.-]+"), "letters, digits, underscores, hyphens or dots"
)
# Ollama takes any name.
ANY_NAME = NameRule(re.compile(r".+", re.DOTALL), "a non-empty string")


def safe_name(name: str) -> str:
    """`name` as an identifier: each character an identifier cannot hold an underscore, and an
    underscore before a digit first (``get-weather`` -> ``get_weather``, ``2fa`` -> ``_2fa``)."""
    safe = _UNSAFE.sub("_", name) or "_"
    return f"_{safe}" if safe[0].isdigit() else safe


class NameMap:
    """The client's names of one kind (tools, or namespaces) in one request, and the model's
    names for them.

    Args:
        offered: The names the request offers, in order: identifiers among them keep their
            names, the others get free ones (in that order). Names `rule` refuses are
            skipped (reading the tool refuses them).
        rule: The names the request's API takes.
        what: What the names name, for messages.
    """

    def __init__(
        self, offered: Iterable[str] = (), rule: NameRule = ANY_NAME, what: str = "tool"
    ) -> None:
        self.rule, self.what = rule, what
        self._model: dict[str, str] = {}  # the client's name -> the model's
        self._client: dict[str, str] = {}  # the model's name -> the client's
        given = [n for n in dict.fromkeys(offered) if isinstance(n, str)]
        taken = [n for n in given if rule.pattern.fullmatch(n)]
        for name in taken:
            if is_identifier(name):
                self._add(name, name)
        for name in taken:
            self.model(name)

    def model(self, name: str) -> str:
        """The model's name for what the client calls `name`; a name met for the first time
        (a call in the history to a tool no longer offered) is given one now.

        Raises:
            ValueError: the request's API refuses `name`.
        """
        found = self._model.get(name)
        if found is not None:
            return found
        self.rule.check(name, self.what)
        found = candidate = name if is_identifier(name) else safe_name(name)
        number = 2
        while found in self._client:
            found, number = f"{candidate}_{number}", number + 1
        self._add(name, found)
        return found

    def known(self, name: str) -> str | None:
        """The model's name for `name`, if the request has given it one (None if not)."""
        return self._model.get(name)

    def client(self, name: str) -> str:
        """The client's name for what the model calls `name` (a name given to nothing of the
        request, as it is)."""
        return self._client.get(name, name)

    def _add(self, client: str, model: str) -> None:
        self._model[client], self._client[model] = model, client


class ToolNames(NameMap):
    """The client's names of one request's tools and the model's names for them (`NameMap`),
    and the same of the namespaces its tools are grouped in (`namespaces`: the Responses
    API's).

    Args:
        offered: The names of the tools the request offers, in order.
        rule: The names the request's API takes (of tools and of namespaces).
        namespaces: The names of the namespaces it offers, in order.
    """

    def __init__(
        self, offered: Iterable[str] = (), rule: NameRule = ANY_NAME, namespaces: Iterable[str] = ()
    ) -> None:
        super().__init__(offered, rule)
        self.namespaces = NameMap([FUNCTIONS, *namespaces], rule, "namespace")

    def call(self, recipient: str) -> tuple[str, str]:
        """The namespace and the tool a call's recipient addresses, by the client's names
        (``functions.get_weather`` or ``get_weather`` -> ``("functions", "get-weather")``)."""
        namespace, name = split_recipient(recipient)
        return self.namespaces.client(namespace), self.client(name)

    def called(self, recipient: str) -> str:
        """A call's recipient as the client names its tool: the client's name of a function,
        ``NAMESPACE.NAME`` of a tool of another namespace."""
        namespace, name = self.call(recipient)
        return name if namespace == FUNCTIONS else f"{namespace}.{name}"
