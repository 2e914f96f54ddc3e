"""Runs one OpenHands SDK (V1) conversation against the gateway, as the SDK's own examples do:
an agent with the terminal tool (a local subprocess terminal) in a given folder. Run by the
OpenHands virtualenv's Python (3.12): `python run_openhands.py BASE_URL WORKDIR TASK [--task-tool]`
(`--task-tool`: the agent also has the Task tool set, whose sub-agents run in conversations of
their own).
Prints the conversation's final state and last agent message as one JSON line."""

from __future__ import annotations

import json
import sys

from openhands.sdk import LLM, Agent, Conversation, Tool
from openhands.tools.terminal import TerminalTool
from pydantic import SecretStr


def main() -> None:
    base_url, workdir, task = sys.argv[1:4]
    with_tasks = "--task-tool" in sys.argv[4:]
    llm = LLM(
        model="litellm_proxy/tandem",
        base_url=base_url,
        api_key=SecretStr("unused"),
        usage_id="agent",
        num_retries=2,
        retry_min_wait=1,
        retry_max_wait=2,
    )
    tools = [Tool(name=TerminalTool.name, params={"terminal_type": "subprocess"})]
    if with_tasks:
        from openhands.tools.preset.default import register_builtins_agents
        from openhands.tools.task import TaskToolSet

        register_builtins_agents(enable_browser=False)  # the sub-agent types, as the CLI has them
        tools.append(Tool(name=TaskToolSet.name))
    agent = Agent(llm=llm, tools=tools)
    conversation = Conversation(agent=agent, workspace=workdir, visualizer=None)
    result: dict[str, object] = {"id": str(conversation.id)}
    try:
        conversation.send_message(task)
        conversation.run()
        result["status"] = str(conversation.state.execution_status.value)
    except Exception as exc:  # the test reads what the client made of the error
        result["status"] = "raised"
        result["error"] = f"{type(exc).__name__}: {exc}"
    messages = [e for e in conversation.state.events if type(e).__name__ == "MessageEvent" and e.source == "agent"]
    if messages:
        result["last_message"] = " ".join(getattr(c, "text", "") for c in messages[-1].llm_message.content)
    print("RESULT " + json.dumps(result), flush=True)
    conversation.close()


if __name__ == "__main__":
    main()
