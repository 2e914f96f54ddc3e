"""The decide stage: where the step goes and why. With an edge pool, the step is placed first
(its replicas, its home first, where its inner edge calls go). What may forbid the cloud, highest first:
the route's privacy policy, then its constraints (the pin included); only then the
`x-tandem-target` header, then the strategy; with an edge pool, the edge's load last. A
strategy's verdicts on its inner calls go into the step's ledger here. Then privacy's part of
the decision: a sensitive step bound for the cloud is refused where the route blocks, a
trajectory kept local is pinned, and what the strategy's inner cloud calls exposed is written.
An answer a strategy already holds becomes the step's outcome (nothing is forwarded)."""

from __future__ import annotations

import logging

from router import notes
from router.config.privacy import blocks
from router.edge_forward import for_load, place_step
from router.errors import GatewayError
from router.inner import InnerCallError
from router.policies.base import Decision, Reason, StepContext
from router.policies.constraints import cloud_refusal, constrain
from router.privacy.at_rest import kept_text
from router.privacy.redact import kind_of
from router.step import Prepared, Step

from .stage import Parts, Stage

log = logging.getLogger("tandem")


class Decide(Stage):
    name = "decide"

    def __init__(self, parts: Parts) -> None:
        self._store = parts.tracker.store
        self._metrics = parts.metrics
        self._pool = parts.edge_pool

    async def request(self, step: Step) -> None:
        route, identity, guard, forced = step.route, step.identity, step.privacy, step.inputs.forced
        if self._pool is not None:
            step.placement = await place_step(self._pool, identity, self._store, self._metrics)
            step.calls.send_edge_to(self._pool, step.placement.replicas)
        privacy_refusal = None if guard.allows_cloud() or blocks(guard.mode) else Reason.PRIVACY
        refusal = privacy_refusal or cloud_refusal(route.settings.constraints, identity.trajectory, identity.step)
        if forced is not None:
            decision = constrain(Decision(target=forced, reason=Reason.HEADER_FORCED), refusal)
        else:
            decision = constrain(await self._decide(step), refusal)
        if self._pool is not None:
            cloud_allowed = refusal is None and forced != "edge" and guard.allows_cloud()
            decision = await for_load(self._pool, step, decision, cloud_allowed, self._store, self._metrics)
        step.decision = decision
        await self._enforce_privacy(step)
        # Whatever forbids the cloud also forbids failing over to it, and so does a header
        # that asked for the edge.
        step.cloud_forbidden = refusal is not None or forced == "edge" or not guard.allows_cloud()
        if decision.answer is not None:
            step.outcome = Prepared(decision.answer)

    async def _enforce_privacy(self, step: Step) -> None:
        """Block a sensitive cloud step, pin a trajectory kept local, count inner exposure."""
        guard, decision, route = step.privacy, step.decision, step.route
        if decision.target == "cloud" and blocks(guard.mode) and guard.sensitive:
            kinds = sorted({kind_of(p) for p in guard.vault.values()}) or ["unknown (detection failed)"]
            guard.count_blocked(step.request.messages)
            raise GatewayError(
                403,
                f"the privacy policy of route {route.name!r} blocks this step: its context holds sensitive "
                f"values ({', '.join(kinds)}) and the step was to go to the cloud",
                type="permission_error",
                code="privacy_blocked",
                policy_refusal=True,
            )
        if decision.reason == Reason.PRIVACY and route.settings.pin_when_sensitive:
            await self._store.note(guard.trajectory_id, notes.PIN, "edge")
        await guard.commit()

    async def _decide(self, step: Step) -> Decision:
        route, identity = step.route, step.identity
        context = StepContext(
            route.name,
            identity.trajectory_id,
            identity.step,
            step.request,
            identity.trajectory,
            step.calls,
            self._store,
            self._metrics,
        )
        try:
            decision = await route.policy.decide(context)
        except InnerCallError as error:
            # Strategies fall back themselves where they can; this catches the rest, so that
            # the agent still gets an answer, and says why in the record and the metrics.
            self._metrics.policy_failures.labels(route.name, "inner_call").inc()
            # The error quotes the upstream's answer: on a sensitive route, with placeholders.
            log.warning("route %s: %s; falling back to the edge", route.name, kept_text(step.privacy, str(error)))
            return Decision(target="edge", reason=Reason.INNER_FAILED)
        if decision.verdicts:  # the strategy's verdicts on its calls, into the ledger
            step.calls.judge(decision.verdicts)
        return decision
