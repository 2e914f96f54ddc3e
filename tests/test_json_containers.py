"""A body of millions of small JSON arrays or objects is refused before it is parsed (400
`json_too_many_values`), on every surface and on a trajectory's next body parsed from its last;
bodies of long texts full of brackets are not; the count is exact where it decides."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import httpx
import orjson
import pytest

from router.errors import GatewayError
from router.protocol.containers import COUNT_FROM, MAX_JSON_CONTAINERS, MAX_JSON_VALUES, check_containers, counts
from router.protocol.prefix import PrefixParser
from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

JSON = {"content-type": "application/json"}
HEADS = {
    "chat/completions": b'{"model": "tandem", "messages": [{"role": "user", "content": "x"}], ',
    "messages": b'{"model": "tandem", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], ',
    "responses": b'{"model": "tandem", "input": "x", ',
}


def _tiny_lists(count: int) -> bytes:
    return b"[" + b",".join([b"[[]]"] * (count // 2)) + b"]"


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(6 if depth < 4 else 3)
    if kind == 0:
        return rng.choice(['a"[', "\\", '{"x": [1]}', '\\\\"[', "plain", "é[{"])
    if kind == 1:
        return rng.randrange(100)
    if kind == 2:
        return None
    if kind == 3:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"k{index}[": _value(rng, depth + 1) for index in range(rng.randrange(4))}


def _count(value: Any) -> tuple[int, int]:
    """Arrays and objects, and those plus the commas between their items and members."""
    items = list(value) if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else None
    if items is None:
        return 0, 0
    below = [_count(item) for item in items]
    containers = 1 + sum(count[0] for count in below)
    return containers, containers + max(len(items) - 1, 0) + sum(count[1] - count[0] for count in below)


def test_the_count_is_exact_whatever_the_strings_hold() -> None:
    """Strings full of brackets, quotes and backslashes, escaped every way orjson writes them."""
    rng = random.Random(7)
    for _ in range(300):
        value = [_value(rng) for _ in range(rng.randrange(1, 6))]
        data = orjson.dumps(value)
        assert counts(data) == _count(value), data


def test_bodies_under_the_counting_floor_are_not_read() -> None:
    """An agent's body of a few hundred KB is not counted (the count would cost more than its
    parse); a body that small holds the gateway briefly whatever it holds."""
    check_containers(_tiny_lists(COUNT_FROM // 5), max_containers=100, max_values=1000)
    with pytest.raises(GatewayError):
        check_containers(_tiny_lists(COUNT_FROM // 2 + 10), max_containers=100, max_values=1000)


def test_brackets_and_commas_in_strings_count_for_nothing() -> None:
    check_containers(
        b"[" * 150, max_containers=100, max_values=1000, count_from=0
    )  # too short to hold more: passed unread
    text = orjson.dumps({"code": "[{," * 3000})
    assert counts(text) == (1, 1)
    check_containers(text, max_containers=100, max_values=1000, count_from=0)
    with pytest.raises(GatewayError) as refused:
        check_containers(_tiny_lists(1000), max_containers=100, max_values=10_000, count_from=0)
    assert refused.value.status == 400 and "1,001 JSON arrays" in refused.value.message
    with pytest.raises(GatewayError) as refused:
        check_containers(orjson.dumps([1] * 2000), max_containers=100, max_values=1000, count_from=0)
    assert refused.value.status == 400 and "2,000 JSON values" in refused.value.message


@pytest.mark.parametrize("path", sorted(HEADS))
def test_millions_of_tiny_lists_are_refused_before_parsing(
    gateway: GatewayServer, client: httpx.Client, edge: FakeUpstream, path: str
) -> None:
    body = HEADS[path] + b'"metadata": ' + _tiny_lists(4_000_000) + b"}"  # 14 MB: ~2 s to parse
    # Another step is answered while the body is refused: it does not wait for a parse.
    answered: list[float] = []

    def other() -> None:
        time.sleep(0.05)
        started = time.monotonic()
        reply = httpx.post(
            f"{gateway.url}/v1/chat/completions",
            json={"model": "tandem", "messages": [{"role": "user", "content": "hi"}]},
            timeout=20,
        )
        assert reply.status_code == 200
        answered.append(time.monotonic() - started)

    thread = threading.Thread(target=other)
    thread.start()
    response = client.post(f"{gateway.url}/v1/{path}", content=body, headers=JSON)
    thread.join()
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    # The messages surface answers in its own error shape, which has no code.
    assert error.get("code", "json_too_many_values") == "json_too_many_values", error
    # The lists, their outer list, the body's object, and on two surfaces its messages' list and one message.
    held = 4_000_002 if path == "responses" else 4_000_004
    assert f"{held:,} JSON arrays and objects" in error["message"] and f"{MAX_JSON_CONTAINERS:,}" in error["message"]
    assert answered and answered[0] < 1.0, answered
    assert 'tandem_bad_requests_total{code="json_too_many_values"} 1.0' in client.get(f"{gateway.url}/metrics").text
    assert len(edge.received) == 1  # only the other step's


def test_millions_of_short_strings_are_refused(gateway: GatewayServer, client: httpx.Client) -> None:
    body = HEADS["chat/completions"] + b'"metadata": [' + b",".join([b'"a"'] * 3_000_000) + b"]}"
    response = client.post(f"{gateway.url}/v1/chat/completions", content=body, headers=JSON)
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    assert "3,000,006 JSON values" in message  # 4 arrays and objects, 3,000,002 commas
    assert f"{MAX_JSON_VALUES:,}" in message, message


def test_long_texts_full_of_brackets_are_served(gateway: GatewayServer, client: httpx.Client) -> None:
    code = "x = [{'a': [1, 2]}, {'b': {}}]\n" * 80_000  # 2.5 MB of source, 400,000 brackets and commas
    body = {"model": "tandem", "messages": [{"role": "user", "content": code}]}
    response = client.post(f"{gateway.url}/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text


def test_a_next_body_is_counted_on_its_new_part() -> None:
    """A trajectory's next body is parsed from its last: its new messages are what is parsed,
    and what is counted; the history already parsed is not counted again."""
    parser = PrefixParser(64 * 1024 * 1024, 128, min_bytes=0)
    history: list[dict[str, Any]] = [{"role": "system", "content": "s" * 4096}, {"role": "user", "content": "go"}]
    parser.parse(orjson.dumps({"model": "m", "messages": history}))
    parts = [{"type": "text", "text": "a"}] * (MAX_JSON_CONTAINERS + 10)
    grown = [*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": parts}]
    with pytest.raises(GatewayError) as refused:
        parser.parse(orjson.dumps({"model": "m", "messages": grown}))
    assert refused.value.code == "json_too_many_values"
    # The split gives up before parsing the new part; the whole body is then counted, and refused.
    assert parser.reused == 0 and parser.whole == 2
    few = [*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": parts[:50]}]
    request = parser.parse(orjson.dumps({"model": "m", "messages": few}))
    assert parser.reused == 1 and len(request.messages) == 4
