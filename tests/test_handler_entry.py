"""The chat, messages and responses handlers hand a request's body to one engine entry point
(`Engine.chat`, `Engine.translated`) and read nothing else of the engine but its body limits
and its registry of open steps: no parser, no settings, no `run` on a request they parsed
themselves."""

from __future__ import annotations

import ast
from pathlib import Path

ROUTER = Path(__file__).resolve().parents[1] / "router"
HANDLERS = ("api/chat.py", "surfaces/messages/handler.py", "surfaces/responses/handler.py", "api/translated.py")
# And the registry of open steps, which the handlers' disconnect watch joins so that a stopping
# gateway ends a step still waiting for its answer (router/api/disconnect.py).
# And the route a model names: the responses surface keeps no conversation at rest for a route
# whose privacy mode protects values (router/surfaces/responses/continued.py).
ALLOWED = {"chat", "translated", "max_body_bytes", "max_json_depth", "open_steps", "route_for"}


def _engine_reads(source: str) -> set[str]:
    """The attributes read of a name `engine` in `source` (the first after the name)."""
    return {
        ast.unparse(node).removeprefix("engine.")
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "engine"
    }


def test_the_step_handlers_use_only_the_engine_entry_points() -> None:
    reads = {name: _engine_reads((ROUTER / name).read_text()) for name in HANDLERS}
    assert {name: found - ALLOWED for name, found in reads.items() if found - ALLOWED} == {}
    assert "chat" in reads["api/chat.py"] and "translated" in reads["api/translated.py"]


def test_the_check_finds_a_reach_into_the_engine() -> None:
    planted = "async def chat(request):\n    return engine.run(engine.parser.parse(body), meta)\n"
    assert _engine_reads(planted) - ALLOWED == {"run", "parser"}
