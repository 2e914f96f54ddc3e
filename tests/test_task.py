"""The trajectory's task is the user's request, not the client's boilerplate around it."""

from __future__ import annotations

import httpx

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

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
