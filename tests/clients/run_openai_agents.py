"""Runs one openai-agents (the OpenAI Agents SDK) agent against the gateway's Responses API, as
its documentation shows for another provider: an `AsyncOpenAI` client with the gateway's base
URL, tracing off (it would export to OpenAI), and one function tool of the script's own that
writes a file. Run by the openai-agents virtualenv's Python (3.12):
`python run_openai_agents.py BASE_URL WORKDIR TASK [FOLLOW_UP]`; with `AGENTS_HANDOFF=1` in
its environment a triage agent starts the run and hands it to the writer. With a follow-up, the SDK chains
its turns by `previous_response_id` (`auto_previous_response_id`: each request sends only what
is new), then asks the follow-up as a second run continuing the first's last response. Prints
the outcome as one JSON line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI


def main() -> None:
    base_url, workdir, task = sys.argv[1:4]
    follow_up = sys.argv[4] if len(sys.argv) > 4 else None
    set_tracing_disabled(True)

    @function_tool
    def write_file(path: str, text: str) -> str:
        """Writes text into a file of the working folder and returns what the file now holds.

        Args:
            path: the file's name in the working folder.
            text: the text to write.
        """
        target = Path(workdir) / path
        target.write_text(text)
        return target.read_text()

    client = AsyncOpenAI(base_url=base_url, api_key="unused")
    model = OpenAIResponsesModel(model="tandem", openai_client=client)
    agent = Agent(name="writer", instructions="You write files.", tools=[write_file], model=model)
    start = agent
    if os.environ.get("AGENTS_HANDOFF"):  # a triage agent first, which hands the run to the writer
        start = Agent(name="triage", instructions="You route requests.", handoffs=[agent], model=model)
    result: dict[str, object] = {}
    try:
        run = Runner.run_sync(start, task, max_turns=4, auto_previous_response_id=follow_up is not None)
        result["status"] = "finished"
        result["answer"] = run.final_output
        if follow_up is not None:
            result["first_response"] = run.last_response_id
            run = Runner.run_sync(agent, follow_up, max_turns=4, previous_response_id=run.last_response_id)
            result["follow_up_answer"] = run.final_output
    except Exception as exc:  # the test reads what the client made of the error
        result["status"] = "raised"
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["code"] = getattr(exc, "code", None)
    print("RESULT " + json.dumps(result, default=str), flush=True)


if __name__ == "__main__":
    main()
