"""Runs of one task noted alike (probe F5, F6): two runs given the same history, and the same
answer or an answer their client drops, leave notes that nothing in the next request tells
apart. Such runs are as many trajectories as runs, each with all its steps, and a run of that
task afterwards is one trajectory (a note that named neither run once split every later run).

Through a real gateway on both stores (in memory, a real redis-server), streamed and not:
LangChain's classic text ReAct loop on a deterministic model (each answer written into its one
prompt, `continued.py`), smolagents after a tool raised (the answer dropped, the error appended
to its last user message, `amend.py`), mini-swe-agent 2.x after a reply without a tool call
(the reply dropped, its format error added). Then the entries themselves (merges.py, and the
readers in amend.py and continued.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import orjson
import pytest

from router.trajectory import amend, continued, identify
from router.trajectory.merges import DROP, NOTE, Merge, merged
from tests import both_stores
from tests.gateway_server import GatewayServer, wait_until

MakeGateway = Callable[..., GatewayServer]
make_gateway = both_stores.make_gateway  # each test on both stores
Messages = list[dict[str, Any]]


@pytest.fixture()
def server(make_gateway: MakeGateway) -> GatewayServer:
    return make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})


def _send(
    client: httpx.Client, server: GatewayServer, messages: Messages, how: dict[str, Any], **extra: Any
) -> httpx.Response:
    """One step; `how`: the fake upstream's answer to it."""
    body = {"model": "tandem", "messages": messages, "fake": how, **extra}
    if not body.get("stream"):
        response = client.post(f"{server.url}/v1/chat/completions", json=body)
    else:
        with client.stream("POST", f"{server.url}/v1/chat/completions", json=body) as response:
            response.read()  # read to its end: the answer delivered in full
    assert response.status_code == 200, response.text
    return response


def _placed(response: httpx.Response) -> tuple[str, int, str]:
    """(trajectory, step, how it was stitched)."""
    headers = response.headers
    return headers["x-tandem-trajectory"], int(headers["x-tandem-step"]), headers.get("x-tandem-stitch", "")


def _steps_of(client: httpx.Client, server: GatewayServer, trajectory_id: str, steps: int) -> list[int]:
    """The steps the trajectory's records hold, once `steps` are recorded."""
    held: list[int] = []

    def recorded() -> bool:
        records = client.get(f"{server.url}/v1/trajectories/{trajectory_id}").json().get("records", [])
        held[:] = sorted(record["step"] for record in records)
        return len(held) >= steps

    assert wait_until(recorded), held
    return held


# LangChain classic `create_react_agent` (hub prompt hwchase17/react), as the probe sent it.
_REACT = (
    "Answer the following questions as best you can. You have access to the following tools:\n\n"
    "get_weather(city: str) -> str - the weather in a city\nmultiply(a: int, b: int) -> int - a times b\n\n"
    "Use the following format:\n\nQuestion: the input question you must answer\nThought: you should always think "
    "about what to do\nAction: the action to take, should be one of [get_weather, multiply]\nAction Input: the "
    "input to the action\nObservation: the result of the action\n... (this Thought/Action/Action Input/Observation "
    "can repeat N times)\nThought: I now know the final answer\nFinal Answer: the final answer to the original "
    "input question\n\nBegin!\n\nQuestion: {question}\nThought:"
)
# A deterministic model's answers (temperature 0), each stopped before `\nObservation`, and the
# tools' results the agent appends after them.
_REACT_STEPS = [
    (" I need the weather in Paris first.\nAction: get_weather\nAction Input: Paris", "sunny, 21 C"),
    (" Now I multiply 17 by 23.\nAction: multiply\nAction Input: 17, 23", "391"),
    (" I now know the final answer.\nFinal Answer: Paris is sunny, and 17 times 23 is 391.", None),
]
_STOP = ["\nObservation"]


