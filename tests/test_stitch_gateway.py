"""Stitching through a real gateway (issue 30): random interleaved runs with retries and
rewritten histories, streamed and not, map to exactly their trajectories; the decision comes
back as `x-tandem-stitch` and is kept in the step record; Aider-like and compaction-like
rewrites join their run; a request's `user` scopes stitching even when the cloud sees it
redacted. Both stores: in memory and a real redis-server."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from tests import both_stores
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until
from tests.stitch_runs import Messages, Run, make_runs
from tests.translated_answers import plain

MakeGateway = Callable[..., GatewayServer]
make_gateway = both_stores.make_gateway
SCHEDULES = 12  # per store; the bulk of the property test drives the stitcher directly


@pytest.fixture()
def server(make_gateway: MakeGateway) -> GatewayServer:
    return make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})


def _scripted(answer: dict[str, Any]) -> dict[str, Any]:
    """The fake upstream's behaviour that gives exactly this answer."""
    calls = answer.get("tool_calls")
    if calls:
        function = calls[0]["function"]
        return {
            "kind": "tool_call",
            "call_id": calls[0]["id"],
            "name": function["name"],
            "arguments": function["arguments"],
        }
    return {"kind": "text", "text": answer["content"]}


def _send(
    client: httpx.Client, server: GatewayServer, messages: Messages, how: dict[str, Any] | None, **extra: Any
) -> httpx.Response:
    """A step; `how`: the upstream's answer to it (None: the next in the upstream's queue)."""
    headers = extra.pop("headers", {})
    body = {"model": "tandem", "messages": messages, **({"fake": how} if how else {}), **extra}
    if not body.get("stream"):
        return client.post(f"{server.url}/v1/chat/completions", json=body, headers=headers)
    with client.stream("POST", f"{server.url}/v1/chat/completions", json=body, headers=headers) as response:
        response.read()  # the stream read to its end: the answer delivered in full
        return response


def _play(
    client: httpx.Client, server: GatewayServer, edge: FakeUpstream, rng: random.Random, runs: list[Run]
) -> dict[str, int]:
    """Each run's steps in order, the runs interleaved at random; some attempts fail (500) and
    are sent again at once, some steps streamed. Returns the tally."""
    tally = {"steps": 0, "false_joins": 0, "false_splits": 0, "wrong_decisions": 0, "wrong_steps": 0}
    placed: dict[int, set[str]] = {run.index: set() for run in runs}
    position = [0] * len(runs)
    while any(position[r.index] < len(r.steps) for r in runs):
        run = rng.choice([r for r in runs if position[r.index] < len(r.steps)])
        number = position[run.index]
        step = run.steps[number]
        extra: dict[str, Any] = {"user": run.user} if run.user else {}
        stream = rng.random() < 0.4
        ids = set()
        how: dict[str, Any] | None = _scripted(step.answer)
        if rng.random() < 0.2:
            # The retry resends the failed body exactly: the answers come from the queue.
            edge.push({"kind": "error", "status": 500}, _scripted(step.answer))
            how = None
            failed = _send(client, server, step.messages, None, stream=stream, **extra)
            assert failed.status_code == 500
            ids.add(failed.headers["x-tandem-trajectory"])
            headers = {"x-stainless-retry-count": "1"} if rng.random() < 0.5 else {}
            extra["headers"] = headers
            expected = "retry"
        else:
            expected = step.expect
        response = _send(client, server, step.messages, how, stream=stream, **extra)
        assert response.status_code == 200, response.text
        ids.add(response.headers["x-tandem-trajectory"])
        tally["false_splits"] += len(ids) - 1
        tally["wrong_decisions"] += response.headers.get("x-tandem-stitch") != expected
        tally["wrong_steps"] += response.headers["x-tandem-step"] != str(number + 1)
        placed[run.index] |= ids
        position[run.index] += 1
        tally["steps"] += 1
    owners: dict[str, int] = {}
    for run in runs:
        tally["false_splits"] += len(placed[run.index]) - 1
        for trajectory_id in placed[run.index]:
            owners[trajectory_id] = owners.get(trajectory_id, 0) + 1
    tally["false_joins"] += sum(count - 1 for count in owners.values())
    return tally


def test_random_runs_through_the_gateway_are_their_own_trajectories(
    server: GatewayServer, edge: FakeUpstream, client: httpx.Client
) -> None:
    total: dict[str, int] = {}
    for seed in range(SCHEDULES):
        rng = random.Random(7_000 + seed)
        tally = _play(client, server, edge, rng, make_runs(rng, count=rng.randint(2, 4), max_steps=5, rewrites=0.3))
        for name, value in tally.items():
            total[name] = total.get(name, 0) + value
    print(f"{SCHEDULES} schedules through the gateway: {total}")
    assert total["steps"] > 50
    assert (total["false_joins"], total["false_splits"]) == (0, 0), total
    assert (total["wrong_decisions"], total["wrong_steps"]) == (0, 0), total


TASK: Messages = [
    {"role": "system", "content": "Act as an expert software developer. Always use best practices."},
    {"role": "user", "content": "I have added these files to the chat: app.py\n\ndef main():\n    pass\n"},
    {"role": "assistant", "content": "Ok, I will use these files."},
    {"role": "user", "content": "add a --verbose flag"},
]
EDIT = "app.py\n```python\n<<<<<<< SEARCH\ndef main():\n=======\ndef main(verbose=False):\n>>>>>>> REPLACE\n```"


def _record(client: httpx.Client, server: GatewayServer, trajectory_id: str, step: int) -> dict[str, Any]:
    found: dict[str, Any] = {}

    def recorded() -> bool:
        records = client.get(f"{server.url}/v1/trajectories/{trajectory_id}").json().get("records", [])
        found.update(next((r for r in records if r["step"] == step), {}))
        return bool(found)

    assert wait_until(recorded)
    return found


