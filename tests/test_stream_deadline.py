"""A stream's time is bounded: an upstream dripping bytes steadily (never idle long enough for the
idle timeout) is ended at its whole-stream deadline (`timeouts.stream`), and a gateway stopped
with streams still running ends each of them itself before its shutdown timeout. Either way the
client gets an OpenAI-shaped error event and `[DONE]`, and the step is recorded as an error.
Against real gateways (one a real `tandem serve` process stopped with SIGTERM) and a raw upstream
that drips."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
from aiohttp import web

from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import GatewayServer, serve_process, wait_until
from tests.raw_upstream import RawUpstream
from tests.test_answer_limits import raw_upstream

__all__ = ["raw_upstream"]  # the fixture, shared with the answer-limit tests

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}
FIRST = b'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n'
DRIP = b'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"m","choices":[{"index":0,"delta":{"content":"drip"},"finish_reason":null}]}\n\n'


def _stopped_mid_requests(process: Any, threads: list[threading.Thread], ready: Callable[[], bool]) -> str:
    """Start `threads` (requests to the gateway `process`), send it SIGTERM once `ready()`, and
    return its output; it must stop within 6 s, by itself."""
    try:
        for thread in threads:
            thread.start()
        assert ready()
        stopped_at = time.monotonic()
        process.send_signal(signal.SIGTERM)
        for thread in threads:
            thread.join(15)
        output: str = process.communicate(timeout=15)[0]
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=10)
    assert time.monotonic() - stopped_at < 6
    assert process.returncode in (0, -signal.SIGTERM), output
    return output


def _stopping_gateway(tmp_path: Path, edge: str, cloud: str, timeouts: str, route: str) -> tuple[Any, int, Path]:
    """A `tandem serve` process (and its port and audit file) whose edge upstream is `edge`
    with `timeouts`, its route `route`, stopping within 2 s of a SIGTERM."""
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge:  {{base_url: "{edge}", model: small, timeouts: {{{timeouts}}}}}
  cloud: {{base_url: "{cloud}", model: big}}
routes:
  tandem: {{{route}}}
server: {{shutdown_timeout_s: 2}}
audit: {{mode: metadata, path: "{audit}"}}
log_level: info
"""
    )
    port = free_port()
    return serve_process(config, port), port, audit


def _audited_steps(audit: Path, prefix: str) -> list[dict[str, Any]]:
    """The audit log's step lines of the trajectories whose id starts with `prefix`."""
    lines = [orjson.loads(line) for line in audit.read_text().splitlines()]
    return [line for line in lines if str(line.get("trajectory_id", "")).startswith(prefix)]


def dripping(every_s: float, for_s: float) -> Callable[[web.Request], Any]:
    """An upstream that sends its first event, then one byte every `every_s` for `for_s`."""

    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(FIRST)
        stop = time.monotonic() + for_s
        position = 0
        try:
            while time.monotonic() < stop:
                await asyncio.sleep(every_s)
                await response.write(DRIP[position % len(DRIP) : position % len(DRIP) + 1])
                position += 1
        except (ConnectionError, asyncio.CancelledError):
            return response
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    return answer


def _events(body: bytes) -> list[bytes]:
    return [block for block in body.split(b"\n\n") if block]


def _error_of(body: bytes) -> dict[str, Any]:
    events = _events(body)
    assert events[-1] == b"data: [DONE]", body[-300:]
    assert body.count(b"[DONE]") == 1, body[-300:]
    error: dict[str, Any] = orjson.loads(events[-2][6:])["error"]
    return error


