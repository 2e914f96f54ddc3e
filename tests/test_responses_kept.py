"""Responses kept for `previous_response_id` (router/surfaces/responses/kept.py): a request
that names an earlier response continues its conversation, as OpenAI's Responses API does.
Real gateway, scripted upstream, the real openai SDK; a real redis-server where replicas share."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, wait_until
from tests.redis_server import RedisServer

EDGE_ONLY = {"tandem": {"strategy": "edge", "failover": False}}


def oai(server: GatewayServer, key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)


def sent(upstream: FakeUpstream, index: int = -1) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = upstream.received[index].body["messages"]
    return messages


def counted(server: GatewayServer, event: str) -> float:
    """`tandem_kept_responses_total{event}` as `server`'s /metrics shows it."""
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "tandem_kept_responses_total" and sample.labels == {"event": event}:
                return float(sample.value)
    raise AssertionError(f"no tandem_kept_responses_total{{event={event!r}}} series")


@pytest.fixture()
def kept(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    return make_gateway(routes=EDGE_ONLY)


def test_a_named_response_continues_its_conversation(kept: GatewayServer, edge: FakeUpstream) -> None:
    client = oai(kept)
    edge.push({"text": "Hello Ada."}, {"text": "Your name is Ada."}, {"text": "You asked twice."})
    first = client.responses.create(model="tandem", instructions="Be brief.", input="My name is Ada.")
    assert first.id.startswith("resp_") and first.output_text == "Hello Ada."
    second = client.responses.create(
        model="tandem", instructions="Answer in English.", input="What is my name?", previous_response_id=first.id
    )
    assert second.id != first.id
    # The earlier turn's instructions are not carried over (as OpenAI's API does); its input
    # and output are, before this request's own input.
    assert sent(edge) == [
        {"role": "system", "content": "Answer in English."},
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": "What is my name?"},
    ]
    client.responses.create(
        model="tandem", input=[{"role": "user", "content": "Again?"}], previous_response_id=second.id
    )
    assert [m["content"] for m in sent(edge)] == [
        "My name is Ada.",
        "Hello Ada.",
        "What is my name?",
        "Your name is Ada.",
        "Again?",
    ]


def test_a_function_call_is_answered_by_its_output_alone(kept: GatewayServer, edge: FakeUpstream) -> None:
    client = oai(kept)
    edge.push({"kind": "tool_call", "call_id": "call_7", "name": "shell", "arguments": '{"command": "ls"}'})
    tools: Any = [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}}]
    first = client.responses.create(model="tandem", input="list the files", tools=tools)
    call = first.output[0]
    assert call.type == "function_call" and call.call_id == "call_7"
    client.responses.create(
        model="tandem",
        tools=tools,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": "call_7", "output": "a.py b.py"}],
    )
    messages = sent(edge)
    assert messages[0] == {"role": "user", "content": "list the files"}
    assert messages[1]["role"] == "assistant" and messages[1]["tool_calls"][0]["id"] == "call_7"
    assert messages[1]["tool_calls"][0]["function"] == {"name": "shell", "arguments": '{"command": "ls"}'}
    assert messages[2] == {"role": "tool", "tool_call_id": "call_7", "content": "a.py b.py"}


def test_a_streamed_answer_is_kept_before_its_last_event(kept: GatewayServer, edge: FakeUpstream) -> None:
    client = oai(kept)
    edge.push({"text": "streamed words here"})
    with client.responses.stream(model="tandem", input="stream it") as stream:
        final = stream.get_final_response()
    assert final.output_text == "streamed words here"
    # Named at once, as a client that reads the last event and sends its next step does.
    client.responses.create(model="tandem", input="next", previous_response_id=final.id)
    assert sent(edge)[1] == {"role": "assistant", "content": "streamed words here"}
    assert client.responses.retrieve(final.id).output_text == "streamed words here"


def test_store_false_keeps_nothing(kept: GatewayServer, edge: FakeUpstream) -> None:
    client = oai(kept)
    first = client.responses.create(model="tandem", input="secret plan", store=False)
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="tandem", input="and?", previous_response_id=first.id)
    assert refused.value.param == "previous_response_id" and refused.value.code == "previous_response_not_found"
    assert "send the whole conversation" in refused.value.message
    assert len(edge.received) == 1  # the refused request reached no upstream
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)


