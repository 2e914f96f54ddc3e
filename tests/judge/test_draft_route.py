"""`strategy: judge` with `sees: draft` against scripted upstreams: the edge drafts, the judge
scores the state with the draft, an accepted draft is the answer, a rejected one goes to the cloud."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from judge.card import card_path
from judge.draft import DRAFT_FEATURE_NAMES, draft_features
from judge.features import TrajectoryCounters, step_features
from judge.model import JudgeModel
from router.engine import build_routes
from router.policies.judge import DEFAULT_DRAFT_MODEL, DEFAULT_MODEL
from router.settings import ConfigError, load_settings
from tests.fake_upstream import FakeUpstream
from tests.judge.helpers import copy_shipped_model
from tests.test_strategies import TASK, TOOLS

RISKY = '{"command": "cd /repo && python reproduce_bug.py && python -c \\"import calc; calc.run()\\""}'
SAFE = '{"command": "cat calc.py"}'


def _draft(arguments: str) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _score(model: JudgeModel, arguments: str) -> float:
    state = step_features([TASK], TrajectoryCounters(step=1), TOOLS)
    return model.score(np.concatenate((state, draft_features(_draft(arguments), [TASK], TOOLS))))


def _ask(client: httpx.Client, url: str, session: str) -> httpx.Response:
    body = {"model": "tandem", "messages": [TASK], "tools": TOOLS}
    return client.post(f"{url}/v1/chat/completions", json=body, headers={"X-Session-ID": session})


def test_the_draft_decides_and_an_accepted_draft_is_the_answer(
    make_gateway: Any, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    model = JudgeModel.load(DEFAULT_DRAFT_MODEL)
    assert model.card.sees == "draft" and model.card.feature_names[-len(DRAFT_FEATURE_NAMES) :] == list(
        DRAFT_FEATURE_NAMES
    )
    risky, safe = _score(model, RISKY), _score(model, SAFE)
    assert risky > safe  # the same state: only the draft differs
    threshold = (risky + safe) / 2
    server = make_gateway(routes={"tandem": {"strategy": "judge", "sees": "draft", "threshold": threshold}})

    edge.push({"kind": "tool_call", "arguments": SAFE})
    response = _ask(client, server.url, "safe")
    assert response.status_code == 200 and response.headers["x-tandem-target"] == "edge"
    assert float(response.headers["x-tandem-score"]) == pytest.approx(safe, abs=1e-4)
    assert response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == SAFE
    assert len(edge.received) == 1 and not cloud.received  # the draft was relayed, not asked again

    edge.push({"kind": "tool_call", "arguments": RISKY})
    response = _ask(client, server.url, "risky")
    assert response.headers["x-tandem-target"] == "cloud" and response.headers["x-tandem-reason"] == "judge"
    assert float(response.headers["x-tandem-score"]) == pytest.approx(risky, abs=1e-4)
    assert len(edge.received) == 2 and len(cloud.received) == 1
    assert cloud.received[0].body["messages"] == [TASK]  # the rejected draft is not shown to the cloud


def test_an_edge_that_cannot_draft_sends_the_step_to_on_failure(
    make_gateway: Any, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "judge", "sees": "draft", "failover": False}})
    edge.push({"kind": "error", "status": 500})
    response = _ask(client, server.url, "broken")
    assert response.status_code == 200
    assert response.headers["x-tandem-target"] == "cloud" and response.headers["x-tandem-reason"] == "inner_call_failed"
    assert len(cloud.received) == 1
    # Counted as every strategy counts an inner call it fell back from.
    assert _metric(client, server.url, 'tandem_policy_failures_total{kind="draft",route="tandem"}') == 1.0


def _metric(client: httpx.Client, url: str, series: str) -> float | None:
    for line in client.get(f"{url}/metrics").text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_a_draft_model_dropped_over_a_state_routes_file_is_refused_and_the_old_one_kept(
    make_gateway: Any, client: httpx.Client, tmp_path: Path
) -> None:
    """A reload that brings a model for the other input (here the draft judge's, over a state
    route's file) loads as a model, but cannot score the rows the route computes: taking it sent
    every step to on_failure. It is a failed reload: the model before keeps scoring."""
    path = copy_shipped_model(tmp_path)
    server = make_gateway(routes={"tandem": {"strategy": "judge", "model": str(path), "reload_check_s": 0.05}})
    body = {"model": "tandem", "messages": [TASK], "tools": TOOLS}
    before = client.post(f"{server.url}/v1/chat/completions", json=body)
    assert before.headers["x-tandem-reason"] == "judge"
    for source, target in ((DEFAULT_DRAFT_MODEL, path), (card_path(DEFAULT_DRAFT_MODEL), card_path(path))):
        shutil.copy(source, tmp_path / "incoming")
        os.replace(tmp_path / "incoming", target)
    time.sleep(0.1)
    for _ in range(3):
        response = client.post(f"{server.url}/v1/chat/completions", json=body)
        assert response.status_code == 200
        assert response.headers["x-tandem-reason"] == "judge", response.headers
        assert response.headers["x-tandem-score"] == before.headers["x-tandem-score"]
        time.sleep(0.06)
    assert _metric(client, server.url, 'tandem_judge_failures_total{kind="reload"}') == 1.0
    assert _metric(client, server.url, 'tandem_judge_failures_total{kind="score"}') == 0.0


def test_a_state_model_on_a_draft_route_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"trained for sees: state, the route has sees: draft"):
        build_routes(
            load_settings(routes={"tandem": {"strategy": "judge", "sees": "draft", "model": str(DEFAULT_MODEL)}})
        )


EDITOR_TOOLS = [
    {"type": "function", "function": {"name": "str_replace_editor", "parameters": {"type": "object"}}},
    *TOOLS,
]


def test_an_editor_call_its_editor_will_refuse_goes_to_the_cloud(
    make_gateway: Any, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    """A draft that lacks what its editor command needs is scored at least the floor (0.95), so the
    default threshold rejects it whatever the trees say; a complete one is scored by the trees."""
    server = make_gateway(routes={"tandem": {"strategy": "judge", "sees": "draft"}})
    complete = '{"command": "str_replace", "path": "/repo/calc.py", "old_str": "x = 0", "new_str": "x = 1"}'
    incomplete = '{"command": "str_replace", "path": "/repo/calc.py", "new_str": "x = 1"}'
    body = {"model": "tandem", "messages": [TASK], "tools": EDITOR_TOOLS}
    scores = {}
    for name, arguments in (("complete", complete), ("incomplete", incomplete)):
        edge.push({"kind": "tool_call", "name": "str_replace_editor", "arguments": arguments})
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": name})
        assert response.status_code == 200
        scores[name] = (float(response.headers["x-tandem-score"]), response.headers["x-tandem-target"])
    assert scores["incomplete"] == (pytest.approx(0.95), "cloud")
    assert scores["complete"][0] < 0.95
    assert len(cloud.received) == 1 + (scores["complete"][1] == "cloud")


def test_the_floors_hold_for_one_vector_and_many() -> None:
    model = JudgeModel.load(DEFAULT_DRAFT_MODEL)
    state = step_features([TASK], TrajectoryCounters(step=1), EDITOR_TOOLS)
    drafts = [
        _draft('{"command": "str_replace", "path": "/r/a.py", "new_str": "x"}'),
        _draft('{"command": "create", "path": "/r/calc.py", "file_text": "x"}'),
        _draft(SAFE),
    ]
    shown = [TASK, {"role": "tool", "tool_call_id": "c0", "content": "/r/calc.py\n/r/b.py"}]
    rows = np.stack([np.concatenate((state, draft_features(d, shown, EDITOR_TOOLS))) for d in drafts])
    one = [model.score(row) for row in rows]
    assert one[0] >= 0.95 and one[1] >= 0.5 and one[2] < 0.5
    assert model.score_batch(rows).tolist() == pytest.approx(one, abs=1e-6)
    # The state judge reads no draft: no floor
    state_model = JudgeModel.load(DEFAULT_MODEL)
    assert state_model.score(state) < 0.5


def test_a_reply_out_of_the_prompts_format_goes_to_the_cloud(
    make_gateway: Any, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    """A text harness whose prompt demands exactly one bash block (mini-swe-agent) rejects a reply
    with two: the draft judge scores it at least 0.95 and the cloud answers the step."""
    server = make_gateway(routes={"tandem": {"strategy": "judge", "sees": "draft"}})
    system = {
        "role": "system",
        "content": "Your response must contain exactly ONE bash code block with ONE command:\n```bash\nls\n```",
    }
    body = {"model": "tandem", "messages": [system, {"role": "user", "content": "Fix calc.py"}]}
    results = {}
    for name, text in (("one", "THOUGHT: look\n```bash\nls\n```"), ("two", "```bash\nls\n```\n```bash\npwd\n```")):
        edge.push({"kind": "text", "text": text})
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": name})
        assert response.status_code == 200
        results[name] = (float(response.headers["x-tandem-score"]), response.headers["x-tandem-target"])
    assert results["two"] == (pytest.approx(0.95), "cloud")
    assert results["one"][0] < 0.95


def test_a_call_without_an_argument_its_tool_requires_goes_to_the_cloud(
    make_gateway: Any, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    """The request's bash tool requires `command`: a draft calling it with `cmd` is refused by
    any harness that checks the schema, so the judge scores it at least 0.95."""
    server = make_gateway(routes={"tandem": {"strategy": "judge", "sees": "draft"}})
    edge.push({"kind": "tool_call", "arguments": '{"cmd": "ls"}'})
    response = _ask(client, server.url, "misses")
    assert response.status_code == 200
    assert float(response.headers["x-tandem-score"]) == pytest.approx(0.95)
    assert response.headers["x-tandem-target"] == "cloud" and len(cloud.received) == 1
