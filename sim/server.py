"""A simulated model server: OpenAI-compatible `/v1/chat/completions` (plain and streamed) and
`/v1/models` on a free 127.0.0.1 port, answering as the edge or the cloud would.

It is SIMULATED: no model runs. Answers are scripted from the conversation (`script.py`), the
strategies' inner calls answered with noisy but real signals (`respond.py`, `prompts.py`), and
priced in realistic token counts and latencies (`answer.py`), so that the gateway in front of
it does all its real work. It also keeps the usage it reported, per `prompt_cache_key`, so a
check can compare the gateway's ledger with what the upstreams said.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections import defaultdict
from typing import Any

import orjson
from aiohttp import web

from router.protocol.chat import chunk_event
from sim.answer import Answer
from sim.respond import Responder
from sim.script import Role
from sim.tasks import Task

SIM_MODELS: dict[Role, str] = {"edge": "qwen3.5-9b-sim", "cloud": "gpt-5.4-sim"}


def _error(status: int, message: str) -> web.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
    return web.Response(status=status, body=orjson.dumps(body), content_type="application/json")


def _delta(delta: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]


def _pieces(text: str, parts: int) -> list[str]:
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class SimServer:
    """One simulated upstream. Start it inside the running event loop; stop it the same way."""

    def __init__(
        self, role: Role, tasks: list[Task], seed: int, latency_scale: float = 1.0, latency_s: float | None = None
    ) -> None:
        """`latency_s` fixes every call's time (benchmarks); otherwise times are drawn and scaled."""
        self.role = role
        self.model = SIM_MODELS[role]
        self.seed = seed
        self.responder = Responder(role, {task.id: task for task in tasks}, seed, latency_scale, latency_s)
        # prompt_cache_key -> [requests, prompt, cached, completion], as reported.
        self.served: defaultdict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> SimServer:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _models(self, request: web.Request) -> web.Response:
        data = [{"id": self.model, "object": "model", "created": 0, "owned_by": "tandem-demo-simulated"}]
        return web.Response(body=orjson.dumps({"object": "list", "data": data}), content_type="application/json")

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return _error(400, "request body is not valid JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            return _error(400, "'messages' must be a non-empty array")
        try:
            answer = self._answer(body)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            # A request of a shape the simulated model cannot read: a client's mistake, answered
            # as a server would (a 400 that says so), never a crash relayed as a 500.
            return _error(400, f"the simulated model cannot read this request ({type(exc).__name__}: {exc})")
        key = str(body.get("prompt_cache_key") or "")
        served = self.served[key]
        usage = answer.usage
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        for index, value in enumerate((1, usage["prompt_tokens"], cached, usage["completion_tokens"])):
            served[index] += value
        model = str(body.get("model") or self.model)
        if body.get("stream"):
            options = body.get("stream_options") or {}
            return await self._stream(request, answer, model, bool(options.get("include_usage")))
        await asyncio.sleep(answer.latency_s)
        return web.Response(body=orjson.dumps(self._completion(answer, model)), content_type="application/json")

    def _answer(self, body: dict[str, Any]) -> Answer:
        return self.responder.respond(body)

    @staticmethod
    def _completion(answer: Answer, model: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-sim-{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": answer.message,
                    "logprobs": answer.logprobs,
                    "finish_reason": answer.finish_reason,
                }
            ],
            "usage": answer.usage,
        }

    async def _stream(
        self, request: web.Request, answer: Answer, model: str, include_usage: bool
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        # Half the latency before the first token, the rest spread over the chunks that follow.
        await asyncio.sleep(answer.latency_s / 2)
        await response.prepare(request)
        completion_id = f"chatcmpl-sim-{time.monotonic_ns()}"
        created = int(time.time())
        events = [_delta({"role": "assistant", "content": ""})]
        events += [_delta({"content": piece}) for piece in _pieces(answer.message["content"], 3)]
        for index, call in enumerate(answer.message.get("tool_calls") or []):
            function = call["function"]
            head = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": function["name"], "arguments": ""},
            }
            events.append(_delta({"tool_calls": [head]}))
            events += [
                _delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                for piece in _pieces(function["arguments"], 4)
            ]
        events.append(_delta({}, answer.finish_reason))
        gap = answer.latency_s / 2 / len(events)
        try:
            for choices in events:
                await response.write(chunk_event(completion_id, model, created, choices))
                await asyncio.sleep(gap)
            if include_usage:
                await response.write(chunk_event(completion_id, model, created, [], usage=answer.usage))
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
        except ConnectionResetError:
            # The gateway gave the call up (its client left): a real server stops writing too,
            # and says nothing of it in its log.
            pass
        return response
