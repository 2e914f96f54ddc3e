"""What the cloud sees of the history when it answers a step (a route's `context` setting).

`full` sends everything. `last_k` keeps the system prompt, the task and the last k steps.
`summary` replaces the earlier steps with a summary the edge wrote (cached per trajectory).
`flattened` turns the history into one text message. In every mode the request's `tools` stay,
so the cloud still answers with the tool-call structure the agent expects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from router import notes
from router.inner import InnerCallError
from router.privacy.at_rest import to_keep
from router.protocol.text import message_text, text_of

if TYPE_CHECKING:
    from router.config.routes import ContextSettings
    from router.inner import InnerCalls
    from router.trajectory.store import TrajectoryStore
    from router.trajectory.tracker import StepIdentity

Messages = list[dict[str, Any]]


def _split(messages: Messages) -> tuple[Messages, Messages]:
    """The head (system prompts and the first user message) and the rest."""
    head: Messages = []
    index = 0
    while index < len(messages) and messages[index].get("role") in ("system", "developer"):
        head.append(messages[index])
        index += 1
    if index < len(messages) and messages[index].get("role") == "user":
        head.append(messages[index])
        index += 1
    return head, messages[index:]


def _step_starts(rest: Messages) -> list[int]:
    """Where each step (an assistant message and what answered it) begins."""
    return [i for i, m in enumerate(rest) if m.get("role") == "assistant"]


def last_k(messages: Messages, k: int) -> Messages:
    head, rest = _split(messages)
    starts = _step_starts(rest)
    if len(starts) <= k:
        return messages
    # Cut at an assistant message, so that no tool result loses the call it answers.
    return [*head, *rest[starts[-k] :]]


def earlier_and_recent(messages: Messages, k: int) -> tuple[Messages, Messages, Messages]:
    head, rest = _split(messages)
    starts = _step_starts(rest)
    if len(starts) <= k:
        return head, [], rest
    cut = starts[-k]
    return head, rest[:cut], rest[cut:]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…({len(text) - limit} more chars)"


def flatten(messages: Messages, max_chars: int) -> str:
    """A plain transcript, the oldest entries dropped first to fit `max_chars`. Each entry's
    text and each call's arguments are cut apart, so a long text never hides the call after it
    and a cut argument says that it was cut."""
    lines: list[str] = []
    for message in messages:
        role = message.get("role", "?")
        text = _clip(text_of(message.get("content")), 4000)
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            text += f"\n[calls {function.get('name')}({_clip(str(function.get('arguments', '')), 2000)})]"
        lines.append(f"{role.upper()}: {text}")
    transcript = "\n\n".join(lines)
    return transcript if len(transcript) <= max_chars else "…" + transcript[-max_chars:]


def flattened(messages: Messages, max_chars: int) -> Messages:
    head, rest = _split(messages)
    system = [m for m in head if m.get("role") in ("system", "developer")]
    task = [m for m in head if m.get("role") == "user"]
    transcript = flatten([*task, *rest], max_chars)
    return [
        *system,
        {
            "role": "user",
            "content": "The conversation so far, flattened:\n\n" + transcript + "\n\nContinue with the next step.",
        },
    ]


def summarised(messages: Messages, summary: str, k: int) -> Messages:
    head, earlier, recent = earlier_and_recent(messages, k)
    if not earlier:
        return messages
    note = {"role": "user", "content": f"Summary of the earlier steps (written for you):\n{summary}"}
    return [*head, note, *recent]


SUMMARY_PROMPT = (
    "Summarise the agent's earlier steps below for a colleague who takes over: what was tried, "
    "what was learnt (files, errors, results), what is left. At most 200 words.\n\n"
)
# The summary kept for the trajectory, and how many earlier steps it covers.
SUMMARY_NOTE, COVERS_NOTE = notes.context("summary"), notes.context("summary_covers")


async def cloud_context(
    settings: ContextSettings,
    messages: Messages,
    calls: InnerCalls,
    store: TrajectoryStore,
    identity: StepIdentity,
) -> Messages:
    """The messages the cloud receives for a step, by the route's context setting."""
    if settings.mode == "last_k":
        return last_k(messages, settings.k)
    if settings.mode == "flattened":
        # Flattened from the redacted messages on a redacting route (InnerCalls.shown).
        return flattened(calls.shown("cloud", messages), settings.max_chars)
    if settings.mode != "summary":
        return messages
    _head, earlier, _recent = earlier_and_recent(messages, settings.k)
    if not earlier:
        return messages
    kept = identity.trajectory.notes
    summary = kept.get(SUMMARY_NOTE, "")
    # Rewrite the summary only when k more steps have left the verbatim window since the last
    # one: the edge writes it, once per k steps, not once per step.
    covered = int(kept.get(COVERS_NOTE, "0") or 0)
    earlier_steps = sum(1 for message in earlier if message.get("role") == "assistant")
    if not summary or earlier_steps - covered >= settings.k:
        try:
            answer = await calls.complete(
                "edge",
                {
                    "messages": [{"role": "user", "content": SUMMARY_PROMPT + flatten(earlier, settings.max_chars)}],
                    "max_tokens": 400,
                    "temperature": 0,
                },
                "summary",
            )
        except InnerCallError:
            # Without a summary, the recent steps alone still give the cloud the tool structure.
            return last_k(messages, settings.k)
        summary = message_text(answer)
        if calls.privacy is not None and not await calls.privacy.written(summary):
            # A value only the edge's words hold, on a route that keeps values off the cloud:
            # the recent steps alone (the summary is not kept: the next step writes one anew).
            return last_k(messages, settings.k)
        # The summary goes to the cloud only (redacted on the way); kept with placeholders.
        await store.note(identity.trajectory_id, SUMMARY_NOTE, to_keep(calls.privacy, summary))
        await store.note(identity.trajectory_id, COVERS_NOTE, str(earlier_steps))
    return summarised(messages, summary, settings.k)