def test_an_unknown_or_mistyped_id_is_a_400_that_names_it(kept: GatewayServer, edge: FakeUpstream) -> None:
    with pytest.raises(openai.BadRequestError) as unknown:
        oai(kept).responses.create(model="tandem", input="and then?", previous_response_id="resp_1")
    assert unknown.value.param == "previous_response_id" and "'resp_1'" in unknown.value.message
    with httpx.Client(timeout=10) as http:
        mistyped = http.post(
            f"{kept.url}/v1/responses", json={"model": "tandem", "input": "x", "previous_response_id": 5}
        )
        assert mistyped.status_code == 400
        assert mistyped.json()["error"]["param"] == "previous_response_id"
        # A mistyped field beside a kept id is refused as it is without one.
        first = oai(kept).responses.create(model="tandem", input="hi")
        bad = http.post(
            f"{kept.url}/v1/responses",
            json={"model": "tandem", "input": "x", "previous_response_id": first.id, "temperature": "hot"},
        )
        assert bad.status_code == 400 and bad.json()["error"]["param"] == "temperature"
        # An id of any length is named in a message of bounded length (never echoed whole).
        huge = "resp_" + "a" * 100_000
        long_id = http.post(
            f"{kept.url}/v1/responses", json={"model": "tandem", "input": "x", "previous_response_id": huge}
        )
        assert long_id.status_code == 400 and len(long_id.json()["error"]["message"]) < 500
        missing = http.get(f"{kept.url}/v1/responses/{huge[:10_000]}")
        assert missing.status_code == 404 and len(missing.json()["error"]["message"]) < 500
    assert len(edge.received) == 1


def assert_not_kept_for(client: openai.OpenAI, response_id: str) -> None:
    """`client` can neither read, delete nor continue `response_id`."""
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(response_id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(response_id)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="tandem", input="and?", previous_response_id=response_id)


def test_get_and_delete_a_kept_response(kept: GatewayServer, edge: FakeUpstream) -> None:
    client = oai(kept)
    first = client.responses.create(model="tandem", input="hi")
    again = client.responses.retrieve(first.id)
    assert again.id == first.id and again.output_text == first.output_text
    client.responses.delete(first.id)
    assert_not_kept_for(client, first.id)
    # Without Redis each answer is kept in the answering process only; the deletion is counted,
    # and so is the request that named the deleted one.
    assert [counted(kept, event) for event in ("kept", "kept_here", "deleted", "not_found")] == [0, 1, 1, 1]
    # A background request is answered at once, and kept as any other.
    queued = client.responses.create(model="tandem", input="later", background=True)
    assert queued.status == "completed" and client.responses.retrieve(queued.id).status == "completed"


def test_one_client_key_cannot_read_or_continue_anothers(make_gateway: Callable[..., GatewayServer]) -> None:
    server = make_gateway(routes=EDGE_ONLY, client_api_keys=["key-a", "key-b"])
    mine = oai(server, "key-a").responses.create(model="tandem", input="my notes")
    assert_not_kept_for(oai(server, "key-b"), mine.id)
    assert oai(server, "key-a").responses.retrieve(mine.id).id == mine.id
    with pytest.raises(openai.AuthenticationError):
        oai(server, "wrong").responses.retrieve(mine.id)


def test_a_route_that_protects_values_keeps_no_conversation(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream
) -> None:
    server = make_gateway(routes={**EDGE_ONLY, "private": {"strategy": "edge", "failover": False, "privacy": "redact"}})
    client = oai(server)
    first = client.responses.create(model="private", input="my card is 4111 1111 1111 1111")
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)
    kept_elsewhere = client.responses.create(model="tandem", input="hi")
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="private", input="and?", previous_response_id=kept_elsewhere.id)
    assert "privacy" in refused.value.message and refused.value.param == "previous_response_id"
    assert len(edge.received) == 2


def test_turned_off_the_parameter_is_refused_not_ignored(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream
) -> None:
    server = make_gateway(routes=EDGE_ONLY, kept_responses={"enabled": False})
    client = oai(server)
    first = client.responses.create(model="tandem", input="hi")
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="tandem", input="and then?", previous_response_id=first.id)
    assert refused.value.param == "previous_response_id" and "not supported" in refused.value.message
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)
    assert len(edge.received) == 1


