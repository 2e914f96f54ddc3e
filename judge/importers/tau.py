"""tau-bench and tau2-bench results.

tau-bench: a JSON list of runs of its tool-calling agent, each `{task_id, trial, reward, info,
traj}` where `traj` is the OpenAI chat the agent's model saw (the simulated customer's turns as
`user`, the tools' results as `tool`). A run succeeded when its reward is 1. Written against
`historical_trajectories/*.json` of sierra-research/tau-bench (MIT); the family is
`tau-bench-tool-calling` (the harness's agent strategy, one version so far).

tau2-bench: below (`read_tau2`); the family is `tau2-bench-1`.

Either way a step's label is the harness's status alone: a tool's result that the harness wrote
as an error (`Error: …`, tau2's `error` flag) failed; what a result says otherwise is never read
as a failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judge.importers import Message, Run, TrajectoryFormatError, empty_run
from judge.importers import as_dict as _dict
from judge.importers.chats import _chat_message, _stem
from judge.status import TOOL_ERROR_MARKER

FAMILY = "tau-bench-tool-calling"


def is_tau_results(document: Any) -> bool:
    """Whether a parsed JSON document is a tau-bench results file."""
    return (
        isinstance(document, list)
        and bool(document)
        and all(isinstance(run, dict) and isinstance(run.get("traj"), list) and "task_id" in run for run in document)
    )


def read_tau(path: Path, document: list[dict[str, Any]], skipped: list[str] | None = None) -> list[Run]:
    """The runs of a tau-bench results file; one with no assistant message is left out (and said
    in `skipped`)."""
    runs = []
    for index, entry in enumerate(document):
        where = f"[{index}]."
        messages = [
            m for i, e in enumerate(entry["traj"]) if (m := _chat_message(e, path, f"{where}traj[{i}]")) is not None
        ]
        run_id = f"{_stem(path)}-task{entry.get('task_id')}-trial{entry.get('trial', 0)}"
        if not any(m["role"] == "assistant" for m in messages):
            if skipped is not None:
                skipped.append(empty_run(path, None, run_id, f"no assistant message (at {where.rstrip('.')})"))
            continue
        reward = entry.get("reward")
        outcome = {"success": float(reward) >= 1.0} if isinstance(reward, int | float) else None
        runs.append(Run(run_id, FAMILY, messages, None, outcome, str(path), {"family": FAMILY}))
    return runs


# tau2-bench (github.com/sierra-research/tau2-bench, MIT): a results file is one JSON object,
# `{timestamp, info, tasks, simulations}`; each simulation holds the run's `messages` (the
# agent's turns, the simulated user's, the tools' results, each tool result with its `requestor`
# and its `error` flag) and `reward_info`. Written against the results of tau2-bench 0.x–1.x
# (`Results.save`'s single JSON file; a voice run's `ticks` are not read).
TAU2_FAMILY = "tau2-bench-1"
# The system prompt of tau2-bench's `llm_agent` (src/tau2/agent/llm_agent.py, as released): its
# instructions, then the domain's policy (`info.environment_info.policy`).
TAU2_AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either:\n"
    "- Send a message to the user.\n"
    "- Make a tool call.\n"
    "You cannot do both at the same time.\n"
    "\n"
    "Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."
)


def is_tau2_results(document: Any) -> bool:
    """Whether a parsed JSON document is a tau2-bench results file."""
    return (
        isinstance(document, dict)
        and isinstance(document.get("simulations"), list)
        and isinstance(document.get("info"), dict)
        and isinstance(document.get("tasks"), list)
    )


def _tau2_call(call: Any, path: Path, where: str) -> dict[str, Any]:
    """A tau2 tool call (`{id, name, arguments}`, the arguments an object) in the chat's shape, its
    arguments as tau2 sends them to the model (`json.dumps`)."""
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise TrajectoryFormatError(path, None, "a tool call needs a name", where)
    arguments = call.get("arguments")
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments if arguments is not None else {})
    return {"id": str(call.get("id") or ""), "type": "function", "function": {"name": call["name"], "arguments": raw}}


def _tau2_messages(simulation: dict[str, Any], policy: str, path: Path, where: str) -> list[Message]:
    """The chat tau2's agent saw (`to_litellm_messages` of its state): its system prompt, the
    user's text turns, its own turns, the results of its own calls. The simulated user's tool
    calls and their results (tau2's dual-control domains) went to the user, not the agent."""
    messages: list[Message] = [
        {
            "role": "system",
            "content": f"<instructions>\n{TAU2_AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>",
        }
    ]
    for index, entry in enumerate(simulation["messages"]):
        at = f"{where}messages[{index}]"
        if not isinstance(entry, dict):
            raise TrajectoryFormatError(path, None, f"a message must be an object, got {type(entry).__name__}", at)
        role, content = entry.get("role"), entry.get("content")
        text = content if isinstance(content, str) else ""
        if role == "assistant":
            calls = entry.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                raise TrajectoryFormatError(path, None, "tool_calls must be a list", at)
            message: Message = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = [_tau2_call(call, path, at) for call in calls]
            messages.append(message)
        elif role == "user":
            if text:  # a turn of only tool calls is the user's own business
                messages.append({"role": "user", "content": text})
        elif role == "tool":
            if entry.get("requestor") == "user":
                continue
            if entry.get("error") is True and not text.lstrip().startswith("Error"):
                text = TOOL_ERROR_MARKER + text  # tau2 writes `Error: …`; a flag alone says it too
            messages.append({"role": "tool", "content": text, "tool_call_id": str(entry.get("id") or "")})
        elif role != "system":
            raise TrajectoryFormatError(path, None, f"a message has role {role!r}", at)
    return messages


def read_tau2(path: Path, document: dict[str, Any], skipped: list[str] | None = None) -> list[Run]:
    """The runs of a tau2-bench results file, one per simulation, named by the file, the task and
    the trial; a run succeeded when its reward is 1. A simulation with no agent turn is left out
    (and said in `skipped`)."""
    info = document["info"]
    environment = _dict(info.get("environment_info"))
    policy = str(environment.get("policy") or "")
    agent = _dict(info.get("agent_info"))
    if not document["simulations"] and document.get("simulation_index"):
        raise TrajectoryFormatError(
            path, None, "a results file whose simulations are in the simulations/ folder beside it: not read"
        )
    runs = []
    for index, simulation in enumerate(document["simulations"]):
        where = f"simulations[{index}]."
        if not isinstance(simulation, dict):
            raise TrajectoryFormatError(path, None, "a simulation must be an object", where)
        run_id = f"{_stem(path)}-task{simulation.get('task_id')}-trial{simulation.get('trial') or 0}"
        if not isinstance(simulation.get("messages"), list):
            raise TrajectoryFormatError(
                path, None, "a simulation without its messages (a voice run's ticks are not read)", where
            )
        messages = _tau2_messages(simulation, policy, path, where)
        if not any(m["role"] == "assistant" for m in messages):
            if skipped is not None:
                skipped.append(empty_run(path, None, run_id, f"no agent turn (at {where.rstrip('.')})"))
            continue
        reward = _dict(simulation.get("reward_info")).get("reward")
        outcome = {"success": float(reward) >= 1.0} if isinstance(reward, int | float) else None
        meta = {"family": TAU2_FAMILY, "model": agent.get("llm"), "agent": agent.get("implementation")}
        runs.append(Run(run_id, "tau2-bench", messages, None, outcome, str(path), meta))
    return runs
