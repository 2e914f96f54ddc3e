"""One chat step from request to answer: route, decide, forward with failover, account.

The HTTP handlers stay thin; everything a step goes through is here, in order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.datastructures import Headers
from starlette.responses import Response, StreamingResponse

from router.audit import AuditLog
from router.context import cloud_context
from router.errors import GatewayError
from router.inner import InnerCallError, InnerCalls
from router.ledger import StepRecord, Usage, cost_usd, estimate_usage
from router.metrics import Metrics
from router.policies.base import (
    Decision,
    Policy,
    PreparedAnswer,
    Reason,
    RouteBase,
    StepContext,
    Target,
    other_target,
)
from router.policies.constraints import PIN_NOTE, cloud_refusal, constrain
from router.privacy.guard import PrivacyGuard
from router.privacy.redact import StreamRestorer
from router.protocol.chat import ChatRequest, completion_to_sse, parse_chat_request, read_answer
from router.settings import Settings
from router.streaming import StreamOutcome, relay
from router.trajectory.tracker import StepIdentity, Tracker
from router.upstream import Upstream, UpstreamFailure, UpstreamReply
from router.wire import json_response

log = logging.getLogger("tandem")
TARGET_HEADER = "x-tandem-target"
STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@dataclass(slots=True)
class Route:
    name: str
    settings: RouteBase
    policy: Policy


@dataclass(slots=True)
class _Step:
    """What the pipeline knows of the step in hand."""

    route: Route
    request: ChatRequest
    identity: StepIdentity
    decision: Decision
    started: float
    started_at: float
    calls: InnerCalls
    pinned: bool  # pinned to the edge, or the context may not leave: no failover to the cloud
    privacy: PrivacyGuard
    sent_to_cloud: list[dict[str, Any]] | None = None  # the messages the cloud received

    @property
    def trajectory_id(self) -> str:
        return self.identity.trajectory_id

    @property
    def index(self) -> int:
        return self.identity.step

    def headers(self, target: Target, fallback: bool) -> dict[str, str]:
        headers = {
            "x-tandem-target": target,
            "x-tandem-route": self.route.name,
            "x-tandem-reason": self.decision.reason.value,
            "x-tandem-trajectory": self.trajectory_id,
            "x-tandem-step": str(self.index),
        }
        if self.decision.score is not None:
            headers["x-tandem-score"] = f"{self.decision.score:.6g}"
        if fallback:
            headers["x-tandem-fallback"] = "true"
        return headers


class Gateway:
    """The routing core: upstreams, routes, trajectory state and metrics of one process."""

    def __init__(self, settings: Settings, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.metrics.describe_routes(settings.routes)
        self.upstreams = {name: Upstream(name, s) for name, s in settings.upstreams.items()}
        self.routes = {name: Route(name, s, s.build()) for name, s in settings.routes.items()}
        self.tracker = Tracker(settings, self.metrics)
        audit = settings.audit
        self.audit = AuditLog(audit.mode, audit.path, audit.max_bytes, audit.backups)
        self.loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        for upstream in self.upstreams.values():
            await upstream.start()
        await self.tracker.start()
        self.audit.start()

    async def close(self) -> None:
        # Order matters: finish recording before the store and the audit log go away.
        await self.tracker.aclose()
        self.audit.close()
        for upstream in self.upstreams.values():
            await upstream.close()

    def route_for(self, model: str) -> Route:
        route = self.routes.get(model)
        if route is None and self.settings.unknown_model_route is not None:
            route = self.routes[self.settings.unknown_model_route]
        if route is None:
            names = ", ".join(sorted(self.routes))
            raise GatewayError(
                404,
                f"The model '{model}' does not exist on this gateway; the models are: {names}",
                code="model_not_found",
                param="model",
            )
        return route

    async def chat(self, body: bytes, headers: Headers, path_session: str | None, namespace: str) -> Response:
        started = time.perf_counter()
        started_at = time.time()
        try:
            request = parse_chat_request(body)
            route = self.route_for(request.model)
            forced = self._forced_target(headers)
        except GatewayError as exc:
            self.metrics.bad_requests.labels(exc.code or "invalid_request").inc()
            raise
        identity = await self.tracker.begin(request, body, headers, path_session, namespace, route.name)
        notes = identity.trajectory.notes if identity.trajectory is not None else {}
        guard = PrivacyGuard(
            route.settings.privacy, identity.trajectory_id, notes, self.tracker.store, self.metrics, self.tracker.spawn
        )
        await guard.scan(request.messages)
        calls = InnerCalls(self.upstreams, guard)
        refusal = cloud_refusal(route.settings.constraints, identity.trajectory, identity.step)
        privacy_refusal = None if guard.allows_cloud() or guard.mode == "block" else Reason.PRIVACY
        if forced is not None:
            decision = constrain(Decision(target=forced, reason=Reason.HEADER_FORCED), privacy_refusal)
        else:
            context = StepContext(
                route.name,
                identity.trajectory_id,
                identity.step,
                request,
                identity.trajectory,
                calls,
                self.tracker.store,
                self.metrics,
            )
            decision = constrain(await self._decide(route, context), refusal or privacy_refusal)
        await self._enforce_privacy(route, guard, decision)
        cloud_forbidden = refusal == Reason.PINNED or not guard.allows_cloud()
        step = _Step(route, request, identity, decision, started, started_at, calls, cloud_forbidden, guard)
        if decision.answer is not None:
            return self._prepared_response(step, decision.answer)
        return await self._forward(step)

    async def _enforce_privacy(self, route: Route, guard: PrivacyGuard, decision: Decision) -> None:
        """Block a sensitive cloud step, pin a trajectory kept local, count inner exposure."""
        if decision.target == "cloud" and guard.mode == "block" and guard.sensitive:
            kinds = sorted({p[1:].rsplit("_", 1)[0] for p in guard.vault.values()}) or ["unknown (detection failed)"]
            for kind in kinds:
                self.metrics.privacy_values.labels(kind, "blocked").inc()
            raise GatewayError(
                403,
                f"the privacy policy of route {route.name!r} blocks this step: its context holds sensitive "
                f"values ({', '.join(kinds)}) and the step was to go to the cloud",
                type="permission_error",
                code="privacy_blocked",
            )
        if decision.reason == Reason.PRIVACY and route.settings.pin_when_sensitive:
            await self.tracker.store.note(guard.trajectory_id, PIN_NOTE, "edge")
        await guard.commit()

    async def _decide(self, route: Route, context: StepContext) -> Decision:
        try:
            return await route.policy.decide(context)
        except InnerCallError as error:
            # Strategies fall back themselves where they can; this catches the rest, so that
            # the agent still gets an answer, and says why in the record and the metrics.
            self.metrics.policy_failures.labels(route.name, "inner_call").inc()
            log.warning("route %s: %s; falling back to the edge", route.name, error)
            return Decision(target="edge", reason=Reason.INNER_FAILED)

    def _forced_target(self, headers: Headers) -> Target | None:
        value = headers.get(TARGET_HEADER)
        if value is None or not self.settings.allow_target_header:
            return None
        if value == "edge":
            return "edge"
        if value == "cloud":
            return "cloud"
        raise GatewayError(
            400, f"header {TARGET_HEADER} must be 'edge' or 'cloud', got {value!r}", code="invalid_target"
        )

    async def _forward(self, step: _Step) -> Response:
        first = step.decision.target
        targets: tuple[Target, ...] = (first, other_target(first)) if step.route.settings.failover else (first,)
        if step.pinned:
            # A trajectory pinned to the edge, or whose context may not leave, never fails
            # over to the cloud.
            targets = ("edge",)
        failures: list[UpstreamFailure] = []
        for attempt, target in enumerate(targets):
            upstream = self.upstreams[target]
            raw = await self._raw_for(step, target)
            body, dropped = step.request.upstream_body(upstream.model, upstream.drop_params, raw)
            for key in dropped:
                self.metrics.dropped_params.labels(upstream.name, key).inc()
            try:
                reply = await upstream.send(body, step.request.stream)
            except UpstreamFailure as failure:
                self.metrics.upstream_errors.labels(upstream.name, failure.kind).inc()
                failures.append(failure)
                if attempt + 1 < len(targets):
                    self.metrics.fallbacks.labels(step.route.name, target, targets[attempt + 1], failure.kind).inc()
                continue
            fallback = attempt > 0
            if reply.stream is not None:
                return self._stream_response(step, target, fallback, reply, len(body))
            return self._plain_response(step, target, fallback, reply)
        return self._failure_response(step, targets[-1], len(targets) > 1, failures)

    async def _raw_for(self, step: _Step, target: Target) -> dict[str, Any]:
        """The request as `target` gets it: the strategy's patch, and the route's context
        setting when the cloud answers."""
        raw = step.request.raw
        if step.decision.patch:
            raw = {**raw, **step.decision.patch}
        if target == "cloud" and step.route.settings.context.mode != "full":
            messages = await cloud_context(
                step.route.settings.context, raw["messages"], step.calls, self.tracker.store, step.identity
            )
            raw = {**raw, "messages": messages}
        if target == "cloud":
            raw = {**raw, "messages": step.privacy.outgoing(raw["messages"])}
            step.sent_to_cloud = raw["messages"]
            await step.privacy.commit()
        return raw

    def _prepared_response(self, step: _Step, answer: PreparedAnswer) -> Response:
        """Relay an answer a strategy's inner call already produced (as SSE when streaming)."""
        target = step.decision.target
        record = self._new_record(step, target, False)
        record.http_status = answer.status
        # The inner call that produced the answer is the step's main call, not an extra.
        main = step.calls.made.pop(answer.inner_index) if answer.inner_index is not None else None
        record.inner = list(step.calls.made)
        record.ttft_s = time.perf_counter() - step.started
        if main is not None:
            record.model = self.upstreams[main.target].model
        parsed = read_answer(orjson.dumps(answer.body))
        record.tools = parsed.tools
        usage = main.usage if main is not None else parsed.usage
        content = None
        if self.audit.wants_content and target == "cloud":
            content = {"input": step.request.messages, "output": parsed.text, "output_tools": parsed.tools}
        self._account(record, usage, step.started, content)
        headers = step.headers(target, False)
        if step.request.stream:
            return Response(
                completion_to_sse(answer.body),
                status_code=answer.status,
                headers={**STREAM_HEADERS, **headers},
                media_type="text/event-stream",
            )
        return json_response(answer.body, status=answer.status, headers=headers)

    def _plain_response(self, step: _Step, target: Target, fallback: bool, reply: UpstreamReply) -> Response:
        record = self._new_record(step, target, fallback)
        record.http_status = reply.status
        record.status = "ok" if reply.status < 300 else "error"
        record.ttft_s = reply.first_byte_s
        usage = None
        content = None
        body = reply.body
        if reply.status < 300:
            if target == "cloud" and step.privacy.redacted:
                body = self._restored(step, body)
            answer = read_answer(body)
            usage = answer.usage
            if usage is None:
                usage = estimate_usage(step.request.size, len(answer.text.encode()))
            record.tools = answer.tools
            if self.audit.wants_content:
                content = {"input": step.sent_to_cloud, "output": answer.text, "output_tools": answer.tools}
        self._account(record, usage, step.started, content)
        return Response(
            body,
            status_code=reply.status,
            headers=step.headers(target, fallback),
            media_type=reply.content_type,
        )

    def _stream_response(
        self, step: _Step, target: Target, fallback: bool, reply: UpstreamReply, prompt_bytes: int
    ) -> Response:
        assert reply.stream is not None
        record = self._new_record(step, target, fallback)
        record.ttft_s = reply.first_byte_s

        capture = self.audit.wants_content and target == "cloud"

        def on_end(outcome: StreamOutcome) -> None:
            record.status = "cancelled" if outcome.cancelled else ("error" if outcome.error else "ok")
            record.error = outcome.error
            record.tools = outcome.tools
            content = None
            if capture:
                content = {"input": step.sent_to_cloud, "output": outcome.text, "output_tools": outcome.tools}
            self._account(record, outcome.usage, step.started, content)

        restorer = StreamRestorer(step.privacy.redactor()) if target == "cloud" and step.privacy.redacted else None
        chunks = relay(
            reply.stream,
            upstream=target,
            model=self.upstreams[target].model,
            prompt_bytes=prompt_bytes,
            on_end=on_end,
            capture=capture,
            restorer=restorer,
        )
        return StreamingResponse(
            chunks,
            status_code=reply.status,
            headers={**STREAM_HEADERS, **step.headers(target, fallback)},
            media_type="text/event-stream",
        )

    def _failure_response(
        self, step: _Step, target: Target, fallback: bool, failures: list[UpstreamFailure]
    ) -> Response:
        last = failures[-1]
        headers = step.headers(target, fallback)
        record = self._new_record(step, target, fallback)
        record.status = "error"
        record.error = "; ".join(str(f) for f in failures)
        if last.status is not None:
            # The upstream's own error, relayed unchanged (status, body, Retry-After).
            record.http_status = last.status
            if last.retry_after is not None:
                headers["Retry-After"] = last.retry_after
            self._account(record, None, step.started)
            return Response(last.body, status_code=last.status, headers=headers, media_type=last.content_type)
        record.http_status = 503
        self._account(record, None, step.started)
        headers["Retry-After"] = str(self.settings.retry_after_s)
        raise GatewayError(
            503,
            f"no upstream could answer the step: {record.error}",
            type="server_error",
            code="upstream_unavailable",
            headers=headers,
        )

    @staticmethod
    def _restored(step: _Step, body: bytes) -> bytes:
        """The cloud's answer with our placeholders put back (the agent gets the real values)."""
        try:
            answer = orjson.loads(body)
        except orjson.JSONDecodeError:
            return body
        if not isinstance(answer, dict):
            return body
        return orjson.dumps(step.privacy.redactor().restore_answer(answer))

    def _new_record(self, step: _Step, target: Target, fallback: bool) -> StepRecord:
        return StepRecord(
            trajectory_id=step.trajectory_id,
            step=step.index,
            route=step.route.name,
            target=target,
            reason=step.decision.reason.value,
            score=step.decision.score,
            model=self.upstreams[target].model,
            at=step.started_at,
            attempt=step.identity.attempt,
            inner=list(step.calls.made),
            fallback=fallback,
            error_signals=step.identity.error_signals,
            features=step.decision.features,
            exposed=sorted({p[1:].rsplit("_", 1)[0] for p in step.privacy.exposed}),
            redacted=step.privacy.redacted,
        )

    def _account(
        self,
        record: StepRecord,
        usage: Usage | None,
        started: float,
        content: dict[str, Any] | None = None,
    ) -> None:
        """Close the step's record: cost, counterfactual, latency, metrics. Called once."""
        record.latency_s = time.perf_counter() - started
        record.usage = usage
        record.cost_usd = record.inner_cost_usd
        if usage is not None:
            record.cost_usd += cost_usd(usage, self.settings.upstreams[record.target].prices)
            record.counterfactual_usd = cost_usd(usage, self.settings.upstreams["cloud"].prices)
            metrics = self.metrics
            metrics.tokens.labels(record.target, "prompt").inc(usage.prompt_tokens)
            metrics.tokens.labels(record.target, "cached").inc(usage.cached_tokens)
            metrics.tokens.labels(record.target, "completion").inc(usage.completion_tokens)
            metrics.cost.labels(record.target).inc(record.cost_usd)
            metrics.counterfactual_cost.inc(record.counterfactual_usd)
        self.metrics.steps.labels(record.route, record.target, record.reason, record.status).inc()
        self.metrics.latency.labels(record.target).observe(record.latency_s)
        self.metrics.ttft.labels(record.target).observe(record.ttft_s)
        self.tracker.record(record)
        self.audit.submit(record, content)
