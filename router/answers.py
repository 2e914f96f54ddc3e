"""Ending a step (the record stage, router/chain/record.py): the result the client gets
(relayed plain or streamed, an inner call's prepared answer, a failure) and the step's one
record: cost, counterfactual, metrics, audit."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import orjson

from router.audit import AuditLog
from router.errors import GatewayError
from router.fault_log import FAULTS
from router.judge_rows import action_of, excerpt_of, streamed_message
from router.ledger import (
    CACHE_NOTE,
    StepRecord,
    Usage,
    all_cloud_cached,
    cost_usd,
    estimate_usage,
    read_cache_note,
)
from router.metrics.core import Metrics
from router.policies.base import PreparedAnswer, Target
from router.privacy.at_rest import audit_content, kept_text
from router.protocol.chat import answer_of, completion_to_sse
from router.protocol.text import first_message
from router.protocol.upstream_error import read_error
from router.result import After, Answer, Failure, StepResult, Stream
from router.settings import Settings
from router.shadow import build_shadow
from router.step import Step
from router.streaming import STEP_SHUT_DOWN, OpenStreams, StreamOutcome, relay
from router.trajectory import identify
from router.trajectory.recorder import settle
from router.trajectory.tracker import Tracker
from router.upstream import Upstream, UpstreamFailure, UpstreamReply

log = logging.getLogger("tandem")


async def _once(data: bytes) -> AsyncGenerator[bytes, None]:
    yield data


def _answer_key(step: Step, message: dict[str, Any], completion: dict[str, Any]) -> str | None:
    """The answer's identity, for a stitched step only (a session names the others' runs):
    `message` its first choice's, `completion` the whole answer (every choice's, with `n` > 1)."""
    if step.identity.stitch_key is None:
        return None
    return identify.completion_answer_key(completion, message)


class Answers:
    """The end of every step: its result, and its one record."""

    def __init__(
        self,
        settings: Settings,
        upstreams: Mapping[str, Upstream],
        metrics: Metrics,
        audit: AuditLog,
        tracker: Tracker,
    ) -> None:
        self.settings = settings
        self.upstreams = upstreams
        self.metrics = metrics
        self.audit = audit
        self.tracker = tracker
        self.shadow = build_shadow(settings, upstreams, metrics, tracker.store)
        self.streams = OpenStreams()  # the streams being relayed (a stopping gateway ends them)

    def _answered(self, step: Step, record: StepRecord, message: dict[str, Any]) -> None:
        """What a judge row needs of an answered step, when the route records features."""
        if record.features is not None:
            record.action = action_of(message)
            record.excerpt = excerpt_of(step.request.messages, step.privacy)

    def prepared(self, step: Step, answer: PreparedAnswer) -> StepResult:
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
        parsed = answer_of(answer.body)
        record.tools = parsed.tools
        message = first_message(answer.body)
        self._answered(step, record, message)
        usage = main.usage if main is not None else parsed.usage
        content = None
        if self.audit.wants_content and target == "cloud":
            # An inner call's answer comes back restored: the audit keeps placeholders.
            said, text = audit_content(step.privacy.mode, step.privacy.redactor(), step.request.messages, parsed.text)
            content = {"input": said, "output": text, "output_tools": parsed.tools}
        self._account(step, record, usage, content)
        self.tracker.answered(step.identity, record.status, _answer_key(step, message, answer.body), bool(record.tools))
        if record.status == "ok":
            self.tracker.spawned(step.identity, identify.calls_of(message))
        facts = step.facts(target, False)
        # Shadow labelling starts once the answer is sent.
        after = self._after(step, target, self.shadow.after(step, record, message))
        if answer.status >= 300:
            return Failure(answer.status, read_error(answer.status, orjson.dumps(answer.body)), facts)
        if step.request.stream:
            chunks = _once(completion_to_sse(answer.body))
            return Stream(facts, chunks, chunks.aclose, after)
        return Answer(facts, answer.body, orjson.dumps(answer.body), after)

    @staticmethod
    def _after(step: Step, target: Target, shadow: After | None) -> After | None:
        """What runs once the answer is out: a scan the privacy stage put off (`defer_scan`: a
        route that only measures scans an edge step's messages here, off the answer's path);
        on an edge step of a route that may send later steps to the cloud with their whole
        history, the privacy stage learning the step's messages (`PrivacyGuard.learn_ahead`), so
        that the next cloud step does not learn them on its own path; and the shadow call, if
        the step was drawn."""
        settings, guard, messages = step.route.settings, step.privacy, step.request.messages
        scan = guard.scan_waits
        learn = target == "edge" and settings.sends_to_cloud() and settings.context.mode == "full"
        if not (scan or learn):
            return shadow

        async def after() -> None:
            if scan:
                try:
                    await guard.scan_deferred()
                except Exception:  # the answer is out: a store failure here is the next step's to meet
                    log.exception("privacy: the scan of a step's messages after its answer failed")
            if learn:
                guard.learn_ahead(messages)
            if shadow is not None:
                await shadow()

        return after

    def plain(self, step: Step, target: Target, fallback: bool, reply: UpstreamReply) -> StepResult:
        record = self._new_record(step, target, fallback)
        record.http_status = reply.status
        record.status = "ok" if reply.status < 300 else "error"
        record.ttft_s = reply.first_byte_s
        usage = None
        content = None
        body = reply.body
        message: dict[str, Any] = {}
        parsed: dict[str, Any] = {}
        if reply.status < 300:
            restored = step.restored  # the restore stage's: the originals put back, and what the cloud said
            if restored is not None:
                parsed, body, said = restored.parsed, restored.body, restored.said
            else:
                parsed = reply.answer if reply.answer is not None else orjson.loads(body)
                said = None
            answer = answer_of(parsed)
            message = first_message(parsed)
            self._answered(step, record, message)
            usage = answer.usage
            if usage is None:
                usage = estimate_usage(step.request.size, len(answer.text.encode()))
            record.tools = answer.tools
            if self.audit.wants_content:
                said = said or answer
                content = {"input": step.sent_to_cloud, "output": said.text, "output_tools": said.tools}
            self.tracker.answered(step.identity, record.status, _answer_key(step, message, parsed), bool(record.tools))
            self.tracker.spawned(step.identity, identify.calls_of(message))
        else:
            self.tracker.answered(step.identity, "error", None)
        self._account(step, record, usage, content)
        facts = step.facts(target, fallback)
        if reply.status >= 300:
            # The upstream's refusal of the request itself (a 4xx), relayed as it said it.
            error = read_error(reply.status, body)
            return Failure(reply.status, error, facts, body=body, content_type=reply.content_type)
        estimated = usage if usage is not None and usage.source == "estimated" else None
        if estimated is not None and parsed:
            # The chat surface's client reads the usage too (smolagents fails on an answer
            # without it): the ledger's estimate, marked, as a stream's last chunk carries it.
            body = orjson.dumps({**parsed, "usage": estimated.to_openai()})
        after = self._after(step, target, self.shadow.after(step, record, message))
        return Answer(facts, parsed, body, after, estimated)

    def stream(self, step: Step, target: Target, fallback: bool, reply: UpstreamReply, prompt_bytes: int) -> Stream:
        assert reply.stream is not None
        record = self._new_record(step, target, fallback)
        record.ttft_s = reply.first_byte_s

        capture = self.audit.wants_content and target == "cloud"
        # A judge row or a shadow compares the answer's action: the relay keeps its text.
        wants_action = step.decision.features is not None or step.route.settings.shadow is not None
        ended = False
        shadow: list[Any] = []

        def on_end(outcome: StreamOutcome) -> None:
            nonlocal ended
            ended = True
            if step.lease is not None:
                step.lease.release()
            record.status = "cancelled" if outcome.cancelled else ("error" if outcome.error else "ok")
            record.error = outcome.error
            if outcome.failure is not None:
                # The upstream failed after its answer began: a failed call as one before it is
                # (the record's `failures`, `tandem_upstream_errors_total`, the log, and an edge
                # replica's breaker: a replica dropping every stream is taken out).
                FAULTS.call_failed(
                    self.metrics.upstream_errors,
                    self.upstreams[target].name,
                    outcome.failure,
                    None,
                    step.route.name,
                    step.identity.trajectory_id,
                    step.identity.step,
                    "mid-stream",
                )
                record.failures.append((target, outcome.failure, None))
                if step.lease is not None:
                    step.lease.failed(outcome.failure)
            elif record.status == "ok" and step.lease is not None:
                step.lease.answered()
            record.tools = outcome.tools
            message = streamed_message(outcome.text, outcome.tools) if wants_action else {}
            if record.status == "ok":
                self._answered(step, record, message)
            content = None
            if capture:
                content = {"input": step.sent_to_cloud, "output": outcome.text, "output_tools": outcome.tools}
            self._account(step, record, outcome.usage, content)
            self.tracker.answered(step.identity, record.status, outcome.answer_key, bool(record.tools))
            if record.status == "ok":
                self.tracker.spawned(step.identity, outcome.calls)
            shadow.append(self.shadow.after(step, record, message))

        learn_ahead = self._after(step, target, None)

        async def after_sent() -> None:
            # The stream has been sent whole: start its shadow, if the step was drawn.
            if learn_ahead is not None:
                await learn_ahead()
            if shadow and shadow[0] is not None:
                await shadow[0]()

        def abandon() -> None:
            # The client left before the relay began (so it never ran, and never ended): close
            # the upstream and record the step cancelled, charged an estimate of the prompt.
            if not ended:
                source.close()
                on_end(StreamOutcome(usage=Usage(prompt_bytes // 4, 0, 0, source="estimated"), cancelled=True))

        source = reply.stream
        chunks = relay(
            reply.stream,
            upstream=target,
            model=self.upstreams[target].model,
            prompt_bytes=prompt_bytes,
            on_end=on_end,
            capture=capture or wants_action,
            # A stitched step's answer tells its run from another with the same history: its
            # key is kept up to date as the text goes by (the text itself is not held).
            keyed=step.identity.stitch_key is not None,
            calls=True,  # a sub-agent's start is read from them (router/trajectory/children.py)
            restorer=step.restorer,  # the restore stage's, where the cloud got placeholders
            streams=self.streams,
            # During a store outage with the journal on disk, the record is there before [DONE].
            kept=lambda: self.tracker.kept(step.ticket),
        )

        async def close() -> None:
            await chunks.aclose()
            abandon()

        return Stream(step.facts(target, fallback), chunks, close, after_sent)

    def failure(
        self, step: Step, target: Target, fallback: bool, failures: list[UpstreamFailure], relayed: int = -1
    ) -> Failure:
        last = failures[relayed]
        facts = step.facts(target, fallback)
        headers: dict[str, str] = {}
        record = self._new_record(step, target, fallback)
        record.status = "error"
        # The client gets the whole text (its own step's); the record keeps it as `_account` does.
        error_text = record.error = "; ".join(str(f) for f in failures)
        self.tracker.answered(step.identity, "error", None)
        # The content audit keeps what a failed cloud attempt was sent, as for an answered one.
        content = None
        if self.audit.wants_content:
            content = {"input": step.sent_to_cloud, "output": None, "output_tools": []}
        if last.status is not None:
            # The upstream's own error, relayed unchanged (status, body, Retry-After).
            record.http_status = last.status
            if last.retry_after is not None:
                headers["Retry-After"] = last.retry_after
            self._account(step, record, None, content)
            error = read_error(last.status, last.body)
            return Failure(last.status, error, facts, headers, last.body, last.content_type)
        if last.kind == "invalid_answer":
            # A 200 whose body was no answer: the upstream is broken, not busy.
            record.http_status = 502
            self._account(step, record, None)
            message = f"the upstream answered with something that is not a chat completion: {error_text}"
            return Failure(502, _server_error(message, "upstream_invalid_answer"), facts)
        record.http_status = 503
        self._account(step, record, None, content)
        headers["Retry-After"] = str(self.settings.retry_after_s)
        message = f"no upstream could answer the step: {error_text}"
        return Failure(503, _server_error(message, "upstream_unavailable"), facts, headers)

    def aborted(self, step: Step, error: BaseException) -> None:
        """The record of a step that ended before any answer: the client left (cancelled), a
        policy of the route refused it (refused: a privacy block), or an error (a failure of the
        gateway) after the step began."""
        target = step.upstream or step.decision.target
        record = self._new_record(step, target, step.fallback)
        usage = None
        if isinstance(error, asyncio.CancelledError) and self.streams.ended:
            # Ended by the gateway itself at its shutdown timeout (router/api/disconnect.py).
            record.status, record.http_status = "error", 503
            record.error = STEP_SHUT_DOWN
            if step.upstream is not None:
                usage = Usage(step.upstream_bytes // 4, 0, 0, source="estimated")
        elif isinstance(error, asyncio.CancelledError):
            record.status, record.http_status = "cancelled", 499  # 499: the client closed the request
            record.error = "the client disconnected before the answer began"
            if step.upstream is not None:
                # The upstream reported nothing; it did read the prompt: charge an estimate of it.
                usage = Usage(step.upstream_bytes // 4, 0, 0, source="estimated")
        else:
            record.status = "error"
            if isinstance(error, GatewayError):
                record.http_status, record.error = error.status, error.message
                if error.policy_refusal:
                    record.status = "refused"  # on purpose (a privacy block), not a failure
            else:
                record.http_status, record.error = 500, f"internal error: {type(error).__name__}: {error}"
        self._account(step, record, usage)
        # Its history's mark says no answer went out: the same body sent again (a client that
        # timed out, or left before the first byte, and resends) is this step's retry.
        self.tracker.answered(step.identity, record.status, None)

    def _new_record(self, step: Step, target: Target, fallback: bool) -> StepRecord:
        step.recorded = True
        return StepRecord(
            trajectory_id=step.trajectory_id,
            step=step.identity.step,
            route=step.route.name,
            target=target,
            reason=step.decision.reason.value,
            score=step.decision.score,
            model=self.upstreams[target].model,
            at=step.started_at,
            attempt=step.identity.attempt,
            inner=list(step.calls.made),
            fallback=fallback,
            failures=list(step.failures),
            features=step.decision.features,
            exposed=sorted(step.privacy.exposed_kinds),
            redacted=step.privacy.redacted,
            cache_prefix=read_cache_note(step.identity.trajectory.notes.get(CACHE_NOTE)),
            stitch=step.identity.stitch,
            counted_apart=step.identity.counted_apart,
        )

    def _counterfactual(self, record: StepRecord, usage: Usage) -> None:
        """The step at the cloud's prices with an all-cloud run's prompt cache; remember this
        step's prompt for the next step's counterfactual."""
        cloud = self.settings.upstreams["cloud"]
        cached = all_cloud_cached(usage, record.target, cloud.prompt_cache, record.cache_prefix, record.at)
        record.counterfactual_cached_tokens = cached
        all_cloud = Usage(usage.prompt_tokens, cached, usage.completion_tokens, usage.source)
        record.counterfactual_usd = cost_usd(all_cloud, cloud.prices)
        if record.status == "ok":
            note = f"{usage.prompt_tokens} {record.at}"
            self.tracker.spawn(_remember(self.tracker, record.trajectory_id, note))

    def _account(
        self, step: Step, record: StepRecord, usage: Usage | None, content: dict[str, Any] | None = None
    ) -> None:
        """Close the step's record: cost, counterfactual, latency, metrics. Called once. The
        error signals of the step's new tool results are read into it by the recorder, off the
        answer's path (here, when the audit log takes the record as it is submitted)."""
        record.latency_s = time.perf_counter() - step.started
        if record.error:
            # An error may quote an upstream (the first bytes of a bad answer) or the step: on a
            # sensitive route it is kept with placeholders, as the messages are.
            record.error = kept_text(step.privacy, record.error)
        record.usage = usage
        record.cost_usd = record.inner_cost_usd
        if usage is not None:
            record.cost_usd += cost_usd(usage, self.settings.upstreams[record.target].prices)
            self._counterfactual(record, usage)
        self.metrics.step_closed(record)
        results = step.identity.results
        reservation = step.identity.reservation
        if self.audit.enabled:
            settle(record, results, step.identity.action)
            step.ticket = self.tracker.record(record, reservation=reservation)
        else:
            step.ticket = self.tracker.record(record, results, reservation, step.identity.action)
        self.audit.submit(record, content)


async def _remember(tracker: Tracker, trajectory_id: str, prefix: str) -> None:
    await tracker.store.note(trajectory_id, CACHE_NOTE, prefix)


def _server_error(message: str, code: str) -> dict[str, Any]:
    return {"message": message, "type": "server_error", "code": code, "param": None}
