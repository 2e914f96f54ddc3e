"""Stitching keys computed incrementally (issue 16): `HistoryKeys` hashes only the messages it has
not seen, and must give exactly the keys of a full pass (`identify.history_keys`) and the same
trajectory assignment as the gateway's stitching had before it, over many generated runs."""

from __future__ import annotations

import copy
import hashlib
import random
from typing import Any

import orjson

from router.trajectory import identify
from router.trajectory.history import HistoryKeys
from router.trajectory.stitch import Stitcher
from router.trajectory.store import MemoryStore

Messages = list[dict[str, Any]]
SYSTEM = {"role": "system", "content": "You are an agent. " * 40}


def _answer(rng: random.Random, step: int) -> dict[str, Any]:
    if rng.random() < 0.5:
        call = {"id": f"call_{step}", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"role": "assistant", "content": rng.choice(["ok", "done ", " let me look", "ok"])}


def _reshaped(rng: random.Random, history: Messages) -> Messages:
    """The history as a client resends it: markers moved, contents as parts or strings, tool-call
    arguments re-serialised, answers trimmed, numbers of another type in non-text parts."""
    out = copy.deepcopy(history)
    for message in out:
        content = message.get("content")
        roll = rng.random()
        if isinstance(content, str) and roll < 0.15:
            message["content"] = [{"type": "text", "text": content, "cache_control": {"type": "ephemeral"}}]
        elif isinstance(content, list) and roll < 0.3:
            texts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
            if len(texts) == len(content):
                message["content"] = "".join(p["text"] for p in texts)
        elif roll < 0.35:
            message["provider_specific_fields"] = {"n": rng.randint(0, 3)}
        for call in message.get("tool_calls") or ():
            if rng.random() < 0.3:
                call["function"]["arguments"] = orjson.dumps(orjson.loads(call["function"]["arguments"])).decode()
        if message.get("role") == "assistant" and isinstance(message.get("content"), str) and rng.random() < 0.3:
            message["content"] = message["content"].strip()
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for part in message["content"]:
                if part.get("type") == "image_url" and rng.random() < 0.5:
                    # 1, 1.0 and True are equal in Python but serialise apart: keys must differ.
                    part["image_url"]["detail"] = rng.choice([1, 1.0, True])
    return out


def _runs(seed: int, count: int, steps: int) -> list[list[Messages]]:
    """`count` runs of one task, each a list of the histories its steps send."""
    rng = random.Random(seed)
    image = {"type": "image_url", "image_url": {"url": "data:,x", "detail": 1}}
    task = [SYSTEM, {"role": "user", "content": [{"type": "text", "text": "fix the test"}, image]}]
    runs = []
    for _ in range(count):
        history = copy.deepcopy(task)
        sent = []
        for step in range(steps):
            sent.append(_reshaped(rng, history))
            if rng.random() < 0.1 and len(history) > 6:
                history = history[:2] + history[-2:]  # the client compacted its history
            tool = {"role": "tool", "tool_call_id": f"call_{step}", "content": "x" * rng.randint(1, 3000)}
            history = [*history, _answer(rng, step), tool]
        runs.append(sent)
    return runs


def test_incremental_keys_equal_a_full_pass_over_generated_runs() -> None:
    for seed in range(12):
        # A small budget on some seeds, so that evicted runs are hashed in full again.
        keys = HistoryKeys(max_bytes=40_000 if seed % 3 == 0 else 32 << 20)
        runs = _runs(seed, count=4, steps=25)
        rng = random.Random(seed)
        order = [(r, s) for r in range(len(runs)) for s in range(len(runs[r]))]
        order.sort(key=lambda rs: (rs[1], rng.random()))  # runs interleaved, each in step order
        for run, step in order:
            namespace = "" if seed % 2 else "ns"
            messages = runs[run][step]
            expected = identify.history_keys(namespace, messages)
            # A fresh parse each time, as the gateway sees it: no object shared with the last step.
            assert keys.keys(namespace, orjson.loads(orjson.dumps(messages))) == expected, (seed, run, step)
            if rng.random() < 0.2:  # a retry: the same body again
                assert keys.keys(namespace, orjson.loads(orjson.dumps(messages))) == expected


def test_keys_tell_apart_what_plain_equality_would_not() -> None:
    """`1 == 1.0 == True`: messages equal in Python but not in their canonical form get their own keys."""
    keys = HistoryKeys()
    part = {"type": "image_url", "image_url": {"url": "data:,x", "detail": 1}}
    first = [SYSTEM, {"role": "user", "content": [part]}]
    second = [SYSTEM, {"role": "user", "content": [{**part, "image_url": {"url": "data:,x", "detail": True}}]}]
    assert keys.keys("", first) == identify.history_keys("", first)
    assert keys.keys("", second) == identify.history_keys("", second)
    assert identify.history_keys("", first) != identify.history_keys("", second)