def test_a_kept_response_expires(make_gateway: Callable[..., GatewayServer]) -> None:
    server = make_gateway(routes=EDGE_ONLY, kept_responses={"ttl_s": 0.3})
    client = oai(server)
    first = client.responses.create(model="tandem", input="hi")
    assert client.responses.retrieve(first.id).id == first.id
    time.sleep(0.4)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="tandem", input="and?", previous_response_id=first.id)


def test_memory_keeps_the_newest_within_its_bytes(make_gateway: Callable[..., GatewayServer]) -> None:
    server = make_gateway(routes=EDGE_ONLY, kept_responses={"memory_bytes": 4000})
    client = oai(server)
    ids = [client.responses.create(model="tandem", input=f"turn {n} " + "x" * 900).id for n in range(6)]
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(ids[0])
    assert client.responses.retrieve(ids[-1]).id == ids[-1]


def test_replicas_sharing_redis_continue_each_others_conversations(
    make_gateway: Callable[..., GatewayServer], redis_url: str, edge: FakeUpstream
) -> None:
    shared = {"routes": EDGE_ONLY, "redis_url": redis_url}
    one, two = make_gateway(**shared), make_gateway(**shared)
    edge.push({"text": "first answer"}, {"text": "second answer"})
    first = oai(one).responses.create(model="tandem", input="start")
    second = oai(two).responses.create(model="tandem", input="go on", previous_response_id=first.id)
    oai(one).responses.create(model="tandem", input="and end", previous_response_id=second.id)
    assert [m["content"] for m in sent(edge)] == ["start", "first answer", "go on", "second answer", "and end"]
    assert oai(two).responses.retrieve(first.id).output_text == "first answer"


def test_a_deletion_on_one_replica_holds_on_the_others(
    make_gateway: Callable[..., GatewayServer], redis_url: str
) -> None:
    one, two = make_gateway(routes=EDGE_ONLY, redis_url=redis_url), make_gateway(routes=EDGE_ONLY, redis_url=redis_url)
    first = oai(one).responses.create(model="tandem", input="hi")
    oai(two).responses.delete(first.id)
    # The replica that answered it still holds a copy: it is not read back from there.
    with pytest.raises(openai.NotFoundError):
        oai(one).responses.retrieve(first.id)
    with pytest.raises(openai.BadRequestError):
        oai(one).responses.create(model="tandem", input="and?", previous_response_id=first.id)


def test_a_conversation_goes_on_through_a_redis_outage_on_the_replica_that_answered(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream, tmp_path: Path
) -> None:
    redis = RedisServer(tmp_path / "redis", persistent=True).start()
    try:
        server = make_gateway(routes=EDGE_ONLY, redis_url=redis.url)
        other = make_gateway(routes=EDGE_ONLY, redis_url=redis.url)
        client = oai(server)
        edge.push({"text": "a1"}, {"text": "a2"}, {"text": "a3"}, {"text": "a4"})
        first = client.responses.create(model="tandem", input="q1")
        redis.stop()
        # Kept in Redis before the outage and in this process: read from here.
        second = client.responses.create(model="tandem", input="q2", previous_response_id=first.id)
        # Kept during the outage, in this process only.
        third = client.responses.create(model="tandem", input="q3", previous_response_id=second.id)
        redis.start()
        assert wait_until(lambda: not server.gateway.tracker.store.degraded, timeout=10)
        client.responses.create(model="tandem", input="q4", previous_response_id=third.id)
        assert [m["content"] for m in sent(edge)] == ["q1", "a1", "q2", "a2", "q3", "a3", "q4"]
        # Another replica never saw what was kept during the outage: a 400 that says what to do.
        with pytest.raises(openai.BadRequestError) as elsewhere:
            oai(other).responses.create(model="tandem", input="q5", previous_response_id=third.id)
        assert "send the whole conversation" in elsewhere.value.message
        # Counted as it went: q1's answer shared, q2's and q3's kept here during the outage, q4's
        # shared again; three conversations continued, one named that the other replica lacks.
        assert [counted(server, event) for event in ("kept", "kept_here", "continued")] == [2, 2, 3]
        assert (counted(other, "not_found"), counted(other, "continued")) == (1, 0)
        memory = httpx.get(f"{server.url}/metrics", timeout=10).text
        assert (
            "tandem_kept_responses_memory_bytes " in memory and "tandem_kept_responses_memory_bytes 0.0" not in memory
        )
    finally:
        redis.stop()


