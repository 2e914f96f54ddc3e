"""The judge strategy in the gateway: decisions from the ONNX judge, fallbacks, reloads, and
train → export → calibrate → serve end to end on generated data."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.cli import main as judge_main
from judge.model import DEFAULT_MODEL, JudgeModel
from router.cli import main as tandem_main
from router.engine import build_routes
from router.settings import ConfigError, load_settings
from tests.gateway_server import GatewayServer, wait_until
from tests.test_strategies import TOOLS

MakeGateway = Callable[..., GatewayServer]


def steps(n: int) -> list[list[dict[str, Any]]]:
    """Growing histories of a run that edits files and hits failing tests."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test in calc.py"}]
    out = [list(messages)]
    for i in range(n - 1):
        command = ["cat calc.py", "pytest -q", "sed -i 's/-/+/' calc.py", "pytest -q"][i % 4]
        output = ["def add(a, b):\n    return a - b", "1 failed, 2 passed\nAssertionError", "", "3 passed"][i % 4]
        messages = [
            *messages,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": output},
        ]
        out.append(list(messages))
    return out


def run(client: httpx.Client, server: GatewayServer, session: str, n: int = 8) -> list[httpx.Response]:
    return [
        client.post(
            f"{server.url}/v1/chat/completions",
            json={"model": "tandem", "messages": m, "tools": TOOLS},
            headers={"X-Session-ID": session},
        )
        for m in steps(n)
    ]


