"""Read the shared ledger straight from Redis and count what an outage may have broken."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import orjson
import redis


@dataclass
class Audit:
    counted: int = 0  # steps counted in the trajectory hashes
    recorded: int = 0  # distinct step indexes with a record
    duplicates: int = 0  # indexes given to two different steps (two first attempts)
    missing: int = 0  # counted steps with no record
    per_trajectory: dict[str, int] = field(default_factory=dict)  # id -> steps counted


def audit(url: str, prefix: str = "tandem:") -> Audit:
    found = Audit()
    with redis.Redis.from_url(url, decode_responses=True) as direct:
        for key in direct.scan_iter(f"{prefix}t:*", count=1000):
            if key.endswith((":r", ":v", ":vl", ":a", ":d")):
                continue  # a trajectory's records, its privacy vault, its counted and recorded steps
            steps = int(direct.hget(key, "steps") or 0)
            records = [orjson.loads(line) for line in direct.lrange(f"{key}:r", 0, -1)]
            first = Counter(r["step"] for r in records if r["attempt"] == 1)
            indexes = {r["step"] for r in records}
            found.counted += steps
            found.recorded += len(indexes)
            found.duplicates += sum(count - 1 for count in first.values() if count > 1)
            found.missing += sum(1 for index in range(1, steps + 1) if index not in indexes)
            found.per_trajectory[key[len(prefix) + 2 :]] = steps
    return found
