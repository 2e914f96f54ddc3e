"""Replace sensitive values with typed placeholders, and put them back in the cloud's answer.

Placeholders look like `[EMAIL_1]`: typed, numbered per trajectory, stable across its steps.
Redaction walks the messages (text, content parts, tool-call arguments, tool results) and
replaces every known value in one pass of one alternation of the escaped values, longest
first. Restoration replaces our own placeholders only (a placeholder-looking string the user
typed is left alone): in plain text as the value, inside tool-call arguments (JSON text) as
the value JSON-escaped for the strings it stands in (twice inside JSON text one of their
strings holds: a JSON file a tool writes), so that the agent's tools get the real value and
valid JSON.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import orjson

from router.privacy.json_depth import Depths, written_back
from router.privacy.matcher import ValueMatcher

PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*_\d+\]")


def kind_of(placeholder: str) -> str:
    """`[EMAIL_2]` -> `EMAIL`: the placeholder format's one reader."""
    return placeholder[1:].rsplit("_", 1)[0]


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


# A message's keys read in a way of their own (below); every other key's strings, keys included,
# are scanned and redacted whole: `reasoning_content`, `refusal`, `audio`, a client's own fields.
_READ_APART = frozenset(("role", "content", "name", "tool_calls", "function_call", "tool_call_id"))
# Not scanned, each with its reason (tests/test_privacy_fields.py lists them): `role` is one of
# the API's words; `tool_call_id` and a call's `id` pair a call with its result and are made by
# the model or the harness; a called function's `name` must match a defined tool exactly.
MESSAGE_EXEMPT = {
    "role": "one of the API's roles",
    "tool_call_id": "pairs a tool result with its call (an id the model or the harness made)",
    "tool_calls[].id": "the call's id (the model's), paired with its result",
    "tool_calls[].type": "the API's word for the call",
    "tool_calls[].function.name": "names a defined tool (must match it exactly)",
    "function_call.name": "names a defined function (must match it exactly)",
}


def _call_arguments(call: Any) -> str | None:
    function = call.get("function") if isinstance(call, dict) else None
    arguments = function.get("arguments") if isinstance(function, dict) else None
    return arguments if isinstance(arguments, str) else None


def message_strings(message: Mapping[str, Any]) -> list[str]:
    """Every string of a message that would reach the cloud, exactly as `Redactor.messages`
    redacts it: what is scanned is what is redacted (its name, content, its parts, tool-call
    and legacy function-call arguments, and every other key's strings but `MESSAGE_EXEMPT`)."""
    out: list[str] = []
    if isinstance(message.get("name"), str):
        out.append(message["name"])  # a participant's name (`user` or `assistant` messages)
    content = message.get("content")
    if isinstance(content, str):
        out.append(content)
    elif isinstance(content, list):
        out.extend(_strings(content))
    for call in message.get("tool_calls") or ():
        arguments = _call_arguments(call)
        if arguments is not None:
            out.extend(argument_strings(arguments))
    legacy = message.get("function_call")
    if legacy is not None:
        arguments = _call_arguments({"function": legacy})
        if arguments is not None:
            out.extend(argument_strings(arguments))
    if len(message) > 2:  # most messages are a role and a content: nothing else to look at
        for key, value in message.items():
            if key not in _READ_APART and value is not None:
                out.append(key)
                out.extend(_strings(value))
    return [text for text in out if text]


