"""The privacy vault in Redis, apart from the trajectory's hash (a real redis-server): a step's
start does not read it, replicas read only what they do not know yet, and what one replica
learned the other redacts."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import redis.asyncio as aredis

from router.metrics.core import Metrics
from router.privacy.guard import PrivacyGuard
from router.privacy.memo import PrivacyMemo
from router.privacy.vault import VaultCipher
from router.trajectory.redis_store import RedisStore
from router.trajectory.resilient import ResilientStore
from router.trajectory.state import StepStart
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until
from tests.redis_server import RedisServer

MakeGateway = Callable[..., GatewayServer]
ROUTES = {"tandem": {"strategy": "cloud", "privacy": "redact"}}
# Detected standing alone; inside a longer run of digits no detector reads it as a card, so only
# a replica that knows the value (from the shared vault) can redact it there.
CARD_A, CARD_B = "5500000000000004", "4111111111111111"


def chat(client: httpx.Client, server: GatewayServer, messages: list[dict[str, Any]]) -> httpx.Response:
    response = client.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "tandem", "messages": messages},
        headers={"X-Session-ID": "shared-vault"},
    )
    assert response.status_code == 200, response.text
    assert response.headers["x-tandem-target"] == "cloud"
    return response


def test_each_replica_redacts_what_the_other_learned(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, redis_url: str
) -> None:
    a, b = make_gateway(routes=ROUTES, redis_url=redis_url), make_gateway(routes=ROUTES, redis_url=redis_url)
    chat(client, a, [{"role": "user", "content": f"pay with card {CARD_A}"}])
    assert cloud.received[-1].body["messages"][0]["content"] == "pay with card [CARD_1]"
    # B never saw the card where a detector finds it: it redacts it from the vault A wrote.
    hidden_a = {"role": "user", "content": f"ticket 1234{CARD_A}5678"}
    chat(client, b, [hidden_a])
    assert cloud.received[-1].body["messages"] == [{"role": "user", "content": "ticket 1234[CARD_1]5678"}]
    # And the other way round: B learns a card, A (whose memory holds the trajectory) redacts it.
    learned_b = [hidden_a, {"role": "assistant", "content": "ok"}, {"role": "user", "content": f"card {CARD_B}"}]
    chat(client, b, learned_b)
    assert cloud.received[-1].body["messages"][2]["content"] == "card [CARD_2]"
    hidden_b = {"role": "user", "content": f"ref 99{CARD_B}99"}
    chat(client, a, [hidden_a, {"role": "assistant", "content": "ok"}, hidden_b])
    sent = cloud.received[-1].body["messages"]
    assert [m["content"] for m in sent] == ["ticket 1234[CARD_1]5678", "ok", "ref 99[CARD_2]99"]
    assert all(CARD_A not in str(r.body) and CARD_B not in str(r.body) for r in cloud.received)
    for replica in (a, b):
        privacy = client.get(f"{replica.url}/v1/trajectories/shared-vault").json()["privacy"]
        assert privacy["seen"] == {"CARD": 2} and privacy["exposed"] == {}


def _start(step: int) -> StepStart:
    return StepStart("flat", f"fp-{step}", False, "task", "tandem", "", time.time())


async def _bytes_sent(client: Any) -> int:
    stats = await client.info("stats")
    return int(stats["total_net_output_bytes"])


async def test_a_step_reads_the_same_from_redis_however_big_the_vault(tmp_path: Path) -> None:
    """What Redis sends for one step (its start, the vault read, the step's notes) stays flat as
    the vault grows from 20 values to 2,000; the vault's new entries are read once, by the
    step after they were written. A private redis-server: no other client's bytes count."""
    own = RedisServer(tmp_path / "redis").start()
    store, cipher = RedisStore(own.url), VaultCipher(b"k" * 32)
    raw = aredis.Redis.from_url(own.url)
    reader, writer = PrivacyMemo(), PrivacyMemo()  # two replicas' memories
    history = [{"role": "user", "content": "write to person0@example.org and person1@example.org"}]
    try:

        async def add_values(first: int, last: int) -> None:
            """Another replica learns values person<first..last>@example.org."""
            slot = await store.begin_step(_start(1000 + last))
            assert slot.trajectory is not None
            guard = PrivacyGuard("redact", "flat", slot.trajectory.notes, store, Metrics(), cipher=cipher, memo=writer)
            await guard.load()
            for n in range(first, last):
                await guard._allocate({f"person{n}@example.org": "EMAIL"}, set())

        async def step(index: int) -> tuple[int, int]:
            """One step of the reading replica: the bytes Redis sent for it, the fields its
            start returned."""
            history.append({"role": "assistant", "content": f"step {index} done"})
            before = await _bytes_sent(raw)
            slot = await store.begin_step(_start(index))
            assert slot.trajectory is not None
            guard = PrivacyGuard(
                "redact",
                "flat",
                slot.trajectory.notes,
                store,
                Metrics(),
                cipher=cipher,
                memo=reader,
                born=slot.trajectory.created_at,
                vault_size=slot.trajectory.vault_size,
            )
            await guard.scan(history)
            out = guard.outgoing(history)
            await guard.commit()
            assert out[0]["content"] == "write to [EMAIL_1] and [EMAIL_2]"
            sent = await _bytes_sent(raw) - before
            fields = len(await raw.hgetall("tandem:t:flat"))
            return sent, fields

        await add_values(0, 20)
        await step(1)  # a trajectory new to this replica: its whole vault, once
        small, fields_small = await step(2)
        await add_values(20, 2000)
        caught_up, _ = await step(3)  # reads the 1,980 entries written since, once
        large, fields_large = await step(4)
        assert caught_up > large + 1980 * 40  # the new entries were read (sealed, ~80 bytes each)
        assert abs(large - small) < 300, (small, large)
        assert fields_large == fields_small < 40  # the trajectory's hash holds no vault field
        assert await raw.hlen("tandem:t:flat:v") >= 4000  # 2,000 sealed values and their ids
    finally:
        await raw.aclose()
        await store.aclose()
        own.stop()


def test_values_learned_during_an_outage_reach_the_shared_vault(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream, tmp_path: Path
) -> None:
    """Redis goes away: the replica still redacts what it knew, learns a new value into its
    memory and its journal, and writes it back; a replica started later redacts it."""
    own = RedisServer(tmp_path / "redis", persistent=True).start()
    try:
        first = make_gateway(routes=ROUTES, redis_url=own.url)
        chat(client, first, [{"role": "user", "content": f"pay with card {CARD_A}"}])
        own.stop()
        hidden_a = {"role": "user", "content": f"ticket 1234{CARD_A}5678"}
        chat(
            client,
            first,
            [hidden_a, {"role": "assistant", "content": "ok"}, {"role": "user", "content": f"card {CARD_B}"}],
        )
        assert [m["content"] for m in cloud.received[-1].body["messages"]] == [
            "ticket 1234[CARD_1]5678",
            "ok",
            "card [CARD_2]",
        ]
        store = first.gateway.tracker.store
        assert isinstance(store, ResilientStore) and store.degraded
        own.start()
        assert wait_until(lambda: not store.degraded and len(store.journal) == 0, timeout=6)
        later = make_gateway(routes=ROUTES, redis_url=own.url)
        chat(client, later, [{"role": "user", "content": f"ref 99{CARD_B}99 and 1234{CARD_A}5678"}])
        assert cloud.received[-1].body["messages"][0]["content"] == "ref 99[CARD_2]99 and 1234[CARD_1]5678"
    finally:
        own.stop()


async def test_a_tool_output_full_of_values_is_written_in_two_round_trips(tmp_path: Path) -> None:
    """300 new values in one step: their placeholders, then their sealed values, each written as
    one pipeline, not one Redis call per value (which, at 1 ms a call, made a step of a data dump
    take seconds); all of them readable by another replica."""
    own = RedisServer(tmp_path / "redis").start()
    store, cipher = RedisStore(own.url), VaultCipher(b"k" * 32)
    batches: list[list[str]] = []  # per round trip, the digests of the scripts it ran
    start = store._batch._start

    def counted_start(calls: list[Any], load: list[str]) -> None:
        batches.append([call.script.sha for call in calls if call.script is not None])
        start(calls, load)

    store._batch._start = counted_start  # type: ignore[method-assign]
    try:
        await store.vault_note("warm", "k", "v")  # the script loaded: a fresh Redis answers NOSCRIPT once
        batches.clear()
        slot = await store.begin_step(_start(1))
        assert slot.trajectory is not None
        dump = "\n".join(f"customer{n}@example.org" for n in range(300))
        guard = PrivacyGuard("redact", "flat", slot.trajectory.notes, store, Metrics(), cipher=cipher)
        await guard.scan([{"role": "user", "content": f"the export:\n{dump}"}])
        vault_trips = [batch.count(store._vault_note.sha) for batch in batches if store._vault_note.sha in batch]
        assert vault_trips == [300, 300]
        # Numbered in the order found, as one value at a time numbered them.
        assert guard.vault == {f"customer{n}@example.org": f"[EMAIL_{n + 1}]" for n in range(300)}
        other = PrivacyGuard("redact", "flat", {}, RedisStore(own.url), Metrics(), cipher=cipher)
        await other.load()
        assert other.vault == guard.vault
    finally:
        await store.aclose()
        own.stop()
