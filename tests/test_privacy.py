"""Privacy policies through the real gateway: what the fake cloud received, byte for byte."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import openai
import orjson
import pytest

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


def test_redact_sends_placeholders_and_restores_the_answer(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    cloud.push(
        {
            "kind": "tool_call",
            "name": "send_mail",
            "arguments": '{"to": "[EMAIL_1]", "body": {"card": "[CARD_1]", "note": "quote \\" ok"}}',
        }
    )
    response = ask(client, server, [TASK])
    sent = cloud.received[0].body["messages"]
    assert sent == [{"role": "user", "content": "Email the invoice for card [CARD_1] to [EMAIL_1]"}]
    arguments = response.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert orjson.loads(arguments) == {"to": EMAIL, "body": {"card": CARD, "note": 'quote " ok'}}
    detail = trajectory(client, server)
    assert detail["privacy"]["exposed"] == {} and detail["privacy"]["score"] == 1.0
    assert detail["records"][0]["redacted"] == 2

    # Next step: the same placeholders, and the tool's arguments in the history redacted too.
    history = [
        TASK,
        response.json()["choices"][0]["message"],
        {"role": "tool", "tool_call_id": "call_1", "content": f"sent to {EMAIL}"},
    ]
    cloud.push({"text": "Done: mailed [EMAIL_1]."})
    second = ask(client, server, history)
    sent = cloud.received[1].body["messages"]
    assert sent[2]["content"] == "sent to [EMAIL_1]"
    assert orjson.loads(sent[1]["tool_calls"][0]["function"]["arguments"])["to"] == "[EMAIL_1]"
    assert EMAIL not in orjson.dumps(cloud.received[1].body).decode()
    assert second.json()["choices"][0]["message"]["content"] == f"Done: mailed {EMAIL}."


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


def test_placeholder_typed_by_the_user_is_never_reused(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    cloud.push({"text": "You wrote [EMAIL_1]; the address is [EMAIL_2]."})
    response = ask(client, server, [{"role": "user", "content": f"The template says [EMAIL_1]; mail {EMAIL}"}])
    assert cloud.received[0].body["messages"][0]["content"] == "The template says [EMAIL_1]; mail [EMAIL_2]"
    assert response.json()["choices"][0]["message"]["content"] == f"You wrote [EMAIL_1]; the address is {EMAIL}."


def test_keep_local_keeps_sensitive_steps_on_the_edge_and_pins(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "keep_local"}})
    clean = ask(client, server, [{"role": "user", "content": "list the files"}], "k")
    assert clean.headers["x-tandem-target"] == "cloud"
    messages = [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": "ok"},
        {"role": "tool", "tool_call_id": "1", "content": f"owner: {EMAIL}"},
    ]
    sensitive = ask(client, server, messages, "k")
    assert sensitive.headers["x-tandem-target"] == "edge"
    assert sensitive.headers["x-tandem-reason"] == "privacy_keep_local"
    edge.push({"kind": "error", "status": 503})  # the edge fails: still no failover to the cloud
    failed = ask(client, server, [*messages, {"role": "assistant", "content": "x"}], "k")
    assert failed.status_code == 503 and len(cloud.received) == 1
    assert trajectory(client, server, "k")["notes"]["pin"] == "edge"


def test_block_refuses_sensitive_cloud_steps(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "block"}})
    assert ask(client, server, [{"role": "user", "content": "hello"}], "b1").status_code == 200
    blocked = ask(client, server, [TASK], "b2")
    assert blocked.status_code == 403
    error = blocked.json()["error"]
    assert error["code"] == "privacy_blocked" and "CARD, EMAIL" in error["message"]
    assert len(cloud.received) == 1


def test_detection_failure_fails_closed(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    import router.privacy.guard as guard

    def broken(text: str) -> list[Any]:
        raise RuntimeError("detector bug")

    monkeypatch.setattr(guard, "detect", broken)
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    response = ask(client, server, [TASK])
    assert response.headers["x-tandem-target"] == "edge" and not cloud.received
    assert "tandem_privacy_failures_total 1.0" in client.get(f"{server.url}/metrics").text


def test_privacy_score_on_a_scripted_trajectory(make_gateway: MakeGateway, client: httpx.Client) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "edge"}}, privacy_weights={"CARD": 3.0, "EMAIL": 1.0})
    first = [{"role": "user", "content": f"reach {EMAIL}"}]
    ask(client, server, first, "sc")  # edge: seen, not exposed
    second = [*first, {"role": "assistant", "content": "ok"}]
    ask(client, server, second, "sc", model="tandem/cloud")  # cloud: EMAIL exposed
    third = [*second, {"role": "assistant", "content": "ok"}, {"role": "user", "content": f"card {CARD}"}]
    ask(client, server, third, "sc")  # edge: CARD seen only
    privacy = trajectory(client, server, "sc")["privacy"]
    assert privacy["seen"] == {"EMAIL": 1, "CARD": 1} and privacy["exposed"] == {"EMAIL": 1}
    assert privacy["score"] == pytest.approx(1 - 1.0 / 4.0)


def test_advisor_inner_call_is_redacted_too(
    make_gateway: MakeGateway, client: httpx.Client, edge: FakeUpstream, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "advisor", "privacy": "redact"}})
    edge.push({"kind": "tool_call", "name": "advisor", "arguments": "{}"}, {"text": "final"})
    cloud.push({"text": "Ask [EMAIL_1] for the invoice."})
    ask(client, server, [TASK])
    prompt = cloud.received[0].body["messages"][0]["content"]
    assert "[EMAIL_1]" in prompt and EMAIL not in prompt and CARD not in prompt
    assert edge.received[1].body["messages"][-1]["content"] == f"Ask {EMAIL} for the invoice."  # restored locally


def test_malformed_utf8_and_huge_tool_output(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "privacy": "redact"}})
    bad = b'{"model": "tandem", "messages": [{"role": "user", "content": "\xff\xfe"}]}'
    response = client.post(
        f"{server.url}/v1/chat/completions", content=bad, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400 and "not valid JSON" in response.json()["error"]["message"]
    huge = "log line\n" * 100_000 + f"contact {EMAIL}\n"
    response = ask(
        client,
        server,
        [TASK, {"role": "assistant", "content": "ok"}, {"role": "tool", "tool_call_id": "1", "content": huge}],
    )
    assert response.status_code == 200
    assert EMAIL not in orjson.dumps(cloud.received[0].body).decode()
