"""Shadow labelling: agreement labels for the judge from live traffic, off the request path.

For a sampled step of a route with `shadow: {rate, budget_usd_per_day}` (any strategy), once the
step's answer has been sent to the client, the other target is asked the same question (the
same messages and tools, non-streamed, `max_tokens` bounded) and the two actions are compared
with the judge's own classifier (`judge/actions.py`). The result is kept as a trajectory note,
`shadow:<step>` = `{target, action, own_action, agree, cost_usd, usage}` (plus the step's judge
features when the route does not record them), which the judge-row export turns into the row's
`shadow` field and its `edge_wrong` label.

The client never sees any of it: the call starts after the response is sent (a Starlette
background task that only spawns it), and a shadow call that fails, hangs or is refused is
counted (`tandem_shadow_calls_total`) and changes nothing. The cloud is asked only what the
route's privacy allows: nothing on a `keep_local`/`block` step with sensitive values (or a
trajectory pinned to the edge), the redacted messages and other fields (`user`, `metadata`,
tool descriptions…) on `redact`. Its dollars are booked in the
cost metrics as `call="shadow"` and in the note, never in the trajectory's totals: they count
neither against `constraints.budget_usd` nor in the savings. The daily budget is per process,
or shared by the replicas through Redis (`INCRBYFLOAT` on a per-day key) when `redis_url` is set.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
import redis.exceptions

from judge.actions import message_action
from router import notes
from router.config.privacy import redacts
from router.config.routes import ShadowSettings
from router.ledger import StepRecord, cost_usd
from router.policies.base import Reason, StepFacts, Target, other_target
from router.privacy.at_rest import kept_text
from router.protocol.text import first_message
from router.protocol.usage import Usage
from router.result import After
from router.upstream import Upstream, UpstreamFailure

if TYPE_CHECKING:
    from collections.abc import Mapping

    from router.metrics.core import Metrics
    from router.settings import Settings
    from router.step import Step
    from router.trajectory.store import TrajectoryStore

log = logging.getLogger("tandem.shadow")
DAY_S = 86_400
# Shadow calls in flight per process: each holds its step's request; a slow upstream must not
# let them pile up (beyond this, a drawn step is counted `busy` and not shadowed).
MAX_IN_FLIGHT = 64


class ShadowBudget:
    """Shadow dollars per route and UTC day: in this process, or in Redis for every replica."""

    def __init__(self, redis_client: Any | None = None, prefix: str = "tandem:") -> None:
        self._redis = redis_client
        self._prefix = prefix
        self._local: dict[tuple[str, int], float] = {}

    def _key(self, route: str, day: int) -> str:
        return f"{self._prefix}shadow_usd:{route}:{day}"

    async def spent(self, route: str, now: float | None = None) -> float:
        day = int((time.time() if now is None else now) // DAY_S)
        if self._redis is not None:
            try:
                value = await self._redis.get(self._key(route, day))
                return float(value or 0) + self._local.get((route, day), 0.0)
            except (redis.exceptions.RedisError, OSError) as exc:
                log.warning("shadow budget: Redis failed (%s); counting in this process", exc)
        return self._local.get((route, day), 0.0)

    async def charge(self, route: str, usd: float, now: float | None = None) -> None:
        if usd <= 0:
            return
        day = int((time.time() if now is None else now) // DAY_S)
        if self._redis is not None:
            try:
                key = self._key(route, day)
                async with self._redis.pipeline(transaction=True) as pipe:
                    pipe.incrbyfloat(key, usd)
                    pipe.expire(key, 2 * DAY_S)
                    await pipe.execute()
                return
            except (redis.exceptions.RedisError, OSError) as exc:
                log.warning("shadow budget: Redis failed (%s); counting in this process", exc)
        self._local[(route, day)] = self._local.get((route, day), 0.0) + usd
        for old in [k for k in self._local if k[1] < day - 1]:
            del self._local[old]


def agree(own: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether two answers to one state take the same action: the same action type and the
    same tools called (a text answer and a tool call never agree)."""

    def tools(message: dict[str, Any]) -> list[str]:
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            return []
        functions = [call.get("function") for call in calls if isinstance(call, dict)]
        return sorted(str(f.get("name")).lower() for f in functions if isinstance(f, dict) and f.get("name"))

    def calls(message: dict[str, Any]) -> bool:
        return bool(message.get("tool_calls"))

    return calls(own) == calls(other) and message_action(own) == message_action(other) and tools(own) == tools(other)


def shadow_body(raw: dict[str, Any], max_tokens: int, drop: frozenset[str]) -> dict[str, Any]:
    """The step's request as the other target is asked it: not streamed, its answer bounded
    (`max_completion_tokens`: OpenAI's reasoning models refuse `max_tokens`; vLLM takes both)."""
    body = {k: v for k, v in raw.items() if k not in drop and k not in ("stream", "stream_options", "n")}
    asked = [v for v in (body.pop("max_tokens", None), body.pop("max_completion_tokens", None)) if isinstance(v, int)]
    body["max_completion_tokens"] = min([max_tokens, *asked])
    return body


@dataclass(slots=True)
class Job:
    step: Step
    record: StepRecord
    message: dict[str, Any]  # the answer the client got
    settings: ShadowSettings


