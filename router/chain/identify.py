"""The identify stage: which route the request names, which trajectory and step it is (the
tracker counts it, and holds its key's cloud dollars), the target a header forces, the step's
privacy guard opened. It opens the step: the chain's other stages work on what it returns."""

from __future__ import annotations

from collections.abc import Mapping

from router.aliases import aliased_route
from router.errors import GatewayError, bad_request
from router.inner import InnerCalls
from router.policies.base import Decision, Reason, Target
from router.protocol.chat import ChatRequest
from router.protocol.fields import shown, shown_all
from router.result import Failure, StepMeta
from router.step import Route, Step, StepInputs

from .stage import Parts, Stage

TARGET_HEADER = "x-tandem-target"
# A step's decision until its strategy (or the header) has made one.
UNDECIDED = Decision(target="edge", reason=Reason.UNDECIDED)


class Identify(Stage):
    name = "identify"

    def __init__(self, parts: Parts) -> None:
        self._settings = parts.settings
        self._routes = parts.routes
        self._tracker = parts.tracker
        self._upstreams = parts.upstreams
        self._metrics = parts.metrics
        self._privacy = parts.privacy

    def route_for(self, model: str) -> Route:
        route = self._routes.get(model) or aliased_route(self._routes, self._settings.model_aliases, model)
        if route is None and self._settings.unknown_model_route is not None:
            route = self._routes[self._settings.unknown_model_route]
        if route is None:
            names = ", ".join(sorted(self._routes))
            raise GatewayError(
                404,
                f"The model {shown(model)} does not exist on this gateway; the models are: {names}",
                code="model_not_found",
                param="model",
            )
        return route

    def refused(self, error: GatewayError) -> Failure:
        """A request refused before it became a step (unreadable, unknown model, bad header)."""
        self._metrics.bad_requests.labels(error.code or "invalid_request").inc()
        return Failure.of(error)

    async def open(self, request: ChatRequest, meta: StepMeta, started: float, started_at: float) -> Step | Failure:
        """The step, counted; or why the request did not become one."""
        try:
            route = self.route_for(request.model)
            forced = self._forced_target(meta.headers)
            self._check_count(len(request.messages))
        except GatewayError as exc:
            return self.refused(exc)
        try:
            identity = await self._tracker.begin(request, meta.headers, meta.session, meta.namespace, route.name)
        except GatewayError as exc:  # the store refuses steps, or the client is over its limits
            return Failure.of(exc)
        settings = route.settings
        guard = self._privacy.guard(
            route.name,
            settings.privacy,
            frozenset(settings.privacy_detect),
            identity.trajectory_id,
            identity.trajectory,
        )
        calls = InnerCalls(self._upstreams, guard, self._metrics, identity.trajectory_id)
        inputs = StepInputs(route, request, identity, forced, started, started_at)
        return Step(inputs, calls, guard, UNDECIDED)

    def _check_count(self, count: int) -> None:
        # Each message costs the step some microseconds of the event loop (stitching, privacy,
        # the record): a body of 400,000 one-letter messages fits max_body_bytes and held every
        # client for seconds. No agent's history comes near the default (OpenAI's own: 2,048).
        limit = self._settings.limits.max_messages
        if count > limit:
            raise bad_request(
                f"'messages' holds {count:,} messages, more than this gateway takes ({limit:,}, "
                "limits.max_messages); send a shorter history",
                param="messages",
                code="array_above_max_length",
            )

    def _forced_target(self, headers: Mapping[str, str]) -> Target | None:
        value = headers.get(TARGET_HEADER)
        if value is None or not self._settings.allow_target_header:
            return None
        if value == "edge":
            return "edge"
        if value == "cloud":
            return "cloud"
        if ", " in value:  # the header repeated with different values (router/api/chat.py headers_of)
            values = value.split(", ")
            if len(set(values)) == 1 and values[0] in ("edge", "cloud"):
                return "edge" if values[0] == "edge" else "cloud"  # one value listed twice: that value
            raise GatewayError(
                400,
                f"header {TARGET_HEADER} was given more than one value ({shown_all(values)}), repeated "
                "with different values or listed in one; send one value, 'edge' or 'cloud'",
                code="invalid_target",
            )
        raise GatewayError(
            400, f"header {TARGET_HEADER} must be 'edge' or 'cloud', got {shown(value)}", code="invalid_target"
        )
