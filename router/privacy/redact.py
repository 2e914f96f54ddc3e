"""Replace sensitive values with typed placeholders, and put them back in the cloud's answer.

Placeholders look like `[EMAIL_1]`: typed, numbered per trajectory, stable across its steps.
Redaction walks the messages (text, content parts, tool-call arguments, tool results) and
replaces every known value in one pass of one alternation of the escaped values, longest
first. Restoration replaces our own placeholders only (a placeholder-looking string the user
typed is left alone): in plain text as the value, inside tool-call arguments (JSON text) as
the value JSON-escaped, so that the agent's tools get the real value and valid JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*_\d+\]")
# The longest text that may still grow into a placeholder at the end of a streamed chunk.
_PARTIAL = re.compile(r"\[[A-Z0-9_]{0,40}$")


def _strings(value: Any) -> Iterator[str]:
    """Every string in decoded JSON, keys included, in the order `Redactor._deep` visits them."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


def argument_strings(arguments: str) -> list[str]:
    """The strings of tool-call arguments as the tool will read them: JSON decoded, so that a
    value followed by an escape (`\\n`, `\\"`, `\\u00e9`) is seen without it. Arguments that are
    not JSON are one string, as written."""
    try:
        return list(_strings(orjson.loads(arguments)))
    except (orjson.JSONDecodeError, RecursionError):
        return [arguments]


def message_strings(message: Mapping[str, Any]) -> list[str]:
    """Every string of a message that would reach the cloud, exactly as `Redactor.messages`
    redacts it: what is scanned is what is redacted (content, its parts, tool-call arguments)."""
    out: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        out.append(content)
    elif isinstance(content, list):
        out.extend(_strings(content))
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            out.extend(argument_strings(function["arguments"]))
    return [text for text in out if text]


