"""The edge pool in front of two real vLLM CPU replicas: the short version of
`python -m benchmarks.edge_pool --vllm --stop-one` (its workload, smaller).

Each replica has a KV cache of 1,408 tokens (44 blocks of 32). Each run has its own 40-word system
prompt (about 240 tokens) and grows about 36 tokens a step, to about 670 tokens (21 blocks) at
step 12: a cache holds two runs, not three, so the runs kept home fit (two on one replica, one on
the other) while runs spread over both evict each other, as on a busy site. Three runs, an odd
number: with an even number sending in a steady order, round_robin's turns would give each run
the same replica every time.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.edge_pool.workload import Shape, run_pass, start_replicas
from sim.vllm_edge import VLLMServer

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(420)]
MODEL = "tiny-edge"
SIZES = ("--kv-cache-memory-bytes", str(1408 * 1024), "--block-size", "32", "--max-model-len", "1024")


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[VLLMServer]]:
    servers = start_replicas(tmp_path_factory.mktemp("vllm-pool"), MODEL, SIZES)
    yield servers
    for server in servers:
        server.stop()


def test_affinity_recomputes_fewer_prompt_tokens_than_round_robin(replicas: list[VLLMServer]) -> None:
    edges = [server.base_url for server in replicas]
    shape = Shape(runs=3, steps=12, system_words=40)
    kept = run_pass(edges, MODEL, "affinity", shape)
    spread = run_pass(edges, MODEL, "round_robin", shape)
    print(
        f"recomputed: affinity {kept.recomputed:.0f} of {kept.looked_up:.0f}, round_robin {spread.recomputed:.0f} of "
        f"{spread.looked_up:.0f}; steps per replica {kept.placed} / {spread.placed}; {kept.seconds + spread.seconds:.0f} s"
    )
    assert kept.failed == spread.failed == 0, kept.failures + spread.failures
    # The counters moved (their names are the installed vLLM's) by about the prompts sent.
    assert kept.looked_up > 3 * 12 * 240 and spread.looked_up > 3 * 12 * 240
    assert all(count > 0 for count in kept.placed + spread.placed), "both replicas took steps"
    # The gateway's own reads of the replicas' metrics found the names it looks for.
    assert all(run_s > 0 and looked_up > 0 for run_s, looked_up in spread.scraped), spread.scraped
    assert kept.recomputed < 0.7 * spread.recomputed, (kept, spread)


def test_a_replica_killed_mid_run_loses_no_step_and_its_runs_re_home(replicas: list[VLLMServer]) -> None:
    edges = [server.base_url for server in replicas]
    by_url = {server.base_url: server for server in replicas}
    lost = run_pass(
        edges, MODEL, "affinity", Shape(runs=4, steps=8), stop_at=4, stop=lambda url: by_url[url].kill(), label="ci"
    )
    assert lost.failed == 0 and lost.answered == 4 * 8, lost.failures
    assert lost.orphans >= 1 and lost.rehomed == lost.orphans, lost
    assert lost.rehomes["replica_down"] >= 1
