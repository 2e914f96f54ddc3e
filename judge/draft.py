"""Draft features: what the action about to be taken looks like (`sees: draft`).

With `sees: draft` the edge drafts the step first and the judge scores the state features
(judge/features.py) together with these: the draft's action type, its size and shape, whether its
tool calls are valid, whether it repeats an earlier turn, the run's own record of steps of the
draft's action type (judge/record.py: how many, the share that failed), and whether its harness
will refuse it: an editor call without what its command needs or creating a path a recent tool
result showed, a reply out of the format the prompt demands, a call without an argument its tool
requires. The action about to be taken is the strongest evidence of whether it will fail; a
refusal raises the score to a floor (`SLIP_FLOORS`, `floored`) rather than being learned. A draft
model's feature names are `FEATURE_NAMES + DRAFT_FEATURE_NAMES`; its card says `sees: draft`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from judge.actions import ACTION_TYPES, ActionType, content_text, parse_arguments
from judge.features import FEATURE_NAMES, TAIL_MESSAGES, Message, Vector, inspect_turn, tool_names
from judge.record import DRAFT_RECORD_FEATURE_NAMES, EMPTY_RECORD, RunRecord
from judge.task import HEAD_MESSAGES

DRAFT_FEATURE_NAMES: tuple[str, ...] = (
    *(f"draft_{kind.value}" for kind in ACTION_TYPES),
    "draft_calls",
    "draft_invalid",
    "draft_prose",
    "draft_text_log",
    "draft_command_log",
    "draft_repeats_last",
    "draft_repeats_tail",
    "draft_same_type_as_last",
    "draft_runs_script",  # runs a file it (usually) just wrote: python x.py, node x.js, bash x.sh
    "draft_inline_code",  # python -c / node -e: code in the command line
    "draft_chain_log",  # commands chained with && ; |
    "draft_cd",
    "draft_heredoc",
    "draft_install",
    "draft_edit_incomplete",  # an editor's command without what it needs (str_replace, no old_str)
    "draft_creates_shown",  # an editor's create of a path a recent tool result showed: it exists
    "draft_breaks_format",  # a reply without exactly one code block where the prompt demands one
    "draft_misses_required",  # a call without an argument its tool's schema requires
    *DRAFT_RECORD_FEATURE_NAMES,
)
STATE_AND_DRAFT_NAMES: tuple[str, ...] = (*FEATURE_NAMES, *DRAFT_FEATURE_NAMES)

# The least a draft judge's score is when the harness will refuse the draft: its contract, not
# something learned, so it holds for a family no model was trained on (docs/judge.md). An editor
# call without what its command needs is always refused; a `create` of a path a recent tool result
# showed is refused when the file exists, which a path shown makes as likely as not; a reply that
# breaks the format the prompt demands, or a call without an argument its tool's declared schema
# requires, is always refused.
SLIP_FLOORS: dict[str, float] = {
    "draft_edit_incomplete": 0.95,
    "draft_creates_shown": 0.5,
    "draft_breaks_format": 0.95,
    "draft_misses_required": 0.95,
    "draft_invalid": 0.95,
}
_SLIP_COLUMNS = tuple((STATE_AND_DRAFT_NAMES.index(name), floor) for name, floor in SLIP_FLOORS.items())


def floored(score: float, vector: Vector) -> float:
    """A draft judge's `score` of the state-and-draft `vector`, raised to its slips' floors."""
    for column, floor in _SLIP_COLUMNS:
        if vector[column] > 0.0 and score < floor:
            score = floor
    return score


def as_served(scores: npt.NDArray[np.float64], x: npt.NDArray[np.float32], sees: str) -> npt.NDArray[np.float64]:
    """A model's `scores` of the rows `x` as a judge that `sees` serves them: a draft judge's
    raised to the floors (`floored`, row by row; a new array), a state judge's as they are."""
    if sees != "draft":
        return scores
    out = np.array(scores, dtype=np.float64)
    for column, floor in _SLIP_COLUMNS:
        slipped = x[:, column] > 0.0
        out[slipped] = np.maximum(out[slipped], floor)
    return out