class _ReactRun:
    """One run of the text ReAct loop: its one prompt, each answer and result appended."""

    def __init__(self, question: str, delay: float = 0.0) -> None:
        self.text = _REACT.format(question=question)
        self.number = 0
        self.delay = delay  # the model's time to its first token

    def step(self, client: httpx.Client, server: GatewayServer, stream: bool) -> tuple[str, int, str]:
        answer, result = _REACT_STEPS[self.number]
        how = {"kind": "text", "text": answer, "delay": self.delay}
        response = _send(client, server, [{"role": "user", "content": self.text}], how, stop=_STOP, stream=stream)
        if result is not None:
            self.text += f"{answer}\nObservation: {result}\nThought:"
        self.number += 1
        return _placed(response)


def _one_trajectory_each(placed: list[list[tuple[str, int, str]]], steps: int) -> None:
    """Runs told apart by nothing may swap trajectories (concepts.md), but there are as many
    trajectories as runs, each with steps 1..`steps` once, none of them a new one past step 1."""
    by_trajectory: dict[str, list[int]] = {}
    for run in placed:
        for trajectory_id, step, decision in run:
            by_trajectory.setdefault(trajectory_id, []).append(step)
            assert decision == ("new" if step == 1 else "extended"), placed
    assert len(by_trajectory) == len(placed), placed
    assert all(sorted(held) == list(range(1, steps + 1)) for held in by_trajectory.values()), placed


@pytest.mark.parametrize("stream", [False, True])
def test_identical_text_react_runs_interleaved_then_a_later_run_are_one_trajectory_each(
    server: GatewayServer, client: httpx.Client, stream: bool
) -> None:
    """F5: two runs of one question on a deterministic model, step by step in turn (the first
    answer of both given before either goes on): 2 trajectories of 3 steps, each run its own in
    order; then a single run of the same question: 1 trajectory of 3 steps."""
    question = "What is the weather in Paris, and what is 17 times 23?"
    pair = [_ReactRun(question), _ReactRun(question)]
    placed: list[list[tuple[str, int, str]]] = [[], []]
    for _ in _REACT_STEPS:
        for index, run in enumerate(pair):
            placed[index].append(run.step(client, server, stream))
    _one_trajectory_each(placed, 3)
    # Each run continues the run it was placed in first: the oldest noted goes on first.
    assert all(len({trajectory_id for trajectory_id, _, _ in run}) == 1 for run in placed), placed
    later = _ReactRun(question)
    alone = [later.step(client, server, stream) for _ in _REACT_STEPS]
    _one_trajectory_each([alone], 3)
    assert alone[0][0] not in {placed[0][0][0], placed[1][0][0]}
    assert _steps_of(client, server, alone[0][0], 3) == [1, 2, 3]


def test_identical_text_react_runs_at_once_are_one_trajectory_each(server: GatewayServer, client: httpx.Client) -> None:
    """F5 as the probe ran it: two threads each run the loop at once, each step of both sent
    together (both in flight, the model slow enough to overlap them); three such pairs in turn,
    then one run alone."""
    question = "How many open issues mention the judge, times 3?"

    def one_run(stream: bool, together: threading.Barrier | None) -> list[tuple[str, int, str]]:
        run = _ReactRun(question, delay=0.05)
        placed = []
        with httpx.Client(timeout=20) as own:
            for _ in _REACT_STEPS:
                if together is not None:
                    together.wait(timeout=20)
                placed.append(run.step(own, server, stream))
        return placed

    for _ in range(3):
        together = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            placed = list(pool.map(one_run, [False, True], [together, together]))
        _one_trajectory_each(placed, 3)
    _one_trajectory_each([one_run(False, None)], 3)


# smolagents 1.26 ToolCallingAgent, as the probe recorded it: its task, each answer's calls
# written back as text, each tool's result as a user "Observation:".
_SYSTEM = "You are an expert assistant who can solve any task using tool calls. You will be given a task."
_ERROR = (
    "\nError:\nError executing tool 'get_weather' with arguments {'city': 'Paris'}: ValueError: weather service "
    "timed out, try again\nPlease try again or use another tool\nNow let's retry: take care not to repeat "
    "previous errors! If you have retried several times, try a completely different approach.\n"
)


def _task(text: str) -> Messages:
    return [
        {"role": "system", "content": [{"type": "text", "text": _SYSTEM}]},
        {"role": "user", "content": [{"type": "text", "text": f"New task:\n{text}"}]},
    ]


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"kind": "tool_call", "call_id": call_id, "name": name, "arguments": arguments}


