"""The engine: one chat step from request to result — route, decide, forward with failover.

It speaks no HTTP. The API surfaces parse their request into a `ChatRequest`, call
`Engine.run`, and turn the `StepResult` into their own responses; everything a step goes
through is here, in order; its result and its record are made by `router.answers`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from judge.card import JudgeModelError  # not judge.model: that imports onnxruntime (~30 MB) for every gateway
from router import notes
from router.aliases import aliased_route
from router.answers import Answers
from router.audit import AuditLog
from router.config.privacy import blocks, protects, redacts
from router.context import cloud_context
from router.edge_forward import build_pool, for_load, place_step, send_pooled
from router.edge_pool import EdgePool
from router.edge_scrape import Scraper
from router.errors import GatewayError
from router.inner import InnerCallError, InnerCalls
from router.metrics import Metrics
from router.policies.base import Decision, Reason, StepContext, Target, other_target
from router.policies.constraints import cloud_refusal, constrain
from router.policies.registry import build_policy
from router.privacy.at_rest import kept_text
from router.privacy.guard import PrivacyGuard
from router.privacy.memo import PrivacyMemo
from router.privacy.redact import kind_of
from router.privacy.reported import reported_kinds
from router.privacy.runs import RoutePrivacy
from router.privacy.vault import VaultCipher, VaultKeyError
from router.protocol.chat import ChatRequest
from router.protocol.prefix import PrefixParser
from router.result import Failure, StepMeta, StepResult
from router.route_series import SeriesScope
from router.settings import ConfigError, Settings
from router.step import Route, Step
from router.trajectory.tracker import Tracker
from router.transport import Transport
from router.upstream import Upstream, UpstreamFailure, UpstreamReply

log = logging.getLogger("tandem")
TARGET_HEADER = "x-tandem-target"
# A step's decision until its strategy (or the header) has made one.
UNDECIDED = Decision(target="edge", reason=Reason.UNDECIDED)


async def _measure_anyway(step: Step, messages: list[dict[str, Any]]) -> None:
    try:
        await step.privacy.measure(messages)
    except Exception:
        log.exception("privacy: counting what a cancelled cloud call sent failed")


def build_vault(settings: Settings) -> VaultCipher:
    """The key that seals the privacy vault; required when the vault would sit in Redis."""
    try:
        return VaultCipher.from_env(settings.vault.key_env, required=settings.redis_url is not None)
    except VaultKeyError as exc:
        raise ConfigError(str(exc)) from exc


def build_routes(settings: Settings) -> dict[str, Route]:
    """Each route with its policy built (a judge's model loaded and checked): the start-up
    error of a route that cannot be built names the route."""
    routes = {}
    for name, route in settings.routes.items():
        try:
            policy = build_policy(route)
        except (ValueError, JudgeModelError) as exc:
            raise ConfigError(f"routes.{name}.{route.strategy}: {exc}") from exc
        routes[name] = Route(name, route, policy)
    return routes


class Engine:
    """The routing core: upstreams, routes, trajectory state and metrics of one process."""

    def __init__(
        self,
        settings: Settings,
        metrics: Metrics | None = None,
        transports: Mapping[str, Transport] | None = None,
    ) -> None:
        """`transports`: a transport per upstream name, to use instead of the pooled ones the
        engine opens itself (the in-process tests script their upstreams so)."""
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.metrics.describe(SeriesScope.of(settings, reported_kinds(settings)))
        transports = transports or {}
        self.upstreams = {
            name: Upstream(name, s, settings.limits, self.metrics.limit_hit, transports.get(name))
            for name, s in settings.upstreams.items()
        }
        # The edge's replicas, when it lists several (`endpoints`); the first is `upstreams["edge"]`.
        self.edge_pool: EdgePool | None = build_pool(settings, self.upstreams["edge"], self.metrics)
        pool_settings = settings.upstreams["edge"].pool
        self.edge_scraper = (
            Scraper(
                self.edge_pool, pool_settings.scrape_interval_s, pool_settings.metrics_path, self.refresh_edge_series
            )
            if self.edge_pool is not None
            else None
        )
        self.routes = build_routes(settings)
        self.vault = build_vault(settings)
        # What the privacy stage learned of each trajectory's messages, kept between its steps.
        self.privacy_memo = PrivacyMemo(settings.vault.memory_bytes)
        privacy = RoutePrivacy(settings.routes, settings.privacy_weights)
        self.tracker = Tracker(settings, self.metrics, privacy, journal_key=self.vault.journal_key)
        self.audit = AuditLog(settings.audit, self.metrics, settings.trajectories.idle_close_s)
        self.answers = Answers(settings, self.upstreams, self.metrics, self.audit, self.tracker)
        # How deep a request's JSON may nest (`limits.max_json_depth`).
        self.max_json_depth = settings.limits.max_json_depth
        # Chat bodies parsed from the trajectory's last body when they extend it (new bytes only).
        self.parser = PrefixParser(settings.limits.reuse_parse_bytes, self.max_json_depth)
        self.loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        for upstream in self._all_upstreams():
            await upstream.start()
        await self.tracker.start()
        self.audit.start()
        if self.edge_scraper is not None:
            self.edge_scraper.start()

    async def close(self) -> None:
        # Order matters: finish recording before the store and the audit log go away; shadow
        # calls still in flight are dropped (they never affect an answer).
        await self.answers.shadow.aclose()
        if self.edge_scraper is not None:
            await self.edge_scraper.close()
        await self.tracker.aclose()
        self.audit.close()
        for upstream in self._all_upstreams():
            await upstream.close()

    def refresh_edge_series(self) -> None:
        """Set the edge pool's gauges from the pool as it stands (after each read of the
        replicas' metrics, and on a /metrics scrape)."""
        if self.edge_pool is not None:
            full_waiting = min(route.settings.edge_full_waiting for route in self.routes.values())
            self.metrics.edge.refresh(self.edge_pool, full_waiting)

    def _all_upstreams(self) -> list[Upstream]:
        pooled = [r.upstream for r in self.edge_pool.replicas[1:]] if self.edge_pool is not None else []
        return [*self.upstreams.values(), *pooled]

    def route_for(self, model: str) -> Route:
        route = self.routes.get(model) or aliased_route(self.routes, self.settings.model_aliases, model)
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

    def refused(self, error: GatewayError) -> Failure:
        """A request refused before it became a step (unreadable, unknown model, bad header)."""
        self.metrics.bad_requests.labels(error.code or "invalid_request").inc()
        return Failure.of(error)

    async def run(self, request: ChatRequest, meta: StepMeta) -> StepResult:
        """One step. A client that leaves cancels it (once `meta.on_begun` has been called);
        it still ends with its one record."""
        started = time.perf_counter()
        started_at = time.time()
        try:
            route = self.route_for(request.model)
            forced = self._forced_target(meta.headers)
        except GatewayError as exc:
            return self.refused(exc)
        try:
            identity = await self.tracker.begin(request, meta.headers, meta.session, meta.namespace, route.name)
        except GatewayError as exc:  # the store refuses steps, or the client is over its limits
            return Failure.of(exc)
        notes = identity.trajectory.notes
        guard = PrivacyGuard(
            route.settings.privacy,
            identity.trajectory_id,
            notes,
            self.tracker.store,
            self.metrics,
            self.tracker.spawn,
            cipher=self.vault,
            route=route.name,
            memo=self.privacy_memo,
            born=identity.trajectory.created_at,
            vault_size=identity.trajectory.vault_size,
            optional=frozenset(route.settings.privacy_detect),
        )
        calls = InnerCalls(self.upstreams, guard, self.metrics, identity.trajectory_id)
        step = Step(route, request, identity, UNDECIDED, started, started_at, calls, guard)
        try:
            if meta.on_begun is not None:
                meta.on_begun()
            result = await self._step(step, forced)
            # During an outage with the journal on disk, nothing is answered before the step
            # (its start, and its record unless it streams: a stream's is kept before its
            # [DONE], router/streaming.py) is there; at once otherwise.
            await self.tracker.kept(step.ticket)
            return result
        except GatewayError as exc:
            # A refusal after the step began (a privacy block): recorded, then answered.
            if not step.recorded:
                self.answers.aborted(step, exc)
            facts = step.facts(step.upstream or step.decision.target, step.fallback)
            await self.tracker.kept(step.ticket)
            return Failure.of(exc, facts)
        except BaseException as exc:
            # Every begun step ends with one record: a failure of the gateway, a client that left.
            if not step.recorded:
                self.answers.aborted(step, exc)
            raise

    async def _step(self, step: Step, forced: Target | None) -> StepResult:
        route, identity, guard = step.route, step.identity, step.privacy
        if self.edge_pool is not None:
            step.placement = await place_step(self.edge_pool, identity, self.tracker.store, self.metrics)
            step.calls.send_edge_to(step.placement.replicas[0].upstream)
        if protects(guard.mode):
            await guard.scan(step.request.messages, step.request.raw)  # the policy below needs what the context holds
        else:
            guard.defer_scan(step.request.messages, step.request.raw)  # measured only if (and when) the cloud gets it
        # What may forbid the cloud, highest first: the route's privacy policy, then its
        # constraints (the pin included); only then the x-tandem-target header, then the strategy.
        privacy_refusal = None if guard.allows_cloud() or blocks(guard.mode) else Reason.PRIVACY
        refusal = privacy_refusal or cloud_refusal(route.settings.constraints, identity.trajectory, identity.step)
        if forced is not None:
            decision = constrain(Decision(target=forced, reason=Reason.HEADER_FORCED), refusal)
        else:
            context = StepContext(
                route.name,
                identity.trajectory_id,
                identity.step,
                step.request,
                identity.trajectory,
                step.calls,
                self.tracker.store,
                self.metrics,
            )
            decision = constrain(await self._decide(route, context, guard), refusal)
        if self.edge_pool is not None:
            cloud_allowed = refusal is None and forced != "edge" and guard.allows_cloud()
            decision = await for_load(self.edge_pool, step, decision, cloud_allowed, self.tracker.store, self.metrics)
        step.decision = decision
        await self._enforce_privacy(route, guard, decision, step.request.messages)
        # Whatever forbids the cloud also forbids failing over to it, and so does a header
        # that asked for the edge.
        step.cloud_forbidden = refusal is not None or forced == "edge" or not guard.allows_cloud()
        if decision.answer is not None:
            return self.answers.prepared(step, decision.answer)
        return await self._forward(step)

    async def _enforce_privacy(
        self, route: Route, guard: PrivacyGuard, decision: Decision, messages: list[dict[str, Any]]
    ) -> None:
        """Block a sensitive cloud step, pin a trajectory kept local, count inner exposure."""
        if decision.target == "cloud" and blocks(guard.mode) and guard.sensitive:
            kinds = sorted({kind_of(p) for p in guard.vault.values()}) or ["unknown (detection failed)"]
            guard.count_blocked(messages)
            raise GatewayError(
                403,
                f"the privacy policy of route {route.name!r} blocks this step: its context holds sensitive "
                f"values ({', '.join(kinds)}) and the step was to go to the cloud",
                type="permission_error",
                code="privacy_blocked",
                policy_refusal=True,
            )
        if decision.reason == Reason.PRIVACY and route.settings.pin_when_sensitive:
            await self.tracker.store.note(guard.trajectory_id, notes.PIN, "edge")
        await guard.commit()

    async def _decide(self, route: Route, context: StepContext, guard: PrivacyGuard) -> Decision:
        try:
            decision = await route.policy.decide(context)
        except InnerCallError as error:
            # Strategies fall back themselves where they can; this catches the rest, so that
            # the agent still gets an answer, and says why in the record and the metrics.
            self.metrics.policy_failures.labels(route.name, "inner_call").inc()
            # The error quotes the upstream's answer: on a sensitive route, with placeholders.
            log.warning("route %s: %s; falling back to the edge", route.name, kept_text(guard, str(error)))
            return Decision(target="edge", reason=Reason.INNER_FAILED)
        return decision

    def _forced_target(self, headers: Mapping[str, str]) -> Target | None:
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

    async def _forward(self, step: Step) -> StepResult:
        first = step.decision.target
        targets: tuple[Target, ...] = (first, other_target(first)) if step.route.settings.failover else (first,)
        if step.cloud_forbidden:
            # Privacy, a constraint or the header kept the step off the cloud: no failover there.
            targets = ("edge",)
        if "cloud" not in targets:
            # No cloud call is left to make: the step's hold of its key's cloud dollars goes
            # back now, not when a long edge answer ends (its inner calls are settled then).
            self.tracker.release(step.identity)
        failures: list[UpstreamFailure] = []
        for attempt, target in enumerate(targets):
            upstream = self.upstreams[target]
            step.upstream = None
            raw = await self._raw_for(step, target)
            if target == "cloud" and step.sent_encoded is not None:
                body, dropped = step.request.body_with_messages(
                    upstream.model, upstream.drop_params, raw, step.sent_encoded
                )
            else:
                body, dropped = step.request.upstream_body(upstream.model, upstream.drop_params, raw)
            for key in dropped:
                self.metrics.dropped_params.labels(upstream.name, key).inc()
            step.upstream, step.upstream_bytes, step.fallback = target, len(body), attempt > 0
            try:
                if target == "cloud" and not redacts(step.privacy.mode):
                    reply = await self._send_measured(step, upstream, body, raw["messages"])
                elif target == "edge" and self.edge_pool is not None:
                    reply = await send_pooled(self.edge_pool, step, body, self.tracker.store, self.metrics)
                else:
                    reply = await upstream.send(body, step.request.stream, trajectory_id=step.trajectory_id)
            except UpstreamFailure as failure:
                self.metrics.upstream_errors.labels(upstream.name, failure.kind).inc()
                failures.append(failure)
                step.failures.append((target, failure.kind, failure.status))
                if attempt + 1 < len(targets):
                    self.metrics.fallbacks.labels(step.route.name, target, targets[attempt + 1], failure.kind).inc()
                continue
            fallback = attempt > 0
            if reply.stream is not None:
                return self.answers.stream(step, target, fallback, reply, len(body))
            return self.answers.plain(step, target, fallback, reply)
        return self.answers.failure(step, targets[-1], len(targets) > 1, failures)

    async def _raw_for(self, step: Step, target: Target) -> dict[str, Any]:
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
            step.sent_to_cloud = raw["messages"]
            if redacts(step.privacy.mode):
                sent = step.privacy.outgoing(raw["messages"])
                if sent is not raw["messages"]:  # else the body can go as the client's bytes
                    raw = {**raw, "messages": sent}
                step.sent_to_cloud = sent
                step.sent_encoded = step.privacy.outgoing_encoded
                fields = step.privacy.outgoing_fields(raw)  # user, metadata, tool descriptions…
                if fields:
                    raw = {**raw, **fields}
                await step.privacy.commit()
        return raw

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
                self.tracker.spawn(_measure_anyway(step, messages))
                raise

        return await upstream.send(body, step.request.stream, sent=measure, trajectory_id=step.trajectory_id)