def test_an_aider_lint_retry_rewrites_the_history_and_stays_in_its_run(
    server: GatewayServer, client: httpx.Client
) -> None:
    """Aider sends the files in the chat at the top of every request: after its edit is applied
    the file's message changes (the history is edited, not extended) and a lint reflection
    follows the edit it made."""
    first = _send(client, server, TASK, {"kind": "text", "text": EDIT})
    trajectory_id = first.headers["x-tandem-trajectory"]
    assert first.headers["x-tandem-stitch"] == "new"
    edited = [dict(m) for m in TASK]
    edited[1]["content"] = edited[1]["content"].replace("def main():", "def main(verbose=False):")
    reflection = [
        *edited,
        {"role": "assistant", "content": EDIT},
        {"role": "user", "content": "# Fix any errors below\napp.py:1:1: F401"},
    ]
    second = _send(client, server, reflection, {"kind": "text", "text": "The import is unused; removing it."})
    assert second.headers["x-tandem-trajectory"] == trajectory_id
    assert (second.headers["x-tandem-stitch"], second.headers["x-tandem-step"]) == ("rewritten", "2")
    assert _record(client, server, trajectory_id, 2)["stitch"] == "rewritten"
    # The next step extends the rewritten history.
    third = _send(
        client,
        server,
        [
            *reflection,
            {"role": "assistant", "content": "The import is unused; removing it."},
            {"role": "user", "content": "thanks"},
        ],
        {"kind": "text", "text": "done"},
        stream=True,
    )
    assert (third.headers["x-tandem-trajectory"], third.headers["x-tandem-stitch"]) == (trajectory_id, "extended")


def test_an_aider_test_reflection_after_its_own_acknowledgements_stays_in_its_run(
    server: GatewayServer, client: httpx.Client
) -> None:
    """Aider 0.86.2's reflection on a failing test command (`--auto-test`), as it sends it: the
    task without its format reminder, the model's edit, then Aider's own user messages each
    acknowledged by an assistant "Ok." it writes itself ("I updated the files.", the files shown
    anew, the test output), then the test output again. The history's last assistant message is
    Aider's, not the model's: the edit before those short acknowledgements is the evidence."""
    files = "I have *added these files to the chat* so you can go ahead and edit them.\n\nproof.txt\n```\n{}```\n"
    reminder = "\n\nTo suggest changes to a file you MUST return the entire content of the updated file."
    head: Messages = [
        TASK[0],
        {"role": "user", "content": "Change the greeting"},
        {"role": "assistant", "content": "Ok."},
    ]
    edit = "Here is proof.txt with the line the task asks for.\n\nproof.txt\n```\ntandem\n```"
    first_history = [
        *head,
        {"role": "user", "content": files.format("")},
        {"role": "assistant", "content": "Ok, any changes I propose will be to those files."},
        {"role": "user", "content": "write tandem into proof.txt" + reminder},
    ]
    first = _send(client, server, first_history, {"kind": "text", "text": edit + "\n"})
    assert first.headers["x-tandem-stitch"] == "new"
    output = "I ran this command:\n\ncat proof.txt && false\n\nAnd got this output:\n\ntandem\n"
    reflection = [
        *head,
        {"role": "user", "content": "write tandem into proof.txt"},
        {"role": "assistant", "content": edit},
        {"role": "user", "content": "I updated the files."},
        {"role": "assistant", "content": "Ok."},
        {"role": "user", "content": files.format("tandem\n")},
        {"role": "assistant", "content": "Ok, any changes I propose will be to those files."},
        {"role": "user", "content": output},
        {"role": "assistant", "content": "Ok."},
        {"role": "user", "content": output + reminder},
    ]
    second = _send(client, server, reflection, {"kind": "text", "text": "done"}, stream=True)
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert (second.headers["x-tandem-stitch"], second.headers["x-tandem-step"]) == ("rewritten", "2")
    # Another run's edit is not evidence for this one: the same reflection with a different
    # edit (never given to a run) starts a new trajectory.
    stranger = [*reflection[:4], {"role": "assistant", "content": edit.replace("tandem", "other")}, *reflection[5:]]
    third = _send(client, server, stranger, {"kind": "text", "text": "done"})
    assert third.headers["x-tandem-trajectory"] != first.headers["x-tandem-trajectory"]
    assert third.headers["x-tandem-stitch"] == "new"


def test_smolagents_tool_calls_resent_as_text_continue_their_run(server: GatewayServer, client: httpx.Client) -> None:
    """smolagents 1.26 sends an answer's tool calls back as text ("Calling tools:" and the
    calls as a Python list, their arguments parsed) and the result as a user "Observation:";
    two runs of one task stay two."""
    task: Messages = [TASK[0], {"role": "user", "content": [{"type": "text", "text": "New task:\nwrite proof.txt"}]}]
    ids = []
    for number, call_id in enumerate(["call_5f1c0a", "call_77d2e1"]):
        how = {"kind": "tool_call", "call_id": call_id, "name": "write_file", "arguments": '{"path": "proof.txt"}'}
        first = _send(client, server, task, how)
        ids.append(first.headers["x-tandem-trajectory"])
        resent = "Calling tools:\n" + str(
            [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "write_file", "arguments": {"path": "proof.txt"}},
                }
            ]
        )
        history = [*task, {"role": "assistant", "content": [{"type": "text", "text": resent}]}]
        history.append({"role": "user", "content": [{"type": "text", "text": f"Observation:\nrun {number}"}]})
        second = _send(client, server, history, {"kind": "text", "text": "done"})
        assert (second.headers["x-tandem-trajectory"], second.headers["x-tandem-stitch"]) == (ids[-1], "extended")
        assert second.headers["x-tandem-step"] == "2"
    assert ids[0] != ids[1]


def test_a_compacted_history_stays_in_its_run(server: GatewayServer, client: httpx.Client) -> None:
    """A compaction (a condenser, `/compact`): the middle of the history replaced by a summary,
    the task and the last answer with its result kept."""
    history: Messages = [TASK[0], TASK[3]]
    trajectory_id = ""
    for number in range(3):
        how = {"kind": "tool_call", "call_id": f"call_{number}_f3a9", "arguments": f'{{"command": "step {number}"}}'}
        response = _send(client, server, history, how, stream=number == 1)
        trajectory_id = trajectory_id or response.headers["x-tandem-trajectory"]
        assert response.headers["x-tandem-trajectory"] == trajectory_id
        call = {"id": how["call_id"], "type": "function", "function": {"name": "bash", "arguments": how["arguments"]}}
        history = [*history, {"role": "assistant", "content": None, "tool_calls": [call]}]
        history.append({"role": "tool", "tool_call_id": how["call_id"], "content": f"output {number}"})
    compacted = [history[0], history[1], {"role": "user", "content": "Summary: ran three commands."}, *history[-2:]]
    response = _send(client, server, compacted, {"kind": "text", "text": "next"})
    assert response.headers["x-tandem-trajectory"] == trajectory_id
    assert (response.headers["x-tandem-stitch"], response.headers["x-tandem-step"]) == ("rewritten", "4")


