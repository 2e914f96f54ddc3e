"""The privacy stage's memory between steps (router/privacy/memo.py) changes what it costs, never
what the cloud receives: byte for byte the same bodies as learning every step afresh, and the
same replacements as one regex alternation of the values, longest first (the redactor before)."""

from __future__ import annotations

import random
import re
import string
from typing import Any

import httpx
import orjson
import pytest

import router.privacy.matcher as matcher_module
from router.metrics.core import Metrics
from router.privacy.guard import OUT, VAULT, PrivacyGuard, PrivacyMode
from router.privacy.matcher import ValueMatcher
from router.privacy.memo import PrivacyMemo
from router.privacy.redact import Redactor
from router.privacy.vault import VaultCipher
from router.trajectory.state import StepStart
from router.trajectory.store import MemoryStore
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer
from tests.test_privacy import MakeGateway

EMAILS = [f"person{n}.name@example-corp.com" for n in range(40)]
CARD = "4111 1111 1111 1111"
# Found only in a longer run of digits, which no detector reads as a card; detected on its own
# at a later step, when the earlier message must be redacted too.
HIDDEN_CARD = "5500 0000 0000 0004"


_WORD = "[A-Za-z0-9_]"


def _regex_redaction(values: dict[str, str], text: str) -> str:
    """The redactor as it was: one alternation of the escaped values, longest first; a short
    value (or a person's name, an address) matched only as a whole word (ASCII word characters)."""
    ordered = sorted(values, key=len, reverse=True)

    def alternative(value: str) -> str:
        escaped = re.escape(value)
        if len(value) > matcher_module.WHOLE_WORDS_UNDER and not values[value].startswith(("[PERSON", "[ADDRESS")):
            return escaped
        before = f"(?<!{_WORD})" if re.match(_WORD, value[0]) else ""
        after = f"(?!{_WORD})" if re.match(_WORD, value[-1]) else ""
        return before + escaped + after

    pattern = re.compile("|".join(alternative(v) for v in ordered))
    return pattern.sub(lambda match: values[match.group(0)], text)


@pytest.mark.parametrize("loose", [0, 16])
def test_matcher_replaces_what_one_alternation_longest_first_replaces(
    loose: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matcher_module, "LOOSE", loose)  # automata only, or values one by one
    rng = random.Random(7)
    alphabet = "ab@.é€\U0001f600 "
    for _ in range(300):
        # Values of 1 to 8 characters: some matched anywhere, the short ones as whole words only.
        values = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))) for _ in range(rng.randint(1, 12))}
        mapping = {value: f"[V_{n}]" for n, value in enumerate(sorted(values))}
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        matcher = ValueMatcher()
        for value, placeholder in mapping.items():  # in several levels, as a trajectory adds them
            matcher.add(value, placeholder)
            matcher.find("warm up a level")
        assert matcher.replace(text)[0] == _regex_redaction(mapping, text), (mapping, text)


def test_matcher_levels_stay_few_and_new_values_are_looked_for_alone() -> None:
    matcher = ValueMatcher()
    for n in range(1000):
        matcher.add(f"value-{n:04d}-x", f"[V_{n}]")
        if n % 7 == 0:
            matcher.find("text")
    assert len(matcher._levels) <= 7  # a binary counter: at most log2(values / 16) + 1
    assert matcher.replace("a value-0999-x and value-0000-x")[0] == "a [V_999] and [V_0]"
    assert matcher.spans_since(999, b"... value-0999-x ...") == [(4, 16)]
    assert matcher.spans_since(999, b"... value-0998-x ...") == []  # known before: not looked for


def _start(trajectory_id: str, step: int) -> StepStart:
    return StepStart(trajectory_id, f"fp-{step}", False, "task", "r", "", float(step))


async def _step(
    store: MemoryStore,
    mode: PrivacyMode,
    memo: PrivacyMemo | None,
    cipher: VaultCipher,
    trajectory_id: str,
    step: int,
    messages: list[dict[str, Any]],
) -> tuple[bytes, PrivacyGuard]:
    slot = await store.begin_step(_start(trajectory_id, step))
    assert slot.trajectory is not None
    guard = PrivacyGuard(
        mode,
        trajectory_id,
        slot.trajectory.notes,
        store,
        Metrics(),
        cipher=cipher,
        memo=memo,
        born=slot.trajectory.created_at,
        vault_size=slot.trajectory.vault_size,
    )
    await guard.scan(messages)
    body = orjson.dumps(guard.outgoing(messages))
    await guard.commit()
    return body, guard