class _Pass:
    """One redaction of a message: what it replaced, value by value (for the metrics and the
    exposure), so that a message redacted once is never redacted again to learn it."""

    __slots__ = ("matcher", "replaced")

    def __init__(self, matcher: ValueMatcher) -> None:
        self.matcher = matcher
        self.replaced: dict[str, int] = {}  # original value -> times replaced

    def text(self, text: str) -> str:
        if not text:
            return text
        new, values = self.matcher.replace(text)
        for value in values:
            self.replaced[value] = self.replaced.get(value, 0) + 1
        return new

    def arguments(self, arguments: str) -> str:
        """Tool-call arguments are JSON text: values are replaced in its decoded strings (as they
        were scanned, see `argument_strings`) and the result re-encoded; a placeholder needs no
        escaping. Arguments that are not JSON are replaced as written."""
        if not arguments:
            return arguments
        try:
            decoded = orjson.loads(arguments)
        except (orjson.JSONDecodeError, RecursionError):  # as `argument_strings` reads them
            return self.text(arguments)
        before = dict(self.replaced)
        try:
            redacted = self.deep(decoded)
            if self.replaced == before:
                return arguments
            return orjson.dumps(redacted).decode()
        except (RecursionError, orjson.JSONEncodeError):
            # Nested deeper than can be walked or written again (orjson reads 1,024 levels and
            # writes 254): replaced as written, the counts as they were before.
            self.replaced = before
            return self.text(arguments)

    def deep(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.deep(item) for item in value]
        if isinstance(value, dict):
            # Keys are scanned too: a value may be one.
            return {self.text(key): self.deep(item) for key, item in value.items()}
        return value

    def message(self, message: dict[str, Any]) -> dict[str, Any]:
        new = dict(message)
        if isinstance(message.get("name"), str):
            new["name"] = self.text(message["name"])
        content = message.get("content")
        if isinstance(content, str):
            new["content"] = self.text(content)
        elif isinstance(content, list):
            new["content"] = self.deep(content)
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            new["tool_calls"] = [self._call(call) for call in calls]
        legacy = message.get("function_call")
        if legacy is not None:
            new["function_call"] = self._call({"function": legacy})["function"]
        if len(message) > 2:
            for key, value in message.items():
                if key not in _READ_APART and value is not None:
                    # The key too (as `message_strings` reads it): a client's own field may be named by a value.
                    renamed = self.text(key)
                    if renamed != key:
                        del new[key]
                    new[renamed] = self.deep(value)
        return new

    def _call(self, call: Any) -> Any:
        arguments = _call_arguments(call)
        if arguments is None:
            return call  # nothing the redactor reads (as `message_strings` reads it)
        return {**call, "function": {**call["function"], "arguments": self.arguments(arguments)}}