STOCK = "THOUGHT: I have made the change and the tests pass. I am ready to submit my work now. ```bash\necho DONE```"


def _two_runs_given_one_stock_answer(client: httpx.Client, server: GatewayServer) -> tuple[list[str], list[Messages]]:
    """Two runs of one agent (one system prompt, two tasks), each answered with an answer of its
    own, then both with the same long stock answer: A's last."""
    runs, histories = [], []
    for task in ("fix the parser", "fix the lexer"):
        history: Messages = [TASK[0], {"role": "user", "content": task}]
        own = f"THOUGHT: first I will read the code that the task names, for {task}, before changing anything."
        response = _send(client, server, history, {"kind": "text", "text": own})
        runs.append(response.headers["x-tandem-trajectory"])
        history += [{"role": "assistant", "content": own}, {"role": "user", "content": f"output of {task}"}]
        histories.append(history)
    for index in (1, 0):
        response = _send(client, server, histories[index], {"kind": "text", "text": STOCK})
        assert response.headers["x-tandem-trajectory"] == runs[index]
        histories[index] += [{"role": "assistant", "content": STOCK}, {"role": "user", "content": "submitted"}]
    return runs, histories


def test_a_compaction_keeping_a_stock_answer_two_runs_were_given_joins_the_run_its_other_answers_name(
    server: GatewayServer, client: httpx.Client
) -> None:
    runs, histories = _two_runs_given_one_stock_answer(client, server)
    # B's history compacted: its task, its own first answer, a summary, the stock answer.
    b = histories[1]
    compacted = [b[0], b[1], b[2], {"role": "user", "content": "Summary: read the lexer."}, *b[-2:]]
    response = _send(client, server, compacted, {"kind": "text", "text": "next"})
    assert (response.headers["x-tandem-trajectory"], response.headers["x-tandem-stitch"]) == (runs[1], "rewritten")


def test_a_compaction_keeping_only_a_stock_answer_two_runs_were_given_joins_neither(
    server: GatewayServer, client: httpx.Client
) -> None:
    runs, histories = _two_runs_given_one_stock_answer(client, server)
    b = histories[1]
    compacted = [b[0], {"role": "user", "content": "Summary: fixed the lexer."}, *b[-2:]]
    response = _send(client, server, compacted, {"kind": "text", "text": "next"})
    # Either run may have been given it: a run of its own rather than another's step.
    assert response.headers["x-tandem-trajectory"] not in runs
    assert response.headers["x-tandem-stitch"] == "new"


def test_a_rewrite_that_keeps_only_a_short_answer_is_a_new_run(server: GatewayServer, client: httpx.Client) -> None:
    """ "Ok." is no evidence (any run may say it): the stated rule starts a new trajectory."""
    first = _send(client, server, TASK[:2], {"kind": "text", "text": "Ok."})
    rewritten = [TASK[0], {"role": "user", "content": "something else"}, {"role": "assistant", "content": "Ok."}]
    second = _send(client, server, [*rewritten, {"role": "user", "content": "go"}], {"kind": "text", "text": "x"})
    assert second.headers["x-tandem-trajectory"] != first.headers["x-tandem-trajectory"]
    assert second.headers["x-tandem-stitch"] == "new"


def test_a_session_named_step_has_no_stitch_header(server: GatewayServer, client: httpx.Client) -> None:
    response = _send(client, server, TASK, {"kind": "text"}, headers={"X-Session-ID": "s1"})
    assert "x-tandem-stitch" not in response.headers


def test_user_scopes_stitching_even_when_the_cloud_sees_it_redacted(
    make_gateway: MakeGateway, client: httpx.Client
) -> None:
    """Two runs of one task whose histories agree step for step (the same answers) but whose
    requests name different users are two trajectories; `user` holds an e-mail address that a
    redacting route replaces before the cloud sees it."""
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "failover": False, "privacy": "redact"}})
    how = {"kind": "tool_call", "call_id": "call_same", "arguments": '{"command": "ls"}'}
    call = {"id": "call_same", "type": "function", "function": {"name": "bash", "arguments": how["arguments"]}}
    second: Messages = [*TASK[:2], {"role": "assistant", "content": None, "tool_calls": [call]}]
    second.append({"role": "tool", "tool_call_id": "call_same", "content": "app.py"})
    ids = {}
    for user in ("ada@example.com", "bob@example.com"):
        first = _send(client, server, TASK[:2], how, user=user)
        ids[user] = first.headers["x-tandem-trajectory"]
    for user in ("bob@example.com", "ada@example.com"):
        response = _send(client, server, second, {"kind": "text", "text": "done"}, user=user)
        assert response.headers["x-tandem-trajectory"] == ids[user]
        assert response.headers["x-tandem-stitch"] == "extended"
    assert len(set(ids.values())) == 2


@pytest.mark.parametrize("stream", [False, True])
def test_a_restored_cloud_answer_is_continued_as_the_client_resends_it(
    make_gateway: MakeGateway, cloud: FakeUpstream, client: httpx.Client, stream: bool
) -> None:
    """On a redacting route the cloud writes placeholders and the client gets (and resends)
    the original values: the answer's key is of what the client got, streamed or not."""
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "failover": False, "privacy": "redact"}})
    task: Messages = [TASK[0], {"role": "user", "content": "write to ada.lovelace@example.org about the release"}]
    # Queued, not in the request: a request field is scanned, and a placeholder the client
    # itself writes is reserved (the e-mail address would become [EMAIL_2]).
    cloud.push({"kind": "text", "text": "I will write to [EMAIL_1] now"})
    first = _send(client, server, task, None, stream=stream)
    restored = "I will write to ada.lovelace@example.org now"
    if not stream:
        assert first.json()["choices"][0]["message"]["content"] == restored
    else:
        assert b"ada.lovelace@example.org" in first.content
    history = [*task, {"role": "assistant", "content": restored}, {"role": "user", "content": "sent?"}]
    second = _send(client, server, history, {"kind": "text", "text": "yes"})
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert second.headers["x-tandem-stitch"] == "extended"


