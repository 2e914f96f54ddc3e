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
from router.upstream import Upstream, UpstreamFailure

if TYPE_CHECKING:
    from router.metrics import Metrics
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

    def judge(self, verdicts: tuple[tuple[int, str], ...]) -> None:
        """Write a strategy's verdicts on its calls, (index, status), into the step's ledger."""
        for index, status in verdicts:
            self.made[index].status = status

    def send_edge_to(self, upstream: Upstream) -> None:
        """Send this step's inner edge calls to one replica of the edge pool (the step's home,
        where the same prefix is cached)."""
        self._upstreams = {**self._upstreams, "edge": upstream}

    @property
    def privacy(self) -> PrivacyGuard | None:
        return self._privacy

    async def complete(self, target: str, body: dict[str, Any], purpose: str) -> dict[str, Any]:
        """One chat completion from `target` (its model is filled in); the parsed answer."""
        upstream = self._upstreams[target]
        privacy = self._privacy if target == "cloud" else None
        if privacy is not None:
            if not privacy.allows_cloud():
                self.made.append(InnerCall(purpose, target, None, 0.0, status="privacy"))
                raise InnerCallError(f"{purpose}: the privacy policy keeps this step's context off the cloud")
            await privacy.scan_deferred()
            body = {**body, "messages": privacy.outgoing(body.get("messages") or [])}
        payload = {**body, **upstream.settings.inner_call_params, "model": upstream.model, "stream": False}
        payload.pop("stream_options", None)
        try:
            reply = await upstream.send(orjson.dumps(payload), stream=False, trajectory_id=self._trajectory_id)
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
            return privacy.redactor().restore_answer(answer)
        result: dict[str, Any] = answer
        return result