def redact_message(matcher: ValueMatcher, message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """One message as the cloud may receive it (the same object when nothing in it is known),
    and the values replaced in it with how many times."""
    work = _Pass(matcher)
    new = work.message(message)
    return (new, work.replaced) if work.replaced else (message, {})


class Redactor:
    def __init__(self, values: Mapping[str, str] | ValueMatcher) -> None:
        """`values`: original value -> placeholder (or a trajectory's matcher, shared)."""
        self.matcher = values if isinstance(values, ValueMatcher) else ValueMatcher(values)
        self.found: set[str] = set()  # the original values met by text() so far
        self.replaced: dict[str, int] = {}  # original value -> times replaced (for the metrics)
        # The placeholders an answer may have put back (None: every one of the trajectory's).
        # An answer's are those of values the client's own request holds: a placeholder the
        # client typed for a value it did not send stays as typed, never becomes the vault's.
        self.restorable: frozenset[str] | None = None
        # Or what gives them, asked the first time an answer holds a placeholder of the
        # trajectory's (most answers hold none, and the set is a union over the whole request).
        self.restorable_from: Callable[[], frozenset[str]] | None = None

    @property
    def empty(self) -> bool:
        return not self.matcher.values

    def _count(self, replaced: dict[str, int]) -> int:
        for value, times in replaced.items():
            self.found.add(value)
            self.replaced[value] = self.replaced.get(value, 0) + times
        return sum(replaced.values())

    def text(self, text: str) -> tuple[str, int]:
        if self.empty or not text:
            return text, 0
        work = _Pass(self.matcher)
        new = work.text(text)
        return new, self._count(work.replaced)

    def arguments(self, arguments: str) -> tuple[str, int]:
        if self.empty or not arguments:
            return arguments, 0
        work = _Pass(self.matcher)
        new = work.arguments(arguments)
        return new, self._count(work.replaced)

    def messages(self, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        """The messages with every known value replaced; the number of replacements."""
        if self.empty:
            return messages, 0
        total = 0
        out: list[dict[str, Any]] = []
        for message in messages:
            new, replaced = redact_message(self.matcher, message)
            total += self._count(replaced)
            out.append(new)
        return out, total

    # -- restoration --------------------------------------------------------------------------

    def _restorable(self) -> frozenset[str] | None:
        if self.restorable_from is not None:
            self.restorable, self.restorable_from = self.restorable_from(), None
        return self.restorable

    def restore_text(self, text: str, *, json_escaped: bool = False, depths: Depths | None = None) -> str:
        """`text` with our placeholders put back; `json_escaped`: `text` is JSON (tool-call
        arguments; `depths`: their reader, fed what came before in a stream), and each value is
        escaped for the strings it lies in (router/privacy/json_depth.py: once, twice inside JSON
        text held in a string)."""
        to_value = self.matcher.value_of
        if not to_value or "[" not in text or (self.restorable is not None and not self.restorable):
            if depths is not None:
                depths.feed(text)
            return text
        if json_escaped and depths is None:
            depths = Depths()
        read = 0

        def back(match: re.Match[str]) -> str:
            value = to_value.get(match.group(0))
            if value is None:
                return match.group(0)
            restorable = self._restorable()
            if restorable is not None and match.group(0) not in restorable:
                return match.group(0)
            if depths is None:
                return value
            nonlocal read
            depths.feed(text[read : match.end()])
            read = match.end()
            # The depth where the placeholder ends is where it stands: it holds no quote.
            return written_back(value, max(1, depths.here()))

        restored = PLACEHOLDER.sub(back, text)
        if depths is not None:
            depths.feed(text[read:])
        return restored

    def restore_answer(self, answer: dict[str, Any]) -> dict[str, Any]:
        """A non-streamed chat completion with our placeholders put back."""
        for choice in answer.get("choices") or ():
            message = choice.get("message") if isinstance(choice, dict) else None
            if not isinstance(message, dict):
                continue
            for key in ANSWER_TEXTS:
                if isinstance(message.get(key), str):
                    message[key] = self.restore_text(message[key])
            for function in _functions(message):
                function["arguments"] = self.restore_text(function["arguments"], json_escaped=True)
        return answer


def _functions(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The called functions of an answer's message (or a stream's delta) whose arguments are
    text: each tool call's, and the legacy `function_call` (the `functions` API), which the
    request side redacts too and whose arguments the agent's tool reads."""
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            yield function
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("arguments"), str):
        yield legacy


# The texts of an answer's message (or a stream's delta) where the cloud may echo a placeholder:
# its content, its reasoning (as vLLM and DeepSeek name it, and as OpenRouter does) and a refusal.
ANSWER_TEXTS = ("content", "reasoning_content", "reasoning", "refusal")


# The carry key of a streamed legacy `function_call`'s arguments (one a choice).
_LEGACY = "function_call"


def _index(value: Any) -> int:
    """A choice's or tool call's index as a stream gives it; 0 when it is not one."""
    return value if type(value) is int and 0 <= value < 2**31 else 0


class StreamRestorer:
    """Restores placeholders in streamed deltas, holding back a chunk's tail that may be the
    start of a placeholder split across chunks, per choice, field and tool call."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._carry: dict[tuple[int, str, int], str] = {}
        # Per call's arguments, what was read of them (how deep in strings a value stands).
        self._depths: dict[tuple[int, str, int], Depths] = {}
        self._pending = b""

    def _piece(self, key: tuple[int, str, int], text: str, json_escaped: bool) -> str:
        text = self._carry.pop(key, "") + text
        partial = _PARTIAL.search(text)
        if partial is not None:
            self._carry[key] = text[partial.start() :]
            text = text[: partial.start()]
        return self._restored(key, text, json_escaped)

    def _restored(self, key: tuple[int, str, int], text: str, json_escaped: bool) -> str:
        depths = self._depths.setdefault(key, Depths()) if json_escaped else None
        return self._redactor.restore_text(text, json_escaped=json_escaped, depths=depths)

    def _event(self, event: dict[str, Any]) -> None:
        choices = event.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, dict):
                continue
            index = _index(choice.get("index", 0))
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                delta = {}
            for field in ANSWER_TEXTS:
                if isinstance(delta.get(field), str):
                    delta[field] = self._piece((index, field, 0), delta[field], False)
            calls = delta.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                    key = (index, "arguments", _index(call.get("index", 0)))
                    function["arguments"] = self._piece(key, function["arguments"], True)
            legacy = delta.get("function_call")
            if isinstance(legacy, dict) and isinstance(legacy.get("arguments"), str):
                legacy["arguments"] = self._piece((index, _LEGACY, 0), legacy["arguments"], True)
            if choice.get("finish_reason"):
                # The choice is complete: whatever was held back goes out now.
                for text_key in ANSWER_TEXTS:
                    if (index, text_key, 0) in self._carry:
                        held = self._redactor.restore_text(self._carry.pop((index, text_key, 0)))
                        delta[text_key] = (delta.get(text_key) or "") + held
                if (index, _LEGACY, 0) in self._carry:
                    tail = self._restored((index, _LEGACY, 0), self._carry.pop((index, _LEGACY, 0)), True)
                    legacy = delta.get("function_call")
                    if isinstance(legacy, dict):
                        legacy["arguments"] = (legacy.get("arguments") or "") + tail
                    else:
                        delta["function_call"] = {"arguments": tail}
                for key in [k for k in self._carry if k[0] == index]:
                    tail = self._restored(key, self._carry.pop(key), True)
                    delta.setdefault("tool_calls", []).append({"index": key[2], "function": {"arguments": tail}})
                for key in [k for k in self._depths if k[0] == index]:
                    del self._depths[key]
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