def _went_on(history: Messages, call_id: str, name: str, arguments: str, result: str) -> Messages:
    """The history after a call that returned: the call as smolagents writes it, its result."""
    said = str([{"id": call_id, "type": "function", "function": {"name": name, "arguments": orjson.loads(arguments)}}])
    return [
        *history,
        {"role": "assistant", "content": [{"type": "text", "text": f"Calling tools:\n{said}"}]},
        {"role": "user", "content": [{"type": "text", "text": f"Observation:\n{result}"}]},
    ]


def _amended(history: Messages) -> Messages:
    """The history after a call that raised: the answer dropped, the error appended."""
    last = history[-1]
    text = last["content"][0]["text"]
    return [*history[:-1], {**last, "content": [{"type": "text", "text": text + _ERROR}]}]


_WEATHER = '{"city": "Paris"}'


def _clean_run(client: httpx.Client, server: GatewayServer, task: Messages, call_id: str, stream: bool) -> str:
    """A run whose calls all return: weather, then the final answer (3 steps, one trajectory)."""
    first = _placed(_send(client, server, task, _call(call_id, "get_weather", _WEATHER), stream=stream))
    history = _went_on(task, call_id, "get_weather", _WEATHER, "sunny, 21 C")
    final = _call(call_id + "f", "final_answer", '{"answer": "sunny"}')
    second = _placed(_send(client, server, history, final, stream=stream))
    assert (second[0], second[1:]) == (first[0], (2, "extended")), (first, second)
    return first[0]


@pytest.mark.parametrize("stream", [False, True])
def test_a_tool_error_after_a_clean_run_of_the_task_continues_its_run(
    server: GatewayServer, client: httpx.Client, stream: bool
) -> None:
    """F6: a clean run of a task, then a run of the same task whose first call raises: its
    amended request continues it (`rewritten`, step 2), and its next step too; a third run that
    raises the same way afterwards continues its own."""
    task = _task("What is the weather in Paris, and what is 17 times 23? Use the tools.")
    clean = _clean_run(client, server, task, "call_9a1f", stream)
    seen = {clean}
    for call_id in ("call_4c2e", "call_77b0"):
        first = _placed(_send(client, server, task, _call(call_id, "get_weather", _WEATHER), stream=stream))
        assert first[0] not in seen and first[1:] == (1, "new")
        amended = _amended(task)
        retried = _call(call_id + "r", "get_weather", _WEATHER)
        second = _placed(_send(client, server, amended, retried, stream=stream))
        assert second == (first[0], 2, "rewritten"), (first, second)
        third = _placed(
            _send(
                client,
                server,
                _went_on(amended, call_id + "r", "get_weather", _WEATHER, "sunny"),
                {"kind": "text", "text": "Paris is sunny."},
                stream=stream,
            )
        )
        assert third == (first[0], 3, "extended")
        assert _steps_of(client, server, first[0], 3) == [1, 2, 3]
        seen.add(first[0])
    assert _steps_of(client, server, clean, 2) == [1, 2]


def test_runs_of_one_task_whose_first_calls_raise_together_are_one_trajectory_each(
    server: GatewayServer, client: httpx.Client
) -> None:
    """F6, the probe's pair: two runs of one task answered before either goes on, both calls
    raising; each amended request continues a run of its own. Then a run alone raises: its own."""
    task = _task("Summarise the open issues about the judge. Use the tools.")
    firsts = [_placed(_send(client, server, task, _call(i, "get_weather", _WEATHER))) for i in ("call_a1", "call_b2")]
    seconds = [_placed(_send(client, server, _amended(task), _call(f"call_r{n}", "multiply", "{}"))) for n in (1, 2)]
    assert {trajectory_id for trajectory_id, _, _ in firsts} == {trajectory_id for trajectory_id, _, _ in seconds}
    assert [second[1:] for second in seconds] == [(2, "rewritten")] * 2
    # (The newest run noted goes on first: the oldest may be a run that ended there.)
    assert [second[0] for second in seconds] == [first[0] for first in reversed(firsts)]
    alone = _placed(_send(client, server, task, _call("call_c3", "get_weather", _WEATHER)))
    again = _placed(_send(client, server, _amended(task), _call("call_r3", "multiply", "{}")))
    assert again == (alone[0], 2, "rewritten")