def test_a_conversation_longer_than_a_body_may_be_is_a_413(
    make_gateway: Callable[..., GatewayServer], edge: FakeUpstream
) -> None:
    server = make_gateway(routes=EDGE_ONLY, max_body_bytes=64 * 1024)
    client = oai(server)
    first = client.responses.create(model="tandem", input="a" * 40_000)
    second = client.responses.create(model="tandem", input="b" * 20_000, previous_response_id=first.id)
    with pytest.raises(openai.APIStatusError) as refused:
        client.responses.create(model="tandem", input="c" * 20_000, previous_response_id=second.id)
    assert refused.value.status_code == 413 and "max_body_bytes" in refused.value.message
    assert len(edge.received) == 2


def test_litellm_continues_a_conversation_by_its_own_encoding_of_the_id(
    kept: GatewayServer, edge: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LiteLLM's `responses()` wraps a response's id with its provider (for its own routing)
    and unwraps it when the id comes back as `previous_response_id`."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of its price list
    import litellm

    edge.push({"text": "Hello Ada."}, {"text": "Ada."})
    base = f"{kept.url}/v1"
    first = litellm.responses(model="openai/tandem", api_base=base, api_key="unused", input="My name is Ada.")
    litellm.responses(
        model="openai/tandem", api_base=base, api_key="unused", input="Name?", previous_response_id=first.id
    )
    assert sent(edge) == [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": "Name?"},
    ]


def test_an_unknown_model_is_its_404_with_or_without_a_kept_response(kept: GatewayServer, edge: FakeUpstream) -> None:
    client = oai(kept)
    first = client.responses.create(model="tandem", input="hi")
    with pytest.raises(openai.NotFoundError) as unknown:
        client.responses.create(model="no-such-model", input="and?", previous_response_id=first.id)
    assert unknown.value.code == "model_not_found"
    assert len(edge.received) == 1


def test_a_kept_responses_input_items_are_its_conversation_a_page_at_a_time(
    kept: GatewayServer, edge: FakeUpstream
) -> None:
    client = oai(kept)
    edge.push({"text": "Hello Ada."}, {"text": "Your name is Ada."})
    first = client.responses.create(model="tandem", input="My name is Ada.")
    second = client.responses.create(model="tandem", input="What is my name?", previous_response_id=first.id)
    newest_first = client.responses.input_items.list(second.id)
    texts = [item.content[0].text for item in newest_first.data]  # type: ignore[union-attr]
    assert texts == ["What is my name?", "Hello Ada.", "My name is Ada."]
    assert [item.role for item in newest_first.data] == ["user", "assistant", "user"]  # type: ignore[union-attr]
    assert len({item.id for item in newest_first.data}) == 3
    page = client.responses.input_items.list(second.id, order="asc", limit=2)
    assert [item.content[0].text for item in page.data] == ["My name is Ada.", "Hello Ada."]  # type: ignore[union-attr]
    assert page.has_more
    rest = client.responses.input_items.list(second.id, order="asc", limit=2, after=page.data[-1].id)
    assert [item.content[0].text for item in rest.data] == ["What is my name?"]  # type: ignore[union-attr]
    assert not rest.has_more
    # Every page, the SDK's own paging included.
    assert len(list(client.responses.input_items.list(second.id, limit=1))) == 3
    with httpx.Client(timeout=10) as http:
        url = f"{kept.url}/v1/responses/{second.id}/input_items"
        for query, param in (
            ("limit=0", "limit"),
            ("limit=x", "limit"),
            ("order=up", "order"),
            ("after=nope", "after"),
        ):
            refused = http.get(f"{url}?{query}")
            assert refused.status_code == 400 and refused.json()["error"]["param"] == param, query
    with pytest.raises(openai.NotFoundError):
        client.responses.input_items.list("resp_unknown")
    # An earlier turn deleted: the conversation cannot be listed whole, a 404 (not the 400 a
    # request naming it in previous_response_id gets).
    client.responses.delete(first.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.input_items.list(second.id)


def _records(redis_url: str) -> dict[str, dict[str, Any]]:
    """Every kept response in Redis, by its id."""
    direct = redis.Redis.from_url(redis_url)
    try:
        return {
            key.decode().rsplit(":", 1)[1]: orjson.loads(direct.get(key) or b"{}")
            for key in direct.scan_iter(match="*response:*")
        }
    finally:
        direct.close()


def test_a_conversation_resent_whole_is_kept_once(
    make_gateway: Callable[..., GatewayServer], redis_url: str, edge: FakeUpstream
) -> None:
    """A client that resends the whole conversation (the SDK's items sent back, then its tool
    output) without `store: false`: each answer is kept as if the request had named the one
    before (its own items and the chain), not with the whole input again; the conversation read
    back is the one the client sent, and a request that names the last answer sends the upstream
    what resending it whole does."""
    server = make_gateway(routes=EDGE_ONLY, redis_url=redis_url)
    client = oai(server)
    tools: Any = [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}}]
    conversation: list[Any] = [{"role": "user", "content": "Fix the failing test."}]
    answers = []
    for turn in range(4):
        edge.push({"kind": "tool_call", "call_id": f"call_{turn}", "name": "shell", "arguments": f'{{"n": {turn}}}'})
        if turn == 2:
            with client.responses.stream(model="tandem", input=conversation, tools=tools) as stream:
                answer = stream.get_final_response()
        else:
            answer = client.responses.create(model="tandem", input=conversation, tools=tools)
        answers.append(answer)
        conversation += [item.model_dump(exclude_none=True) for item in answer.output]
        conversation.append({"type": "function_call_output", "call_id": f"call_{turn}", "output": f"output {turn}"})
    kept = _records(redis_url)
    assert kept[answers[0].id]["chain"] == [] and len(kept[answers[0].id]["input"]) == 1
    for turn in (1, 2, 3):
        record = kept[answers[turn].id]
        assert record["chain"] == [answer.id for answer in answers[:turn]]
        assert [item["call_id"] for item in record["input"]] == [f"call_{turn - 1}"]  # its tool output alone
    resent_whole = sent(edge)
    listed = client.responses.input_items.list(answers[3].id, order="asc", limit=100)
    assert [item.model_dump(exclude_none=True).get("call_id") for item in listed.data] == [
        item.get("call_id")
        for item in conversation[:-2]  # what it answered: up to its own call
    ]
    edge.push({"text": "done"})
    client.responses.create(model="tandem", input=[conversation[-1]], tools=tools, previous_response_id=answers[3].id)
    continued = sent(edge)
    assert continued[: len(resent_whole)] == resent_whole
    assert continued[-1] == {"role": "tool", "tool_call_id": "call_3", "content": "output 3"}


