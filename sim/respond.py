"""What a simulated model answers to one request: an agent's step, or one of the inner calls the
gateway's strategies make (a probe, a judge, a verifier, an advisor, a planner, a summariser).

An agent's step is answered by `script.decide`, with what the gateway added in view: an edge
offered `delegate_to_cloud` or `advisor` calls it more often when its step would be wrong; an
edge given advice (the advisor's answer as a tool result) gets half as many steps wrong; an edge
whose system prompt holds the sketch's plan 30% fewer. The hidden draw of whether the edge's
step is wrong stays the one `script.decide` makes for (seed, task, step): help only lowers the
rate it is compared with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from router.policies.prompts import ADVISOR_TOOL, DELEGATE_TOOL, PLAN_HINT
from sim.answer import (
    REASONING_TOKENS,
    Answer,
    PrefixCache,
    build_answer,
    call_id,
    latency_s,
    plain_answer,
    prompt_tokens,
    text_answer,
)
from sim.prompts import PromptAnswers, prompt_purpose
from sim.script import Call, NextStep, Role, decide, draw
from sim.signals import Help, asks_for_help, first_token_entropy, top_logprobs
from sim.tasks import Task
from sim.transcript import find_task_in

# The gateway's tool names and plan hint come from its public prompts module
# (`router.policies.prompts`), so the simulation follows them when they change.
ADVISED_ERROR_SCALE = 0.5
PLANNED_ERROR_SCALE = 0.7

# Inner calls take a share of a step's time (a probe or a verdict is mostly prefill) or more
# (advice and plans are long answers); hidden reasoning tokens follow the same logic.
LATENCY_FACTOR: dict[str, float] = {
    "probe": 0.3,
    "judge": 0.4,
    "judge_score": 0.4,
    "verify": 0.4,
    "advice": 1.5,
    "plan": 1.2,
    "summary": 1.2,
}
REASONING: dict[str, tuple[int, int]] = {"advice": (120, 360), "plan": (80, 240), "summary": (30, 90)}
HELP_THOUGHT = {
    "delegate": "This step is hard for me; I'll hand it to the stronger model.",
    "advisor": "I'm not sure how to go on; let me ask the advisor first.",
}
# Other likely first tokens of an agent's answer, for a probe's top-20 list.
FIRST_TOKENS = (
    *("Let", "I", "Now", "The", "That", "Next", "First", "Okay", "To", "We"),
    *("This", "It", "Running", "Reading", "Checking", "Looking", "Before", "So", "My", "Then", "Good"),
)


@dataclass(frozen=True)
class AgentStep:
    """An agent's step as the simulated model reads it."""

    messages: list[dict[str, Any]]  # the agent's conversation, without the advisor's exchange
    help: Help | None  # the gateway's extra tool the model is offered
    advised: bool
    planned: bool


def _function_name(item: dict[str, Any]) -> str | None:
    """The function a tool definition or a tool call names (None: not a function's)."""
    function = item.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else None


def read_step(body: dict[str, Any]) -> AgentStep:
    messages: list[dict[str, Any]] = body["messages"]
    tools = body.get("tools")
    names = {_function_name(t) for t in tools if isinstance(t, dict)} if isinstance(tools, list) else set()
    help: Help | None = "delegate" if DELEGATE_TOOL in names else "advisor" if ADVISOR_TOOL in names else None
    calls = messages[-2].get("tool_calls") if len(messages) >= 2 and isinstance(messages[-2], dict) else None
    advised = (
        isinstance(calls, list)
        and isinstance(messages[-1], dict)
        and messages[-1].get("role") == "tool"
        and messages[-2].get("role") == "assistant"
        and any(_function_name(c) == ADVISOR_TOOL for c in calls if isinstance(c, dict))
    )
    if advised:
        # The gateway's own exchange with the advisor is not a step of the agent's run.
        messages = messages[:-2]
    head = messages[0] if messages else {}
    planned = head.get("role") == "system" and PLAN_HINT in str(head.get("content") or "")
    return AgentStep(messages, help, advised, planned)


