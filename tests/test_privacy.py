"""Privacy policies through the real gateway: what the fake cloud received, byte for byte, what
the trajectory API and the metrics show, and what an SDK reads from a restored stream. Each
mode's decisions, redaction and restoration are tested in process: tests/test_engine_privacy.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import openai
import orjson

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]
EMAIL, CARD = "jane.doe@example.com", "4111 1111 1111 1111"
TASK = {"role": "user", "content": f"Email the invoice for card {CARD} to {EMAIL}"}


def ask(
    client: httpx.Client, server: GatewayServer, messages: list[dict[str, Any]], session: str = "p", **body: Any
) -> httpx.Response:
    return client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": messages, **body},
        headers={"X-Session-ID": session},
    )


def trajectory(client: httpx.Client, server: GatewayServer, session: str = "p") -> dict[str, Any]:
    result: dict[str, Any] = client.get(f"{server.url}/v1/trajectories/{session}").json()
    return result


def test_allow_measures_what_the_cloud_received(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "allow"}})
    ask(client, server, [TASK])
    assert cloud.received[0].body["messages"] == [TASK]  # unchanged
    detail = trajectory(client, server)
    assert detail["privacy"]["seen"] == {"CARD": 1, "EMAIL": 1}
    assert detail["privacy"]["exposed"] == {"CARD": 1, "EMAIL": 1}
    assert detail["privacy"]["score"] == 0.0
    assert detail["records"][0]["exposed"] == ["CARD", "EMAIL"]
    assert "vault:value:[EMAIL_1]" not in str(detail) and EMAIL not in str(detail["notes"])  # the vault is never shown
    metrics = client.get(f"{server.url}/metrics").text
    assert 'tandem_privacy_values_total{action="exposed",route="tandem",type="EMAIL"} 1.0' in metrics


def test_redact_restores_placeholders_split_across_stream_chunks(
    make_gateway: MakeGateway, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    # The fake streams word by word; "[EMA" "IL_1]" arrives split when chunks are single words.
    cloud.push({"text": "Write to [EMAIL_1] now, card [CARD_1].", "chunks": 6})
    sdk = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    stream = sdk.chat.completions.create(model="tandem", messages=[TASK], stream=True)  # type: ignore[list-item]
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == f"Write to {EMAIL} now, card {CARD}."


def test_stream_restorer_handles_any_split() -> None:
    from router.privacy.redact import Redactor, StreamRestorer

    redactor = Redactor({EMAIL: "[EMAIL_1]"})
    answer = "to [EMAIL_1] and [EMAIL_1]!"
    for cut in range(1, len(answer)):
        restorer = StreamRestorer(redactor)
        out = b""
        for part, finish in ((answer[:cut], None), (answer[cut:], "stop")):
            event = {"choices": [{"index": 0, "delta": {"content": part}, "finish_reason": finish}]}
            out += restorer.feed(b"data: " + orjson.dumps(event) + b"\n\n")
        texts = [orjson.loads(line[6:])["choices"][0]["delta"]["content"] for line in out.split(b"\n\n") if line]
        assert "".join(texts) == f"to {EMAIL} and {EMAIL}!", cut


def test_malformed_utf8_and_huge_tool_output(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    bad = b'{"model": "tandem", "messages": [{"role": "user", "content": "\xff\xfe"}]}'
    response = client.post(
        f"{server.url}/v1/chat/completions", content=bad, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400 and "not valid UTF-8" in response.json()["error"]["message"]
    huge = "log line\n" * 100_000 + f"contact {EMAIL}\n"
    response = ask(
        client,
        server,
        [TASK, {"role": "assistant", "content": "ok"}, {"role": "tool", "tool_call_id": "1", "content": huge}],
    )
    assert response.status_code == 200
    assert EMAIL not in orjson.dumps(cloud.received[0].body).decode()