def _choices_answer(texts: list[str], stream: bool) -> dict[str, Any]:
    """An upstream's answer of several choices (`n` > 1): one per text; streamed, their deltas
    interleaved as servers send them."""
    if not stream:
        choices = [
            {"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            for i, text in enumerate(texts)
        ]
        body = {"id": "chatcmpl-n", "object": "chat.completion", "model": "m", "choices": choices}
        return {"kind": "raw", "body": orjson.dumps(body).decode(), "content_type": "application/json"}
    events = []
    words = [text.split(" ") for text in texts]
    for position in range(max(len(w) for w in words)):
        for i, these in enumerate(words):
            if position < len(these):
                piece = these[position] if position == 0 else " " + these[position]
                choice = {"index": i, "delta": {"content": piece}, "finish_reason": None}
                events.append({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]})
    for i in range(len(texts)):
        choice = {"index": i, "delta": {}, "finish_reason": "stop"}
        events.append({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]})
    sse = "".join(f"data: {orjson.dumps(event).decode()}\n\n" for event in events) + "data: [DONE]\n\n"
    return {"kind": "raw", "body": sse, "content_type": "text/event-stream"}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("chosen", [0, 1, 2])
def test_a_step_going_on_with_any_choice_of_several_extends_its_run(
    server: GatewayServer, client: httpx.Client, stream: bool, chosen: int
) -> None:
    """With `n` > 1 the client goes on with one of the choices (best-of-n agents): whichever it
    resends, its next step extends the run, streamed or not."""
    texts = [f"plan {name}: read the failing test, then fix the parser" for name in ("A", "B", "C")]
    first = _send(client, server, TASK[:2], _choices_answer(texts, stream), n=3, stream=stream)
    assert first.status_code == 200
    history = [*TASK[:2], {"role": "assistant", "content": texts[chosen]}, {"role": "user", "content": "go on"}]
    second = _send(client, server, history, {"kind": "text", "text": "ok"})
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert second.headers["x-tandem-stitch"] == "extended"
    assert second.headers["x-tandem-step"] == "2"


def test_a_run_handed_to_another_agent_stays_one_trajectory(server: GatewayServer, client: httpx.Client) -> None:
    """An agent hands the run to another (openai-agents' handoffs): the next request has the
    other agent's system prompt, then the same conversation and the handoff call the gateway
    answered. It joins the run (the call's id is random), and the steps after it extend it; a
    run of the same task whose call was another stays apart."""
    task = [{"role": "system", "content": "You route requests."}, {"role": "user", "content": "weather in Paris?"}]
    runs = {}
    for call_id in ("call_h0ff1a", "call_h0ff2b"):  # two runs of one task at once
        handoff = {"kind": "tool_call", "name": "transfer_to_weather", "arguments": "{}", "call_id": call_id}
        runs[call_id] = _send(client, server, task, handoff).headers["x-tandem-trajectory"]
    assert runs["call_h0ff1a"] != runs["call_h0ff2b"]
    for call_id in ("call_h0ff2b", "call_h0ff1a"):
        call = {"id": call_id, "type": "function", "function": {"name": "transfer_to_weather", "arguments": "{}"}}
        handed: Messages = [
            {"role": "system", "content": "You answer weather questions."},
            task[1],
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": '{"assistant": "weather"}'},
        ]
        lookup = {"kind": "tool_call", "name": "lookup", "arguments": '{"city": "Paris"}', "call_id": call_id + "-2"}
        second = _send(client, server, handed, lookup)
        assert second.headers["x-tandem-trajectory"] == runs[call_id]
        assert second.headers["x-tandem-stitch"] == "rewritten"
        assert second.headers["x-tandem-step"] == "2"
        looked = {
            "id": call_id + "-2",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"city": "Paris"}'},
        }
        third = _send(
            client,
            server,
            [
                *handed,
                {"role": "assistant", "content": None, "tool_calls": [looked]},
                {"role": "tool", "tool_call_id": call_id + "-2", "content": "sunny"},
            ],
            {"kind": "text", "text": "It is sunny in Paris."},
        )
        assert third.headers["x-tandem-trajectory"] == runs[call_id]
        assert third.headers["x-tandem-stitch"] == "extended"
    # A call no run of this client was given joins none.
    call = {"id": "call_never", "type": "function", "function": {"name": "transfer_to_weather", "arguments": "{}"}}
    stranger: Messages = [
        {"role": "system", "content": "You answer weather questions."},
        task[1],
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_never", "content": "{}"},
    ]
    response = _send(client, server, stranger, {"kind": "text", "text": "ok"})
    assert response.headers["x-tandem-stitch"] == "new"
    assert response.headers["x-tandem-trajectory"] not in runs.values()


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("stop", "written_back"),
    [
        (["</function"], "</function>"),  # OpenHands without native tool calls
        (["Observation:"], "\nObservation:"),  # a ReAct loop
        (["Observation:", "Calling tools:", "</code>"], "</code>"),  # smolagents' CodeAgent
    ],
)
def test_a_stop_string_the_client_writes_back_after_the_answer_continues_its_run(
    server: GatewayServer, client: httpx.Client, stream: bool, stop: list[str], written_back: str
) -> None:
    """Providers leave the stop string out of the answer; these clients write it back after the
    answer they keep. Two runs of one task stay two, and each is one trajectory."""
    task: Messages = [{"role": "system", "content": "You act in a shell."}, {"role": "user", "content": "fix the bug"}]
    runs: dict[str, str] = {}
    answers = {
        name: f"Thought: run {name}: look at the parser first\n<function=execute_bash>\ncat parser.py {name}\n"
        for name in ("a", "b")
    }
    for name, text in answers.items():
        first = _send(client, server, task, {"kind": "text", "text": text}, stop=stop, stream=stream)
        runs[name] = first.headers["x-tandem-trajectory"]
    assert runs["a"] != runs["b"]
    for name in ("b", "a"):
        history = [
            *task,
            {"role": "assistant", "content": answers[name] + written_back},
            {"role": "user", "content": f"EXECUTION RESULT of run {name}: def parse(): ..."},
        ]
        second = _send(client, server, history, {"kind": "text", "text": "done"}, stop=stop, stream=stream)
        assert (second.headers["x-tandem-trajectory"], second.headers["x-tandem-stitch"]) == (runs[name], "extended")
        assert second.headers["x-tandem-step"] == "2"


