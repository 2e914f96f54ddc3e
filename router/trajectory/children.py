"""Sub-agents as child trajectories: a run started from inside another (Claude Code's Task tool)
is its own trajectory, linked to its parent and the parent's step that started it.

Claude Code starts a sub-agent with a tool call (`Task`, or `Agent`; its arguments hold the
sub-agent's `prompt` and a `subagent_type`); the sub-agent is a new conversation, with its own
system prompt, in the same session, whose first user message is that prompt. So: when a step's
answer calls such a tool, the prompt is remembered under the step's family (its session's
trajectory); a later request of that session whose first user message is a remembered prompt
is the sub-agent's, filed under the child trajectory `<parent id>~<digest of the prompt>`. A
sub-agent's own Task calls are remembered in the same family, so a grandchild is its child.

A run that names no session is stitched; so is its sub-agent (a new run: another system
prompt, the prompt as its first user message). The prompts its answers started are remembered
under the client key's stitched family, and a new stitched run whose first user message is one
of them is linked to the run and step that started it, once (the prompt is then forgotten).

The prompts are remembered in this process (bounded, the oldest forgotten first): a sub-agent
whose requests reach another replica than its parent's answer did is filed with its parent.

Codex names its threads instead (router/trajectory/identify.py `spawned_thread`): a spawned
agent's requests say which thread it is and which spawned it, so its trajectory needs no memory
here; only the parent's step does, kept from the last answer of the parent that called
`spawn_agent` (on another replica: the parent's latest step as the child begins).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import OrderedDict
from typing import Any

import orjson

from router.protocol.text import text_of
from router.trajectory.identify import Call, is_plain_session

SPAWN_TOOLS = frozenset({"Task", "Agent"})
# Codex's spawning function, as a chat model calls it (in its namespace, flattened) or bare.
THREAD_SPAWN = "spawn_agent"
MAX_SPAWNS = 10_000
PARENT_NOTE = "parent"  # on a child: "<parent id> <parent step>"
CHILD_NOTE = "child:"  # on a parent, one a child: "child:<child id>" = "<parent step>"
STITCHED = "stitched|"  # the family of a client key's stitched runs (no trajectory id has "|")


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
    # Kept to a session's length (as children were named before ids could be longer), so that a
    # sub-agent's id does not change under a run that goes on across an upgrade.
    if is_plain_session(candidate):
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


def stitched_family(namespace: str) -> str:
    """The family of the runs of a client key that name no session: stitched runs."""
    return STITCHED + namespace


class Children:
    """The sub-agent prompts the answers of this process started, by family: the session's
    trajectory for a run named by its session (its children's and their children's prompts),
    `stitched_family(namespace)` for stitched runs."""

    def __init__(self, max_spawns: int = MAX_SPAWNS) -> None:
        self._max = max_spawns
        # (family, prompt digest) -> (the parent trajectory, the parent's step)
        self._spawns: OrderedDict[tuple[str, str], tuple[str, int]] = OrderedDict()
        # a parent trajectory -> its last step whose answer spawned a named thread (Codex)
        self._thread_spawns: OrderedDict[str, int] = OrderedDict()

    def spawned(self, family: str, parent_id: str, step: int, calls: list[Call]) -> list[str]:
        """Remember the sub-agents a step's answer started; their child trajectory ids (for a
        session's family: a stitched sub-agent keeps the id stitching gave it)."""
        started = []
        for call in calls:
            name = call[1] or ""
            if name == THREAD_SPAWN or name.endswith("__" + THREAD_SPAWN):
                self._thread_spawns[parent_id] = step
                self._thread_spawns.move_to_end(parent_id)
            prompt = _prompt_of(call)
            if prompt is None:
                continue
            digest = _digest(prompt)
            self._spawns[(family, digest)] = (parent_id, step)
            self._spawns.move_to_end((family, digest))
            started.append(child_id(parent_id, digest))
        while len(self._spawns) > self._max:
            self._spawns.popitem(last=False)
        while len(self._thread_spawns) > self._max:
            self._thread_spawns.popitem(last=False)
        return started

    def any_prompt(self) -> bool:
        """Whether an answer of this process started a sub-agent by a prompt."""
        return bool(self._spawns)

    def thread_spawn_step(self, parent_id: str) -> int | None:
        """The parent's last step whose answer (given by this process) spawned a named thread."""
        return self._thread_spawns.get(parent_id)

    def child_of(self, family: str, messages: list[dict[str, Any]], claim: bool = False) -> tuple[str, str, int] | None:
        """The child trajectory a request of `family` belongs to, its parent and the parent's
        step: when its first user message is a sub-agent prompt that an answer of the family
        started. `claim`: the prompt is forgotten (a stitched sub-agent is linked at its first
        step; its later steps follow by stitching)."""
        if not self._spawns:
            return None
        for text in first_user_texts(messages):
            digest = _digest(text)
            found = self._spawns.pop((family, digest), None) if claim else self._spawns.get((family, digest))
            if found is not None:
                parent_id, step = found
                return child_id(parent_id, digest), parent_id, step
        return None
