"""Self-delegation (EdgeWise): the edge decides. The gateway offers it a `delegate_to_cloud`
tool (name configurable), or recognises a marker in its text; when the edge uses either, the
cloud answers the step as the agent sent it. The agent never sees the extra tool: an edge
answer that did not delegate is relayed as it is."""

from __future__ import annotations

from router.config.strategies import DelegationRoute
from router.policies.base import AsksModels, Builder, Decision, Reason, RouteBase
from router.policies.common import calls_tool, edge_answer, function_tool, prepared
from router.protocol.text import message_text

DESCRIPTION = (
    "Hand this step to a stronger model. Call it when the step is hard for you: editing or writing "
    "code, recovering from an error you do not understand, or giving the final answer."
)


class DelegationPolicy:
    def __init__(self, settings: DelegationRoute) -> None:
        self._settings = settings
        self._tool = function_tool(settings.tool_name, DESCRIPTION)

    async def decide(self, step: AsksModels) -> Decision:
        settings = self._settings
        edge = await edge_answer(step, "edge", [self._tool])
        if edge is None:
            return Decision(target="cloud", reason=Reason.INNER_FAILED)
        answer, index = edge
        marked = settings.marker is not None and settings.marker in message_text(answer)
        if calls_tool(answer, settings.tool_name) or marked:
            return Decision(target="cloud", reason=Reason.SELF_DELEGATED)
        return Decision(target="edge", reason=Reason.EDGE_ANSWERED, answer=prepared(answer, index))


# The route settings this module's policy is built from (router/policies/registry.py).
BUILDS: dict[type[RouteBase], Builder] = {DelegationRoute: DelegationPolicy}
