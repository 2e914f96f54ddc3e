"""`tandem demo --edge-vllm`: the demo's agent through the gateway with the real vLLM as the edge."""

from __future__ import annotations

import asyncio

import pytest

from sim.vllm_edge import VLLMServer
from sim.vllm_mode import _render, _run

pytestmark = pytest.mark.vllm


def test_demo_agent_runs_against_the_real_vllm_edge(vllm_server: VLLMServer) -> None:
    rows = asyncio.run(_run(vllm_server, seed=7, tasks=2))
    assert [row["task"] for row in rows] == ["fix-median", "add-slugify"]
    for row in rows:
        ledger = row["ledger"]
        # A step counts under the target that answered it; one no upstream answered (the tiny
        # random model can write what is no valid answer) counts under neither.
        answered = [r for r in ledger["records"] if r["answered_by"] != "none"]
        assert ledger["steps"] >= 1 and ledger["edge_steps"] + ledger["cloud_steps"] == len(answered)
        assert all(r["answered_by"] == r["target"] for r in answered if not r["failures"])
        edge_ok = [r for r in ledger["records"] if r["target"] == "edge" and r["status"] == "ok"]
        # vLLM's own usage chunk reached the ledger for every edge step it answered.
        assert all(r["usage"]["source"] == "upstream" and r["usage"]["prompt_tokens"] > 0 for r in edge_ok)
    table = _render(rows)
    assert "fix-median" in table and "edge tok in/out" in table
