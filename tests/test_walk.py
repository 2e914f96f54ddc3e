"""One chat request's walk through the gateway's modules (tests/walk.py): from the chat
handler through the engine's chain to the upstream and back, each stage visited once, with
few returns to a module already left. Run with `-s` to see the walk."""

from __future__ import annotations

from router.chain import STAGES
from tests.walk import chat_walk

# The modules of the chain's stages, in order (identify opens the step; the others run in turn).
STAGE_MODULES = [stage.__module__ for stage in STAGES]


async def test_a_chat_request_walks_the_chain_once_with_few_returns() -> None:
    walk, status, body = await chat_walk()
    print(f"\n{len(walk.visited())} modules; returns to a module already left: {walk.returns_to_left()}")
    print(walk.text())
    assert status == 200 and b"edge-model says hi" in body
    modules = walk.modules
    assert modules[:2] == ["router.app", "router.api.chat"]
    # Each stage once, in the chain's order; context and redaction shape the forward's call,
    # from inside it.
    assert [walk.visits(module) for module in STAGE_MODULES] == [1] * len(STAGE_MODULES)
    order = sorted(STAGE_MODULES, key=modules.index)
    names = [module.removeprefix("router.chain.") for module in order]
    assert names == ["identify", "scan", "decide", "forward", "context", "redact", "restore", "record"]
    # 11 in the same trace of the code before the chain (19 modules both; the target
    # is 10 or fewer): the handler's disconnect watch, started by the engine, is the one left.
    assert len(walk.returns_to_left()) <= 3


async def test_the_walk_reaches_the_upstream_through_the_forward_stage() -> None:
    walk, status, _ = await chat_walk(cut=lambda path: path)
    assert status == 200
    upstream = [place for place in walk.places if place[-1] == "router.upstream"]
    assert upstream and "router.chain.forward" in upstream[0]
