"""On routes whose privacy policy treats values as sensitive, the originals live only in the
vault, sealed: not in the trajectory's task, the trajectories API, an export, the audit log, or
anywhere in Redis in clear. Real gateway, real redis-server, scripted cloud."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from router.export import run_export
from router.settings import ConfigError
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for

MakeGateway = Callable[..., GatewayServer]
EMAIL, CARD = "jane.doe@example.com", "4111 1111 1111 1111"
ORIGINALS = (EMAIL, CARD, CARD.replace(" ", ""), EMAIL.encode().hex())
FIRST = {"role": "user", "content": f"Email the invoice for card {CARD} to {EMAIL}, then tell me."}
ROUTES = {
    "private": {"strategy": "cloud", "privacy": "redact"},
    "local": {"strategy": "cloud", "privacy": "keep_local"},
}


def redis_dump(url: str) -> bytes:
    """Every key and every value Redis holds, whatever its type."""
    client = redis.Redis.from_url(url)
    parts: list[bytes] = []
    for key in client.scan_iter(count=1000):
        parts.append(key)
        kind = client.type(key)
        if kind == b"string":
            parts.append(client.get(key) or b"")
        elif kind == b"hash":
            for field, value in client.hgetall(key).items():
                parts += [field, value]
        elif kind == b"list":
            parts += client.lrange(key, 0, -1)
        elif kind == b"set":
            parts += list(client.smembers(key))
        elif kind == b"zset":
            parts += [member for member, _ in client.zrange(key, 0, -1, withscores=True)]
        elif kind == b"stream":
            parts += [repr(entry).encode() for entry in client.xrange(key)]
        else:
            raise AssertionError(f"unexpected Redis type {kind!r} for {key!r}")
    client.close()
    return b"\n".join(parts)


def assert_clean(where: str, data: bytes | str) -> None:
    text = data.decode(errors="replace") if isinstance(data, bytes) else data
    for original in ORIGINALS:
        assert original not in text, f"{original!r} found in clear in {where}"


def streamed_text(response: httpx.Response) -> str:
    pieces = []
    for line in response.text.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices") or ():
                pieces.append(choice.get("delta", {}).get("content") or "")
    return "".join(pieces)


def chat(
    client: httpx.Client, server: GatewayServer, model: str, session: str, messages: list[dict[str, Any]], **body: Any
) -> httpx.Response:
    response = client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": model, "messages": messages, **body},
        headers={"X-Session-ID": session},
    )
    assert response.status_code == 200, response.text
    return response


def test_originals_stay_in_the_sealed_vault(
    make_gateway: MakeGateway,
    client: httpx.Client,
    cloud: FakeUpstream,
    edge: FakeUpstream,
    redis_url: str,
    tmp_path: Path,
) -> None:
    audit = tmp_path / "audit.jsonl"
    server = make_gateway(routes=ROUTES, redis_url=redis_url, audit={"mode": "content", "path": str(audit)})
    # The cloud answers with the placeholder it was given; the agent gets the original back.
    cloud.push({"text": "Done: sent to [EMAIL_1]."}, {"text": "Card [CARD_1] charged.", "chunks": 3})
    first = chat(client, server, "private", "red", [FIRST])
    assert EMAIL in first.json()["choices"][0]["message"]["content"]
    history = [FIRST, first.json()["choices"][0]["message"], {"role": "user", "content": "and the card?"}]
    streamed = chat(client, server, "private", "red", history, stream=True)
    assert streamed_text(streamed) == f"Card {CARD} charged."
    assert cloud.received and all(EMAIL not in str(r.body) for r in cloud.received)
    chat(client, server, "local", "kept", [FIRST])  # keep_local: answered by the edge
    assert len(edge.received) == 1

    listing = client.get(f"{server.url}/v1/trajectories").json()
    details = [client.get(f"{server.url}/v1/trajectories/{sid}").json() for sid in ("red", "kept")]
    assert_clean("the trajectories API", str(listing) + str(details))
    assert details[0]["task"] == "Email the invoice for card [CARD] to [EMAIL], then tell me."
    assert details[1]["task"] == details[0]["task"]

    exported = tmp_path / "api.jsonl"
    assert run_export(exported, url=server.url, redis_url=None, prefix="tandem:", since=None, api_key=None) == 3
    assert_clean("the export from the API", exported.read_bytes())
    server.stop()
    from_redis = tmp_path / "redis.jsonl"
    assert run_export(from_redis, url=None, redis_url=redis_url, prefix="tandem:", since=None, api_key=None) == 3
    assert_clean("the export from Redis", from_redis.read_bytes())

    dump = redis_dump(redis_url)
    assert_clean("Redis", dump)
    assert b"v1:" in dump  # the vault is there, sealed
    written = audit.read_text()
    assert_clean("the audit log", written)
    assert "[EMAIL_1]" in written and "[CARD_1]" in written


def test_a_replica_with_the_same_key_restores_and_one_without_it_refuses(
    make_gateway: MakeGateway,
    client: httpx.Client,
    cloud: FakeUpstream,
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = make_gateway(routes=ROUTES, redis_url=redis_url)
    chat(client, first, "private", "shared", [FIRST])
    first.stop()
    # Another replica, same key: it opens the vault the first one sealed.
    second = make_gateway(routes=ROUTES, redis_url=redis_url)
    cloud.push({"text": "Mailing [EMAIL_1] now."})
    answer = chat(
        client,
        second,
        "private",
        "shared",
        [FIRST, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}],
    )
    assert answer.json()["choices"][0]["message"]["content"] == f"Mailing {EMAIL} now."
    assert EMAIL not in str(cloud.received[-1].body)
    second.stop()
    # A replica with another key cannot open it: the redact route fails closed (edge), never
    # sending the value to the cloud in clear.
    monkeypatch.setenv("TANDEM_VAULT_KEY", base64.b64encode(os.urandom(32)).decode())
    third = make_gateway(routes=ROUTES, redis_url=redis_url)
    sent = len(cloud.received)
    later = [FIRST, {"role": "assistant", "content": "ok"}, {"role": "user", "content": f"again {EMAIL}"}]
    response = chat(client, third, "private", "shared", later)
    assert response.headers["x-tandem-target"] == "edge"
    assert len(cloud.received) == sent


def test_redis_without_a_vault_key_is_refused_at_start(
    edge: FakeUpstream, cloud: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TANDEM_VAULT_KEY")
    with pytest.raises(ConfigError, match=r"set \$TANDEM_VAULT_KEY"):
        GatewayServer(settings_for(edge.base_url, cloud.base_url, redis_url="redis://127.0.0.1:1/0"))
    monkeypatch.setenv("TANDEM_VAULT_KEY", "c2hvcnQ=")
    with pytest.raises(ConfigError, match="must hold 32 bytes"):
        GatewayServer(settings_for(edge.base_url, cloud.base_url, redis_url="redis://127.0.0.1:1/0"))
    # Without Redis the vault never leaves the process: a key made at start-up serves.
    monkeypatch.delenv("TANDEM_VAULT_KEY")
    assert GatewayServer(settings_for(edge.base_url, cloud.base_url)).gateway.vault.ephemeral


def test_plans_and_summaries_are_kept_with_placeholders(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, edge: FakeUpstream, redis_url: str
) -> None:
    routes = {
        "sketched": {"strategy": "sketch", "privacy": "redact"},
        "summarised": {"strategy": "cloud", "privacy": "redact", "context": {"mode": "summary", "k": 1}},
    }
    server = make_gateway(routes=routes, redis_url=redis_url)
    # The cloud's plan names the placeholder it was given; the edge must get the original back.
    cloud.push({"text": "1. Find the invoice.\n2. Mail it to [EMAIL_1]."})
    chat(client, server, "sketched", "plan", [FIRST])
    assert cloud.received and EMAIL not in str(cloud.received[-1].body)
    assert f"Mail it to {EMAIL}" in edge.received[-1].body["messages"][0]["content"]

    # The edge summarises the earlier history in its own words, originals included.
    history = [FIRST]
    for turn in range(3):
        if turn == 2:
            edge.push({"text": f"The user wants the invoice for {CARD} mailed to {EMAIL}."})
        answer = chat(client, server, "summarised", "summary", [*history, {"role": "user", "content": f"go {turn}"}])
        history += [{"role": "user", "content": f"go {turn}"}, answer.json()["choices"][0]["message"]]
    assert len(edge.received) == 2 and "Summarise" in str(edge.received[1].body)  # the summary call
    assert all(EMAIL not in str(r.body) for r in cloud.received)

    details = [client.get(f"{server.url}/v1/trajectories/{sid}").json() for sid in ("plan", "summary")]
    assert details[0]["notes"]["strategy:sketch:plan"] == "1. Find the invoice.\n2. Mail it to [EMAIL_1]."
    assert details[1]["notes"]["context:summary"] == "The user wants the invoice for [CARD_1] mailed to [EMAIL_1]."
    assert_clean("the trajectories API", str(details))
    server.stop()
    assert_clean("Redis", redis_dump(redis_url))
