"""Stitching entries edited where they are kept (router/trajectory/merges.py): each op's result,
and Redis's Lua script (redis_scripts.MERGE, a real redis-server) giving exactly what the Python
gives, op for op, on random entries. (That two replicas' edits are all kept is held through real
gateways: tests/test_stitch_replicas.py.)"""

from __future__ import annotations

import random

import pytest
import redis

from router.trajectory.merges import APPEND, DROP, FLIGHT, FRONT, MARK, NOTE, Merge, merged
from router.trajectory.redis_store import RedisStore
from router.trajectory.store import MemoryStore

RUNS = ["t1", "t2", "t3", "traj-9f", "*"]
TAILS = ["|12|ab12", "|3|ff", "|120|0a"]
STATES = [FLIGHT, "delivered", "failed"]


def test_each_op() -> None:
    assert merged("t1|a t2|b t1|c", Merge("c:h", DROP, "t1")) == "t2|b"
    assert merged("t1|a", Merge("c:h", DROP, "t1")) == ""
    assert merged("t2|b", Merge("c:h", DROP, "t1")) is None  # nothing of that run: no write
    assert merged(None, Merge("c:h", DROP, "t1")) is None
    assert merged("a b c", Merge("c:h", APPEND, "d", "3")) == "b c d"
    assert merged(None, Merge("c:h", APPEND, "t1|a", "16")) == "t1|a"
    assert merged("t2 t3", Merge("r:x", FRONT, "t1", "2")) == "t1 t2"
    assert merged("t2 t1", Merge("r:x", FRONT, "t1", "4")) is None  # there already: no write
    # A request's mark keeps the attempts in flight; an answer's takes its own one out.
    assert merged("t2 flight t3", Merge("b:h", MARK, "t1", FLIGHT, "8")) == "t1 flight t2 t3"
    assert merged("t1 flight t2", Merge("b:h", MARK, "t1", "delivered", "8")) == "t1 delivered t2"
    assert merged("t2 flight t1 t1", Merge("b:h", MARK, "t1", "failed", "8")) == "t1 failed t2 t1"
    assert merged(None, Merge("b:h", MARK, "t1", FLIGHT, "8")) == "t1 flight"
    assert merged("t9 flight " + " ".join(f"o{i}" for i in range(9)), Merge("b:h", MARK, "t1", FLIGHT, "3")) == (
        "t1 flight t9 o0 +8"
    )
    # Attempts past the list are counted (`+<n>`), and an answer of one of them takes one off.
    assert merged("t2 flight t3 t4", Merge("b:h", MARK, "t1", FLIGHT, "3")) == "t1 flight t2 t3 +1"
    assert merged("t1 flight t2 t3 +1", Merge("b:h", MARK, "t4", FLIGHT, "3")) == "t4 flight t1 t2 +2"
    assert merged("t4 flight t1 t2 +2", Merge("b:h", MARK, "t9", "delivered", "3")) == "t9 delivered t4 t1 +2"
    assert merged("t9 delivered t4 t1 +2", Merge("b:h", MARK, "t4", "delivered", "3")) == "t4 delivered t1 +2"
    assert merged("t4 delivered t1 +2", Merge("b:h", MARK, "t7", "failed", "3")) == "t7 failed t1 +1"
    assert merged("t7 failed t1 +1", Merge("b:h", MARK, "t8", "delivered", "3")) == "t8 delivered t1"
    assert merged("t1 delivered +x t2", Merge("b:h", MARK, "t3", FLIGHT, "8")) == "t3 flight +x t2"
    # An amendment's entries: one per run, runs answered after the same text each their own, oldest first.
    assert merged(None, Merge("u:h", NOTE, "t1", "|3|ff", "16")) == "t1|3|ff"
    assert merged("t1|3|ff", Merge("u:h", NOTE, "t2", "|3|ff", "16")) == "t1|3|ff t2|3|ff"
    assert merged("t1|3|ff", Merge("u:h", NOTE, "t1", "|3|ff", "16")) is None
    assert merged("a|1|0 b|1|1", Merge("u:h", NOTE, "t1", "|3|ff", "2")) == "b|1|1 t1|3|ff"
    with pytest.raises(ValueError, match="unknown stitching merge"):
        merged("x", Merge("k", "swap", "t1"))


def _random_raw(rng: random.Random) -> str | None:
    if rng.random() < 0.15:
        return None
    tokens: list[str] = []
    for _ in range(rng.randrange(0, 12)):
        run = rng.choice(RUNS)
        shape = rng.random()
        if shape < 0.3:
            tokens.append(run + rng.choice(TAILS))
        elif shape < 0.6:
            tokens.append(f"{run}|{rng.choice(['a', 'b', 'k1'])}")
        elif shape < 0.8:
            tokens.append(rng.choice(STATES))
        elif shape < 0.85:
            tokens.append(rng.choice(["+1", "+3", "+12", "+0", "+", "+x1"]))
        else:
            tokens.append(run)
    return " ".join(tokens)


def _random_merge(rng: random.Random, key: str) -> Merge:
    op = rng.choice([DROP, APPEND, FRONT, MARK, NOTE])
    run = rng.choice(RUNS[:-1])
    most = str(rng.randrange(1, 10))
    if op == DROP:
        return Merge(key, op, run)
    if op in (APPEND, FRONT):
        return Merge(key, op, rng.choice([run, f"{run}|a", f"{run}|k1"]), most)
    if op == MARK:
        return Merge(key, op, run, rng.choice(STATES), most)
    return Merge(key, op, run, rng.choice(TAILS), most)


async def test_redis_applies_each_merge_as_the_python_does(redis_url: str) -> None:
    rng = random.Random(7)
    store = RedisStore(redis_url)
    direct = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for case in range(400):
            keys = [f"k{case}-{index}" for index in range(rng.randrange(1, 5))]
            raws: dict[str, str | None] = {key: _random_raw(rng) for key in keys}
            merges = [_random_merge(rng, rng.choice(keys)) for _ in range(rng.randrange(1, 6))]
            memory = MemoryStore()
            for key, raw in raws.items():
                if raw is not None:
                    direct.set(f"tandem:s:{key}", raw)
                    await memory.stitch_remember(key, raw)
            await store.stitch_merge(merges)
            memory.merge_now(merges)
            assert await store.stitch_find_many(keys) == await memory.stitch_find_many(keys), (raws, merges)
            # Every entry an edit wrote expires (one that only existed before may not).
            written = {merge.key for merge in merges if merged(raws.get(merge.key), merge) is not None}
            assert all(direct.ttl(f"tandem:s:{key}") > 0 for key in written), (raws, merges)
    finally:
        direct.close()
        await store.aclose()
