"""Aider (PyPI aider-chat, in its own Python 3.12 virtualenv) through the gateway's chat
completions with litellm, streamed, and no session id: an edit it applies after an injected
upstream error, then the failing test output it sends back (its round trip: Aider has no tools,
its edits are text and its reflection rewrites the history it sends, the file shown anew); a
context overflow it must recognise as one; and runs of one task twice in a row and twice at once
that stay apart."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.clients.harness import (
    ALIASES,
    OVERFLOW,
    ROUTES,
    SERVER_ERROR,
    assert_two_edge_steps,
    installed,
    main_records,
    run,
    trajectories,
)
from tests.clients.runs import RunScript, assert_uncrossed, twice_in_a_row_and_twice_at_once
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

METADATA = {
    "max_input_tokens": 2048,
    "max_output_tokens": 512,
    "input_cost_per_token": 0,
    "output_cost_per_token": 0,
    "litellm_provider": "openai",
    "mode": "chat",
}
DONE = "The file now says what the task asked for; the failing check reads it as written. Nothing else to change."


@pytest.fixture()
def server(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=ROUTES, model_aliases=ALIASES)


def edit(content: str) -> dict[str, Any]:
    """An answer in Aider's `whole` edit format: the file's name, then all of its new text."""
    return {"text": f"Here is proof.txt with the line the task asks for.\n\nproof.txt\n```\n{content}\n```\n"}


def aider(server: GatewayServer, tmp_path: Path, task: str) -> tuple[int, str, Path]:
    """Runs `aider --message` on proof.txt; its test command fails and shows the file, so that
    an edit is followed by a reflection with the file's new text."""
    binary = installed("aider", "bin/aider")
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / "proof.txt").write_text("")
    # The model's window, as a user declares it for a model litellm does not know (else Aider
    # fetches litellm's price list from the web).
    metadata = tmp_path / "models.json"
    metadata.write_text(orjson.dumps({"openai/tandem": METADATA}).decode())
    command = [
        str(binary),
        *("--model", "openai/tandem", "--openai-api-base", f"{server.url}/v1", "--openai-api-key", "unused"),
        *("--edit-format", "whole", "--no-git", "--yes-always", "--no-check-update", "--analytics-disable"),
        *("--no-show-model-warnings", "--no-pretty", "--no-fancy-input", "--no-detect-urls", "--no-auto-lint"),
        *("--model-metadata-file", str(metadata), "--auto-test", "--test-cmd", "cat proof.txt && false"),
        *("--message", task, "proof.txt"),
    ]
    env = {"HOME": str(tmp_path), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    code, output = run(command, work, env)
    return code, output, work


def test_aider_applies_an_edit_and_sends_its_test_output_back_after_an_upstream_error(
    server: GatewayServer, edge: FakeUpstream, tmp_path: Path
) -> None:
    edge.push(SERVER_ERROR, edit("tandem"), {"text": DONE})
    code, output, work = aider(server, tmp_path, "write tandem into proof.txt")
    assert code == 0, output
    assert (work / "proof.txt").read_text() == "tandem\n"  # Aider applied the edit the model wrote
    assert "Applied edit to proof.txt" in output and "HTTPSConnectionPool" not in output
    assert len(edge.received) == 3 and all(r.body["stream"] for r in edge.received)
    sent = edge.received[2].body["messages"]
    # Its history is rewritten, not extended: the task without its format reminder, the answer
    # (stripped), the file shown anew with its new text, then the test output (with the
    # assistant's "Ok." that Aider writes itself between its own user messages).
    answer = edit("tandem")["text"].strip()
    assert [m["content"] for m in sent if m["role"] == "assistant"][-4:-3] == [answer]
    assert sent[-1]["role"] == "user" and "And got this output:\n\ntandem" in sent[-1]["content"]
    # No session id; the reflection's history shows the file anew (not an extension of step 1's):
    # the gateway joins it to the run as a rewrite, whose last answer it gave that run.
    [trajectory] = trajectories(server)
    assert main_records(trajectory) == [(1, 1, "error", []), (1, 2, "ok", []), (2, 1, "ok", [])]
    assert_two_edge_steps(trajectory, ["new", "retry", "rewritten"], "write tandem into proof.txt")
    # Aider sends its test's output back only when the test failed: the edit's step failed.
    records = sorted(trajectory["records"], key=lambda r: (r["step"], r["attempt"]))
    assert records[-1]["failed_before"] == 1


def test_aider_recognises_a_context_overflow(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    edge.push(OVERFLOW)
    code, output, work = aider(server, tmp_path, "summarise the repository")
    # Aider's report of an exhausted context, measured against the window declared for the model.
    assert "Model openai/tandem has hit a token limit!" in output and " of 2,048" in output
    assert len(edge.received) == 1  # not retried as a transient error
    assert (work / "proof.txt").read_text() == ""
    [trajectory] = trajectories(server)
    [record] = trajectory["records"]
    assert (record["status"], record["http_status"]) == ("error", 400)
    assert code == 0  # --message ends the session after the reply, which here is the report


def test_aider_runs_of_one_task_never_cross(server: GatewayServer, edge: FakeUpstream, tmp_path: Path) -> None:
    edge.respond = RunScript(lambda run, turn: edit(f"run-{run}") if turn == 0 else {"text": f"{DONE} (run-{run})"})
    results = twice_in_a_row_and_twice_at_once(lambda i: aider(server, tmp_path / f"run{i}", "write proof.txt"))
    assert all(code == 0 for code, _, _ in results), [output for _, output, _ in results]
    assert sorted((work / "proof.txt").read_text() for *_, work in results) == [f"run-{n}\n" for n in (1, 2, 3, 4)]
    assert_uncrossed(server, runs=4, turns=(0, 1))
