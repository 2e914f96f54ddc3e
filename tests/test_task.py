"""The trajectory's task is the user's request, not the client's boilerplate around it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import router.privacy.runs as runs_module
from router.privacy.at_rest import stored_task
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.inprocess import in_process

REMINDER = "<system-reminder>\nAs you answer the user's questions, you can use the following context: " + "x" * 900
CODEX_CONTEXT = "<environment_context>\n  <cwd>/repo</cwd>\n  <shell>bash</shell>\n</environment_context>"


def trajectory(client: httpx.Client, gateway: GatewayServer, session: str, messages: list[dict[str, str]]) -> dict:
    response = client.post(
        f"{gateway.base_url}/chat/completions",
        json={"model": "tandem", "messages": messages},
        headers={"x-session-id": session},
    )
    assert response.status_code == 200, response.text
    answer = client.get(f"{gateway.base_url}/trajectories/{response.headers['x-tandem-trajectory']}")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_claude_code_reminders_and_codex_context_are_not_the_task(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream
) -> None:
    claude = [
        {"role": "system", "content": "You are Claude Code."},
        {"role": "user", "content": f"{REMINDER}\n</system-reminder>\nRename the function parse_row to read_row."},
    ]
    assert trajectory(client, gateway, "claude-1", claude)["task"] == "Rename the function parse_row to read_row."
    codex = [
        {"role": "developer", "content": "You are Codex."},
        {"role": "user", "content": CODEX_CONTEXT},
        {"role": "user", "content": "Add a --verbose flag to the CLI."},
    ]
    assert trajectory(client, gateway, "codex-1", codex)["task"] == "Add a --verbose flag to the CLI."


def test_a_plain_first_message_is_the_task(gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream) -> None:
    plain = [{"role": "user", "content": "What is 2 + 2?"}]
    assert trajectory(client, gateway, "plain-1", plain)["task"] == "What is 2 + 2?"


async def test_the_task_is_found_once_per_trajectory_and_kept_from_its_first_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The memory store keeps the task of a trajectory's first step only: later steps of a
    # trajectory it holds are spared finding theirs (the judge's task extraction, and masking).
    found: list[str] = []

    def counting(messages: list[dict[str, Any]], mode: str) -> str:
        found.append(mode)
        return stored_task(messages, mode)

    monkeypatch.setattr(runs_module, "stored_task", counting)
    async with in_process() as gateway:
        await gateway.run(session="s-task", messages=[{"role": "user", "content": "Fix the parser"}])
        changed = [{"role": "user", "content": "Something else entirely"}, {"role": "assistant", "content": "ok"}]
        await gateway.run(session="s-task", messages=[*changed, {"role": "user", "content": "go on"}])
        trajectory = await gateway.engine.tracker.store.get("s-task")
    assert trajectory is not None and trajectory.steps == 2
    assert trajectory.task == "Fix the parser"
    assert found == ["allow"]  # once, for the step that began the trajectory
