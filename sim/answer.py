"""What a simulated model sends back for one request: the assistant message, the token counts a
real server would report, and how long it takes.

Token counts follow the request's size (about 4 bytes a token) plus the reasoning a model spends
on each kind of step; the cloud reports prompt-cache hits the way OpenAI does (a prefix of at
least 1024 tokens seen before in the same `prompt_cache_key`, counted in steps of 128).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from sim.script import NextStep, Role, draw
from sim.tasks import Kind

# Hidden reasoning tokens per kind of step, on top of the visible answer: edits and recovery
# take thought, reads little.
REASONING_TOKENS: dict[Kind, tuple[int, int]] = {
    "read": (40, 120),
    "search": (40, 100),
    "test": (20, 60),
    "edit": (150, 450),
    "write": (150, 400),
    "recover": (200, 500),
    "final": (60, 160),
}

# Seconds per step before scaling: a local GPU answers fast, a frontier API slower.
LATENCY_S: dict[Role, tuple[float, float]] = {"edge": (0.04, 0.12), "cloud": (0.15, 0.40)}

CACHE_MIN_TOKENS = 1024
CACHE_BLOCK_TOKENS = 128
BYTES_PER_TOKEN = 4


@dataclass(frozen=True)
class Answer:
    message: dict[str, Any]  # role, content, and tool_calls when the step is a tool call
    finish_reason: str
    usage: dict[str, Any]
    latency_s: float
    logprobs: dict[str, Any] | None = None  # the choice's `logprobs` (an entropy probe's answer)


class PrefixCache:
    """Prompt prefixes a cloud has seen, per cache key, least recently used dropped first."""

    def __init__(self, capacity: int = 20_000) -> None:
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._capacity = capacity

    def hit_tokens(self, key: str, tools: Any, messages: list[dict[str, Any]]) -> int:
        """Cached tokens for this prompt, then remember the prompt for the next request."""
        digest = hashlib.sha256(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS))
        size = len(orjson.dumps(tools))
        longest = 0
        full = ""
        for message in messages:
            encoded = orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
            digest.update(encoded)
            size += len(encoded)
            full = digest.hexdigest()
            if (key, full) in self._seen:
                self._seen.move_to_end((key, full))
                longest = size // BYTES_PER_TOKEN
        self._seen[(key, full)] = None
        if len(self._seen) > self._capacity:
            self._seen.popitem(last=False)
        if longest < CACHE_MIN_TOKENS:
            return 0
        return longest - longest % CACHE_BLOCK_TOKENS


def prompt_tokens(body: dict[str, Any]) -> int:
    size = len(orjson.dumps(body.get("messages") or [])) + len(orjson.dumps(body.get("tools") or []))
    return max(1, size // BYTES_PER_TOKEN)


def latency_s(role: Role, seed: int, task_id: str, step: int, purpose: str, scale: float) -> float:
    """Seconds a call takes: drawn within the role's range, then scaled."""
    low, high = LATENCY_S[role]
    return (low + draw(seed, task_id, step, role, purpose) * (high - low)) * scale


def call_id(seed: int, task_id: str, step: int, role: str, purpose: str = "") -> str:
    """A tool call id fixed by its inputs, so that the same seed replays the same conversation."""
    digest = hashlib.sha256(f"{seed}:{task_id}:{step}:{role}{purpose}".encode()).hexdigest()[:24]
    return f"call_{digest}"


def build_answer(
    step: NextStep, *, task_id: str, role: Role, seed: int, prompt: int, cached: int, latency_scale: float
) -> Answer:
    content = step.thought
    message: dict[str, Any] = {"role": "assistant", "content": content}
    visible = len(content)
    if step.call is not None:
        arguments = step.call.arguments
        message["tool_calls"] = [
            {
                "id": call_id(seed, task_id, step.step, role),
                "type": "function",
                "function": {"name": step.call.tool, "arguments": arguments},
            }
        ]
        visible += len(arguments) + len(step.call.tool)
    low, high = REASONING_TOKENS[step.kind]
    reasoning = low + int(draw(seed, task_id, step.step, role, "tokens") * (high - low))
    completion = visible // BYTES_PER_TOKEN + reasoning
    return Answer(
        message=message,
        finish_reason="tool_calls" if step.call is not None else "stop",
        usage=usage_dict(prompt, cached, completion, report_cached=role == "cloud"),
        latency_s=latency_s(role, seed, task_id, step.step, "latency", latency_scale),
    )


def text_answer(
    text: str,
    *,
    role: Role,
    prompt: int,
    cached: int,
    reasoning: int,
    latency: float,
    finish_reason: str = "stop",
    logprobs: dict[str, Any] | None = None,
    completion: int | None = None,
) -> Answer:
    """A prose answer (a verdict, advice, a plan, a probe's one token) priced like any other."""
    tokens = completion if completion is not None else max(1, len(text) // BYTES_PER_TOKEN) + reasoning
    return Answer(
        message={"role": "assistant", "content": text},
        finish_reason=finish_reason,
        usage=usage_dict(prompt, cached, tokens, report_cached=role == "cloud"),
        latency_s=latency,
        logprobs=logprobs,
    )


def usage_dict(prompt: int, cached: int, completion: int, *, report_cached: bool) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if report_cached:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return usage


def plain_answer(text: str, prompt: int) -> Answer:
    """A prose answer for a conversation that is not one of the demo's tasks."""
    completion = max(1, len(text) // BYTES_PER_TOKEN)
    return Answer(
        message={"role": "assistant", "content": text},
        finish_reason="stop",
        usage=usage_dict(prompt, 0, completion, report_cached=False),
        latency_s=0.0,
    )