class Responder:
    """One simulated model's answers (its role, the demo's tasks, the seed, the timing)."""

    def __init__(
        self, role: Role, tasks: dict[str, Task], seed: int, latency_scale: float, fixed_latency_s: float | None
    ) -> None:
        self.role = role
        self.tasks = tasks
        self.seed = seed
        self.latency_scale = latency_scale
        self.fixed_latency_s = fixed_latency_s
        self.cache = PrefixCache()
        self.prompts = PromptAnswers(tasks, seed)

    def _latency(self, task_id: str, step: int, purpose: str) -> float:
        if self.fixed_latency_s is not None:
            return self.fixed_latency_s
        factor = LATENCY_FACTOR.get(purpose, 1.0)
        return factor * latency_s(self.role, self.seed, task_id, step, f"latency-{purpose}", self.latency_scale)

    def respond(self, body: dict[str, Any]) -> Answer:
        prompt = prompt_tokens(body)
        inner = prompt_purpose(body["messages"])
        if inner is not None:
            return self._prompt_answer(*inner, prompt)
        agent_step = read_step(body)
        task = find_task_in(agent_step.messages, self.tasks)
        if task is None:
            return plain_answer(
                f"This is the simulated {self.role} model behind Tandem's demo: it only knows the demo's "
                "built-in tasks, so it answers every other request with this line.",
                prompt,
            )
        scale = (ADVISED_ERROR_SCALE if agent_step.advised else 1.0) * (
            PLANNED_ERROR_SCALE if agent_step.planned else 1.0
        )
        step = decide(task, agent_step.messages, self.role, self.seed, error_scale=scale)
        if body.get("logprobs") and 1 in (body.get("max_tokens"), body.get("max_completion_tokens")):
            return self._probe(task, step, prompt)
        cached = 0
        key = str(body.get("prompt_cache_key") or "")
        if self.role == "cloud" and key:
            # Only within a named cache key: inner calls from every run share none, and the
            # demo's numbers must not depend on the order the runs' calls arrive in.
            cached = self.cache.hit_tokens(key, body.get("tools"), agent_step.messages)
        if (
            agent_step.help is not None
            and self.role == "edge"
            and asks_for_help(agent_step.help, step, self.seed, task.id)
        ):
            return self._ask_for_help(agent_step.help, task, step, prompt)
        answer = build_answer(
            step,
            task_id=task.id,
            role=self.role,
            seed=self.seed,
            prompt=prompt,
            cached=cached,
            latency_scale=self.latency_scale,
        )
        if self.fixed_latency_s is not None:
            return Answer(answer.message, answer.finish_reason, answer.usage, self.fixed_latency_s)
        return answer

    def _probe(self, task: Task, step: NextStep, prompt: int) -> Answer:
        """One token with its top-20 alternatives: uncertain (high entropy) more often when wrong."""
        entropy = first_token_entropy(step, self.seed, task.id)
        first = step.thought.split()[0]
        tokens = [first, *(t for t in FIRST_TOKENS if t != first)][:20]
        top = [
            {"token": token, "logprob": logprob, "bytes": list(token.encode())}
            for token, logprob in zip(tokens, top_logprobs(entropy), strict=True)
        ]
        logprobs = {"content": [{**top[0], "top_logprobs": top}], "refusal": None}
        return text_answer(
            first,
            role=self.role,
            prompt=prompt,
            cached=0,
            reasoning=0,
            completion=1,
            latency=self._latency(task.id, step.step, "probe"),
            finish_reason="length",
            logprobs=logprobs,
        )

    def _ask_for_help(self, help: Help, task: Task, step: NextStep, prompt: int) -> Answer:
        tool = DELEGATE_TOOL if help == "delegate" else ADVISOR_TOOL
        asking = NextStep(step.step, step.kind, step.wrong, Call(tool, {}), HELP_THOUGHT[help])
        answer = build_answer(
            asking, task_id=task.id, role=self.role, seed=self.seed, prompt=prompt, cached=0, latency_scale=0
        )
        # Its own id: the advised answer that follows carries the step's usual one.
        answer.message["tool_calls"][0]["id"] = call_id(self.seed, task.id, step.step, self.role, tool)
        low, _high = REASONING_TOKENS[step.kind]
        completion = len(HELP_THOUGHT[help]) // 4 + low  # it stops thinking early to ask
        usage = {**answer.usage, "completion_tokens": completion, "total_tokens": prompt + completion}
        return Answer(answer.message, answer.finish_reason, usage, self._latency(task.id, step.step, help))

    def _prompt_answer(self, purpose: str, rest: str, prompt: int) -> Answer:
        text = self.prompts.answer(purpose, rest)
        # Draws keyed by the prompt's size: fixed for the same prompt, varied across prompts.
        low, high = REASONING.get(purpose, (0, 0))
        reasoning = low + int(draw(self.seed, purpose, len(rest), self.role, "tokens") * (high - low))
        return text_answer(
            text,
            role=self.role,
            prompt=prompt,
            cached=0,
            reasoning=reasoning,
            latency=self._latency(purpose, len(rest), purpose),
        )
