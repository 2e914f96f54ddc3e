"""The forward stage: the step's main call, to its target and, when that fails and the route
allows it, to the other (failover); each attempt's request shaped by the stages' `target`
hooks (context, redaction). A cloud call that goes as it is (no redaction) is measured for
what it exposes while the cloud reads it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from router.config.privacy import redacts
from router.edge_forward import send_pooled
from router.fault_log import FAULTS
from router.policies.base import Target, other_target
from router.step import Replied, Step, Unanswered
from router.upstream import Upstream, UpstreamFailure, UpstreamReply

from .stage import Parts, Shaper, Stage

log = logging.getLogger("tandem")


async def _measure_anyway(step: Step, messages: list[dict[str, Any]]) -> None:
    try:
        await step.privacy.measure(messages)
    except Exception:
        log.exception("privacy: counting what a cancelled cloud call sent failed")


def _refusal(upstream: Upstream, reply: UpstreamReply) -> UpstreamFailure:
    """An upstream's 4xx answer as a failure, for the step's record."""
    text = reply.body[:200].decode("utf-8", "replace")
    return UpstreamFailure(
        upstream.name,
        "status",
        f"HTTP {reply.status}: {text}",
        status=reply.status,
        body=reply.body,
        content_type=reply.content_type,
    )


class Forward(Stage):
    name = "forward"

    def __init__(self, parts: Parts) -> None:
        self._upstreams = parts.upstreams
        self._metrics = parts.metrics
        self._tracker = parts.tracker
        self._pool = parts.edge_pool
        self._chain: Shaper | None = None

    def joined(self, chain: Shaper) -> None:
        self._chain = chain

    async def request(self, step: Step) -> None:
        if step.outcome is not None:
            return  # the strategy already holds the answer
        assert self._chain is not None
        first = step.decision.target
        targets: tuple[Target, ...] = (first, other_target(first)) if step.route.settings.failover else (first,)
        if step.cloud_forbidden:
            # Privacy, a constraint or the header kept the step off the cloud: no failover there.
            targets = ("edge",)
        if "cloud" not in targets:
            # No cloud call is left to make: the step's hold of its key's cloud dollars goes
            # back now, not when a long edge answer ends (its inner calls are settled then).
            self._tracker.release(step.identity)
        failures: list[UpstreamFailure] = []
        metrics = self._metrics
        for attempt, target in enumerate(targets):
            upstream = self._upstreams[target]
            step.upstream = None
            raw = await self._chain.shape(step, target, step.request.raw)
            if target == "cloud" and step.sent_encoded is not None:
                body, dropped = step.request.body_with_messages(
                    upstream.model, upstream.drop_params, raw, step.sent_encoded
                )
            else:
                body, dropped = step.request.upstream_body(upstream.model, upstream.drop_params, raw)
            for key in dropped:
                metrics.dropped_params.labels(upstream.name, key).inc()
            step.upstream, step.upstream_bytes, step.fallback = target, len(body), attempt > 0
            try:
                if target == "cloud" and not redacts(step.privacy.mode):
                    reply = await self._send_measured(step, upstream, body, raw["messages"])
                elif target == "edge" and self._pool is not None:
                    reply = await send_pooled(self._pool, step, body, self._tracker.store, metrics)
                else:
                    reply = await upstream.send(body, step.request.stream, trajectory_id=step.trajectory_id)
            except UpstreamFailure as failure:
                FAULTS.call_failed(
                    metrics.upstream_errors,
                    upstream.name,
                    failure.kind,
                    failure.status,
                    step.route.name,
                    step.identity.trajectory_id,
                    step.identity.step,
                    "before its answer" if attempt + 1 == len(targets) else "before its answer (failing over)",
                )
                failures.append(failure)
                step.failures.append((target, failure.kind, failure.status))
                if attempt + 1 < len(targets):
                    metrics.fallbacks.labels(step.route.name, target, targets[attempt + 1], failure.kind).inc()
                continue
            if failures and target == "edge" and 400 <= reply.status < 500:
                # The edge, tried because the cloud failed, refused the request (its smaller
                # context, a parameter it lacks): that says nothing of the request the cloud was
                # chosen for. The client gets the cloud's failure (a 429 and its Retry-After, a
                # 503), which it retries, not a refusal it would act on (an agent condensing its
                # history for a context error of the edge's).
                failures.append(_refusal(upstream, reply))
                step.failures.append((target, "status", reply.status))
                step.outcome = Unanswered(target, True, failures, relayed=0)
                return
            step.outcome = Replied(target, attempt > 0, reply, len(body))
            return
        step.outcome = Unanswered(targets[-1], len(targets) > 1, failures)

    async def _send_measured(
        self, step: Step, upstream: Upstream, body: bytes, messages: list[dict[str, Any]]
    ) -> UpstreamReply:
        """Send a cloud call that goes as it is (no redaction), and measure what it exposes
        while the cloud reads it: the request is written first, then the privacy stage scans
        and counts it in this task (the upstream's time exceeds it by far). The count is in
        before the step's record is made, as it always was; a request never written (no
        connection) exposed nothing. A measurement cut short (the client left, the first-byte
        timeout) finishes in the background: the request is out. One that fails gives the call up."""

        async def measure() -> None:
            try:
                await step.privacy.measure(messages)
            except asyncio.CancelledError:
                self._tracker.spawn(_measure_anyway(step, messages))
                raise

        return await upstream.send(body, step.request.stream, sent=measure, trajectory_id=step.trajectory_id)
