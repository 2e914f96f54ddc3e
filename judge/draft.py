"""Draft features: what the action about to be taken looks like (`sees: draft`).

With `sees: draft` the edge drafts the step first and the judge scores the state features
(judge/features.py) together with these: the draft's action type, its size and shape, whether its
tool calls are valid, whether it repeats an earlier turn, and the run's own record of steps of
the draft's action type (judge/record.py: how many, the share that failed). The action about to be taken is the
strongest evidence of whether it will fail. A draft model's feature names are
`FEATURE_NAMES + DRAFT_FEATURE_NAMES`; its card says `sees: draft`.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from judge.actions import ACTION_TYPES, ActionType, content_text
from judge.features import FEATURE_NAMES, TAIL_MESSAGES, Message, Vector, inspect_turn, tool_names
from judge.record import DRAFT_RECORD_FEATURE_NAMES, EMPTY_RECORD, RunRecord

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
    *DRAFT_RECORD_FEATURE_NAMES,
)
STATE_AND_DRAFT_NAMES: tuple[str, ...] = (*FEATURE_NAMES, *DRAFT_FEATURE_NAMES)

_FENCED = re.compile(r"```[\w-]*\s*\n(.*?)```", re.DOTALL)
_SCRIPT = re.compile(r"\b(?:python[\d.]*|node|bash|sh|ruby|perl|go run)\s+[\w./-]+\.(?:py|js|ts|sh|rb|pl|go)\b")
_INLINE = re.compile(r"\b(?:python[\d.]*\s+-c|node\s+-e|perl\s+-e|ruby\s+-e)\b")
_CHAIN = re.compile(r"&&|\|\||;|\|")
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
        *record.type_values(turn.action),
    ]
    return np.array(values, dtype=np.float32)
