"""Sub-agents as child trajectories: a run started from inside another (Claude Code's Task tool)
is its own trajectory, linked to its parent and the parent's step that started it.

Claude Code starts a sub-agent with a tool call (`Task`, or `Agent`; its arguments hold the
sub-agent's `prompt` and a `subagent_type`); the sub-agent is a new conversation, with its own
system prompt, in the same session, whose first user message is that prompt. So: when a step's
answer calls such a tool, the prompt is remembered under the step's trajectory; a later request
of that trajectory whose first user message is a remembered prompt is the sub-agent's, filed
under the child trajectory `<parent id>~<digest of the prompt>`.

The prompts are remembered in this process (bounded, the oldest forgotten first): a sub-agent
whose requests reach another replica than its parent's answer did is filed with its parent.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import OrderedDict
from typing import Any

import orjson

from router.protocol.text import text_of
from router.trajectory.identify import Call, is_valid_id

SPAWN_TOOLS = frozenset({"Task", "Agent"})
MAX_SPAWNS = 10_000
PARENT_NOTE = "parent"  # on a child: "<parent id> <parent step>"
CHILD_NOTE = "child:"  # on a parent, one a child: "child:<child id>" = "<parent step>"


def _prompt_of(call: Call) -> str | None:
    """The sub-agent's prompt, when the call starts one."""
    _, name, arguments = call
    if not arguments:
        return None
    parsed: Any = None
    with contextlib.suppress(orjson.JSONDecodeError):
        parsed = orjson.loads(arguments)
    if not isinstance(parsed, dict):
        return None
    prompt = parsed.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    return prompt if name in SPAWN_TOOLS or "subagent_type" in parsed else None


def _digest(text: str) -> str:
    return hashlib.blake2b(text.strip().encode(), digest_size=8).hexdigest()


def child_id(parent_id: str, prompt_digest: str) -> str:
    candidate = f"{parent_id}~{prompt_digest}"
    if is_valid_id(candidate):
        return candidate
    return "sub-" + hashlib.blake2b(candidate.encode(), digest_size=12).hexdigest()


def first_user_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The first user message's text, whole and part by part (a client may put reminders in
    parts of their own before or after the prompt)."""
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content")
            texts = [text_of(content)]
            if isinstance(content, list):
                texts += [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
            return [t for t in texts if t.strip()]
    return []


class Children:
    """The sub-agent prompts the answers of this process started, by parent trajectory."""

    def __init__(self, max_spawns: int = MAX_SPAWNS) -> None:
        self._max = max_spawns
        self._spawns: OrderedDict[tuple[str, str], int] = OrderedDict()  # (parent, digest) -> step

    def spawned(self, parent_id: str, step: int, calls: list[Call]) -> list[str]:
        """Remember the sub-agents a step's answer started; their child trajectory ids."""
        started = []
        for call in calls:
            prompt = _prompt_of(call)
            if prompt is None:
                continue
            digest = _digest(prompt)
            self._spawns[(parent_id, digest)] = step
            self._spawns.move_to_end((parent_id, digest))
            started.append(child_id(parent_id, digest))
        while len(self._spawns) > self._max:
            self._spawns.popitem(last=False)
        return started

    def child_of(self, trajectory_id: str, messages: list[dict[str, Any]]) -> tuple[str, int] | None:
        """The child trajectory a request of `trajectory_id` belongs to, and its parent's step:
        when its first user message is a sub-agent prompt that trajectory's answers started."""
        if not self._spawns:
            return None
        for text in first_user_texts(messages):
            digest = _digest(text)
            step = self._spawns.get((trajectory_id, digest))
            if step is not None:
                return child_id(trajectory_id, digest), step
        return None
