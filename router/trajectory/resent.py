"""Answers that clients send back in another form than the one they were given, read back into
the text and tool calls they were delivered as, so that stitching recognises them.

smolagents (1.x) keeps no `tool_calls` in the history it sends: an answer's tool calls come back
as an assistant text, "Calling tools:\\n" followed by the calls as a Python list literal
(`str()` of `[{"id": …, "type": "function", "function": {"name": …, "arguments": {…}}}]`, the
arguments parsed), after the answer's own text when it had some. Text ReAct agents rebuild or
extend the answer they resend (`react_form`)."""

from __future__ import annotations

import ast
import re

import orjson

SMOLAGENTS_CALLS = "Calling tools:\n["
MAX_LITERAL_CHARS = 256 * 1024  # a resent call list larger than this is not read back

# (id, name, arguments as JSON text or None), as `identify.calls_of` gives them.
ResentCall = tuple[str | None, str | None, str | None]


def text_calls(text: str) -> tuple[str, list[ResentCall]] | None:
    """The text and tool calls of an answer resent as text with its calls written out, or None
    when the text is not such a form (or its list does not read as tool calls)."""
    at = text.rfind(SMOLAGENTS_CALLS)
    if at < 0 or len(text) - at > MAX_LITERAL_CHARS:
        return None
    try:
        # literal_eval reads literals only (no names, no calls): safe on what a client sent.
        listed = ast.literal_eval(text[at + len(SMOLAGENTS_CALLS) - 1 :].strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(listed, list) or not listed:
        return None
    calls: list[ResentCall] = []
    for call in listed:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            return None
        call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            try:
                arguments = orjson.dumps(arguments).decode()  # parsed: compared as JSON alike
            except TypeError:
                return None  # not JSON (a set, bytes): not arguments a model gave
        calls.append(
            (call_id if isinstance(call_id, str) else None, name if isinstance(name, str) else None, arguments)
        )
    return text[:at].strip(), calls


# A text ReAct step as clients rebuild it. LlamaIndex's `ReActAgent` parses each answer
# (`Thought: …\nAction: <tool>\nAction Input: {…}`) and resends it formatted from the parts: the
# input as a Python literal (`{'city': 'Paris'}`), `Thought: ` put before whatever the model wrote
# first (a reasoning block). CrewAI in text mode sends no `stop`, cuts the answer at
# `\nObservation` itself and resends it with the tool's result appended in the same message. Both
# keep the thought, the tool's name and the input's value: the form below is made of those alone.
_ACTION = re.compile(r"(?:\A|\n)[ \t]*Action[ \t]*:[ \t]*([^\s()]+)[^\n]*\n+[ \t]*Action[ \t]+Input[ \t]*:")
_THOUGHT = "Thought:"
_OBSERVATION = "\nObservation"
# The longest value read as a literal: a step's input or field is short, and parsing costs about
# 0.8 µs a character (a request must not buy 200 ms of the gateway's time with 250 KB of one).
MAX_VALUE_CHARS = 16 * 1024
REACT = "\x1freact\x1f"  # no text a model writes starts so: the form is never a text's own key


def react_form(text: str) -> str | None:
    """A text ReAct step's thought, tool and input (parsed, as sorted JSON where it reads as JSON
    or a Python literal) as one string, the same for the answer given and for it rebuilt or
    resent with the observation after it; None for a text that names no action."""
    if "Action Input" not in text:
        return None
    match = _ACTION.search(text)
    if match is None:
        return None
    before = text[: match.start()]
    thought = before[before.rfind(_THOUGHT) + len(_THOUGHT) :] if _THOUGHT in before else before
    end = text.find(_OBSERVATION, match.end())
    given = text[match.end() : end if end >= 0 else len(text)].strip()
    return "\x1f".join((REACT, " ".join(thought.split()), match.group(1), value_form(given)))


def value_form(given: str) -> str:
    """A value a client may write back in another form (an action's input, a field's value) as
    sorted JSON where it, or the braces in it, read as JSON or a Python literal (LlamaIndex reads
    an action's input from its first `{` to its last `}`), else as written."""
    candidates = [given]
    start, end = given.find("{"), given.rfind("}")
    if 0 <= start < end:
        candidates.append(given[start : end + 1])
    for candidate in candidates:
        if len(candidate) > MAX_VALUE_CHARS:
            continue
        try:
            parsed = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            try:
                parsed = ast.literal_eval(candidate)  # literals only: safe on what a client sent
            except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                continue
        try:
            return orjson.dumps(parsed, option=orjson.OPT_SORT_KEYS).decode()
        except TypeError:  # not JSON (a set, bytes, keys that are no strings)
            continue
    return given
