"""Inner calls: the model calls a strategy makes for a step before the agent's answer.

Always non-streamed (the agent never sees them), counted in the step's ledger with their
tokens and dollars, and bounded by the upstream's timeouts like any call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from router.config.privacy import redacts
from router.ledger import InnerCall, cost_usd
from router.protocol.usage import Usage
from router.upstream import Upstream, UpstreamFailure, UpstreamReply

if TYPE_CHECKING:
    from router.edge.pool import EdgePool, Replica
    from router.metrics.core import Metrics
    from router.privacy.guard import PrivacyGuard


class InnerCallError(Exception):
    """An inner call got no usable answer; the strategy falls back as configured."""


class InnerCalls:
    def __init__(
        self,
        upstreams: Mapping[str, Upstream],
        privacy: PrivacyGuard | None = None,
        metrics: Metrics | None = None,
        trajectory_id: str = "",
    ) -> None:
        self._upstreams = upstreams
        self._trajectory_id = trajectory_id  # for an upstream's trajectory_header
        # An inner call's upstream failure is an upstream error like a step's (TandemEdgeDown
        # must see an edge that fails every probe while the cloud answers the steps).
        self._metrics = metrics
        # The step's privacy stage: inner calls to the cloud are redacted, kept local or
        # refused exactly like the step's own cloud call.
        self._privacy = privacy
        self.made: list[InnerCall] = []
        # With an edge pool: the replicas this step's inner edge calls try, in order.
        self._edge_pool: EdgePool | None = None
        self._edge_replicas: list[Replica] = []

    def judge(self, verdicts: tuple[tuple[int, str], ...]) -> None:
        """Write a strategy's verdicts on its calls, (index, status), into the step's ledger."""
        for index, status in verdicts:
            self.made[index].status = status

    def send_edge_to(self, pool: EdgePool, replicas: list[Replica]) -> None:
        """Send this step's inner edge calls to the edge pool's replicas in the step's order: its
        home first (where the same prefix is cached), the next one when a replica fails, as the
        step's own call does."""
        self._edge_pool = pool
        self._edge_replicas = replicas
        self._upstreams = {**self._upstreams, "edge": replicas[0].upstream}

    @property
    def privacy(self) -> PrivacyGuard | None:
        return self._privacy

    def shown(self, target: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages as a prompt the gateway writes for `target` may quote them: for the cloud
        (or any upstream but the edge) on a redacting route, with placeholders already. A prompt
        quotes tool-call arguments as JSON text (`\\`, `\\u00fc`: a value no longer written as
        it was found) and cuts texts to a size (a value cut in two): redacting the prompt
        afterwards would find neither."""
        privacy = self._privacy
        if target == "edge" or privacy is None or not redacts(privacy.mode):
            return messages
        return privacy.quoted(messages)

    async def complete(self, target: str, body: dict[str, Any], purpose: str) -> dict[str, Any]:
        """One chat completion from `target` (its model is filled in); the parsed answer."""
        upstream = self._upstreams[target]
        # Every upstream but the edge is off the premises for privacy: the cloud, and any other
        # named upstream a judge or a verifier asks (a hosted model, as far as the gateway knows).
        privacy = self._privacy if target != "edge" else None
        if privacy is not None:
            if not privacy.allows_cloud():
                self.made.append(InnerCall(purpose, target, None, 0.0, status="privacy"))
                raise InnerCallError(f"{purpose}: the privacy policy keeps this step's context off the cloud")
            await privacy.scan_deferred()
            body = {**body, "messages": privacy.outgoing(body.get("messages") or [])}
        payload = {**body, **upstream.settings.inner_call_params, "model": upstream.model, "stream": False}
        payload.pop("stream_options", None)
        try:
            reply = await self._send(target, upstream, orjson.dumps(payload))
        except UpstreamFailure as failure:
            if self._metrics is not None:
                self._metrics.upstream_errors.labels(upstream.name, failure.kind).inc()
            self.made.append(InnerCall(purpose, target, None, 0.0, status="error"))
            raise InnerCallError(
                f"{purpose} call to the {target} failed: {failure.kind}: {failure.detail}"
            ) from failure
        try:
            answer = orjson.loads(reply.body)
        except orjson.JSONDecodeError:
            answer = None
        if reply.status >= 300 or not isinstance(answer, dict) or not answer.get("choices"):
            self.made.append(InnerCall(purpose, target, None, 0.0, status="error"))
            raise InnerCallError(f"{purpose} call to the {target} answered HTTP {reply.status}: {reply.body[:200]!r}")
        usage = Usage.from_openai(answer.get("usage"))
        cost = cost_usd(usage, upstream.settings.prices) if usage is not None else 0.0
        self.made.append(InnerCall(purpose, target, usage, cost))
        if privacy is not None and redacts(privacy.mode):
            return privacy.answer_redactor().restore_answer(answer)
        result: dict[str, Any] = answer
        return result

    async def _send(self, target: str, upstream: Upstream, body: bytes) -> UpstreamReply:
        pool = self._edge_pool
        if target != "edge" or pool is None:
            return await upstream.send(body, stream=False, trajectory_id=self._trajectory_id)
        last: UpstreamFailure | None = None
        for replica in self._edge_replicas:
            if last is not None and self._metrics is not None:
                # An earlier replica failed: counted here, as complete() counts the last one.
                self._metrics.upstream_errors.labels(upstream.name, last.kind).inc()
            lease = pool.lease(replica, first=False)
            try:
                reply = await replica.upstream.send(body, stream=False, trajectory_id=self._trajectory_id)
            except UpstreamFailure as failure:
                pool.failed(replica, failure.kind, failure.status)
                last = failure
                continue
            finally:
                lease.release()
            pool.answered(replica)
            return reply
        assert last is not None, "a placement names at least one replica"
        raise last
