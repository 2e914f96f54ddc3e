"""A trajectory's notes: one namespace per owner (router/notes.py), the vault never shown, and
notes written by the flat layout before it read under their new names (a real redis-server)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import redis

from router import notes
from router.ledger import CACHE_NOTE
from router.notes import PIN
from router.policies import sketch, task
from router.privacy.guard import IDS, OUT, SCANNED, VAULT
from router.trajectory.state import Trajectory
from tests.gateway_server import GatewayServer
from tests.test_strategies import TASK, ask

MakeGateway = Callable[..., GatewayServer]


def test_each_owner_writes_in_its_own_namespace() -> None:
    owners = {
        task.NOTE: "strategy",
        sketch.NOTE: "strategy",
        PIN: "pin",
        CACHE_NOTE: "ledger",
        notes.shadow(3): "shadow",
        notes.context("summary"): "context",
        VAULT + "[EMAIL_1]": "vault",
        IDS + "ab12": "vault",
        OUT + "[EMAIL_1]": "vault",
        SCANNED: "vault",
    }
    assert {key: notes.owner_of(key) for key in owners} == owners
    # Two strategies naming a note alike do not share it, nor does a strategy share the pin's.
    assert notes.strategy("task", "target") != notes.strategy("sketch", "target")
    assert notes.strategy("task", "pin") != PIN and notes.strategy("x", "vault") != VAULT


def test_the_vault_is_hidden_by_its_namespace() -> None:
    trajectory = Trajectory(
        id="t",
        notes={
            VAULT + "[EMAIL_1]": "a@b.example",
            OUT + "[EMAIL_1]": "1",
            SCANNED: "2",
            task.NOTE: "cloud",
            PIN: "edge",
        },
    )
    assert trajectory.as_dict()["notes"] == {task.NOTE: "cloud", PIN: "edge"}


def test_notes_of_the_flat_layout_read_under_their_new_names() -> None:
    stored = [
        ("pinned", "edge"),
        ("task_target", "cloud"),
        ("plan", "1. read"),
        ("summary", "s"),
        ("summary_covers", "4"),
        ("cache_prefix", "120 1.5"),
        ("pii:[EMAIL_1]", "sealed"),
        ("pii_id:ab12", "[EMAIL_1]"),
        ("pii_out:[EMAIL_1]", "1"),
        ("pii_scanned", "3"),
        ("shadow:2", "{}"),
        # A key of this layout wins over the old name of the same note.
        (task.NOTE, "edge"),
    ]
    assert notes.read(stored) == {
        PIN: "edge",
        task.NOTE: "edge",
        sketch.NOTE: "1. read",
        notes.context("summary"): "s",
        notes.context("summary_covers"): "4",
        CACHE_NOTE: "120 1.5",
        VAULT + "[EMAIL_1]": "sealed",
        IDS + "ab12": "[EMAIL_1]",
        OUT + "[EMAIL_1]": "1",
        SCANNED: "3",
        "shadow:2": "{}",
    }


def test_a_trajectory_pinned_before_the_upgrade_stays_pinned(
    make_gateway: MakeGateway, client: httpx.Client, redis_url: str
) -> None:
    """A replica of this layout serves a trajectory whose pin and vault an older replica wrote
    into Redis: the pin holds (no cloud step, no failover) and the old vault stays hidden."""
    server = make_gateway(redis_url=redis_url, routes={"tandem": {"strategy": "cloud"}})
    assert ask(client, server, "old").headers["x-tandem-target"] == "cloud"
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    raw.hset("tandem:t:old", mapping={"n:pinned": "edge", "n:pii:[EMAIL_1]": "sealed", "n:pii_out:[EMAIL_1]": "1"})
    raw.close()
    response = ask(client, server, "old", [TASK, {"role": "assistant", "content": "x"}])
    assert response.headers["x-tandem-target"] == "edge" and response.headers["x-tandem-reason"] == "pinned_edge"
    shown = client.get(f"{server.url}/v1/trajectories/old").json()["notes"]
    assert shown.get(PIN) == "edge" and not any("EMAIL" in key or key.startswith("pii") for key in shown)
