"""The edge's summary of a run's earlier steps (`context: summary`) is read by detection afresh
before it goes to the cloud: the edge may write a value in a form the scan never met (a card
spaced anew) or one it made up. On `redact` the value gets a placeholder; on `keep_local` the
cloud gets the recent steps alone. Against a real gateway and scripted upstreams."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

CARD, CARD_RESPACED = "4111 1111 1111 1111", "4111-1111-1111-1111"
MADE_UP = "billing.desk@example.org"


def _run(client: httpx.Client, server: GatewayServer, route: str, first: str, edge: FakeUpstream) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": first}]
    for turn in range(3):
        if turn == 2:  # the third step's summary, in the edge's own words
            edge.push({"text": f"The user wants card {CARD_RESPACED} charged; receipt to {MADE_UP}."})
        history.append({"role": "user", "content": f"go {turn}"})
        response = client.post(
            f"{server.url}/v1/chat/completions",
            json={"model": route, "messages": history},
            headers={"X-Session-ID": f"summary-{route}"},
        )
        assert response.status_code == 200, response.text
        history.append(response.json()["choices"][0]["message"])


def test_a_value_only_the_edges_summary_holds_is_redacted_on_the_way_to_the_cloud(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, cloud: FakeUpstream, edge: FakeUpstream
) -> None:
    routes = {"summarised": {"strategy": "cloud", "privacy": "redact", "context": {"mode": "summary", "k": 1}}}
    server = make_gateway(routes=routes)
    _run(client, server, "summarised", f"Charge the card {CARD} for the invoice.", edge)
    assert any("Summarise" in str(r.body) for r in edge.received)  # the summary was written
    sent = str([r.body for r in cloud.received])
    assert "Summary of the earlier steps" in sent
    assert CARD_RESPACED not in sent and MADE_UP not in sent and CARD not in sent
    assert "[EMAIL_" in sent and "[CARD_" in sent


def test_on_keep_local_a_summary_with_a_value_is_not_sent(
    make_gateway: Callable[..., GatewayServer], client: httpx.Client, cloud: FakeUpstream, edge: FakeUpstream
) -> None:
    routes = {"local": {"strategy": "cloud", "privacy": "keep_local", "context": {"mode": "summary", "k": 1}}}
    server = make_gateway(routes=routes)
    _run(client, server, "local", "Tidy the invoices folder.", edge)
    assert any("Summarise" in str(r.body) for r in edge.received)
    sent = str([r.body for r in cloud.received])
    assert MADE_UP not in sent and CARD_RESPACED not in sent
    assert "Summary of the earlier steps" not in sent  # the recent steps alone
