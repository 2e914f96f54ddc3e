"""The route's privacy policy in process: what the cloud received, byte for byte, what the agent
got back (restored, plain and streamed), what was kept local, blocked or pinned, and what the
ledger says was exposed. Cases of tests/test_privacy.py and tests/test_trust_pipeline.py,
without sockets."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from router.notes import PIN
from router.privacy.guard import exposure_summary, vault_of
from router.result import Answer, Failure, Stream
from tests.inprocess import InProcess, drain, engine_settings, events, in_process

EMAIL, CARD = "jane.doe@example.com", "4111 1111 1111 1111"
TASK = {"role": "user", "content": f"Email the invoice for card {CARD} to {EMAIL}"}


def route(privacy: str, strategy: str = "cloud", **extra: Any) -> Any:
    return engine_settings(routes={"tandem": {"strategy": strategy, "privacy": privacy}}, **extra)


async def privacy_of(env: InProcess, session: str = "s1") -> dict[str, Any]:
    await env.engine.tracker.recorder.flush()
    trajectory = await env.engine.tracker.store.get(session)
    assert trajectory is not None
    vault = await vault_of(env.engine.tracker.store, trajectory)
    summary: dict[str, Any] = exposure_summary(vault, env.engine.settings.privacy_weights)
    return summary


async def test_allow_measures_what_the_cloud_received() -> None:
    async with in_process(route("allow")) as env:
        await env.run(messages=[TASK])
        assert env.cloud.received[0].body["messages"] == [TASK]  # unchanged
        privacy = await privacy_of(env)
        assert privacy["seen"] == {"CARD": 1, "EMAIL": 1} and privacy["exposed"] == {"CARD": 1, "EMAIL": 1}
        assert privacy["score"] == 0.0
        (record,) = await env.records("s1")
        assert record.exposed == ["CARD", "EMAIL"] and record.redacted == 0


async def test_redact_sends_placeholders_and_restores_tool_call_arguments() -> None:
    async with in_process(route("redact")) as env:
        arguments = '{"to": "[EMAIL_1]", "body": {"card": "[CARD_1]", "note": "quote \\" ok"}}'
        env.cloud.push({"kind": "tool_call", "name": "send_mail", "arguments": arguments})
        result = await env.run(messages=[TASK])
        sent = env.cloud.received[0].body["messages"]
        assert sent == [{"role": "user", "content": "Email the invoice for card [CARD_1] to [EMAIL_1]"}]
        assert isinstance(result, Answer)
        message = result.completion["choices"][0]["message"]
        restored = orjson.loads(message["tool_calls"][0]["function"]["arguments"])
        assert restored == {"to": EMAIL, "body": {"card": CARD, "note": 'quote " ok'}}
        assert orjson.loads(result.body) == result.completion  # the chat surface's bytes agree
        privacy = await privacy_of(env)
        assert privacy["exposed"] == {} and privacy["score"] == 1.0
        (record,) = await env.records("s1")
        assert record.redacted == 2 and record.exposed == []

        # Next step: the same placeholders, and the tool call's arguments in the history redacted too.
        history = [TASK, message, {"role": "tool", "tool_call_id": "call_1", "content": f"sent to {EMAIL}"}]
        env.cloud.push({"text": "Done: mailed [EMAIL_1]."})
        second = await env.run(messages=history)
        body = env.cloud.received[1].body
        assert body["messages"][2]["content"] == "sent to [EMAIL_1]"
        assert orjson.loads(body["messages"][1]["tool_calls"][0]["function"]["arguments"])["to"] == "[EMAIL_1]"
        assert EMAIL not in orjson.dumps(body).decode() and CARD not in orjson.dumps(body).decode()
        assert isinstance(second, Answer)
        assert second.completion["choices"][0]["message"]["content"] == f"Done: mailed {EMAIL}."


async def test_redact_restores_placeholders_split_across_stream_chunks() -> None:
    async with in_process(route("redact")) as env:
        # Streamed word by word: "[EMAIL_1]" arrives inside one word, split from its neighbours.
        env.cloud.push({"text": "Write to [EMAIL_1] now, card [CARD_1].", "chunks": 6})
        result = await env.run(messages=[TASK], stream=True)
        assert isinstance(result, Stream)
        chunks = events(await drain(result))
        text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks[:-1] if c["choices"])
        assert text == f"Write to {EMAIL} now, card {CARD}." and chunks[-1] == "[DONE]"


async def test_redact_restores_a_streamed_tool_call() -> None:
    async with in_process(route("redact")) as env:
        env.cloud.push({"kind": "tool_call", "name": "send_mail", "arguments": '{"to": "[EMAIL_1]"}'})
        result = await env.run(messages=[TASK], stream=True)
        assert isinstance(result, Stream)
        data = await drain(result)
        deltas = [d for c in events(data)[:-1] for ch in c["choices"] for d in ch["delta"].get("tool_calls", [])]
        assert orjson.loads("".join(d["function"].get("arguments", "") for d in deltas)) == {"to": EMAIL}
        assert b"[EMAIL_1]" not in data


async def test_a_placeholder_typed_by_the_user_is_never_reused() -> None:
    async with in_process(route("redact")) as env:
        env.cloud.push({"text": "You wrote [EMAIL_1]; the address is [EMAIL_2]."})
        result = await env.run(messages=[{"role": "user", "content": f"The template says [EMAIL_1]; mail {EMAIL}"}])
        assert env.cloud.received[0].body["messages"][0]["content"] == "The template says [EMAIL_1]; mail [EMAIL_2]"
        assert isinstance(result, Answer)
        assert result.completion["choices"][0]["message"]["content"] == f"You wrote [EMAIL_1]; the address is {EMAIL}."


async def test_keep_local_keeps_sensitive_steps_on_the_edge_and_pins() -> None:
    async with in_process(route("keep_local")) as env:
        clean = await env.run(messages=[{"role": "user", "content": "list the files"}])
        assert clean.facts is not None and clean.facts.target == "cloud"
        messages = [
            {"role": "user", "content": "list the files"},
            {"role": "assistant", "content": "ok"},
            {"role": "tool", "tool_call_id": "1", "content": f"owner: {EMAIL}"},
        ]
        sensitive = await env.run(messages=messages)
        assert sensitive.facts is not None
        assert (sensitive.facts.target, sensitive.facts.reason) == ("edge", "privacy_keep_local")
        env.edge.push({"kind": "status", "status": 503})  # the edge fails: still no failover to the cloud
        failed = await env.run(messages=[*messages, {"role": "assistant", "content": "x"}])
        assert isinstance(failed, Failure) and failed.status == 503 and len(env.cloud.received) == 1
        trajectory = await env.engine.tracker.store.get("s1")
        assert trajectory is not None and trajectory.notes[PIN] == "edge"
        assert EMAIL not in orjson.dumps([r.body for r in env.cloud.received]).decode()


async def test_block_refuses_sensitive_cloud_steps_with_a_record() -> None:
    async with in_process(route("block")) as env:
        assert isinstance(await env.run(session="b1", messages=[{"role": "user", "content": "hello"}]), Answer)
        blocked = await env.run(session="b2", messages=[TASK])
        assert isinstance(blocked, Failure) and blocked.status == 403
        assert blocked.error["code"] == "privacy_blocked" and "CARD, EMAIL" in blocked.error["message"]
        assert len(env.cloud.received) == 1 and not env.edge.received
        (record,) = await env.records("b2")
        assert (record.status, record.http_status, record.cost_usd) == ("refused", 403, 0.0)
        assert "privacy" in (record.error or "")


async def test_block_lets_a_sensitive_edge_step_through() -> None:
    async with in_process(route("block", strategy="edge")) as env:
        result = await env.run(messages=[TASK])
        assert isinstance(result, Answer) and result.facts.target == "edge"
        assert env.edge.received[0].body["messages"] == [TASK]  # the edge sees the values as they are


async def test_a_detection_failure_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    import router.privacy.guard as guard

    def broken(text: str) -> list[Any]:
        raise RuntimeError("detector bug")

    monkeypatch.setattr(guard, "detect", broken)
    async with in_process(route("redact")) as env:
        result = await env.run(messages=[TASK])
        assert result.facts is not None and result.facts.target == "edge" and not env.cloud.received
        assert env.metric("tandem_privacy_failures_total") == 1


async def test_the_privacy_score_weighs_what_the_cloud_saw() -> None:
    async with in_process(engine_settings(privacy_weights={"CARD": 3.0, "EMAIL": 1.0})) as env:
        first = [{"role": "user", "content": f"reach {EMAIL}"}]
        await env.run(messages=first)  # edge: seen, not exposed
        second = [*first, {"role": "assistant", "content": "ok"}]
        await env.run(messages=second, model="tandem/cloud")  # cloud: EMAIL exposed
        third = [*second, {"role": "assistant", "content": "ok"}, {"role": "user", "content": f"card {CARD}"}]
        await env.run(messages=third)  # edge: CARD seen only
        privacy = await privacy_of(env)
        assert privacy["seen"] == {"EMAIL": 1, "CARD": 1} and privacy["exposed"] == {"EMAIL": 1}
        assert privacy["score"] == pytest.approx(1 - 1.0 / 4.0)


async def test_an_advisor_inner_call_is_redacted_too() -> None:
    async with in_process(route("redact", strategy="advisor")) as env:
        env.edge.push({"kind": "tool_call", "name": "advisor", "arguments": "{}"}, {"text": "final"})
        env.cloud.push({"text": "Ask [EMAIL_1] for the invoice."})
        await env.run(messages=[TASK])
        prompt = env.cloud.received[0].body["messages"][0]["content"]
        assert "[EMAIL_1]" in prompt and EMAIL not in prompt and CARD not in prompt
        assert env.edge.received[1].body["messages"][-1]["content"] == f"Ask {EMAIL} for the invoice."


async def test_a_keep_local_step_makes_no_inner_cloud_call() -> None:
    async with in_process(route("keep_local", strategy="advisor")) as env:
        env.edge.push({"kind": "tool_call", "name": "advisor", "arguments": "{}"}, {"text": "final"})
        result = await env.run(messages=[TASK])
        assert result.facts is not None and result.facts.target == "edge" and not env.cloud.received


@pytest.mark.parametrize("privacy", ["redact", "allow"])
async def test_a_redacted_history_is_encoded_once_per_message(privacy: str) -> None:
    # A redacting route keeps each message's redacted JSON from the step that first redacted
    # it, and a later step's body joins them: what the cloud receives is the redacted history
    # as a whole encoding of it would give. A route that sends the messages as they are keeps
    # no encoding (the client's bytes go).
    async with in_process(route(privacy)) as env:
        history: list[dict[str, Any]] = [TASK]
        for number in range(3):
            env.cloud.push({"text": f"step {number}"})
            result = await env.run(messages=history, temperature=0.2, stream=False)
            assert isinstance(result, Answer)
            sent = env.cloud.received[-1].body
            assert sent["temperature"] == 0.2 and sent["model"] == "cloud-model"
            if privacy == "redact":
                assert EMAIL not in orjson.dumps(sent).decode()
            history = [
                *history,
                result.completion["choices"][0]["message"],
                {"role": "user", "content": f"{EMAIL} ok?"},
            ]
        trajectory = await env.engine.tracker.store.get("s1")
        assert trajectory is not None
        memo = env.engine.privacy_memo.get(trajectory.id)
        assert memo is not None
        (track,) = memo.tracks.values()
        encoded = [item.encoded for item in track.items]
        if privacy == "redact":
            assert encoded == [orjson.dumps(item.redacted) for item in track.items]
            assert [orjson.loads(e) for e in encoded] == env.cloud.received[-1].body["messages"]
        else:
            assert encoded == [None] * len(track.items)


@pytest.mark.parametrize("privacy", ["allow", "redact"])
async def test_edge_steps_learn_their_messages_once_the_answer_is_out(
    privacy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Steps the edge answers (here by the target header) leave the privacy stage's learning of
    # their messages for after the answer; the next cloud step learns only its own new message.
    from router.privacy import memo as memo_module

    learned: list[dict[str, Any]] = []
    real_learn = memo_module.learn

    def counting(matcher: Any, message: dict[str, Any], generation: int, encode: bool = False) -> Any:
        learned.append(message)
        return real_learn(matcher, message, generation, encode)

    monkeypatch.setattr(memo_module, "learn", counting)
    async with in_process(route(privacy)) as env:
        history: list[dict[str, Any]] = [TASK]
        for number in range(4):
            result = await env.run(messages=history, headers={"x-tandem-target": "edge"}, after=False)
            assert isinstance(result, Answer) and result.facts.target == "edge"
            assert not env.cloud.received
            before = len(learned)
            assert result.after is not None
            await result.after()  # what the HTTP layer runs once the answer is sent
            assert len(learned) - before == (1 if number == 0 else 2)  # the step's new messages
            history = [
                *history,
                result.completion["choices"][0]["message"],
                {"role": "user", "content": f"{EMAIL} {number}"},
            ]
        before = len(learned)
        result = await env.run(messages=history)
        assert isinstance(result, Answer) and result.facts.target == "cloud"
        assert len(learned) - before == 2  # the last answer and the new message, not the history
        sent = env.cloud.received[-1].body["messages"]
        assert (EMAIL in orjson.dumps(sent).decode()) == (privacy == "allow")


async def test_an_edge_only_route_learns_nothing_after_its_answers() -> None:
    async with in_process(route("allow", strategy="edge")) as env:
        result = await env.run(messages=[TASK], after=False)
        assert isinstance(result, Answer) and result.after is not None
        # Measuring only, the route scans the step's messages once its answer is out, not before.
        assert (await privacy_of(env))["seen"] == {}
        await result.after()
        assert (await privacy_of(env))["seen"] == {"EMAIL": 1, "CARD": 1}
        # It never sends the whole history to the cloud: no message is learned ahead.
        entry = env.engine.privacy_memo.get(result.facts.trajectory)
        assert entry is not None and not entry.tracks


async def test_a_protecting_route_scans_before_it_decides() -> None:
    async with in_process(route("keep_local", strategy="cloud")) as env:
        result = await env.run(messages=[TASK], after=False)
        assert isinstance(result, Answer) and result.facts.target == "edge"  # kept local: it knew
        assert (await privacy_of(env))["seen"] == {"EMAIL": 1, "CARD": 1}


async def test_a_failure_learning_ahead_costs_the_next_step_time_not_its_privacy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from router.privacy import memo as memo_module

    async with in_process(route("redact")) as env:
        result = await env.run(messages=[TASK], headers={"x-tandem-target": "edge"}, after=False)
        assert isinstance(result, Answer) and result.after is not None

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("a bug in learning")

        with monkeypatch.context() as patched:
            patched.setattr(memo_module, "learn", broken)
            await result.after()  # logged, not raised: the answer is out already
        history = [TASK, result.completion["choices"][0]["message"], {"role": "user", "content": f"again {EMAIL}"}]
        second = await env.run(messages=history)
        assert isinstance(second, Answer) and second.facts.target == "cloud"
        sent = orjson.dumps(env.cloud.received[-1].body["messages"]).decode()
        assert EMAIL not in sent and CARD not in sent and "[EMAIL_1]" in sent


async def test_an_allowed_cloud_call_is_on_its_way_before_it_is_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    # Measuring takes none of the answer's time: the request has reached the cloud when the
    # privacy stage looks at it, and the count is in the step's record all the same.
    from router.privacy.guard import PrivacyGuard

    order: list[str] = []
    real_measure = PrivacyGuard.measure

    async def measure(self: PrivacyGuard, messages: list[dict[str, Any]]) -> None:
        order.append(f"measured after {len(env.cloud.received)} cloud request(s)")
        await real_measure(self, messages)

    monkeypatch.setattr(PrivacyGuard, "measure", measure)
    async with in_process(route("allow")) as env:
        result = await env.run(messages=[TASK])
        assert isinstance(result, Answer) and result.facts.target == "cloud"
        assert order == ["measured after 1 cloud request(s)"]
        records = await env.records("s1")
        assert records[0].exposed == ["CARD", "EMAIL"]


async def test_a_measured_cloud_call_that_fails_still_counts_what_it_sent() -> None:
    async with in_process(route("allow")) as env:
        env.cloud.push({"kind": "status", "status": 500})
        result = await env.run(messages=[TASK])
        assert isinstance(result, Answer) and result.facts.target == "edge" and result.facts.fallback
        assert (await privacy_of(env))["exposed"] == {"EMAIL": 1, "CARD": 1}


async def test_a_measurement_that_fails_cancels_the_cloud_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from router.privacy.guard import PrivacyGuard

    async def broken(self: PrivacyGuard, messages: list[dict[str, Any]]) -> None:
        raise RuntimeError("a bug in measuring")

    monkeypatch.setattr(PrivacyGuard, "measure", broken)
    async with in_process(route("allow")) as env:
        env.cloud.push({"kind": "hang"})
        with pytest.raises(RuntimeError, match="a bug in measuring"):
            await env.run(messages=[TASK])
        records = await env.records("s1")
        assert [r.status for r in records] == ["error"] and records[0].http_status == 500
        # The hanging call was given up, not left waiting for an answer no one reads.
        await asyncio.sleep(0)
        assert not [t for t in asyncio.all_tasks() if "Upstream.send" in repr(t.get_coro())]


async def test_a_client_that_leaves_while_its_cloud_call_is_measured_still_has_it_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from router.privacy.guard import PrivacyGuard
    from router.protocol.chat import chat_request
    from router.result import StepMeta

    real_measure = PrivacyGuard.measure
    started = asyncio.Event()

    async def slow(self: PrivacyGuard, messages: list[dict[str, Any]]) -> None:
        started.set()
        await asyncio.sleep(0.05)  # a shared store's round trips
        await real_measure(self, messages)

    monkeypatch.setattr(PrivacyGuard, "measure", slow)
    async with in_process(route("allow")) as env:
        body = {"model": "tandem", "messages": [TASK]}
        step = asyncio.ensure_future(
            env.engine.run(chat_request(body, len(orjson.dumps(body))), StepMeta({"x-session-id": "s1"}, ""))
        )
        await started.wait()
        step.cancel()
        with pytest.raises(asyncio.CancelledError):
            await step
        assert len(env.cloud.received) == 1  # the request was out
        await asyncio.sleep(0.2)
        assert (await privacy_of(env))["exposed"] == {"EMAIL": 1, "CARD": 1}
        (record,) = await env.records("s1")
        assert record.status == "cancelled"