def test_a_dripping_stream_ends_at_its_deadline_with_an_error_event(
    make_gateway: Callable[..., GatewayServer], raw_upstream: Callable[..., RawUpstream], client: httpx.Client
) -> None:
    upstream = raw_upstream({("POST", "/v1/chat/completions"): dripping(0.05, 20)})
    timeouts = {"connect": 2, "first_byte": 5, "idle": 2, "stream": 1.0}
    server = make_gateway(
        routes=EDGE_ONLY, edge_url=upstream.base_url, upstream_overrides={"edge": {"timeouts": timeouts}}
    )
    body = {"model": "tandem", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    started = time.monotonic()
    with client.stream(
        "POST", f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": "drip"}
    ) as response:
        answer = b"".join(response.iter_bytes())
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 3.0, elapsed  # the deadline, not the upstream's 20 s nor the idle 2 s
    error = _error_of(answer)
    assert error["code"] == "upstream_stream_timeout"
    assert "upstreams.edge.timeouts.stream" in error["message"]

    def record() -> dict[str, Any] | None:
        found = client.get(f"{server.url}/v1/trajectories/drip")
        return found.json()["records"][0] if found.status_code == 200 and found.json()["records"] else None

    assert wait_until(lambda: record() is not None)
    step = record()
    assert step is not None and step["status"] == "error"
    assert "timeouts.stream" in step["error"]


def test_the_default_stream_deadline_is_ten_minutes() -> None:
    from router.config.upstream import Timeouts

    assert Timeouts().stream == 600.0


def test_streams_running_at_the_shutdown_timeout_end_with_an_error_event(
    tmp_path: Path, raw_upstream: Callable[..., RawUpstream], cloud: FakeUpstream
) -> None:
    upstream = raw_upstream({("POST", "/v1/chat/completions"): dripping(0.05, 30)})
    process, port, audit = _stopping_gateway(tmp_path, upstream.base_url, cloud.base_url, "idle: 10", "strategy: edge")
    bodies: list[bytes] = []
    first_bytes = threading.Event()

    def stream(number: int) -> None:
        body = {"model": "tandem", "stream": True, "messages": [{"role": "user", "content": f"run {number}"}]}
        with (
            httpx.Client(timeout=20) as http,
            http.stream(
                "POST",
                f"http://127.0.0.1:{port}/v1/chat/completions",
                json=body,
                headers={"X-Session-ID": f"stop-{number}"},
            ) as response,
        ):
            parts = []
            for part in response.iter_bytes():
                parts.append(part)
                first_bytes.set()
            bodies.append(b"".join(parts))

    threads = [threading.Thread(target=stream, args=(n,)) for n in range(3)]

    def streaming() -> bool:
        began = first_bytes.wait(10)
        time.sleep(0.3)  # every stream under way
        return began

    output = _stopped_mid_requests(process, threads, streaming)
    assert len(bodies) == 3
    for answer in bodies:
        error = _error_of(answer)
        assert error["code"] == "gateway_shutting_down"
    assert "Cancel" not in output, output  # uvicorn had nothing left to cancel
    steps = _audited_steps(audit, "stop-")
    assert len(steps) == 3, steps
    assert all(step["status"] == "error" and "shutting down" in step["error"] for step in steps), steps


def test_steps_waiting_for_their_answer_at_the_shutdown_timeout_are_answered_503_and_recorded_once(
    tmp_path: Path, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    """A SIGTERM while plain steps (and a stream not yet begun) wait for a slow upstream: at the
    shutdown timeout each is answered 503 `gateway_shutting_down` and recorded once as an error
    of the shutdown, not cut by the server with a bare 500 and recorded as a client that left."""
    edge.push(*[{"delay": 15}] * 3)
    route = "strategy: edge, failover: false"
    process, port, audit = _stopping_gateway(tmp_path, edge.base_url, cloud.base_url, "first_byte: 30", route)
    url = f"http://127.0.0.1:{port}"
    calls = [
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "plain"}]}),
        ("/v1/chat/completions", {"stream": True, "messages": [{"role": "user", "content": "stream"}]}),
        ("/v1/messages", {"max_tokens": 8, "messages": [{"role": "user", "content": "messages"}]}),
    ]
    answers: dict[int, httpx.Response] = {}

    def call(number: int) -> None:
        path, body = calls[number]
        headers = {"X-Session-ID": f"wait-{number}"}
        answers[number] = httpx.post(f"{url}{path}", json={"model": "tandem", **body}, headers=headers, timeout=20)

    threads = [threading.Thread(target=call, args=(n,)) for n in range(len(calls))]
    output = _stopped_mid_requests(process, threads, lambda: wait_until(lambda: len(edge.received) == len(calls), 10))
    assert "Traceback" not in output and "Cancel" not in output, output
    assert sorted(answers) == [0, 1, 2]
    for answer in answers.values():
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["code"] == "gateway_shutting_down", answer.text
        assert answer.headers["retry-after"] == "1"
    steps = _audited_steps(audit, "wait-")
    assert sorted(step["trajectory_id"] for step in steps) == ["wait-0", "wait-1", "wait-2"], steps
    for step in steps:
        assert (step["status"], step["http_status"]) == ("error", 503), step
        assert "shutting down" in step["error"], step