def test_smolagents_code_agent_steps_with_calls_of_its_own_making_continue_their_run(
    server: GatewayServer, client: httpx.Client
) -> None:
    """smolagents' CodeAgent: the model writes code (stopped before `</code>`); the agent keeps
    the answer with `</code>` written back and a tool call of its own making after it, as text."""
    stop = ["Observation:", "Calling tools:", "</code>"]
    task: Messages = [{"role": "system", "content": "You write Python."}, {"role": "user", "content": "New task: 2+2"}]
    code = "Thought: compute it.\n<code>\nresult = 2 + 2\nprint(result)\n"
    first = _send(client, server, task, {"kind": "text", "text": code}, stop=stop)
    made_up = [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "python_interpreter", "arguments": "result = 2 + 2\nprint(result)"},
        }
    ]
    resent = code.strip() + "\n</code>\nCalling tools:\n" + str(made_up)
    history = [
        *task,
        {"role": "assistant", "content": [{"type": "text", "text": resent}]},
        {"role": "user", "content": [{"type": "text", "text": "Observation:\nExecution logs:\n4"}]},
    ]
    second = _send(client, server, history, {"kind": "text", "text": "final_answer(4)"}, stop=stop)
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert (second.headers["x-tandem-stitch"], second.headers["x-tandem-step"]) == ("extended", "2")


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("split", [False, True])
def test_an_answer_of_text_and_calls_resent_without_its_text_continues_its_run(
    server: GatewayServer, client: httpx.Client, stream: bool, split: bool
) -> None:
    """Some clients keep an answer's tool calls without its text, or as two assistant messages
    (the text, then the calls): the calls' random ids name the run."""
    task: Messages = [{"role": "system", "content": "You act."}, {"role": "user", "content": "list the files"}]
    runs = {}
    for call_id in ("call_t3xt1", "call_t3xt2"):
        how = {"kind": "tool_call", "text": "Let me look.", "call_id": call_id, "arguments": '{"command": "ls"}'}
        runs[call_id] = _send(client, server, task, how, stream=stream).headers["x-tandem-trajectory"]
    assert runs["call_t3xt1"] != runs["call_t3xt2"]
    for call_id in ("call_t3xt2", "call_t3xt1"):
        call = {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
        said: Messages = [{"role": "assistant", "content": "Let me look."}] if split else []
        history = [
            *task,
            *said,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": "a.py b.py"},
        ]
        second = _send(client, server, history, {"kind": "text", "text": "two files"}, stream=stream)
        assert second.headers["x-tandem-trajectory"] == runs[call_id]
        # Split, the history before the calls (ending in the text) was never sent: a rewrite.
        decision = "rewritten" if split else "extended"
        assert (second.headers["x-tandem-stitch"], second.headers["x-tandem-step"]) == (decision, "2")


THOUGHT = "<think>\nThe user wants the files listed; ls will do.\n</think>\n\n"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    "resend",
    [
        lambda text: text.split("</think>", 1)[1].strip(),  # Roo Code, Agno, AutoGen: the block dropped
        lambda text: "<think>\nmy own words\n</think>\n\n" + text.split("</think>", 1)[1].strip(),  # pydantic-ai
    ],
)
def test_an_answer_resent_without_its_reasoning_block_continues_its_run(
    server: GatewayServer, client: httpx.Client, stream: bool, resend: Callable[[str], str]
) -> None:
    """Qwen3 or DeepSeek-R1 served without a reasoning parser write their reasoning in the text;
    many clients resend the text after it, or write the block back their own way."""
    task: Messages = [{"role": "system", "content": "You act."}, {"role": "user", "content": "list the files"}]
    runs = {}
    for name in ("a", "b"):
        text = THOUGHT + f"Run {name}: I will list the files of the repository first, then read the README."
        runs[name] = (_send(client, server, task, {"kind": "text", "text": text}, stream=stream), text)
    assert runs["a"][0].headers["x-tandem-trajectory"] != runs["b"][0].headers["x-tandem-trajectory"]
    for name in ("b", "a"):
        first, text = runs[name]
        history = [*task, {"role": "assistant", "content": resend(text)}, {"role": "user", "content": "go on"}]
        second = _send(client, server, history, {"kind": "text", "text": "ok"}, stream=stream)
        assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
        assert (second.headers["x-tandem-stitch"], second.headers["x-tandem-step"]) == ("extended", "2")


def test_crewai_s_observation_inside_the_assistant_message_continues_its_run(
    server: GatewayServer, client: httpx.Client
) -> None:
    """CrewAI's ReAct loop appends the tool's result to the answer, in the same assistant
    message, after the stop string the provider stopped at."""
    stop = ["\nObservation:"]
    task: Messages = [{"role": "system", "content": "You are a researcher."}, {"role": "user", "content": "Find X"}]
    answer = 'Thought: I should search.\nAction: search\nAction Input: {"query": "X"}'
    first = _send(client, server, task, {"kind": "text", "text": answer}, stop=stop)
    history = [*task, {"role": "assistant", "content": answer + "\nObservation: X is a letter."}]
    second = _send(client, server, history, {"kind": "text", "text": "Thought: done"}, stop=stop)
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert (second.headers["x-tandem-stitch"], second.headers["x-tandem-step"]) == ("extended", "2")


@pytest.mark.parametrize(
    ("given", "resent"),
    [("", "{}"), ("null", "{}"), ("{}", "{}")],
)
def test_empty_arguments_resent_as_an_empty_object_continue_their_run(
    server: GatewayServer, client: httpx.Client, given: str, resent: str
) -> None:
    """LangChain parses empty, `null` and `[]` arguments as `{}` and resends `{}`."""
    task: Messages = [{"role": "system", "content": "You act."}, {"role": "user", "content": "what time is it?"}]
    how = {"kind": "tool_call", "call_id": "call_n0args", "name": "now", "arguments": given}
    first = _send(client, server, task, how)
    call = {"id": "call_n0args", "type": "function", "function": {"name": "now", "arguments": resent}}
    history = [
        *task,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_n0args", "content": "12:00"},
    ]
    second = _send(client, server, history, {"kind": "text", "text": "noon"})
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert second.headers["x-tandem-stitch"] == "extended"