def test_a_step_hashes_only_its_new_messages(monkeypatch: Any) -> None:
    keys = HistoryKeys()
    rng = random.Random(99)
    history: Messages = [SYSTEM, {"role": "user", "content": "fix the test"}]
    plain = []
    for step in range(30):
        plain.append(history)
        history = [*history, _answer(rng, step), {"role": "tool", "tool_call_id": f"c{step}", "content": "x" * 900}]
    hashed: list[int] = []
    real = identify.message_digest

    def counting(message: dict[str, Any]) -> tuple[bytes, int]:
        hashed.append(1)
        return real(message)

    monkeypatch.setattr("router.trajectory.history.message_digest", counting)
    for messages in plain[:-1]:
        keys.keys("", orjson.loads(orjson.dumps(messages)))
    hashed.clear()
    last = plain[-1]
    keys.keys("", orjson.loads(orjson.dumps(last)))
    # The new answer and tool result; not the whole history of ~60 messages.
    assert len(last) > 50
    assert len(hashed) == 2


def _old_history_keys(namespace: str, messages: Messages) -> tuple[str | None, str]:
    """The stitching key of the gateway before issue 16 (one hash over the whole history)."""
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    digest = hashlib.blake2b(namespace.encode(), digest_size=16)
    previous = None
    for index, message in enumerate(messages):
        if index == last_assistant:
            previous = digest.hexdigest()
        digest.update(orjson.dumps(identify.canonical(message), option=orjson.OPT_SORT_KEYS))
        digest.update(b"\x1e")
    return previous, digest.hexdigest()


class _OldKeys:
    @staticmethod
    def keyed(namespace: str, messages: Messages) -> tuple[str | None, str, str, str | None]:
        head = _old_history_keys(namespace, messages[:-1])[1] if len(messages) > 1 else None
        return (*_old_history_keys(namespace, messages), _old_history_keys(namespace, messages[:1])[1], head)


async def _assign(stitcher: Stitcher, script: list[tuple[Messages, bool, str, str]]) -> list[str]:
    ids = []
    for messages, retry, status, answer in script:
        trajectory_id, key = await stitcher.find("", orjson.loads(orjson.dumps(messages)), retry)
        ids.append(trajectory_id)
        await stitcher.answered(trajectory_id, key, status, answer)
    return ids


def _partition(ids: list[str]) -> list[int]:
    first: dict[str, int] = {}
    return [first.setdefault(i, len(first)) for i in ids]


async def test_trajectory_assignment_is_unchanged_over_generated_runs() -> None:
    for seed in range(10):
        rng = random.Random(1000 + seed)
        runs = _runs(1000 + seed, count=3, steps=15)
        script = []
        position = [0] * len(runs)
        while any(p < len(r) for p, r in zip(position, runs, strict=True)):
            run = rng.choice([i for i, r in enumerate(runs) if position[i] < len(r)])
            messages = runs[run][position[run]]
            answer = runs[run][position[run] + 1][-2] if position[run] + 1 < len(runs[run]) else None
            key = identify.message_answer_key(answer) if answer else identify.answer_key("end", [])
            status = rng.choice(["ok", "ok", "ok", "error", "cancelled"])
            script.append((messages, rng.random() < 0.1, status, key))
            if status == "ok":
                position[run] += 1
        new = Stitcher(MemoryStore(1000, 3600))
        old = Stitcher(MemoryStore(1000, 3600))
        old._keys = _OldKeys()  # type: ignore[assignment]
        new_ids, old_ids = await _assign(new, script), await _assign(old, script)
        assert _partition(new_ids) == _partition(old_ids), seed
        assert len(set(new_ids)) >= len(runs)  # the runs were not merged into one


def test_a_streamed_answers_key_made_piece_by_piece_equals_the_whole_texts() -> None:
    """The relay keys a stream's answer as its pieces go by (`AnswerKeyer`), without the text:
    for any cut into pieces, whitespace anywhere, the key is `answer_key` of the whole."""
    chance = random.Random(25)
    alphabet = ["a", "é", " ", "\n", "\t", "\u3000", "ok", "  ", "{", "\u00a0"]
    for _ in range(2000):
        pieces = [
            "".join(chance.choice(alphabet) for _ in range(chance.randint(0, 4))) for _ in range(chance.randint(0, 8))
        ]
        calls: list[identify.Call] = chance.choice(
            [[], [("c1", "bash", '{"a": 1}')], [("c2", "read", None), (None, "e", "")]]
        )
        keyer = identify.AnswerKeyer()
        for piece in pieces:
            keyer.add(piece)
        assert keyer.key(calls) == identify.answer_key("".join(pieces), calls), pieces