def _tool_step(n: int, text: str) -> list[dict[str, Any]]:
    call = {
        "id": f"c{n}",
        "type": "function",
        "function": {"name": "bash", "arguments": orjson.dumps({"cmd": text}).decode()},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"output {n}: {text}"},
    ]


def _run(rng: random.Random) -> list[list[dict[str, Any]]]:
    """The messages of each step of a run: values appear, recur, one hides in an early message
    and is detected later, another replica adds one, and the client compacts its history twice."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": f"Fix it. Contact {EMAILS[0]}; ticket 1234{HIDDEN_CARD.replace(' ', '')}5678."},
    ]
    steps = []
    for n in range(1, 25):
        steps.append(list(history))
        words = [
            rng.choice(EMAILS[: 3 + n]) if rng.random() < 0.3 else "".join(rng.choices(string.ascii_lowercase, k=6))
            for _ in range(12)
        ]
        if n == 6:
            words.append(f"card {HIDDEN_CARD.replace(' ', '')}")  # now detected: step 2's message has it too
        if n == 9:
            words.append(f"paid with {CARD}")
        history += _tool_step(n, " ".join(words))
        if n == 12:  # compaction: fewer messages than were scanned
            summary = f"Summary so far: wrote to {EMAILS[2]} for Jane Roe."
            history = [history[0], {"role": "user", "content": summary}, *history[-4:]]
        if n == 18:  # compaction that keeps the count: a rewritten message at an early index
            history[1] = {"role": "user", "content": f"Summary again ({EMAILS[5]}, {EMAILS[1]})."}
    return steps


@pytest.mark.parametrize("mode", ["redact", "allow"])
async def test_remembered_steps_send_the_same_bytes_as_learning_afresh(mode: PrivacyMode) -> None:
    cipher = VaultCipher(b"k" * 32)
    steps = _run(random.Random(3))
    remembered, afresh = MemoryStore(), MemoryStore()
    memo = PrivacyMemo()
    other_replica = PrivacyMemo()
    bodies: list[str] = []
    for step, messages in enumerate(steps, start=1):
        if step == 15:
            # Another replica learned a value that sits in an early message: both see it in the vault.
            for store in (remembered, afresh):
                slot = await store.begin_step(_start("t", 1000 + step))
                assert slot.trajectory is not None
                writer = PrivacyGuard(
                    mode, "t", slot.trajectory.notes, store, Metrics(), cipher=cipher, memo=other_replica
                )
                await writer._allocate({"Jane Roe": "PERSON"}, set())
        body, guard = await _step(remembered, mode, memo, cipher, "t", step, messages)
        bodies.append(body.decode())
        expected, fresh = await _step(afresh, mode, None, cipher, "t", step, messages)
        assert body == expected, f"step {step}"
        assert guard.redacted == fresh.redacted and guard.exposed_kinds == fresh.exposed_kinds
        # And the same as one alternation of the whole vault over each text.
        vault = dict(guard.vault)
        if mode == "redact":
            sent = orjson.loads(body)
            for original, out in zip(messages, sent, strict=True):
                if isinstance(original.get("content"), str):
                    assert out["content"] == _regex_redaction(vault, original["content"])
    notes = await afresh.vault("t")
    assert sum(1 for key in notes if key.startswith(VAULT)) >= 6
    if mode == "redact":
        # Step 7 detects the card that hid in step 1's message: that message is redacted anew.
        assert "ticket 1234" + HIDDEN_CARD.replace(" ", "") in bodies[5] and "ticket 1234[CARD_" in bodies[6]
        # Step 15: another replica's value, in the summary the client compacted its history into.
        assert "Jane Roe" in bodies[13] and "for [PERSON_1]." in bodies[14]
        assert all(EMAILS[0] not in body and CARD not in body for body in bodies)
    else:
        shared = {key for key in notes if key.startswith(OUT)}
        mine = {key for key in await remembered.vault("t") if key.startswith(OUT)}
        assert mine == shared and f"{OUT}[PERSON_1]" in shared


async def test_a_small_memory_forgets_and_still_sends_the_same_bytes() -> None:
    cipher = VaultCipher(b"k" * 32)
    steps = _run(random.Random(5))
    small, afresh = MemoryStore(), MemoryStore()
    memo = PrivacyMemo(max_bytes=4096)  # a quarter of it holds a few messages
    for step, messages in enumerate(steps, start=1):
        for trajectory in ("a", "b"):  # two trajectories take turns evicting each other
            body, _ = await _step(small, "redact", memo, cipher, trajectory, step, messages)
            expected, _ = await _step(afresh, "redact", None, cipher, trajectory, step, messages)
            assert body == expected
        assert memo.bytes <= 4096 or len(memo._entries) == 1


async def test_a_trajectory_begun_anew_under_the_same_id_is_not_redacted_with_the_old_vault() -> None:
    cipher = VaultCipher(b"k" * 32)
    memo = PrivacyMemo()
    store = MemoryStore()
    body, _ = await _step(store, "redact", memo, cipher, "t", 1, [{"role": "user", "content": f"mail {EMAILS[1]}"}])
    assert EMAILS[1] not in body.decode()
    again = MemoryStore()  # the same id, another trajectory (the first was evicted, say)
    body, guard = await _step(again, "redact", memo, cipher, "t", 1, [{"role": "user", "content": f"mail {EMAILS[2]}"}])
    assert guard.vault == {EMAILS[2]: "[EMAIL_1]"}
    assert orjson.loads(body)[0]["content"] == "mail [EMAIL_1]"


def test_redactor_of_a_mapping_still_replaces_in_parts_and_arguments() -> None:
    redactor = Redactor({EMAILS[0]: "[EMAIL_1]"})
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": f"to {EMAILS[0]}"}],
        "tool_calls": [
            {
                "id": "x",
                "type": "function",
                "function": {"name": "f", "arguments": orjson.dumps({EMAILS[0]: EMAILS[0]}).decode()},
            }
        ],
    }
    out, count = redactor.messages([message])
    assert count == 3 and EMAILS[0] not in orjson.dumps(out).decode()
    assert redactor.found == {EMAILS[0]}


def test_gateway_with_and_without_memory_sends_the_cloud_the_same_bytes(
    make_gateway: MakeGateway, client: httpx.Client, cloud: FakeUpstream
) -> None:
    routes = {"tandem": {"strategy": "cloud", "privacy": "redact"}}
    servers: list[GatewayServer] = [make_gateway(routes=routes), make_gateway(routes=routes, vault={"memory_bytes": 0})]
    received: list[list[bytes]] = []
    for server in servers:
        cloud.reset()
        for messages in _run(random.Random(11))[:14]:
            reply = client.post(
                f"{server.url}/v1/chat/completions",
                json={"model": "tandem", "messages": messages},
                headers={"X-Session-ID": "memo"},
            )
            assert reply.status_code == 200, reply.text
        received.append([r.raw for r in cloud.received])
    assert len(received[0]) == 14 and received[0] == received[1]
    assert EMAILS[0].encode() not in received[0][-1] and b"[EMAIL_1]" in received[0][-1]
    # The first remembered the messages; the second only the vault of the trajectory in use.
    remembering, forgetting = (next(iter(s.gateway.privacy_memo._entries.values())) for s in servers)
    assert remembering.track_bytes > 0 and forgetting.track_bytes == 0


async def test_a_step_learns_only_its_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    import router.privacy.memo as memo_module

    learned: list[dict[str, Any]] = []
    real_learn = memo_module.learn

    def counting(
        matcher: ValueMatcher, message: dict[str, Any], generation: int, encode: bool = False
    ) -> memo_module.Seen:
        learned.append(message)
        return real_learn(matcher, message, generation, encode)

    monkeypatch.setattr(memo_module, "learn", counting)
    cipher, store, memo = VaultCipher(b"k" * 32), MemoryStore(), PrivacyMemo()
    history: list[dict[str, Any]] = [{"role": "user", "content": f"mail {EMAILS[0]}"}]
    for step in range(1, 8):
        learned.clear()
        messages = orjson.loads(orjson.dumps(history))  # parsed anew, as every request is
        await _step(store, "redact", memo, cipher, "t", step, messages)
        assert len(learned) == (1 if step == 1 else 2), step  # the assistant's call and its output
        history += _tool_step(step, "no values here" if step != 4 else f"now {EMAILS[3]}")
    # Step 5 brought a new value: the history was looked at for it, and nothing held it but the
    # new message, so no older message was redacted again.


async def test_a_trajectory_without_sensitive_values_is_not_remembered() -> None:
    cipher, store, memo = VaultCipher(b"k" * 32), MemoryStore(), PrivacyMemo()
    await _step(store, "allow", memo, cipher, "plain", 1, [{"role": "user", "content": "list the files"}])
    assert memo.get("plain") is None and memo.bytes == 0
    await _step(store, "allow", memo, cipher, "mail", 1, [{"role": "user", "content": f"mail {EMAILS[0]}"}])
    held = memo.get("mail")
    assert held is not None and held.matcher.values == [EMAILS[0]] and memo.bytes == held.size > 0


async def test_a_value_named_by_another_replica_meanwhile_keeps_its_name_and_no_name_is_shared() -> None:
    # Another replica names `second` [EMAIL_1] after this step read the vault: this batch had
    # proposed [EMAIL_1] for `first` and [EMAIL_2] for `second`. `second` keeps the other
    # replica's name; `first` is named again, so that no two values share a placeholder.
    from router.metrics.core import Metrics
    from router.privacy.guard import IDS, VAULT, PrivacyGuard
    from router.trajectory.state import StepStart
    from router.trajectory.store import MemoryStore

    first, second = "first.person@example.org", "second.person@example.org"

    class RacingStore(MemoryStore):
        """The other replica's two writes land just before this step's first vault write."""

        raced = False

        async def vault_notes(
            self, trajectory_id: str, entries: list[tuple[str, str]], *, keep_first: bool = False
        ) -> list[str]:
            if not RacingStore.raced:
                RacingStore.raced = True
                await self.vault_note(trajectory_id, IDS + guard._value_id(second), "[EMAIL_1]", keep_first=True)
                await self.vault_note(trajectory_id, VAULT + "[EMAIL_1]", second)
            return await super().vault_notes(trajectory_id, entries, keep_first=keep_first)

    store = RacingStore(100, 3600.0)
    await store.begin_step(StepStart("t", "fp", False, "task", "r", "", 0.0))
    guard = PrivacyGuard("redact", "t", {}, store, Metrics())
    await guard.load()
    await guard.scan([{"role": "user", "content": f"write to {first} and {second}"}])
    assert guard.vault[second] == "[EMAIL_1]"
    assert guard.vault[first] not in ("[EMAIL_1]", "")
    vault = await store.vault("t")
    assert vault[VAULT + "[EMAIL_1]"] == second and vault[VAULT + guard.vault[first]] == first
    assert vault[IDS + guard._value_id(first)] == guard.vault[first]


def test_a_name_or_a_short_value_is_replaced_only_as_a_whole_word() -> None:
    """A name found once in prose was replaced inside every identifier holding it (real agent
    runs: `Lasso[PERSON_1]IC`, `[PERSON_2]nomialError`); a long secret is replaced wherever it
    stands, and a name against a word of a script written without spaces still is."""
    matcher = ValueMatcher(
        {"Lars": "[PERSON_1]", "Poly": "[PERSON_2]", "田中": "[PERSON_3]", "sk-live-0123456789abcdef": "[SECRET_1]"}
    )
    text = "LassoLarsIC and Lars; PolynomialError, Poly. 田中さん; x=sk-live-0123456789abcdefZ"
    assert matcher.replace(text)[0] == (
        "LassoLarsIC and [PERSON_1]; PolynomialError, [PERSON_2]. [PERSON_3]さん; x=[SECRET_1]Z"
    )