def test_a_call_id_a_client_rewrote_to_its_own_characters_continues_its_run(
    server: GatewayServer, client: httpx.Client
) -> None:
    """Roo Code resends each call id with every character but letters, digits, `_` and `-` as
    `_` (Kimi's ids are `functions.read_file:0`)."""
    task: Messages = [{"role": "system", "content": "You code."}, {"role": "user", "content": "read main.py"}]
    how = {
        "kind": "tool_call",
        "call_id": "functions.read_file:0",
        "name": "read_file",
        "arguments": '{"p": "main.py"}',
    }
    first = _send(client, server, task, how)
    call = {
        "id": "functions_read_file_0",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"p": "main.py"}'},
    }
    history = [
        *task,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "functions_read_file_0", "content": "print(1)"},
    ]
    second = _send(client, server, history, {"kind": "text", "text": "it prints 1"})
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert second.headers["x-tandem-stitch"] == "extended"


@pytest.mark.parametrize("kept", ["first", "last"])
def test_one_of_several_calls_resent_alone_continues_its_run(
    server: GatewayServer, client: httpx.Client, kept: str
) -> None:
    """CrewAI resends the first of an answer's parallel calls only (when one of them ends its
    run); a client that resends each call as an assistant message of its own ends with the last."""
    task: Messages = [{"role": "system", "content": "You act."}, {"role": "user", "content": "weather in two cities"}]
    calls = [("call_p4r1", "weather", '{"city": "Paris"}'), ("call_p4r2", "weather", '{"city": "Rome"}')]
    first = _send(client, server, task, plain({}, finish="tool_calls", calls=calls))
    call_id, name, arguments = calls[0] if kept == "first" else calls[1]
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    history = [
        *task,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": "sunny"},
    ]
    second = _send(client, server, history, {"kind": "text", "text": "sunny"})
    assert second.headers["x-tandem-trajectory"] == first.headers["x-tandem-trajectory"]
    assert second.headers["x-tandem-stitch"] == "extended"


_REACT_PROMPT = (
    "Answer the following questions as best you can. You have access to the following tools:\n\n"
    "search(query: str) -> str - search the project's issues\ncalculator(expression: str) -> str - do arithmetic\n\n"
    "Use the following format:\n\nQuestion: the input question you must answer\nThought: you should always think "
    "about what to do\nAction: the action to take, one of [search, calculator]\nAction Input: the input to the "
    "action\nObservation: the result of the action\n... (this Thought/Action/Action Input/Observation can repeat N "
    "times)\nThought: I now know the final answer\nFinal Answer: the final answer to the original input question\n\n"
    "Begin!\n\nQuestion: {question}\nThought:"
)


@pytest.mark.parametrize("stream", [False, True])
def test_a_react_loop_that_writes_each_answer_into_its_one_prompt_is_one_run(
    server: GatewayServer, client: httpx.Client, stream: bool
) -> None:
    """LangChain's classic AgentExecutor with a chat model sends one user message a step: the
    prompt, then each answer (stopped before `\\nObservation`) and its tool's result appended.
    No answer is resent as a message; each step continues the run its appended text answers.
    Two runs of one question stay two; a prompt extended with text that is not the answer given
    is another run."""
    stop = ["\nObservation"]
    prompt = _REACT_PROMPT.format(question="How many open issues mention the judge?")
    runs: dict[str, str] = {}
    texts: dict[str, str] = {}
    for name in ("a", "b"):
        answer = f" I should search the issues (run {name}).\nAction: search\nAction Input: judge open"
        first = _send(
            client,
            server,
            [{"role": "user", "content": prompt}],
            {"kind": "text", "text": answer},
            stop=stop,
            stream=stream,
        )
        runs[name] = first.headers["x-tandem-trajectory"]
        texts[name] = prompt + answer + f"\nObservation: 7 issues (run {name})\nThought:"
    assert runs["a"] != runs["b"]
    for step in (2, 3):
        for name in ("b", "a"):
            answer = f" Now compute (run {name}, step {step}).\nAction: calculator\nAction Input: 7*{step}"
            reply = _send(
                client,
                server,
                [{"role": "user", "content": texts[name]}],
                {"kind": "text", "text": answer},
                stop=stop,
                stream=stream,
            )
            assert (reply.headers["x-tandem-trajectory"], reply.headers["x-tandem-step"]) == (runs[name], str(step))
            assert reply.headers["x-tandem-stitch"] == "extended"
            texts[name] += answer + f"\nObservation: {7 * step}\nThought:"
    # The prompt with an answer no run was given appended: a run of its own.
    other = prompt + " I made this up.\nAction: search\nAction Input: x\nObservation: none\nThought:"
    stranger = _send(
        client, server, [{"role": "user", "content": other}], {"kind": "text", "text": "Final Answer: 7"}, stop=stop
    )
    assert stranger.headers["x-tandem-trajectory"] not in runs.values()
    assert stranger.headers["x-tandem-stitch"] == "new"


@pytest.mark.parametrize("form", ["smolagents-text", "native"])
def test_parallel_calls_resent_in_another_order_continue_their_run(
    server: GatewayServer, client: httpx.Client, form: str
) -> None:
    """smolagents writes an answer's parallel calls back in the order they finished, not the
    order given (`Calling tools:` and the list); a client may reorder native calls too."""
    task: Messages = [TASK[0], {"role": "user", "content": "weather in Paris, and 17 x 23"}]
    calls = [("call_zq81", "get_weather", '{"city": "Paris"}'), ("call_ab27", "multiply", '{"a": 17, "b": 23}')]
    first = _send(client, server, task, plain({}, finish="tool_calls", calls=calls))
    finished = list(reversed(calls))
    if form == "native":
        resent: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in finished
            ],
        }
    else:
        written = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": orjson.loads(a)}} for i, n, a in finished
        ]
        resent = {"role": "assistant", "content": [{"type": "text", "text": "Calling tools:\n" + str(written)}]}
    history = [*task, resent, {"role": "user", "content": "Observation:\nsunny; 391"}]
    second = _send(client, server, history, {"kind": "text", "text": "done"})
    assert (second.headers["x-tandem-trajectory"], second.headers["x-tandem-stitch"]) == (
        first.headers["x-tandem-trajectory"],
        "extended",
    )


