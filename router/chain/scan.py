"""The scan stage (privacy): find the sensitive values in what is new in the context, before
the decision where the route's privacy mode needs them; where it only measures (`allow`), put
the scan off until the cloud gets the step (or the answer is out)."""

from __future__ import annotations

from router.config.privacy import protects
from router.step import Step

from .stage import Stage


class Scan(Stage):
    name = "scan"

    async def request(self, step: Step) -> None:
        guard, request = step.privacy, step.request
        if protects(guard.mode):
            await guard.scan(request.messages, request.raw)  # the decision needs what the context holds
        else:
            guard.defer_scan(request.messages, request.raw)  # measured only if (and when) the cloud gets it
