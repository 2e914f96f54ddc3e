"""The engine: one chat step from request to result, as a chain of stages (router/chain/).

It speaks no HTTP. The API surfaces hand it a request's body (`Engine.chat`, or
`Engine.translated` for a surface that translates its own) and turn the `StepResult` into
their own responses; `Engine.run` takes a request already parsed. The stages, in order,
are in `router.chain.STAGES`; the result and the record are made by `router.answers`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from judge.card import JudgeModelError  # not judge.model: that imports onnxruntime (~30 MB) for every gateway
from router.answers import Answers
from router.audit import AuditLog
from router.chain import Parts, StageTimes, build_chain
from router.chain.run import times_wanted
from router.edge.pool import EdgePool
from router.edge.scrape import Scraper
from router.edge_forward import build_pool
from router.errors import GatewayError
from router.metrics.core import Metrics
from router.metrics.route_series import SeriesScope
from router.policies.registry import build_policy
from router.privacy import opt_in
from router.privacy.memo import PrivacyMemo
from router.privacy.parts import PrivacyParts
from router.privacy.reported import reported_kinds
from router.privacy.runs import RoutePrivacy
from router.privacy.vault import VaultCipher, VaultKeyError
from router.protocol.chat import ChatRequest
from router.protocol.prefix import PrefixParser
from router.protocol.prefix_translated import SurfaceSpec
from router.result import Failure, StepMeta, StepResult
from router.settings import ConfigError, Settings
from router.step import Route
from router.trajectory.tracker import Tracker
from router.transport import Transport
from router.upstream import Upstream

# A surface's reading of a body in the place of another (Engine.translated).
Resume = Callable[[dict[str, Any]], Awaitable[bytes | None]]


@dataclass(slots=True)
class TranslatedStep:
    """A translating surface's step: the chat body its request became, as the surface's answer
    reads it (`Translated.view`; None when it could not be read), the step's result, and the
    surface's body as read (None when it could not be read)."""

    chat: dict[str, Any] | None
    request: ChatRequest | None
    result: StepResult
    body: dict[str, Any] | None = None


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
            name: Upstream(
                name, s, settings.limits, self.metrics.limit_hit, transports.get(name), self.metrics.calls_of(name)
            )
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
        # The streams and the steps waiting for their answer, which a stopping gateway ends itself:
        # the handlers' disconnect watch registers each step here (router/api/disconnect.py).
        self.open_steps = self.answers.streams
        # How deep a request's JSON may nest (`limits.max_json_depth`), how long its body may be.
        self.max_json_depth = settings.limits.max_json_depth
        self.max_body_bytes = settings.max_body_bytes
        # Chat bodies parsed from the trajectory's last body when they extend it (new bytes only).
        self.parser = PrefixParser(settings.limits.reuse_parse_bytes, self.max_json_depth)
        shared = PrivacyParts(self.tracker.store, self.metrics, self.tracker.spawn, self.vault, self.privacy_memo)
        parts = Parts(
            settings,
            self.routes,
            self.upstreams,
            self.metrics,
            self.tracker,
            self.audit,
            self.answers,
            shared,
            self.edge_pool,
        )
        # Per-stage CPU times, kept only when asked for (`TANDEM_STAGE_TIMES=1`).
        self.stage_times = StageTimes() if times_wanted() else None
        self.chain = build_chain(parts, self.stage_times)
        self.loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        asked = frozenset(kind for route in self.routes.values() for kind in route.settings.privacy_detect)
        if asked:
            opt_in.prepare(asked)  # before the first request, not in it (opt_in.py)
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
            waits = [route.settings.edge_full_wait_s for route in self.routes.values()]
            full_wait_s = min((wait for wait in waits if wait is not None), default=None)
            self.metrics.edge.refresh(self.edge_pool, full_waiting, full_wait_s)

    def _all_upstreams(self) -> list[Upstream]:
        pooled = [r.upstream for r in self.edge_pool.replicas[1:]] if self.edge_pool is not None else []
        return [*self.upstreams.values(), *pooled]

    def route_for(self, model: str) -> Route:
        """The route a model name selects (an alias, the unknown-model route); a 404 else."""
        return self.chain.identify.route_for(model)

    def refused(self, error: GatewayError) -> Failure:
        """A request refused before it became a step (unreadable, unknown model, bad header)."""
        return self.chain.identify.refused(error)

    async def chat(self, body: bytes, meta: StepMeta) -> StepResult:
        """One step of a chat completions request's body: parsed (from the trajectory's last
        body where it extends it), then run; an unreadable body is refused."""
        times = self.stage_times
        began = time.thread_time_ns() if times is not None else 0
        try:
            request = self.parser.parse(body, meta.namespace)
        except GatewayError as exc:
            return self.refused(exc)
        if times is not None:
            times.add("parse", time.thread_time_ns() - began)
        return await self.run(request, meta)

    async def translated(
        self, spec: SurfaceSpec, body: bytes, meta: StepMeta, resume: Resume | None = None
    ) -> TranslatedStep:
        """One step of another surface's request body (`spec`: how it becomes a chat body).
        `resume`: given the body as read, another body to read in its place (a conversation
        continued from a kept response, whole), or None."""
        try:
            # Parsed from the trajectory's last body where it extends it (new turns only).
            parser = self.parser.translated(spec)
            translated = parser.parse(body, meta.namespace)
            if resume is not None:
                whole = await resume(translated.body)
                if whole is not None:
                    translated = parser.parse(whole, meta.namespace)
        except GatewayError as exc:
            # Refused before it became a step, as the chat path counts its own refusals.
            return TranslatedStep(None, None, self.refused(exc))
        result = await self.run(translated.request, meta)
        return TranslatedStep(translated.view, translated.request, result, translated.body)

    async def run(self, request: ChatRequest, meta: StepMeta) -> StepResult:
        """One step. A client that leaves cancels it (once `meta.on_begun` has been called);
        it still ends with its one record."""
        started = time.perf_counter()
        started_at = time.time()
        times = self.stage_times
        began = time.thread_time_ns() if times is not None else 0
        step = await self.chain.identify.open(request, meta, started, started_at)
        if times is not None:
            times.add("identify", time.thread_time_ns() - began)
        if isinstance(step, Failure):
            return step
        try:
            if meta.on_begun is not None:
                meta.on_begun()
            result = await self.chain.run(step)
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