def _react(name: str, before: str = "") -> str:
    """A text ReAct step of run `name` as a model writes it (JSON input)."""
    return (
        f"{before}Thought: run {name}: I need the weather in Paris first.\n"
        f'Action: get_weather\nAction Input: {{"city": "Paris", "units": "metric", "days": 2, "alerts": true}}'
    )


def _rebuilt(name: str, before: str = "") -> str:
    """The same step as LlamaIndex's `ReActAgent` resends it: rebuilt from its parsed parts, the
    input as a Python literal, `Thought: ` before whatever the model wrote first."""
    thought = f"{before}Thought: run {name}: I need the weather in Paris first."
    thought = thought if thought.startswith("Thought: ") else "Thought: " + thought
    literal = {"city": "Paris", "units": "metric", "days": 2, "alerts": True}
    return f"{thought}\nAction: get_weather\nAction Input: {literal}"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("given", "resent"),
    [
        (_react, _rebuilt),  # LlamaIndex ReActAgent
        (lambda name: _react(name, THOUGHT), lambda name: _rebuilt(name, THOUGHT)),  # with a reasoning block
        # CrewAI in text mode: no `stop` sent; the answer cut at `\nObservation` and the tool's
        # result appended in the same message (when the model wrote past the action too).
        (_react, lambda name: _react(name) + "\nObservation: WEATHER sunny, 22C"),
        (
            lambda name: _react(name) + "\nObservation: (a result the model made up)\nThought: done",
            lambda name: _react(name) + "\nObservation: WEATHER sunny, 22C",
        ),
    ],
    ids=["llamaindex", "llamaindex-thinking", "crewai-text", "crewai-text-past-the-action"],
)
def test_a_text_react_step_rebuilt_or_extended_by_its_client_continues_its_run(
    server: GatewayServer,
    client: httpx.Client,
    stream: bool,
    given: Callable[[str], str],
    resent: Callable[[str], str],
) -> None:
    """Text ReAct agents that send no stop string and resend each step in their own form: the
    thought, the tool and the input's value name the run. Two runs of one task stay two."""
    task: Messages = [{"role": "system", "content": "Answer with tools."}, {"role": "user", "content": "Weather?"}]
    runs = {}
    for name in ("a", "b"):
        runs[name] = _send(client, server, task, {"kind": "text", "text": given(name)}, stream=stream)
    assert runs["a"].headers["x-tandem-trajectory"] != runs["b"].headers["x-tandem-trajectory"]
    for name in ("b", "a"):
        history = [
            *task,
            {"role": "assistant", "content": resent(name)},
            {"role": "user", "content": "Observation: WEATHER sunny, 22C in Paris"},
        ]
        second = _send(client, server, history, {"kind": "text", "text": "Thought: done\nAnswer: sunny"}, stream=stream)
        assert second.headers["x-tandem-trajectory"] == runs[name].headers["x-tandem-trajectory"]
        assert (second.headers["x-tandem-stitch"], second.headers["x-tandem-step"]) == ("extended", "2")


def test_a_text_react_step_with_another_input_is_no_resend_of_it(server: GatewayServer, client: httpx.Client) -> None:
    """The parts are compared whole: the same thought and tool with another input's value is
    another answer, so the request does not extend the run that was given the first."""
    task: Messages = [{"role": "system", "content": "Answer with tools."}, {"role": "user", "content": "Weather?"}]
    first = _send(client, server, task, {"kind": "text", "text": _react("a")})
    other = _rebuilt("a").replace("'Paris'", "'Lyon'")
    history = [*task, {"role": "assistant", "content": other}, {"role": "user", "content": "Observation: rain"}]
    second = _send(client, server, history, {"kind": "text", "text": "Thought: done"})
    assert second.headers["x-tandem-trajectory"] != first.headers["x-tandem-trajectory"]
    assert (second.headers["x-tandem-stitch"], second.headers["x-tandem-step"]) == ("new", "1")


DSPY_SYSTEM = "Your input fields are:\n1. `question` (str): \n2. `trajectory` (str):\nYour output fields are: …"
DSPY_EXTRACT = (
    "Your input fields are:\n1. `question` (str): \n2. `trajectory` (str):\nYour output fields are: reasoning, answer"
)
DSPY_CLOSE = "\n\nRespond with the corresponding output fields, starting with the field `[[ ## next_thought ## ]]`."


def _dspy_answer(thought: str, tool: str, args: str) -> str:
    return (
        f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
        f"[[ ## next_tool_args ## ]]\n{args}\n\n[[ ## completed ## ]]"
    )


def _dspy_prompt(steps: list[tuple[str, str, str, str]]) -> str:
    """DSPy ReAct's user message: the question, then the steps so far as numbered fields."""
    listed = "\n\n".join(
        f"[[ ## thought_{i} ## ]]\n{thought}\n\n[[ ## tool_name_{i} ## ]]\n{tool}\n\n"
        f"[[ ## tool_args_{i} ## ]]\n{args}\n\n[[ ## observation_{i} ## ]]\n{seen}"
        for i, (thought, tool, args, seen) in enumerate(steps)
    )
    return f"[[ ## question ## ]]\nWeather in Paris?\n\n[[ ## trajectory ## ]]\n{listed}{DSPY_CLOSE}"


@pytest.mark.parametrize("stream", [False, True])
def test_dspy_react_prompts_rebuilt_every_step_are_one_run_each(
    server: GatewayServer, client: httpx.Client, stream: bool
) -> None:
    """DSPy's ReAct sends no history: each step is a system message and one user message rebuilt
    with the steps so far, its answers' values listed as numbered fields (the tool's input
    re-serialised), and its last call is an extraction under another system message. Two runs of
    one question stay two, each one trajectory."""
    runs: dict[str, list[str]] = {"a": [], "b": []}
    done: dict[str, list[tuple[str, str, str, str]]] = {"a": [], "b": []}
    plan = [("get_weather", '{"city": "Paris"}'), ("multiply", '{"a": 17, "b": 23}'), ("finish", "{}")]
    for number, (tool, args) in enumerate(plan):
        for name in ("a", "b"):
            thought = f"Run {name}, step {number}: I call {tool} now, as planned."
            messages = [
                {"role": "system", "content": DSPY_SYSTEM},
                {"role": "user", "content": _dspy_prompt(done[name])},
            ]
            answer = _dspy_answer(thought, tool, args)
            response = _send(client, server, messages, {"kind": "text", "text": answer}, stream=stream)
            assert response.status_code == 200
            runs[name].append(response.headers["x-tandem-trajectory"])
            # DSPy writes the input back parsed and dumped again (json.dumps: spaces after `:`).
            written = json.dumps(json.loads(args))
            done[name].append((thought, tool, written, f"RESULT {number} of {name}"))
    for name in ("a", "b"):
        extract = [
            {"role": "system", "content": DSPY_EXTRACT},
            {"role": "user", "content": _dspy_prompt(done[name])},
        ]
        answer = "[[ ## reasoning ## ]]\nBoth found.\n\n[[ ## answer ## ]]\nSunny; 391.\n\n[[ ## completed ## ]]"
        response = _send(client, server, extract, {"kind": "text", "text": answer}, stream=stream)
        runs[name].append(response.headers["x-tandem-trajectory"])
        assert response.headers["x-tandem-step"] == "4"
    assert len(set(runs["a"])) == 1 and len(set(runs["b"])) == 1
    assert runs["a"][0] != runs["b"][0]


