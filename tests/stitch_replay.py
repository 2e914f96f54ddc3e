"""Real public agent runs replayed through a real gateway without a session id, for the stitching
probes (tests/test_stitch_real_runs.py): each client sends its run's recorded histories one step
at a time, and a scripted upstream answers each request with the run's recorded next assistant
message.

Runs of one task that send identical histories cannot be told apart by the upstream: it answers
the oldest request in flight with that history, and the client that gets an answer becomes the
run that was given it (runs with identical histories so far are interchangeable), as a real
agent continues from whatever it is answered.

The runs: five mini-swe-agent 1.15 runs (benchmarks/longrun/data, text answers) and nineteen
tau-bench tool-calling runs of gpt-4o in the airline domain (tests/real_runs, five tasks run
two to three times with byte-identical first requests and first answers).
"""

from __future__ import annotations

import copy
import gzip
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

from benchmarks.longrun.trajectory import REAL_RUNS
from router.trajectory.identify import canonical

Messages = list[dict[str, Any]]
TAU_RUNS = Path(__file__).parent / "real_runs" / "tau-bench-airline.json.gz"


def mini_swe_runs(steps: int) -> list[Messages]:
    """The five mini-swe-agent runs, each cut after `steps` answers."""
    out = []
    for run in orjson.loads(gzip.decompress(REAL_RUNS.read_bytes())):
        messages = run["messages"]
        answers = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        out.append(messages[: answers[min(steps, len(answers)) - 1] + 2])
    return out


def tau_runs() -> list[Messages]:
    return [run["messages"] for run in orjson.loads(gzip.decompress(TAU_RUNS.read_bytes()))]


def steps_of(messages: Messages) -> list[tuple[Messages, dict[str, Any]]]:
    """(the history sent, the recorded answer) for each assistant message of a run."""
    return [(messages[:i], m) for i, m in enumerate(messages) if m["role"] == "assistant"]


def history_key(messages: Messages) -> bytes:
    return orjson.dumps([canonical(m) for m in messages], option=orjson.OPT_SORT_KEYS)


def answer_form(message: dict[str, Any]) -> tuple[str, tuple[tuple[Any, ...], ...]]:
    """An answer as the probes compare what was given with what was recorded."""
    calls = tuple(
        (c.get("id"), c["function"]["name"], orjson.dumps(orjson.loads(c["function"]["arguments"] or "{}")))
        for c in message.get("tool_calls") or ()
    )
    return (message.get("content") or "").strip(), calls


def completion(answer: dict[str, Any], reasoning: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.get("content")}
    if answer.get("tool_calls"):
        message["tool_calls"] = answer["tool_calls"]
    if reasoning:
        message["reasoning_content"] = "Let me think about what the user needs next."
    finish = "tool_calls" if answer.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-replay",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "edge-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
    }


def stream(answer: dict[str, Any]) -> str:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": 0, "model": "edge-model"}
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
        return "data: " + orjson.dumps(body).decode() + "\n\n"

    events = [chunk({"role": "assistant", "content": ""})]
    text = answer.get("content") or ""
    for start in range(0, len(text), 40):
        events.append(chunk({"content": text[start : start + 40]}))
    for index, call in enumerate(answer.get("tool_calls") or ()):
        head = {"index": index, "id": call["id"], "type": "function"}
        head["function"] = {"name": call["function"]["name"], "arguments": ""}
        events.append(chunk({"tool_calls": [head]}))
        arguments = call["function"]["arguments"]
        for start in range(0, len(arguments), 16):
            part = {"index": index, "function": {"arguments": arguments[start : start + 16]}}
            events.append(chunk({"tool_calls": [part]}))
    events.append(chunk({}, "tool_calls" if answer.get("tool_calls") else "stop"))
    return "".join(events) + "data: [DONE]\n\n"


