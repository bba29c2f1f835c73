"""A JSON Schema `pattern` rewritten into the regular expressions the converter reads.

The converter's pattern reader copies much of a pattern into the grammar as it is: it needs
``^...$`` around it, takes ``(?:`` for an error, writes ``\\.`` and ``\\d`` into the grammar
where llama.cpp does not know them, loops for ever on a lone ``}``, and lets ``.`` and ``[^...]``
write a ``"`` or a ``\\`` raw inside the JSON string, which breaks it. `translate_pattern`
reads the pattern itself and writes the same language in the subset the converter handles:
anchors around it (``.*`` where the pattern did not anchor, since JSON Schema searches),
escapes as character classes of code points, and every class without ``"``, ``\\``, ``|`` and
control characters (a value holding them is refused, or they are left out: only tighter; the
``|`` is left out so that no Harmony control token, which all start ``<|``, fits).
"""

from __future__ import annotations

from gptoss_local.schemas.errors import SchemaError

# Most repeats of a bounded quantifier: the converter nests one group per optional repeat.
MOST_OPTIONAL = 256
MOST_REPEATS = 2000
TOP = 0x10FFFF
# Never in a class or a literal: they need a JSON escape (", \, controls) or could start a
# Harmony control token (|).
BARRED = ((0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C), (0x7C, 0x7C))
PLAIN = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !#%&',-/:;<=>@_`~")
CLASS_ESCAPES = {
    "d": [(0x30, 0x39)],
    "w": [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
    "s": [(0x20, 0x20)],  # only the space: other white space needs a JSON escape
}
Ranges = list[tuple[int, int]]


def translate_pattern(pattern: str, path: str) -> str:
    """`pattern` as an anchored regular expression the converter reads exactly.

    Raises:
        SchemaError: syntax it cannot hold (look-arounds, back-references, word boundaries,
            a literal quote or backslash, control characters, huge counts).
    """
    body, start, end = pattern, "", ""
    if body.startswith("^"):
        body, start = body[1:], "^"
    if body.endswith("$") and not _escaped(body, len(body) - 1):
        body, end = body[:-1], "$"
    out = _Reader(body, path).read()
    if not out:
        raise SchemaError("pattern", path, "it matches only empty text")
    return "^" + ("" if start else ".*") + f"({out})" + ("" if end else ".*") + "$"


def _escaped(text: str, index: int) -> bool:
    slashes = len(text[:index]) - len(text[:index].rstrip("\\"))
    return slashes % 2 == 1


class _Reader:
    def __init__(self, text: str, path: str) -> None:
        self.text, self.path, self.i = text, path, 0
        self.depth = 0
        self.after_atom = False

    def fail(self, why: str) -> SchemaError:
        return SchemaError("pattern", self.path, f"{why} (at {self.i} of /{self.text}/)")

    def read(self) -> str:
        out: list[str] = []
        while self.i < len(self.text):
            out.append(self.step())
        if self.depth:
            raise self.fail("a group is not closed")
        return "".join(out)

    def step(self) -> str:
        c = self.text[self.i]
        self.i += 1
        if c in "*+?{":
            return self.quantifier(c)
        self.after_atom = c not in "(|"
        if c == "\\":
            return _class(self.escape())
        if c == ".":
            return "."
        if c == "[":
            return _class(self.bracket())
        if c == "(":
            return self.group()
        if c == ")":
            self.depth -= 1
            if self.depth < 0:
                raise self.fail("a ) closes no group")
            return ")"
        if c == "|":
            return "|"
        if c in "^$":
            raise self.fail(f"{c} is read only at the start or end")
        return self.literal(c)

    def literal(self, c: str) -> str:
        if c in PLAIN:
            return c
        return _class(_allowed([(ord(c), ord(c))], self))

    def group(self) -> str:
        self.depth += 1
        if self.text.startswith("?:", self.i):
            self.i += 2
        elif self.text.startswith("?<", self.i) and self.text[self.i + 2 : self.i + 3] not in (
            "=",
            "!",
        ):
            close = self.text.find(">", self.i)
            if close < 0:
                raise self.fail("a group name is not closed")
            self.i = close + 1  # a named group: the name is not needed
        elif self.text.startswith("?", self.i):
            raise self.fail("look-arounds and other (? groups are not supported")
        return "("

    def quantifier(self, c: str) -> str:
        if not self.after_atom:
            if c == "{":  # not a quantifier: a literal brace
                self.after_atom = True
                return _class([(0x7B, 0x7B)])
            raise self.fail(f"{c} follows nothing")
        out = c
        if c == "{":
            close = self.text.find("}", self.i)
            counts = self.text[self.i : close].split(",") if close > 0 else []
            if not counts or len(counts) > 2 or not all(n.strip().isdigit() or (
                    i == 1 and not n.strip()) for i, n in enumerate(counts)):  # fmt: skip
                self.after_atom = True
                return _class([(0x7B, 0x7B)])  # not a quantifier: a literal brace
            self.i = close + 1
            low = int(counts[0])
            high = int(counts[1]) if len(counts) == 2 and counts[1].strip() else None
            high = low if len(counts) == 1 else high
            if low > MOST_REPEATS or (high is not None and high - low > MOST_OPTIONAL):
                raise self.fail(f"counts above {MOST_REPEATS} (or more than {MOST_OPTIONAL} "
                                "optional repeats) are not supported")  # fmt: skip
            if high is not None and high < low:
                raise self.fail("a count range is backwards")
            out = f"{{{low},{'' if high is None else high}}}"
        if self.text.startswith("+", self.i):
            raise self.fail("possessive quantifiers are not supported")
        if self.text.startswith("?", self.i):
            self.i += 1  # lazy: the same strings match
        self.after_atom = False
        return out

    def escape(self) -> Ranges:
        if self.i >= len(self.text):
            raise self.fail("a pattern cannot end with \\")
        c = self.text[self.i]
        self.i += 1
        if c.lower() in CLASS_ESCAPES:
            ranges = CLASS_ESCAPES[c.lower()]
            return _allowed(_complement(ranges) if c.isupper() else ranges, self)
        if c in "ux":
            size = 4 if c == "u" else 2
            digits = self.text[self.i : self.i + size]
            if len(digits) != size or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise self.fail(f"\\{c} needs {size} hex digits")
            self.i += size
            return _allowed([(int(digits, 16), int(digits, 16))], self)
        if c.isalnum():
            raise self.fail(f"\\{c} is not supported")
        return _allowed([(ord(c), ord(c))], self)

    def bracket(self) -> Ranges:
        negate = self.text.startswith("^", self.i)
        self.i += negate
        ranges: Ranges = []
        first = True
        while self.i < len(self.text) and (first or self.text[self.i] != "]"):
            first = False
            low = self.member()
            if self.text.startswith("-", self.i) and self.text[self.i + 1 : self.i + 2] not in "]":
                self.i += 1
                high = self.member()
                if len(low) != 1 or len(high) != 1 or low[0][0] > high[0][0]:
                    raise self.fail("a class range is not a range of two characters")
                ranges.append((low[0][0], high[0][0]))
            else:
                ranges += low
        if self.i >= len(self.text):
            raise self.fail("a [ is not closed")
        self.i += 1
        return _allowed(_complement(ranges) if negate else ranges, self)

    def member(self) -> Ranges:
        c = self.text[self.i]
        self.i += 1
        if c != "\\":
            return [(ord(c), ord(c))]
        if self.text[self.i : self.i + 1] == "b":
            self.i += 1
            return [(0x08, 0x08)]  # backspace inside a class
        return self.escape_member()

    def escape_member(self) -> Ranges:
        c = self.text[self.i : self.i + 1]
        if c.lower() in CLASS_ESCAPES or c in "ux":
            return self.escape()
        if c in ("n", "r", "t", "f", "v", "0"):
            self.i += 1
            return [(0x0A, 0x0A)]  # a control character: dropped by _allowed
        if not c or c.isalnum():
            raise self.fail(f"\\{c} is not supported in a class")
        self.i += 1
        return [(ord(c), ord(c))]


def _complement(ranges: Ranges) -> Ranges:
    out, low = [], 0
    for a, b in sorted(ranges):
        if a > low:
            out.append((low, a - 1))
        low = max(low, b + 1)
    if low <= TOP:
        out.append((low, TOP))
    return out


def _allowed(ranges: Ranges, reader: _Reader) -> Ranges:
    """`ranges` less the barred characters; a literal that is barred is refused."""
    out = ranges
    for a, b in BARRED:
        out = [part for low, high in out for part in ((low, min(high, a - 1)),
               (max(low, b + 1), high)) if part[0] <= part[1]]  # fmt: skip
    if not out:
        raise reader.fail("it asks for a quote, a backslash, a | or a control character")
    return out


def _class(ranges: Ranges) -> str:
    def code(n: int) -> str:
        return f"\\u{n:04X}" if n <= 0xFFFF else f"\\U{n:08X}"

    return "[" + "".join(code(a) if a == b else f"{code(a)}-{code(b)}" for a, b in ranges) + "]"
