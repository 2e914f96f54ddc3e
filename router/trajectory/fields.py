"""Field transcripts: a client that rebuilds its prompt every step from named fields.

DSPy's `ReAct` (its chat adapter) asks for each step as fields, one `[[ ## name ## ]]` line
before each value (`next_thought`, `next_tool_name`, `next_tool_args`, then `completed`), and
sends no history: each request is a system message and one user message, rebuilt, whose
`trajectory` field lists the steps so far as numbered fields (`thought_0`, `tool_name_0`,
`tool_args_0`, `observation_0`, …) before the closing instruction. Its last step's values, less
the observation the tool gave, are the values of the answer it was given; the run's last call
(a final extraction under another system message) lists them too. So an answer of fields is
known by its values (`answer_form`), and such a request by its last step's (`transcript_forms`),
values read as JSON or Python literals where they are (`resent.value_form`). Where the chat
adapter cannot read a model's answer, DSPy asks again with its JSON adapter (the same fields, the
answer a JSON object: `{"next_thought": …, "next_tool_name": …}`), and the next step lists that
answer's values as any other's: an answer that is one JSON object of two fields or more is known
by its values too.
"""

from __future__ import annotations

import re

import orjson

from router.trajectory.resent import MAX_VALUE_CHARS, value_form

MARK = "[[ ## "
_FIELD = re.compile(r"^\[\[ ## (\w{1,64}) ## \]\][ \t]*$", re.MULTILINE)
_NUMBERED = re.compile(r"(\w+?)_(\d{1,6})")
_NAME = re.compile(r"\w{1,64}")
_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(.*)\n```\Z", re.DOTALL)
FORM = "\x1ffields\x1f"  # no text a model writes starts so: the form is never a text's own key
_END = "completed"  # the field that closes an answer: no value
MAX_FIELDS = 4096  # a transcript of more fields than this is not read
MAX_STEP_FIELDS = 16  # a step of more fields than this is none (DSPy's has four)


def _sections(text: str) -> list[tuple[str, str]]:
    marks = []
    for mark in _FIELD.finditer(text):
        marks.append(mark)
        if len(marks) > MAX_FIELDS:
            return []
    return [
        (mark.group(1), text[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)])
        for i, mark in enumerate(marks)
    ]


def _form(values: list[str]) -> str:
    return FORM + "\x1f".join(value_form(value.strip()) for value in values)


def answer_form(text: str) -> str | None:
    """An answer of two fields or more (marked, or one JSON object) as its values, in order;
    None for other texts."""
    if MARK not in text:
        values = _object_values(text)
        return _form(values) if values is not None else None
    values = [value for name, value in _sections(text) if name != _END]
    return _form(values) if 1 < len(values) <= MAX_STEP_FIELDS else None


def _object_values(text: str) -> list[str] | None:
    """The values of an answer that is one JSON object of fields (in a code fence or not), a
    value that is not a string as JSON; None for other texts."""
    body = text.strip()
    if not body.startswith(("{", "`")) or len(body) > MAX_VALUE_CHARS:
        return None
    fenced = _FENCE.match(body)
    if fenced is not None:
        body = fenced.group(1).strip()
    if not (body.startswith("{") and body.endswith("}")):
        return None
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(parsed, dict) or not 1 < len(parsed) <= MAX_STEP_FIELDS:
        return None
    if not all(_NAME.fullmatch(name) for name in parsed):
        return None
    return [value if isinstance(value, str) else orjson.dumps(value).decode() for value in parsed.values()]


def transcript_forms(text: str) -> tuple[str, ...]:
    """The forms the answer a rebuilt prompt's last listed step holds may have had: its last
    numbered step's values, and the same less its last (the tool's observation, which the
    answer did not hold). None for a text that lists no numbered step."""
    if MARK not in text:
        return ()
    steps: dict[int, list[str]] = {}
    for name, value in _sections(text):
        numbered = _NUMBERED.fullmatch(name)
        if numbered is not None:
            steps.setdefault(int(numbered.group(2)), []).append(value)
    if not steps:
        return ()
    values = steps[max(steps)]
    if len(values) > MAX_STEP_FIELDS:
        return ()  # not a step of a transcript: each value would be parsed
    # The last value runs on to the prompt's closing instruction: it is dropped in the first
    # form, and in the whole one kept only up to a blank line.
    whole = [*values[:-1], values[-1].split("\n\n", 1)[0]]
    forms = [_form(values[:-1])] if len(values) > 2 else []
    if len(values) > 1:
        forms.append(_form(whole))
    return tuple(forms)