class Redactor:
    def __init__(self, values: Mapping[str, str]) -> None:
        """`values`: original value -> placeholder."""
        self._to_placeholder = dict(values)
        self._to_value = {placeholder: value for value, placeholder in values.items()}
        ordered = sorted(values, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None
        self.found: set[str] = set()  # the original values met by text() so far
        self.replaced: dict[str, int] = {}  # original value -> times replaced (for the metrics)

    @property
    def empty(self) -> bool:
        return self._pattern is None

    def text(self, text: str) -> tuple[str, int]:
        if self._pattern is None or not text:
            return text, 0
        count = 0

        def swap(match: re.Match[str]) -> str:
            nonlocal count
            count += 1
            self.found.add(match.group(0))
            self.replaced[match.group(0)] = self.replaced.get(match.group(0), 0) + 1
            return self._to_placeholder[match.group(0)]

        return self._pattern.sub(swap, text), count

    def arguments(self, arguments: str) -> tuple[str, int]:
        """Tool-call arguments are JSON text: values are replaced in its decoded strings (as they
        were scanned, see `argument_strings`) and the result re-encoded; a placeholder needs no
        escaping. Arguments that are not JSON are replaced as written."""
        if self._pattern is None or not arguments:
            return arguments, 0
        try:
            redacted, count = self._deep(orjson.loads(arguments))
        except (orjson.JSONDecodeError, RecursionError):  # as `argument_strings` reads them
            return self.text(arguments)
        return (orjson.dumps(redacted).decode(), count) if count else (arguments, 0)

    def _deep(self, value: Any) -> tuple[Any, int]:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            total, items = 0, []
            for item in value:
                new, count = self._deep(item)
                items.append(new)
                total += count
            return items, total
        if isinstance(value, dict):
            total, mapping = 0, {}
            for key, item in value.items():
                new_key, key_count = self.text(key)  # keys are scanned too: a value may be one
                new, count = self._deep(item)
                mapping[new_key] = new
                total += count + key_count
            return mapping, total
        return value, 0

    def messages(self, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        """The messages with every known value replaced; the number of replacements."""
        if self._pattern is None:
            return messages, 0
        total = 0
        out: list[dict[str, Any]] = []
        for message in messages:
            new = dict(message)
            content = message.get("content")
            if isinstance(content, str):
                new["content"], count = self.text(content)
                total += count
            elif isinstance(content, list):
                new["content"], count = self._deep(content)
                total += count
            if message.get("tool_calls"):
                calls = []
                for call in message["tool_calls"]:
                    function = dict(call.get("function") or {})
                    if isinstance(function.get("arguments"), str):
                        function["arguments"], count = self.arguments(function["arguments"])
                        total += count
                    calls.append({**call, "function": function})
                new["tool_calls"] = calls
            out.append(new)
        return out, total

    # -- restoration --------------------------------------------------------------------------

    def restore_text(self, text: str, *, json_escaped: bool = False) -> str:
        if not self._to_value or "[" not in text:
            return text

        def back(match: re.Match[str]) -> str:
            value = self._to_value.get(match.group(0))
            if value is None:
                return match.group(0)
            return orjson.dumps(value).decode()[1:-1] if json_escaped else value

        return PLACEHOLDER.sub(back, text)

    def restore_answer(self, answer: dict[str, Any]) -> dict[str, Any]:
        """A non-streamed chat completion with our placeholders put back."""
        for choice in answer.get("choices") or ():
            message = choice.get("message") if isinstance(choice, dict) else None
            if not isinstance(message, dict):
                continue
            if isinstance(message.get("content"), str):
                message["content"] = self.restore_text(message["content"])
            for call in message.get("tool_calls") or ():
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                    function["arguments"] = self.restore_text(function["arguments"], json_escaped=True)
        return answer


class StreamRestorer:
    """Restores placeholders in streamed deltas, holding back a chunk's tail that may be the
    start of a placeholder split across chunks, per choice, field and tool call."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._carry: dict[tuple[int, str, int], str] = {}
        self._pending = b""

    def _piece(self, key: tuple[int, str, int], text: str, json_escaped: bool) -> str:
        text = self._carry.pop(key, "") + text
        partial = _PARTIAL.search(text)
        if partial is not None:
            self._carry[key] = text[partial.start() :]
            text = text[: partial.start()]
        return self._redactor.restore_text(text, json_escaped=json_escaped)

    def _event(self, event: dict[str, Any]) -> None:
        for choice in event.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            index = int(choice.get("index", 0))
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                delta["content"] = self._piece((index, "content", 0), delta["content"], False)
            for call in delta.get("tool_calls") or ():
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                    key = (index, "arguments", int(call.get("index", 0)))
                    function["arguments"] = self._piece(key, function["arguments"], True)
            if choice.get("finish_reason"):
                # The choice is complete: whatever was held back goes out now.
                if (index, "content", 0) in self._carry:
                    delta["content"] = delta.get("content") or ""
                    delta["content"] += self._redactor.restore_text(self._carry.pop((index, "content", 0)))
                for key in [k for k in self._carry if k[0] == index]:
                    tail = self._redactor.restore_text(self._carry.pop(key), json_escaped=True)
                    delta.setdefault("tool_calls", []).append({"index": key[2], "function": {"arguments": tail}})
                choice["delta"] = delta

    def feed(self, chunk: bytes) -> bytes:
        """Complete events of `chunk` (plus what was pending), restored; the rest waits."""
        buffer = self._pending + chunk
        end = buffer.rfind(b"\n\n")
        if end < 0:
            self._pending = buffer
            return b""
        complete, self._pending = buffer[: end + 2], buffer[end + 2 :]
        out: list[bytes] = []
        for block in complete.split(b"\n\n"):
            if not block.strip():
                continue
            if block.startswith(b"data:") and not block.startswith(b"data: [DONE]"):
                try:
                    event = orjson.loads(block[5:])
                except orjson.JSONDecodeError:
                    out.append(block + b"\n\n")
                    continue
                if isinstance(event, dict):
                    self._event(event)
                    out.append(b"data: " + orjson.dumps(event) + b"\n\n")
                    continue
            out.append(block + b"\n\n")
        return b"".join(out)

    def flush(self) -> bytes:
        rest, self._pending = self._pending, b""
        return rest