@pytest.mark.parametrize("stream", [False, True])
def test_dspy_react_falling_back_to_json_answers_stays_one_run(
    server: GatewayServer, client: httpx.Client, stream: bool
) -> None:
    """Where DSPy's chat adapter cannot read an answer (a small model's loose text), it asks again
    at once with its JSON adapter: another system message, the same prompt, an answer of one JSON
    object. The next step lists that answer's values: the run goes on, one trajectory."""
    json_system = DSPY_SYSTEM + "\nOutputs will be a JSON object with the following fields."
    seen: list[str] = []
    first = [{"role": "system", "content": DSPY_SYSTEM}, {"role": "user", "content": _dspy_prompt([])}]
    answer = _dspy_answer("I look up the weather.", "get_weather", '{"city": "Paris"}')
    seen.append(
        _send(client, server, first, {"kind": "text", "text": answer}, stream=stream).headers["x-tandem-trajectory"]
    )
    done = [("I look up the weather.", "get_weather", '{"city": "Paris"}', "sunny")]
    second = [{"role": "system", "content": DSPY_SYSTEM}, {"role": "user", "content": _dspy_prompt(done)}]
    loose = {"kind": "text", "text": "Let me multiply the two numbers now."}
    seen.append(_send(client, server, second, loose, stream=stream).headers["x-tandem-trajectory"])
    fallback = [{"role": "system", "content": json_system}, second[1]]
    thought = "Now I multiply 17 by 23 (#5977)."
    reply = json.dumps({"next_thought": thought, "next_tool_name": "multiply", "next_tool_args": {"a": 17, "b": 23}})
    seen.append(
        _send(client, server, fallback, {"kind": "text", "text": reply}, stream=stream).headers["x-tandem-trajectory"]
    )
    done.append((thought, "multiply", '{"a": 17, "b": 23}', "391"))
    third = [{"role": "system", "content": DSPY_SYSTEM}, {"role": "user", "content": _dspy_prompt(done)}]
    response = _send(
        client, server, third, {"kind": "text", "text": _dspy_answer("Done.", "finish", "{}")}, stream=stream
    )
    seen.append(response.headers["x-tandem-trajectory"])
    assert len(set(seen)) == 1, seen
    assert response.headers["x-tandem-step"] == "4" and response.headers["x-tandem-stitch"] == "rewritten"


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_left_empty_after_its_call_raised_continues_its_run(
    server: GatewayServer, client: httpx.Client, stream: bool
) -> None:
    """smolagents streaming its outputs keeps an empty assistant message where the answer whose
    call raised was, and adds the error as a user message of its own. A clean run of the task
    before (whose next step went on from that history) is not taken for it."""
    task: Messages = [
        {"role": "system", "content": [{"type": "text", "text": "You solve tasks with tools."}]},
        {"role": "user", "content": [{"type": "text", "text": "New task:\nWeather in Paris?"}]},
    ]
    runs = {}
    for name in ("clean", "raising"):
        how = {"kind": "tool_call", "call_id": f"call_{name}", "name": "get_weather", "arguments": '{"city": "Paris"}'}
        runs[name] = _send(client, server, task, how, stream=stream).headers["x-tandem-trajectory"]
        if name == "clean":
            call = {
                "id": "call_clean",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
            history = [
                *task,
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_clean", "content": "sunny"},
            ]
            went_on = _send(client, server, history, {"kind": "text", "text": "Sunny."}, stream=stream)
            assert went_on.headers["x-tandem-trajectory"] == runs["clean"]
    assert runs["clean"] != runs["raising"]
    error = "Error:\nError executing tool 'get_weather' with arguments {'city': 'Paris'}: ValueError: timed out"
    history = [
        *task,
        {"role": "assistant", "content": [{"type": "text", "text": ""}]},
        {"role": "user", "content": [{"type": "text", "text": error}]},
    ]
    again = _send(client, server, history, {"kind": "text", "text": "Trying again."}, stream=stream)
    assert again.headers["x-tandem-trajectory"] == runs["raising"]
    assert (again.headers["x-tandem-stitch"], again.headers["x-tandem-step"]) == ("rewritten", "2")


def test_two_runs_at_once_that_each_leave_an_answer_empty_stay_two(server: GatewayServer, client: httpx.Client) -> None:
    """Two runs of one task answered at once, each call raising: their requests are alike but
    for nothing, so each takes the oldest run still waiting; two runs stay two trajectories."""
    task: Messages = [
        {"role": "system", "content": "You solve tasks."},
        {"role": "user", "content": "New task: weather?"},
    ]
    first = []
    for call_id in ("call_pair1", "call_pair2"):
        how = {"kind": "tool_call", "call_id": call_id, "name": "get_weather", "arguments": '{"city": "Paris"}'}
        first.append(_send(client, server, task, how).headers["x-tandem-trajectory"])
    error = "Error:\nError executing tool 'get_weather' with arguments {'city': 'Paris'}: timed out"
    history = [*task, {"role": "assistant", "content": ""}, {"role": "user", "content": error}]
    second = [_send(client, server, history, {"kind": "text", "text": "again"}) for _ in range(2)]
    assert sorted(r.headers["x-tandem-trajectory"] for r in second) == sorted(first)
    assert [r.headers["x-tandem-step"] for r in second] == ["2", "2"]
