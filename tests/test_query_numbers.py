"""Numbers in query parameters are read as the docs write them (ASCII digits, a sign, a decimal
point, an exponent), not as Python's `int()`/`float()` would take them (`1_000`, ` 5 `, full-width
or Arabic-Indic digits, `1e-400` quietly 0): anything else is a 400 that names the parameter, with
the same checks (unknown and repeated parameters, `invalid_request`) on the trajectory list and on
a kept response's input items."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import openai
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer

LAX_NUMBERS = ["1_700_000_000", " 1700000000 ", "１７００００００００", "١٧٠٠٠٠٠٠٠٠", "1e-400", "0x10", "1e5000", "nan"]


def _refused(response: httpx.Response, param: str) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["param"] == param, error
    message: str = error["message"]
    assert f"'{param}'" in message
    return message


@pytest.mark.parametrize("name", ["since", "until", "before"])
@pytest.mark.parametrize("value", LAX_NUMBERS)
def test_a_time_not_written_as_a_number_or_an_iso_time_is_refused(
    gateway: GatewayServer, client: httpx.Client, name: str, value: str
) -> None:
    _refused(client.get(f"{gateway.url}/v1/trajectories", params={name: value}), name)


@pytest.mark.parametrize("value", ["1700000000", "1700000000.5", "1.7e9", "+1.7E+09", "2024-01-01T00:00:00Z", "0"])
def test_times_written_as_the_docs_say_are_read(gateway: GatewayServer, client: httpx.Client, value: str) -> None:
    response = client.get(f"{gateway.url}/v1/trajectories", params={"since": value})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("value", ["١", "²", "1_0", " 5", "５"])
def test_a_trajectory_list_limit_in_other_digits_is_refused(
    gateway: GatewayServer, client: httpx.Client, value: str
) -> None:
    _refused(client.get(f"{gateway.url}/v1/trajectories", params={"limit": value}), "limit")


@pytest.fixture()
def listed(make_gateway: Callable[..., GatewayServer], edge: FakeUpstream) -> str:
    """The input items' URL of a kept response."""
    server = make_gateway(routes={"tandem": {"strategy": "edge", "failover": False}})
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    edge.push({"text": "Hello."})
    answer = client.responses.create(model="tandem", input="hi")
    return f"{server.url}/v1/responses/{answer.id}/input_items"


@pytest.mark.parametrize(
    ("query", "param", "words"),
    [
        ("limit=١", "limit", "whole number from 1 to 100"),
        ("limit=²", "limit", "whole number from 1 to 100"),  # `isdigit()` took it, `int()` did not: a 500
        ("limit=1_0", "limit", "whole number from 1 to 100"),
        ("limit=0", "limit", "whole number from 1 to 100"),
        ("limit=1&limit=2", "limit", "given 2 times"),
        ("order=asc&order=desc", "order", "given 2 times"),
        ("order=up", "order", "'asc' or 'desc'"),
        ("before=x", "before", "unknown query parameter 'before'"),
        ("limt=5", "limt", "unknown query parameter 'limt'"),
        ("after=nope", "after", "names no item"),
    ],
)
def test_input_items_query_is_checked_like_the_trajectory_apis(
    listed: str, client: httpx.Client, query: str, param: str, words: str
) -> None:
    assert words in _refused(client.get(f"{listed}?{query}"), param)


def test_input_items_take_what_openai_s_endpoint_takes(listed: str, client: httpx.Client) -> None:
    response = client.get(f"{listed}?limit=5&order=asc&include[]=message.input_image.image_url")
    assert response.status_code == 200, response.text
    assert [item["role"] for item in response.json()["data"]] == ["user"]
