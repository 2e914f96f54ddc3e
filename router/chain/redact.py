"""The redact stage (privacy): once the step's target is decided, block a sensitive cloud step
(`block`), pin a trajectory kept local, keep the values found in the vault; then, for each
attempt that goes to the cloud, what it may receive: placeholders for the values (`redact`) in
the messages and the request's other fields, and what reached it, counted."""

from __future__ import annotations

from typing import Any

from router import notes
from router.config.privacy import blocks, redacts
from router.errors import GatewayError
from router.policies.base import Reason, Target
from router.privacy.redact import kind_of
from router.step import Step

from .stage import Parts, Stage


class Redact(Stage):
    name = "redact"

    def __init__(self, parts: Parts) -> None:
        self._store = parts.tracker.store

    async def request(self, step: Step) -> None:
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

    async def target(self, step: Step, target: Target, raw: dict[str, Any]) -> dict[str, Any]:
        if target != "cloud":
            return raw
        guard = step.privacy
        step.sent_to_cloud = raw["messages"]
        if redacts(guard.mode):
            sent = guard.outgoing(raw["messages"])
            if sent is not raw["messages"]:  # else the body can go as the client's bytes
                raw = {**raw, "messages": sent}
            step.sent_to_cloud = sent
            step.sent_encoded = guard.outgoing_encoded
            fields = guard.outgoing_fields(raw)  # user, metadata, tool descriptions…
            if fields:
                raw = {**raw, **fields}
            await guard.commit()
        return raw