def test_a_conversation_resent_with_a_change_is_kept_whole(
    make_gateway: Callable[..., GatewayServer], redis_url: str, edge: FakeUpstream
) -> None:
    server = make_gateway(routes=EDGE_ONLY, redis_url=redis_url)
    client = oai(server)
    edge.push({"text": "First answer."}, {"text": "Second answer."})
    first = client.responses.create(model="tandem", input="Start.")
    # The client rewrote its first message before resending (a compaction, an edit).
    rewritten = [{"role": "user", "content": "Start, rewritten."}, *[i.model_dump() for i in first.output]]
    second = client.responses.create(model="tandem", input=[*rewritten, {"role": "user", "content": "Next."}])
    record = _records(redis_url)[second.id]
    assert record["chain"] == [] and len(record["input"]) == 3


@pytest.mark.parametrize("shared", [False, True])
def test_a_conversation_lasts_ttl_s_after_its_latest_turn(
    make_gateway: Callable[..., GatewayServer], redis_url: str, shared: bool
) -> None:
    """An agent's run may last longer than ttl_s: each turn kept renews the turns before it, so
    the conversation is continued as long as its turns come within ttl_s of each other."""
    extra = {"redis_url": redis_url} if shared else {}
    server = make_gateway(routes=EDGE_ONLY, kept_responses={"ttl_s": 1.0}, **extra)
    client = oai(server)
    last = client.responses.create(model="tandem", input="turn 0")
    for turn in range(1, 4):
        time.sleep(0.45)
        last = client.responses.create(model="tandem", input=f"turn {turn}", previous_response_id=last.id)
    # 1.35 s after the first turn, which the last one still continues.
    assert len(client.responses.input_items.list(last.id, limit=100).data) == 7
    time.sleep(1.2)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="tandem", input="too late", previous_response_id=last.id)