_FENCED = re.compile(r"```[\w-]*\s*\n(.*?)```", re.DOTALL)
_SCRIPT = re.compile(r"\b(?:python[\d.]*|node|bash|sh|ruby|perl|go run)\s+[\w./-]+\.(?:py|js|ts|sh|rb|pl|go)\b")
_INLINE = re.compile(r"\b(?:python[\d.]*\s+-c|node\s+-e|perl\s+-e|ruby\s+-e)\b")
_CHAIN = re.compile(r"&&|\|\||;|\|")
# Editors driven by a `command` argument (OpenHands' and SWE-agent's str_replace_editor, the
# text editor tool of Anthropic's API): what each command cannot do without. Such an editor
# refuses a call that lacks it, and refuses to `create` a file that exists: the two slips most of
# its errors are (real OpenHands runs: a third of its failing steps), neither visible in the
# state before the call is drafted.
_EDITOR_NEEDS: dict[str, tuple[str, ...]] = {
    "create": ("file_text",),
    "str_replace": ("old_str",),
    "insert": ("insert_line", "new_str"),
}
# A prompt that demands exactly one code block a reply (mini-swe-agent: "Your response must
# contain exactly ONE bash code block"; "EXACTLY ONE action in triple backticks") rejects a reply
# with none or several, whatever the command. What counts is the fence its own example shows:
# mini-swe-agent 1.x's is ```bash, 2.x's ```mswea_bash_command (its prompt still says "bash code
# block"); a prompt that shows no fence (an XML-tag format) is not judged by fences at all.
_ONE_BLOCK = re.compile(
    r"\bexactly\s+one\s+(?:\w+\s+)?(?:code\s+block|action\s+in\s+triple\s+backticks)", re.IGNORECASE
)
_FENCE = re.compile(r"```([\w-]*)[ \t]*\n.*?```", re.DOTALL)
# An action between a tag and its end on one line, as a format's example shows it.
_TAG_EXAMPLE = re.compile(r"<([A-Za-z_][\w-]*)>[^<\n]+</\1>")
_EVERY_REPLY_CALLS = re.compile(
    r"\bmust\s+(?:include|contain|make)\s+at\s+least\s+one\s+(?:\w+\s+)?tool\s+call", re.IGNORECASE
)
_FENCE_OPENING = re.compile(r"```([\w-]*)[ \t]*\n")
_PROMPT_ROLES = ("system", "developer")
_CONTRACT_CHARS = 20_000  # of each system message: a harness states its format near the top
_INSTALL = re.compile(r"\b(?:pip[\d.]*|apt(?:-get)?|npm|yarn|pnpm|conda|cargo|gem)\s+(?:install|add)\b")


def command_text(message: Message) -> str:
    """The command(s) of an answer: its tool calls' arguments, or its fenced code, or its text."""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        parts = []
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                parts.append(str(function.get("arguments") or ""))
        return "\n".join(parts)
    text = content_text(message)
    blocks = _FENCED.findall(text)
    return "\n".join(blocks) if blocks else text


@lru_cache(maxsize=256)
def _demanded_fence(prompt: str) -> str | None:
    """The fence a prompt demands exactly one of: the language its examples' fences name most
    ("" when they name none), or None (no such demand, or no fenced example to go by). Keyed by
    the prompt itself, not a slice of it: a step whose messages are the step before's objects
    (the gateway's prefix parser) finds it without hashing the prompt again."""
    if _ONE_BLOCK.search(prompt, 0, _CONTRACT_CHARS) is None:
        return None
    shown: Counter[str] = Counter(
        str(language).lower() for language in _FENCE_OPENING.findall(prompt, 0, _CONTRACT_CHARS)
    )
    if not shown:
        return None
    language: str = shown.most_common(1)[0][0]
    return language


@lru_cache(maxsize=256)
def _demanded_tag(prompt: str) -> str | None:
    """The tag a prompt demands exactly one of, where its example shows the action between a tag
    and its end on one line (mini-swe-agent 2.x's XML format: `<mswea_bash_command>…
    </mswea_bash_command>`), else None."""
    if _ONE_BLOCK.search(prompt, 0, _CONTRACT_CHARS) is None:
        return None
    shown = _TAG_EXAMPLE.search(prompt, 0, _CONTRACT_CHARS)
    return None if shown is None else shown.group(1)


@lru_cache(maxsize=256)
def _demands_call(prompt: str) -> bool:
    """Whether a prompt demands a tool call in every reply (mini-swe-agent 2.x: "Your response
    MUST include AT LEAST ONE bash tool call"; its parser refuses a reply without one)."""
    return _EVERY_REPLY_CALLS.search(prompt, 0, _CONTRACT_CHARS) is not None


def _breaks_format(draft: Message, messages: list[Message]) -> float:
    """1.0 when the draft, a reply without tool calls, breaks the format its prompt demands:
    exactly one code block (of the language named) or one action tag where the system prompt
    says so, or a tool call where the system prompt or the task's first message says every reply
    holds one."""
    calls = draft.get("tool_calls")
    if isinstance(calls, list) and calls:
        return 0.0
    first_user = True
    for message in messages[:HEAD_MESSAGES]:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "user" and first_user:
            first_user = False
            if _demands_call(content_text(message)):
                return 1.0
            continue
        if role not in _PROMPT_ROLES:
            continue
        prompt = content_text(message)
        if _demands_call(prompt):
            return 1.0
        fence = _demanded_fence(prompt)
        if fence is not None:
            languages = [lang.lower() for lang in _FENCE.findall(content_text(draft))]
            blocks = len(languages) if fence == "" else sum(lang == fence for lang in languages)
            return float(blocks != 1)
        tag = _demanded_tag(prompt)
        if tag is not None:
            return float(content_text(draft).count(f"<{tag}>") != 1)
    return 0.0


