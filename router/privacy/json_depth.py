"""How many times a value restored into tool-call arguments must be JSON-escaped.

Arguments are JSON text, so a value put back inside one of their strings is escaped once. An
agent that writes a JSON file through a tool (`{"path": "config.json", "content": "{\\"password\\":
\\"[SECRET_1]\\"}"}`) holds JSON text inside that string: a placeholder inside one of the inner
text's strings is two levels down, and a value with a quote or a backslash escaped only once
would end the inner string early and break the file.

`Depths` reads arguments as they come (whole, or a stream's pieces) and says, at the end of what
it was fed, how many strings that point lies in, one inside another's content. A string's content
is read as JSON only while it reads as JSON's tokens (`{"a": 1, "b": "`); Markdown, a shell line
or code that merely holds quotes is one level, as before. Each character is read once, whatever
the number of placeholders: a 100 KB JSON file with hundreds of values to put back costs one pass.
"""

from __future__ import annotations

import re

import orjson

# A string's body from where it was left: up to (not past) its closing quote or the text's end.
_BODY = re.compile(r'(?:[^"\\]++|\\.)*+', re.DOTALL)
# JSON's tokens outside strings; the first stretch of a JSON text opens an object or an array.
_OUTSIDE = re.compile(r"(?:\s|[\[\]{}:,]|-?\d[\d.eE+-]*+|true|false|null)*+")
_FIRST = re.compile(r"\s*+[\[{]" + _OUTSIDE.pattern)
# Nesting deeper than this is no file an agent writes: read no further.
MAX_DEPTH = 8


def _decoded(raw: str) -> str | None:
    """A stretch of a string's body (escapes as written) as text; None when it is no JSON string
    body (it splits an escape or a surrogate pair)."""
    try:
        text = orjson.loads(b'"' + raw.encode("utf-8", "surrogatepass") + b'"')
    except (orjson.JSONDecodeError, UnicodeEncodeError):
        return None
    return text if isinstance(text, str) else None


class Depths:
    """The strings the end of a JSON text fed so far lies in (`here()`); `json_only`: the text is
    a string's content, read as JSON only while it reads as JSON's tokens."""

    def __init__(self, json_only: bool = False, level: int = 0) -> None:
        self._json_only = json_only
        self._level = level
        self._raw = ""  # what was read for and is still needed: from the stretch not yet read
        self._fed: list[str] = []  # fed since: joined only when read (a stream's many small pieces)
        self._open = False  # inside a string
        self._first = True  # the stretch being read is the text's first outside its strings
        self.broken = False  # json_only: the text is no JSON; it holds no strings that count
        self._inner: Depths | None = None  # the open string's content, read as JSON

    def feed(self, text: str) -> None:
        self._fed.append(text)

    def here(self) -> int:
        """How many strings the end of the text fed so far lies in (0: outside every string)."""
        self._read()
        if self.broken or not self._open:
            return 0
        inner = self._inner
        return 1 + (inner.here() if inner is not None else 0)

    def _read(self) -> None:
        if self._fed:
            self._raw, self._fed = self._raw + "".join(self._fed), []
        raw, position = self._raw, 0
        while not self.broken:
            if not self._open:
                quote = raw.find('"', position)
                if quote < 0:
                    # The stretch goes on past the text fed: kept to be checked whole, or let go.
                    position = position if self._json_only else len(raw)
                    break
                if self._json_only:
                    pattern = _FIRST if self._first else _OUTSIDE
                    if pattern.fullmatch(raw, position, quote) is None:
                        self.broken = True
                        break
                self._first, self._open, position = False, True, quote + 1
                if self._level + 1 < MAX_DEPTH:
                    self._inner = Depths(json_only=True, level=self._level + 1)
                continue
            body = _BODY.match(raw, position)
            end = body.end() if body is not None else position
            if self._inner is not None:
                decoded = _decoded(raw[position:end])
                if decoded is None:
                    self._inner = None  # an escape split at the end: the content is read no further
                else:
                    self._inner.feed(decoded)
            position = end
            if end < len(raw) and raw[end] == '"':
                self._open, self._inner, position = False, None, end + 1
                continue
            break  # the string goes on past the text fed (a backslash ending it is kept for the next)
        self._raw = raw[position:] if not self.broken else ""


def escaped(value: str, levels: int) -> str:
    """`value` as it is written `levels` strings deep in JSON text."""
    for _ in range(levels):
        value = orjson.dumps(value).decode()[1:-1]
    return value


# A JSON escape: what a value found in a JSON document holds where the value itself holds a line
# break, a quote or a backslash (a service account's `private_key`, a password with a backslash).
_ESCAPE = re.compile(r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})')


def written_back(value: str, levels: int) -> str:
    """`value`, as the vault holds it, written `levels` strings deep in JSON text. A value found
    in a file's text is held as the file wrote it: a service account's `private_key` in its JSON
    (or a key in a string literal of code) with `\\n` for each line break, a password with `\\\\`.
    Written into JSON text held in a string (a JSON file a tool writes), such a value is escaped
    one level less: it is already written for the file's own strings, and escaped for both levels
    the file would hold `\\\\n` where the key had a line break. One level deep (an argument of
    its own) it is escaped once, as any value: there a tool may write it into code, where the
    escapes must stay as written."""
    if levels > 1 and "\\" in value and _ESCAPE.search(value) is not None and _decoded(value) is not None:
        levels -= 1
    return escaped(value, levels)
