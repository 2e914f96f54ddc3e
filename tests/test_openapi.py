"""The management API describes itself (`/openapi.json`, `/docs`) and holds up to requests made
from that description: schemathesis draws valid and invalid requests for every declared
operation against the real gateway, and none may get a 500."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
MANAGEMENT = {
    "/v1/models": {"get"},
    "/v1/models/{model_id}": {"get"},
    "/v1/model/info": {"get"},
    "/v1/trajectories": {"get"},
    "/v1/trajectories/{trajectory_id}": {"get"},
    "/v1/trajectories/{trajectory_id}/outcome": {"post"},
    "/healthz": {"get"},
    "/readyz": {"get"},
}
EXAMPLES = 30  # per operation and mode: 7 operations x 2 modes x 30 = 420 requests at most
FUZZ_BUDGET_S = 60.0


def test_the_schema_describes_the_management_api(gateway: GatewayServer, client: httpx.Client) -> None:
    schema = client.get(f"{gateway.url}/openapi.json").json()
    assert {path: set(ops) for path, ops in schema["paths"].items()} == MANAGEMENT
    listing = schema["paths"]["/v1/trajectories"]["get"]
    assert listing["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/TrajectoryList")
    assert {p["name"] for p in listing["parameters"]} == {"limit", "before", "since", "until", "route"}
    outcome = schema["paths"]["/v1/trajectories/{trajectory_id}/outcome"]["post"]
    assert set(outcome["requestBody"]["content"]["application/json"]["schema"]["properties"]) == {
        "success",
        "score",
        "labels",
    }
    assert outcome["responses"]["409"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
    docs = client.get(f"{gateway.url}/docs")
    assert docs.status_code == 200 and "/openapi.json" in docs.text
    # The drop-in APIs are not part of this schema; they are still served, raw.
    assert not any("chat" in path or "messages" in path or "responses" in path for path in schema["paths"])


def test_management_errors_keep_the_openai_shape(gateway: GatewayServer, client: httpx.Client) -> None:
    missing = client.get(f"{gateway.url}/v1/trajectories/nobody")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "trajectory_not_found"
    bad = client.get(f"{gateway.url}/v1/trajectories", params={"limit": "0"})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "limit"
    assert client.head(f"{gateway.url}/v1/models").status_code == 200
    assert client.head(f"{gateway.url}/healthz").status_code == 200


def test_no_request_drawn_from_the_schema_gets_a_500(make_gateway: MakeGateway, client: httpx.Client) -> None:
    # The drawn requests carry wrong keys by the hundred: no throttling of them (test_auth_throttle.py).
    gateway = make_gateway(admin_api_keys=["admin-key"], auth_throttle={"max_failures": 0})
    auth = {"Authorization": "Bearer admin-key"}
    # A few real trajectories, so that drawn ids sometimes name one (and an outcome can land).
    known = []
    for n in range(3):
        answer = client.post(
            f"{gateway.url}/v1/chat/completions",
            json={"model": "tandem", "messages": [{"role": "user", "content": f"task {n}"}]},
            headers={"X-Session-ID": f"fuzz-{n}"},
        )
        assert answer.status_code == 200, answer.text
        known.append(answer.headers["x-tandem-trajectory"])
    document = client.get(f"{gateway.url}/openapi.json").json()
    schema = schemathesis.openapi.from_dict(document)
    seen: dict[str, list[int]] = {}
    started = time.monotonic()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == sum(len(ops) for ops in MANAGEMENT.values())
    for operation in operations:
        described = document["paths"][operation.path][operation.method.lower()]
        # Invalid requests exist only where there is an input to get wrong.
        takes_input = bool(described.get("parameters") or described.get("requestBody"))
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if takes_input else (GenerationMode.POSITIVE,):
            strategies = [operation.as_strategy(mode)]
            if "{trajectory_id}" in operation.path:
                strategies += [operation.as_strategy(mode, path_parameters={"trajectory_id": k}) for k in known]
            # With the admin key, and sometimes without: both answer, neither with a 500.
            keys = st.sampled_from([auth, auth, {}])

            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            @given(case=st.one_of(strategies), headers=keys)
            def fuzz(case: Any, headers: dict[str, str]) -> None:
                response = case.call(base_url=gateway.url, headers=headers, timeout=10)
                seen.setdefault(f"{case.operation.method.upper()} {case.operation.path}", []).append(
                    response.status_code
                )
                assert response.status_code < 500 or (
                    case.operation.path == "/readyz" and response.status_code == 503
                ), f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]}"
                if response.status_code >= 400 and response.status_code != 503:
                    assert set(response.json()["error"]) == {"message", "type", "code", "param"}
                else:  # what was answered is what the schema says
                    case.validate_response(response, checks=[response_schema_conformance])

            fuzz()
    elapsed = time.monotonic() - started
    assert elapsed < FUZZ_BUDGET_S, f"the fuzzing took {elapsed:.0f} s"
    # Every operation was exercised, past the key check and into the handlers' own parsing.
    assert set(seen) == {f"{m.upper()} {p}" for p, ms in MANAGEMENT.items() for m in ms}
    assert 400 in seen["POST /v1/trajectories/{trajectory_id}/outcome"]
    assert 200 in seen["GET /v1/trajectories/{trajectory_id}"] and 404 in seen["GET /v1/trajectories/{trajectory_id}"]
    assert 200 in seen["GET /v1/trajectories"] and 400 in seen["GET /v1/trajectories"]
    assert 401 in seen["GET /v1/trajectories"]


def test_a_validation_error_would_keep_the_openai_shape() -> None:
    # No shipped route lets FastAPI validate its input; a route that did would still answer 400
    # in the OpenAI shape, never FastAPI's 422 `{"detail": …}`.
    from starlette.testclient import TestClient

    from router.app import create_app
    from tests.gateway_server import settings_for

    app = create_app(settings_for("http://127.0.0.1:9", "http://127.0.0.1:9"))

    async def probe(n: int) -> dict[str, int]:
        return {"n": n}

    app.add_api_route("/probe", probe)
    answer = TestClient(app).get("/probe", params={"n": "many"})  # no `with`: no lifespan, no upstream calls
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["param"] == "query.n" and answer.json()["error"]["type"] == "invalid_request_error"