@dataclass
class Upstream:
    """The upstream's `respond`: the oldest request in flight with a history gets the answer of
    the run that sent it; the clients that get the answers take the runs that were given them."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: dict[bytes, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    given: dict[bytes, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    reasoning: bool = False
    failing: dict[bytes, int] = field(default_factory=dict)  # attempts to fail, by history

    def fail(self, messages: Messages) -> None:
        with self.lock:
            key = history_key(messages)
            self.failing[key] = self.failing.get(key, 0) + 1

    def expect(self, messages: Messages, run: int, answer: dict[str, Any]) -> None:
        with self.lock:
            self.pending.setdefault(history_key(messages), []).append((run, answer))

    def respond(self, body: dict[str, Any]) -> dict[str, Any]:
        key = history_key(body["messages"])
        with self.lock:
            if self.failing.get(key):
                self.failing[key] -= 1
                return {"kind": "error", "status": 500}
            waiting = self.pending.get(key)
            if not waiting:
                return {"kind": "error", "status": 500, "body": {"error": {"message": "no run sent this"}}}
            run, answer = waiting.pop(0)
            self.given.setdefault(key, []).append((run, answer))
        if body.get("stream"):
            return {"kind": "raw", "body": stream(answer), "content_type": "text/event-stream"}
        raw = orjson.dumps(completion(answer, self.reasoning)).decode()
        return {"kind": "raw", "body": raw, "content_type": "application/json"}

    def taken(self, messages: Messages, got: dict[str, Any]) -> int:
        """The run given the answer a client got for this history (and no longer given)."""
        key, form = history_key(messages), answer_form(got)
        with self.lock:
            given = self.given[key]
            index = next(i for i, (_, answer) in enumerate(given) if answer_form(answer) == form)
            return given.pop(index)[0]


def read_answer(response: httpx.Response, streamed: bool) -> dict[str, Any]:
    if not streamed:
        message: dict[str, Any] = response.json()["choices"][0]["message"]
        return message
    text, calls = "", {}
    for line in response.text.splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        for choice in orjson.loads(line[6:]).get("choices", ()):
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or ():
                slot = calls.setdefault(call["index"], {"id": None, "function": {"name": "", "arguments": ""}})
                slot["id"] = call.get("id") or slot["id"]
                function = call.get("function") or {}
                slot["function"]["name"] += function.get("name") or ""
                slot["function"]["arguments"] += function.get("arguments") or ""
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        out["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out


# A client's rewrite of the history it is about to send: (run's full history, step index) -> sent.
Rewrite = Callable[[Messages, int], Messages]


@dataclass
class Client:
    """One agent: the run it plays (it may trade it for an interchangeable one, see above), the
    trajectories and step numbers the gateway gave its steps."""

    run: int
    steps: list[tuple[str, str, bytes]] = field(default_factory=list)  # (trajectory, step, history sent)
    failed_ids: list[str] = field(default_factory=list)  # the trajectories of failed attempts
    decisions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass
class Replay:
    url: str
    runs: list[Messages]
    upstream: Upstream
    stream: Callable[[int, int], bool] = lambda run, step: False
    rewrite: Rewrite | None = None
    retry: Callable[[int, int], str | None] | None = None  # "same", "header", "changed": sent twice
    pace: Callable[[], None] = lambda: None
    clients: list[Client] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def play(self, client: Client, http: httpx.Client) -> None:
        step = 0
        while step < len(steps_of(self.runs[client.run])):
            self.pace()
            messages, answer = steps_of(self.runs[client.run])[step]
            sent = messages if self.rewrite is None else self.rewrite(copy.deepcopy(messages), step)
            streamed = self.stream(client.run, step)
            body = {"model": "tandem", "messages": sent, "stream": streamed}
            again = self.retry(client.run, step) if self.retry else None
            if again:
                # The first attempt fails at the upstream; the client sends it again: the same
                # body, with or without the retry header, or with a field other than the
                # messages changed ("changed": a lower max_tokens).
                self.upstream.fail(sent)
                failed = http.post(f"{self.url}/v1/chat/completions", json=body)
                if again == "changed":
                    body["max_tokens"] = 1000
                client.failed_ids.append(failed.headers.get("x-tandem-trajectory", "?"))
            self.upstream.expect(sent, client.run, answer)
            headers = {"x-stainless-retry-count": "1"} if again == "header" else {}
            response = http.post(f"{self.url}/v1/chat/completions", json=body, headers=headers)
            if response.status_code != 200:
                client.errors.append(f"step {step + 1}: {response.status_code} {response.text[:200]}")
                return
            got = read_answer(response, streamed)
            with self.lock:
                run = self.upstream.taken(sent, got)
                if run != client.run:
                    other = next(c for c in self.clients if c.run == run)
                    other.run, client.run = client.run, run
            trajectory_id, number = response.headers["x-tandem-trajectory"], response.headers["x-tandem-step"]
            client.steps.append((trajectory_id, number, history_key(sent)))
            client.decisions.append(response.headers.get("x-tandem-stitch", ""))
            step += 1

    def run_all(self, order: list[int] | None = None) -> None:
        self.clients = [Client(run) for run in (order or range(len(self.runs)))]
        threads = []
        for client in self.clients:

            def go(client: Client = client) -> None:
                with httpx.Client(timeout=30) as http:
                    try:
                        self.play(client, http)
                    except Exception as exc:  # reported with the client
                        client.errors.append(repr(exc))

            threads.append(threading.Thread(target=go))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)

    def problems(self, http: httpx.Client) -> list[str]:
        """What is wrong with the trajectories: as many as runs, each holding one run's steps
        (the histories it sent, numbered from 1), every run's steps in one of them. Runs whose
        histories and answers are identical so far cannot be told apart, and need not be: a
        trajectory holds either's identical step."""
        out = [f"client {i}: {e}" for i, c in enumerate(self.clients) for e in c.errors]
        filed: dict[str, list[tuple[int, bytes]]] = {}
        runs: list[tuple[bytes, ...]] = []
        for client in self.clients:
            runs.append(tuple(sent for _, _, sent in client.steps))
            for trajectory_id, number, sent in client.steps:
                filed.setdefault(trajectory_id, []).append((int(number), sent))
            if client.failed_ids and set(client.failed_ids) - {t for t, _, _ in client.steps}:
                out.append(f"run {client.run}: a failed attempt filed apart {client.decisions}")
        held: list[tuple[bytes, ...]] = []
        for trajectory_id, steps in filed.items():
            steps.sort()
            if [n for n, _ in steps] != list(range(1, len(steps) + 1)):
                out.append(f"trajectory {trajectory_id}: steps {[n for n, _ in steps]}")
            held.append(tuple(sent for _, sent in steps))
        if Counter(held) != Counter(runs):
            out.append(f"{len(held)} trajectories do not hold the {len(runs)} runs' steps (split, merged or crossed)")
        listed = http.get(f"{self.url}/v1/trajectories", params={"limit": 500}).json()["data"]
        if len(listed) != len(self.clients):
            out.append(f"{len(listed)} trajectories listed for {len(self.clients)} runs")
        for trajectory_id, steps in filed.items():
            detail = http.get(f"{self.url}/v1/trajectories/{trajectory_id}").json()
            if detail.get("steps") != len(steps):
                out.append(f"trajectory {trajectory_id}: {detail.get('steps')} steps for a run of {len(steps)}")
        return out
