"""A step's error may quote an upstream's bad answer; on routes whose privacy policy treats values
as sensitive (`redact`, `keep_local`) it is kept with placeholders, as the messages are: no card
number or e-mail address in clear in the trajectory API, the audit log, the operator's view or
the metrics. Real gateway, real upstream servers answering garbage, in memory and with Redis."""

from __future__ import annotations

import httpx
import pytest

from tests.both_stores import MakeGateway, make_gateway  # noqa: F401 (the fixture, both stores)
from tests.fake_upstream import FakeUpstream

ADMIN_KEY = "admin-key-for-errors"
EMAIL, CARD = "jane.doe@example.com", "4111 1111 1111 1111"
ORIGINALS = (EMAIL, CARD, CARD.replace(" ", ""))
ROUTES = {
    "private": {"strategy": "cloud", "privacy": "redact"},
    "local": {"strategy": "cloud", "privacy": "keep_local"},
}
# An answer that is no chat completion, short enough to be quoted whole in the step's error; it
# names a value the step sent (the card) and one it never did (the address).
GARBAGE = {
    "kind": "raw",
    "status": 200,
    "content_type": "text/html",
    "body": f"<h1>boom</h1> card {CARD} owner {EMAIL}",
}
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


@pytest.mark.parametrize("model", ["private", "local"])
def test_an_upstream_quoted_in_an_error_shows_no_original(
    make_gateway: MakeGateway,  # noqa: F811
    client: httpx.Client,
    edge: FakeUpstream,
    cloud: FakeUpstream,
    tmp_path: pytest.TempPathFactory,
    model: str,
) -> None:
    audit = tmp_path / "audit.jsonl"  # type: ignore[operator]
    server = make_gateway(
        routes=ROUTES,
        admin_api_keys=[ADMIN_KEY],
        ui={"enabled": True},
        audit={"mode": "content", "path": str(audit)},
    )
    # redact: the cloud answers garbage, then the edge it fails over to; keep_local: the edge.
    cloud.push(GARBAGE)
    edge.push(GARBAGE)
    messages = [{"role": "user", "content": f"Charge card {CARD} and mail the receipt."}]
    response = client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": model, "messages": messages},
        headers={"X-Session-ID": f"garbage-{model}"},
    )
    assert response.status_code == 502, response.text
    assert response.json()["error"]["code"] == "upstream_invalid_answer"
    if model == "private":
        assert len(cloud.received) == 1 and CARD not in str(cloud.received[0].body)
    else:
        assert not cloud.received  # kept on the edge

    detail = client.get(f"{server.url}/v1/trajectories/garbage-{model}", headers=ADMIN)
    assert detail.status_code == 200
    records = detail.json()["records"]
    error = records[0]["error"]
    # The error is kept, and still says what went wrong, with placeholders for the values.
    assert "not a JSON object" in error and "[CARD" in error and "[EMAIL" in error, error
    listing = client.get(f"{server.url}/v1/trajectories", headers=ADMIN).text
    page = client.get(f"{server.url}/ui/t/garbage-{model}", headers=ADMIN)
    assert page.status_code == 200 and "[CARD" in page.text
    metrics = client.get(f"{server.url}/metrics").text
    server.stop()  # the audit log is written whole
    written = audit.read_text()
    assert f"garbage-{model}" in written
    places = {
        "the trajectory API": detail.text + listing,
        "the operator's view": page.text,
        "the metrics": metrics,
        "the audit log": written,
    }
    for where, text in places.items():
        for original in ORIGINALS:
            assert original not in text, f"{original!r} in clear in {where}"
