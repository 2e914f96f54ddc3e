"""A warning line for each failed upstream call, at most one every few seconds per upstream and
kind (an upstream that fails every call would otherwise write a line a step), with how many were
left unsaid. The line names the step (route, trajectory, step) and what failed (upstream, kind,
HTTP status), never what the upstream said: its body may echo the prompt's values or a key."""

from __future__ import annotations

import logging
import time

from prometheus_client import Counter

log = logging.getLogger("tandem.upstream")

EVERY_S = 10.0  # at most one line this often per upstream and kind


class FaultLog:
    __slots__ = ("_every_s", "_last", "_unsaid")

    def __init__(self, every_s: float = EVERY_S) -> None:
        self._every_s = every_s
        self._last: dict[tuple[str, str], float] = {}
        self._unsaid: dict[tuple[str, str], int] = {}

    def clear(self) -> None:
        """Forget the lines said: the next failure of each kind is logged."""
        self._last.clear()
        self._unsaid.clear()

    def call_failed(
        self,
        errors: Counter,
        upstream: str,
        kind: str,
        status: int | None,
        route: str,
        trajectory: str,
        step: int,
        where: str,
    ) -> None:
        """A failed call of a step: counted (`tandem_upstream_errors_total`, `errors`) and logged."""
        errors.labels(upstream, kind).inc()
        self.failed(upstream, kind, status, route, trajectory, step, where)

    def failed(
        self, upstream: str, kind: str, status: int | None, route: str, trajectory: str, step: int, where: str
    ) -> None:
        """One failed call of `upstream` (`kind`: `UpstreamFailure.kind`'s words); `where`: before
        its answer began (`before the answer`) or in the middle of a stream (`mid-stream`)."""
        key = (upstream, kind)
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self._every_s:
            self._unsaid[key] = self._unsaid.get(key, 0) + 1
            return
        self._last[key] = now
        unsaid = self._unsaid.pop(key, 0)
        more = f" (and {unsaid} more of this kind since the last line)" if unsaid else ""
        log.warning(
            "upstream %s failed %s: kind=%s status=%s route=%s trajectory=%s step=%d%s",
            upstream,
            where,
            kind,
            status if status is not None else "-",
            route,
            trajectory,
            step,
            more,
        )


FAULTS = FaultLog()  # the process's: one line a period whichever path the call failed on