def test_identical_runs_one_amended_and_one_going_on_stay_apart(server: GatewayServer, client: httpx.Client) -> None:
    """Two runs given byte-identical answers (a model with no random ids): one's call raises and
    is amended first, the other goes on. Neither takes the other's step: the amended run's answer
    is taken with it, so the one going on continues the other run."""
    task = _task("Check the weather in Paris. Use the tools.")
    same = _call("call_0", "get_weather", _WEATHER)
    firsts = [_placed(_send(client, server, task, same)) for _ in range(2)]
    assert firsts[0][0] != firsts[1][0]
    amended = _placed(_send(client, server, _amended(task), _call("call_1", "get_weather", _WEATHER)))
    history = _went_on(task, "call_0", "get_weather", _WEATHER, "sunny")
    going_on = _placed(_send(client, server, history, {"kind": "text", "text": "sunny"}))
    assert amended[1:] == (2, "rewritten") and going_on[1:] == (2, "extended")
    assert {amended[0], going_on[0]} == {firsts[0][0], firsts[1][0]}


def test_identical_replies_dropped_by_their_client_continue_one_run_each(
    server: GatewayServer, client: httpx.Client
) -> None:
    """mini-swe-agent 2.x: runs given the same reply without a tool call at the same history
    both drop it and add their format error after the history; each continues a run of its own."""
    task: Messages = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "ls"}]
    reply = {"kind": "text", "text": "I think it is done."}
    firsts = [_placed(_send(client, server, task, reply)) for _ in range(2)]
    error = {"role": "user", "content": "Tool call error:\n\n<error>\nNo tool calls found in the response.\n</error>"}
    seconds = [_placed(_send(client, server, [*task, error], {"kind": "text", "text": "ok"})) for _ in range(2)]
    # (The newest waiting run goes on first: the oldest may be a run that ended there.)
    assert [second[0] for second in seconds] == [first[0] for first in reversed(firsts)]
    assert [second[1:] for second in seconds] == [(2, "rewritten")] * 2
    third = _placed(_send(client, server, [*task, error], {"kind": "text", "text": "ok"}))
    assert third[0] not in {first[0] for first in firsts} and third[2] == "new"


# The entries themselves.

TASK_TEXT = "New task:\nwrite proof.txt"
ERROR = "\nError:\nError executing tool 'write_file'\nNow let's retry"


def _noted(raw: str | None, run: str, text: str, answered: str = "a1") -> str | None:
    value = merged(raw, amend.noted("head", run, text, answered))
    return raw if value is None else value


def test_runs_noted_alike_are_kept_oldest_first_and_bounded() -> None:
    raw = None
    for index in range(amend.MAX_ENTRIES + 3):
        raw = _noted(raw, f"t{index}", TASK_TEXT)
    assert raw is not None and len(raw.split()) == amend.MAX_ENTRIES
    assert raw.split()[0].startswith("t3|")  # the oldest dropped past the bound
    assert merged(raw, amend.noted("head", "t7", TASK_TEXT, "a1")) is None  # noted already: no write
    found = amend.amended_runs(raw, TASK_TEXT + ERROR, {"t3"})
    assert found is not None
    assert (found.runs[:2], found.appended, found.answered) == (("t4", "t5"), ERROR, "a1")
    left = merged(raw, Merge("u:head", DROP, "t4"))
    again = amend.amended_runs(left, TASK_TEXT + ERROR, set())
    assert again is not None and again.runs[:2] == ("t3", "t5")


def test_runs_noted_after_different_texts_are_not_guessed_between() -> None:
    raw = _noted(_noted(None, "t1", TASK_TEXT), "t2", TASK_TEXT + "\nmore")
    assert amend.amended_runs(raw, TASK_TEXT + "\nmore" + ERROR, set()) is None  # two texts it extends
    assert amend.amended_runs(raw, TASK_TEXT + "\nmore" + ERROR, {"t2"}) is not None
    # A note written before runs were kept alike (`*`, it named no run) names none.
    alike = f"|{len(TASK_TEXT)}|{amend.ends_digest(TASK_TEXT)}"
    legacy = f"*{alike} t9|1|00"
    assert amend.amended_runs(legacy, TASK_TEXT + ERROR, set()) is None
    assert amend.amended_runs(f"{legacy} t5{alike}", TASK_TEXT + ERROR, set()) == (amend.Amended(("t5",), ERROR, ""))