def test_online_threshold_holds_a_cloud_share(make_gateway: MakeGateway, client: httpx.Client) -> None:
    static = make_gateway(routes={"tandem": {"strategy": "judge", "target_cloud_share": None}})
    static_targets = [r.headers["x-tandem-target"] for i in range(4) for r in run(client, static, f"s{i}", 8)]
    server = make_gateway(routes={"tandem": {"strategy": "judge", "target_cloud_share": 0.5, "adapt_rate": 0.05}})
    targets = [r.headers["x-tandem-target"] for i in range(12) for r in run(client, server, f"o{i}", 8)]
    settled = targets[len(targets) // 2 :]
    share = settled.count("cloud") / len(settled)
    static_share = static_targets.count("cloud") / len(static_targets)
    # The same steps under the card's fixed threshold go to the cloud far less (or more) often;
    # held online, the share settles near the target.
    assert abs(share - 0.5) < 0.15 and abs(share - 0.5) < abs(static_share - 0.5), (share, static_share)


def _first_steps(
    client: httpx.Client, server: GatewayServer, count: int, state: list[dict[str, Any]]
) -> list[httpx.Response]:
    """`count` runs' first step, every run in the same state: one score, over and over."""
    responses = []
    for index in range(count):
        body = {"model": "tandem", "messages": state, "tools": TOOLS}
        response = client.post(f"{server.url}/v1/chat/completions", json=body, headers={"X-Session-ID": f"r{index}"})
        assert response.status_code == 200
        responses.append(response)
    return responses


def _targets(responses: list[httpx.Response]) -> list[str]:
    return [response.headers["x-tandem-target"] for response in responses]


@pytest.mark.parametrize("state", [steps(3)[-1], steps(1)[-1]])
def test_a_judge_route_holds_the_cards_share_by_default_and_can_turn_it_off(
    make_gateway: MakeGateway, client: httpx.Client, state: list[dict[str, Any]]
) -> None:
    card = JudgeModel.load(DEFAULT_MODEL).card
    assert card.target_cloud_share is not None
    # Every step scores the same: a fixed threshold sends all of them to one side, whichever it is.
    fixed = make_gateway(routes={"tandem": {"strategy": "judge", "target_cloud_share": None}})
    answered = _first_steps(client, fixed, 10, state)
    assert len(set(_targets(answered))) == 1
    score = float(answered[0].headers["x-tandem-score"])
    pinned = make_gateway(routes={"tandem": {"strategy": "judge", "threshold": 1.0}})  # as written: all edge
    assert set(_targets(_first_steps(client, pinned, 10, state))) == {"edge"}
    held = make_gateway(routes={"tandem": {"strategy": "judge"}})
    # The threshold walks from the card's to the score first, by at least 0.01 x 0.4 a step.
    walk = int(abs(score - card.threshold) / (0.01 * 0.4)) + 1
    targets = _targets(_first_steps(client, held, walk + 100, state))[walk:]
    share = targets.count("cloud") / len(targets)
    assert abs(share - card.target_cloud_share) <= 0.07, (share, score, card.threshold)


@pytest.mark.parametrize(("content", "words"), [(b"not onnx at all", "not a usable ONNX model"), (None, "not found")])
def test_a_bad_model_stops_start_up_naming_the_file(tmp_path: Path, content: bytes | None, words: str) -> None:
    model = tmp_path / "judge.onnx"
    if content is not None:
        model.write_bytes(content)
        shutil.copy(DEFAULT_MODEL.with_suffix(".card.json"), tmp_path / "judge.card.json")
    settings = load_settings(routes={"tandem": {"strategy": "judge", "model": str(model)}})  # reads no file
    with pytest.raises(ConfigError) as raised:
        build_routes(settings)
    assert str(tmp_path / "judge.") in str(raised.value) and "routes.tandem.judge" in str(raised.value)
    assert words in str(raised.value)


def test_tandem_serve_stops_on_a_bad_model_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "judge.onnx"
    config = tmp_path / "tandem.yaml"
    config.write_text(f"routes:\n  tandem:\n    strategy: judge\n    model: {model}\n")
    assert tandem_main(["serve", "--config", str(config), "--port", "1"]) == 2
    error = capsys.readouterr().err
    assert "routes.tandem.judge" in error and str(tmp_path / "judge.") in error and "not found" in error


def test_a_bad_model_on_reload_keeps_the_old_one(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    model = tmp_path / "judge.onnx"
    shutil.copy(DEFAULT_MODEL, model)
    shutil.copy(DEFAULT_MODEL.with_suffix(".card.json"), tmp_path / "judge.card.json")
    server = make_gateway(routes={"tandem": {"strategy": "judge", "model": str(model), "reload_check_s": 0.05}})
    before = run(client, server, "r1", 3)
    model.write_bytes(b"garbage")

    def counted() -> bool:
        run(client, server, "r2", 1)
        return 'tandem_judge_failures_total{kind="reload"} 1.0' in client.get(f"{server.url}/metrics").text

    assert wait_until(counted, timeout=5)
    after = run(client, server, "r3", 3)
    assert [r.headers["x-tandem-score"] for r in after] == [r.headers["x-tandem-score"] for r in before]


def test_train_export_calibrate_serve_end_to_end(
    make_gateway: MakeGateway, client: httpx.Client, tmp_path: Path
) -> None:
    from sim.dataset import generate

    data = tmp_path / "steps.jsonl"
    assert generate(range(0, 30), 6, data) > 100
    model = tmp_path / "judge.onnx"
    assert (
        judge_main(["train", "--data", str(data), "--out", str(model), "--model", "logreg", "--labels", "agreement"])
        == 0
    )
    assert judge_main(["calibrate", "--model", str(model), "--data", str(data), "--cloud-share", "0.3"]) == 0
    card = json.loads(model.with_suffix(".card.json").read_text())
    threshold = card["threshold"]

    # Serve with the new model and record features; export them as judge rows; they score the same.
    server = make_gateway(routes={"tandem": {"strategy": "judge", "model": str(model), "record_features": True}})
    responses = run(client, server, "e2e", 6)
    assert all(
        r.headers["x-tandem-target"] == ("cloud" if float(r.headers["x-tandem-score"]) >= threshold else "edge")
        for r in responses
    )
    rows = tmp_path / "rows.jsonl"
    assert tandem_main(["trajectories", "export", "--url", server.url, "--judge-rows", "--out", str(rows)]) == 0
    exported = [json.loads(line) for line in rows.read_text().splitlines()]
    assert len(exported) == 6 and all(row["schema"] == "tandem.judge-row/1" for row in exported)
    import numpy as np

    scores = JudgeModel.load(model).score_batch(np.asarray([row["features"] for row in exported], dtype=np.float32))
    served = [float(r.headers["x-tandem-score"]) for r in responses]
    assert scores.tolist() == pytest.approx(served, abs=1e-4)
