"""The redact stage (privacy): for each attempt that goes to the cloud, what it may receive:
placeholders for the sensitive values (`redact`) in the messages and the request's other
fields, and what reached it, counted. (What a `block` policy refuses is refused by the decide
stage, where privacy ranks first.)"""

from __future__ import annotations

from typing import Any

from router.config.privacy import redacts
from router.policies.base import Target
from router.step import Step

from .stage import Stage


class Redact(Stage):
    name = "redact"

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
