"""Runs one smolagents ToolCallingAgent against the gateway, as its documentation shows: an
OpenAI-compatible model (`OpenAIServerModel`) and one tool of the script's own that writes a
file. Run by the smolagents virtualenv's Python (3.12):
`python run_smolagents.py BASE_URL WORKDIR TASK`. Prints the outcome as one JSON line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from smolagents import OpenAIServerModel, ToolCallingAgent, tool


def main() -> None:
    base_url, workdir, task = sys.argv[1:4]

    @tool
    def write_file(path: str, text: str) -> str:
        """Writes text into a file of the working folder and returns what the file now holds.

        Args:
            path: the file's name in the working folder
            text: the text to write
        """
        target = Path(workdir) / path
        target.write_text(text)
        return target.read_text()

    model = OpenAIServerModel(model_id="tandem", api_base=base_url, api_key="unused")
    agent = ToolCallingAgent(tools=[write_file], model=model, max_steps=4, verbosity_level=0)
    result: dict[str, object] = {}
    try:
        result["answer"] = agent.run(task)
        result["status"] = "finished"
    except Exception as exc:  # the test reads what the client made of the error
        result["status"] = "raised"
        result["error"] = f"{type(exc).__name__}: {exc}"
        cause = exc.__cause__  # the openai SDK's error that smolagents wraps
        result["cause"] = type(cause).__name__ if cause else None
        result["code"] = getattr(cause, "code", None)
    print("RESULT " + json.dumps(result, default=str), flush=True)


if __name__ == "__main__":
    main()