def test_continued_runs_noted_alike_go_on_oldest_first() -> None:
    text = _REACT.format(question="q")
    entry = continued.continuable([{"role": "user", "content": text}], "space")
    assert entry is not None
    answer_text, _ = _REACT_STEPS[0]
    answer = identify.answer_key(answer_text, [])
    raw = None
    for run in ("t1", "t2", "t1"):
        value = merged(raw, continued.noted(entry, run, answer))
        raw = raw if value is None else value
    assert raw is not None and len(raw.split()) == 2
    longer = text + answer_text + "\nObservation: sunny\nThought:"
    assert continued.continued_run(raw, longer, tuple(_STOP), set()) == ("t1", longer[len(text) :])
    assert continued.continued_run(raw, longer, tuple(_STOP), {"t1"}) == ("t2", longer[len(text) :])
    assert continued.continued_run(merged(raw, Merge(entry.key, DROP, "t1")), longer, tuple(_STOP), set()) == (
        "t2",
        longer[len(text) :],
    )


def test_the_note_op_keeps_every_run() -> None:
    assert merged(None, Merge("u:h", NOTE, "t1", "|3|ff", "16")) == "t1|3|ff"
    assert merged("t1|3|ff", Merge("u:h", NOTE, "t2", "|3|ff", "16")) == "t1|3|ff t2|3|ff"
    assert merged("t1|3|ff", Merge("u:h", NOTE, "t1", "|3|ff", "16")) is None
    assert merged("a|1|0 b|1|1", Merge("u:h", NOTE, "t1", "|3|ff", "2")) == "b|1|1 t1|3|ff"
    assert merged("*|3|ff", Merge("u:h", NOTE, "t1", "|3|ff", "16")) == "*|3|ff t1|3|ff"


def test_the_newest_of_runs_given_the_same_answer_goes_on_when_its_client_drops_it() -> None:
    # (The newest, as for every dropped answer: the oldest may be a run that ended there.)
    assert amend.answered_before("t1|k1 t2|k1", set()) == "t2"
    assert amend.answered_before("t1|k1 t2|k1", {"t2"}) == "t1"
    assert amend.newest_waiting("t1|k1 t2|k2", {"t2"}) == "t1"
    assert amend.newest_waiting("t1|k1 t2|k2", set()) == "t2"
    assert amend.answered_before("t1|k1 t2|k2", set()) is None  # told apart by their answers: not guessed
    assert amend.answered_before("t1|k1 t2|k2 t1|k3", {"t2"}) == "t1"


@pytest.mark.parametrize("emptied", [False, True])
def test_a_run_that_ended_at_the_history_is_not_taken_for_a_later_run_that_raises_there(
    server: GatewayServer, client: httpx.Client, emptied: bool
) -> None:
    """A run whose last answer, a call, was given at a history and that never sent another step
    (its client was stopped, or the call was its final answer) stays noted there. A later run of
    the task whose call raises at that history continues its own trajectory, not that one's:
    amended (the error appended to the last message) or emptied (an empty turn kept where the
    answer was and the error as a message of its own, smolagents streaming its outputs)."""
    task = _task("List the failing tests and fix the first one. Use the tools.")
    ended = _placed(_send(client, server, task, _call("call_end1", "final_answer", '{"answer": "none"}')))
    later = _placed(_send(client, server, task, _call("call_new2", "get_weather", _WEATHER)))
    assert ended[0] != later[0]
    error = "Error:\nError executing tool 'get_weather' with arguments {'city': 'Paris'}: timed out"
    history = (
        [*task, {"role": "assistant", "content": ""}, {"role": "user", "content": error}] if emptied else _amended(task)
    )
    second = _placed(_send(client, server, history, _call("call_new3", "multiply", "{}")))
    assert second == (later[0], 2, "rewritten")