def _required(tools: list[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    """The arguments each declared tool's schema requires, by the tool's name (chat tools, and the
    flat shapes: `parameters`, Anthropic's `input_schema`)."""
    found: dict[str, tuple[str, ...]] = {}
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        spec = function if isinstance(function, dict) else tool
        schema = spec.get("parameters") or spec.get("input_schema")
        required = schema.get("required") if isinstance(schema, dict) else None
        if isinstance(required, list) and required:
            found[str(spec.get("name") or "")] = tuple(str(name) for name in required)
    return found


def _call_arguments(draft: Message) -> list[tuple[str, dict[str, Any]]]:
    """The draft's tool calls whose arguments are a JSON object: (the tool's name, the arguments)."""
    calls = draft.get("tool_calls")
    found = []
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            args = parse_arguments(function.get("arguments"))
            if args is not None:
                found.append((str(function.get("name") or ""), args))
    return found


def _misses_required(calls: list[tuple[str, dict[str, Any]]], tools: list[dict[str, Any]] | None) -> float:
    """1.0 when one of the draft's `calls` lacks an argument its tool requires."""
    if not tools or not calls:
        return 0.0
    required = _required(tools)
    return float(any(any(need not in args for need in required.get(name, ())) for name, args in calls))


# A line of a tool result that names a path only to say it is not there (an editor's `The path
# /x does not exist`, a shell's `No such file or directory`): it shows no file.
_ABSENT = re.compile(r"does not exist|No such file or directory|not found|cannot access|cannot open", re.IGNORECASE)


def _shown(path: str, messages: list[Message]) -> bool:
    """Whether a tool result among `messages` showed `path`: listed it or showed it (an `ls`, an
    editor's view, `File created successfully at:`), not only said it is missing. Only what the
    tools returned counts: a path the task or the user names (the file to create) is not known to
    exist, nor is one the agent's own calls named."""
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "tool":
            continue
        text = content_text(message)
        at = text.find(path)
        while at >= 0:
            start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
            if _ABSENT.search(text, start, end if end >= 0 else len(text)) is None:
                return True
            at = text.find(path, at + len(path))
    return False


def _editor_values(calls: list[tuple[str, dict[str, Any]]], tail: list[Message]) -> tuple[float, float]:
    """(`draft_edit_incomplete`, `draft_creates_shown`) of the draft's `calls`: those to an editor
    driven by a `command` argument (see `_EDITOR_NEEDS`), the path of a `create` looked for in the
    tool results of `tail` (`_shown`); 0 without such calls."""
    incomplete = creates_shown = False
    for _name, args in calls:
        command = args.get("command")
        if not isinstance(command, str) or command not in _EDITOR_NEEDS:
            continue
        incomplete = incomplete or any(need not in args for need in _EDITOR_NEEDS[command])
        path = args.get("path")
        if command == "create" and isinstance(path, str) and path.strip() and not creates_shown:
            creates_shown = _shown(path.strip(), tail)
    return float(incomplete), float(creates_shown)


def draft_features(
    draft: Message,
    messages: list[Message],
    tools: list[dict[str, Any]] | None = None,
    record: RunRecord = EMPTY_RECORD,
) -> Vector:
    """`DRAFT_FEATURE_NAMES` of the answer `draft` to the conversation `messages` (its tail only);
    `record`: the run's own record (`TrajectoryCounters.record`)."""
    names = tool_names(tools)
    turn = inspect_turn(draft, names)
    tail = [m for m in messages[-TAIL_MESSAGES:] if isinstance(m, dict) and m.get("role") == "assistant"]
    earlier = [inspect_turn(m, names) for m in tail]
    command = command_text(draft)
    calls = _call_arguments(draft)
    one_hot = [0.0] * len(ACTION_TYPES)
    one_hot[ACTION_TYPES.index(turn.action)] = 1.0
    last = earlier[-1] if earlier else None
    values = [
        *one_hot,
        float(turn.calls),
        float(turn.invalid),
        float(turn.prose),
        math.log1p(len(content_text(draft))),
        math.log1p(len(command)),
        float(last is not None and last.signature == turn.signature),
        float(any(e.signature == turn.signature for e in earlier)),
        float(last is not None and last.action == turn.action and turn.action != ActionType.OTHER),
        float(_SCRIPT.search(command) is not None),
        float(_INLINE.search(command) is not None),
        math.log1p(len(_CHAIN.findall(command))),
        float("cd " in command),
        float("<<" in command),
        float(_INSTALL.search(command) is not None),
        *_editor_values(calls, messages[-TAIL_MESSAGES:]),
        _breaks_format(draft, messages),
        _misses_required(calls, tools),
        *record.type_values(turn.action),
    ]
    return np.array(values, dtype=np.float32)