class Shadow:
    def __init__(
        self,
        upstreams: Mapping[str, Upstream],
        metrics: Metrics,
        store: TrajectoryStore,
        budget: ShadowBudget,
        draw: Any = random.random,
    ) -> None:
        self._upstreams = upstreams
        self._metrics = metrics
        self._store = store
        self.budget = budget
        self._draw = draw
        self._tasks: set[asyncio.Task[None]] = set()

    def after(self, step: Step, record: StepRecord, message: dict[str, Any]) -> After | None:
        """What starts a sampled step's shadow once its answer is sent;
        None when the step is not shadowed (no `shadow` on the route, not answered, not drawn)."""
        settings = step.route.settings.shadow
        if settings is None or record.status != "ok" or record.http_status >= 300 or record.fallback:
            return None
        if self._draw() >= settings.rate:
            return None
        job = Job(step, record, message, settings)

        async def launch() -> None:
            await self.launch(job)

        return launch

    async def launch(self, job: Job) -> None:
        """Start the shadow call and return at once (the response's background runs it)."""
        if len(self._tasks) >= MAX_IN_FLIGHT:
            self._count(job, other_target(job.record.target), "busy")  # type: ignore[arg-type]
            return
        task = asyncio.create_task(self.run(job), name="tandem-shadow")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """At shutdown: shadow calls in flight are dropped, not waited for."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _count(self, job: Job, target: str, outcome: str) -> None:
        self._metrics.shadow_calls.labels(job.record.route, target, outcome).inc()

    async def run(self, job: Job) -> None:
        step, record, settings = job.step, job.record, job.settings
        target: Target = other_target(record.target)  # type: ignore[arg-type]
        guard = step.privacy
        if target == "cloud" and (not guard.allows_cloud() or step.decision.reason in (Reason.PRIVACY, Reason.PINNED)):
            self._count(job, target, "private")
            return
        if await self.budget.spent(record.route) >= settings.budget_usd_per_day:
            self._count(job, target, "over_budget")
            return
        try:
            answer, usage, cost = await asyncio.wait_for(self._ask(job, target), settings.timeout_s)
        except Exception as exc:  # whatever went wrong, the step's answer is long gone: count it
            said = kept_text(guard, str(exc))  # it may quote the upstream: placeholders on a sensitive route
            log.info("shadow call of %s step %d to the %s failed: %s", record.trajectory_id, record.step, target, said)
            self._count(job, target, "failed")
            return
        await self.budget.charge(record.route, cost)
        self._metrics.shadow_spent(record.route, target, usage, cost)
        other = first_message(answer)
        agreed = agree(job.message, other)
        entry: dict[str, Any] = {
            "target": target,
            "action": message_action(other).value,
            "own_action": message_action(job.message).value,
            "agree": agreed,
            "cost_usd": cost,
            "usage": None if usage is None else [usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens],
        }
        if record.features is None:
            entry["features"] = _features(step)
        await self._store.note(record.trajectory_id, notes.shadow(record.step), orjson.dumps(entry).decode())
        self._count(job, target, "agree" if agreed else "disagree")

    async def _ask(self, job: Job, target: Target) -> tuple[dict[str, Any], Usage | None, float]:
        """One non-streamed completion from `target`, with the route's privacy applied."""
        step = job.step
        upstream = self._upstreams[target]
        body = shadow_body(step.request.raw, job.settings.max_tokens, upstream.drop_params)
        redacting = False
        if target == "cloud":
            await step.privacy.scan_deferred()
            body["messages"] = step.privacy.outgoing(body.get("messages") or [])
            redacting = redacts(step.privacy.mode)
            # And the request's other fields (`user`, `metadata`, tool descriptions…), as the
            # step's own cloud call gets them (router/chain/redact.py).
            body.update(step.privacy.outgoing_fields(body))
            await step.privacy.commit()  # what reached the cloud, on an `allow` route
        payload = {**body, "model": upstream.model, "stream": False}
        try:
            reply = await upstream.send(orjson.dumps(payload), stream=False)
        except UpstreamFailure as failure:
            raise RuntimeError(f"{failure.kind}: {failure.detail}") from failure
        answer = orjson.loads(reply.body) if reply.status < 300 else None
        if not isinstance(answer, dict) or not answer.get("choices"):
            raise RuntimeError(f"HTTP {reply.status}: {reply.body[:200]!r}")
        usage = Usage.from_openai(answer.get("usage"))
        cost = cost_usd(usage, upstream.settings.prices) if usage is not None else 0.0
        if redacting:
            answer = step.privacy.answer_redactor().restore_answer(answer)
        return answer, usage, cost


def _features(step: Step) -> list[float] | None:
    """The judge's state features of a step whose route does not compute them, so that a
    shadowed step of any strategy gives a judge row."""
    try:
        from judge.features import step_features
        from router.policies.judge import counters_of

        identity = step.identity
        context = StepFacts(step.route.name, identity.trajectory_id, identity.step, step.request, identity.trajectory)
        values = step_features(step.request.messages, counters_of(context), step.request.raw.get("tools"))
        return [round(float(v), 5) for v in values]
    except Exception:
        log.exception("shadow: the step's features could not be computed")
        return None


def build_shadow(
    settings: Settings, upstreams: Mapping[str, Upstream], metrics: Metrics, store: TrajectoryStore
) -> Shadow:
    """The gateway's shadow labeller; its budget in Redis when the store is shared."""
    from router.trajectory.resilient import ResilientStore

    client = store.primary.client if isinstance(store, ResilientStore) else None
    return Shadow(upstreams, metrics, store, ShadowBudget(client, settings.redis_prefix))
