"""The privacy memory's incremental paths (router/privacy/memo.py) give what learning every
message afresh gives: the unchanged prefix found by identity or by content, the history's bytes
searched for the new values only, messages changed, dropped and reused at their index."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from router.metrics.core import Metrics
from router.privacy.guard import PrivacyGuard
from router.privacy.memo import PrivacyMemo, Seen, TrajectoryMemo, learn
from router.privacy.vault import VaultCipher
from router.trajectory.state import StepStart
from router.trajectory.store import MemoryStore

# Few letters: values overlap, nest and run into one another; NUL (the separator of the memo's
# text) and characters of two, three and four UTF-8 bytes are among them.
ALPHABET = "ab\0é€\U0001f600 "


def _text(rng: random.Random, longest: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, longest)))


def _message(rng: random.Random) -> dict[str, Any]:
    shape = rng.random()
    if shape < 0.6:
        return {"role": rng.choice(["user", "tool"]), "content": _text(rng, 30)}
    if shape < 0.8:
        return {"role": "user", "content": [{"type": "text", "text": _text(rng, 20)}, {"type": "text", "text": "x"}]}
    arguments = orjson.dumps({"cmd": _text(rng, 15), "n": [_text(rng, 5)]}).decode()
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _as_learned(item: Seen) -> tuple[Any, ...]:
    return (item.redacted, item.count, item.kinds, item.placeholders)


def _afresh(entry: TrajectoryMemo, messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [_as_learned(learn(entry.matcher, message, entry.generation)) for message in messages]


@pytest.mark.parametrize("seed", range(12))
def test_remembered_equals_learned_afresh_over_random_histories(seed: int) -> None:
    rng = random.Random(seed)
    memo, entry = PrivacyMemo(max_bytes=rng.choice([1 << 30, 6000])), TrajectoryMemo()
    memo.adopt("t", entry)
    tracks: dict[str, list[dict[str, Any]]] = {
        "step": [{"role": "system", "content": "agent"}],
        "inner": [{"role": "system", "content": "judge"}],
    }
    values = 0
    for _ in range(60):
        name = rng.choice(list(tracks))
        history = tracks[name]
        event = rng.random()
        if event < 0.55:
            history += [_message(rng) for _ in range(rng.randint(1, 3))]
        elif event < 0.65 and len(history) > 3:
            del history[1 : rng.randint(2, len(history) - 1)]  # compacted
        elif event < 0.75 and len(history) > 1:
            history[rng.randrange(1, len(history))] = _message(rng)  # a message rewritten in place
        for _ in range(rng.choice([0, 0, 1, 2, 20])):  # values learned (here, or by a replica)
            value = _text(rng, 4)
            if value and value not in entry.matcher.placeholder:
                values += 1
                entry.matcher.add(value, f"[V_{values}]")
        if rng.random() < 0.05 and entry.matcher.values:  # a known value renamed
            values += 1
            entry.matcher.add(rng.choice(entry.matcher.values), f"[V_{values}]")
            entry.generation += 1
        # Parsed anew (equal objects), or the prefix handed as the same objects.
        sent = history if rng.random() < 0.5 else orjson.loads(orjson.dumps(history))
        items, kinds = memo.learned_with_kinds(entry, sent)
        remembered = [_as_learned(item) for item in items]
        assert remembered == _afresh(entry, sent)
        # The values replaced, by kind, summed incrementally: as adding up every message's.
        summed: dict[str, int] = {}
        for _, _, per_kind, _ in remembered:
            for kind, times in per_kind.items():
                summed[kind] = summed.get(kind, 0) + times
        assert kinds == summed
        assert memo.learned(entry, sent) is not None  # asked twice in a step: nothing changes
        assert [_as_learned(item) for item in memo.learned(entry, sent)] == remembered


def _start(step: int) -> StepStart:
    return StepStart("t", f"fp-{step}", False, "task", "r", "", 1.0)


@pytest.mark.parametrize("same_objects", [True, False])
async def test_a_value_learned_late_is_redacted_in_an_early_message(same_objects: bool) -> None:
    """Step 2's message holds a card inside a longer run of digits (no detector reads it); step
    30 names the card where it is detected: step 30's body has step 2's message redacted too,
    however many steps came between, and the steps before sent it as it was."""
    card = "5500000000000004"
    store, memo, cipher = MemoryStore(), PrivacyMemo(), VaultCipher(b"k" * 32)
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are an agent."}]
    bodies: list[list[dict[str, Any]]] = []
    for step in range(1, 31):
        if step == 2:
            history.append({"role": "tool", "content": f"ticket 1234{card}5678 and more"})
        elif step == 30:
            history.append({"role": "user", "content": f"pay with card {card}"})
        else:
            history.append({"role": "tool", "content": f"output {step}: " + "log line\n" * 200})
        messages = history if same_objects else orjson.loads(orjson.dumps(history))
        slot = await store.begin_step(_start(step))
        assert slot.trajectory is not None
        guard = PrivacyGuard(
            "redact",
            "t",
            slot.trajectory.notes,
            store,
            Metrics(),
            cipher=cipher,
            memo=memo,
            born=1.0,
            vault_size=slot.trajectory.vault_size,
        )
        await guard.scan(messages)
        bodies.append(guard.outgoing(messages))
    assert bodies[28][2]["content"] == f"ticket 1234{card}5678 and more"
    assert bodies[29][2]["content"] == "ticket 1234[CARD_1]5678 and more"
    assert bodies[29][-1]["content"] == "pay with card [CARD_1]"
    assert memo.get("t") is not None


def test_the_prefix_of_the_same_objects_is_not_compared_by_content() -> None:
    """Handed the same message objects, the memory takes the prefix by identity: a message that
    compares equal to nothing (here: one whose `==` would fail) is never compared by content."""

    class Opaque(dict[str, Any]):
        def __eq__(self, other: object) -> bool:
            raise AssertionError("compared by content")

        __hash__ = None  # type: ignore[assignment]

    memo, entry = PrivacyMemo(), TrajectoryMemo()
    entry.matcher.add("secret", "[S_1]")
    history: list[dict[str, Any]] = [Opaque(role="user", content="a secret")]
    memo.learned(entry, history)
    history.append({"role": "user", "content": "more"})
    entry.matcher.add("more", "[S_2]")
    out = memo.learned(entry, history)
    assert [item.redacted["content"] for item in out] == ["a [S_1]", "[S_2]"]
