"""A `make_gateway` fixture that runs each test of a module against both trajectory stores: in
memory, and a real redis-server. A module opts in with `from tests.both_stores import make_gateway`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.gateway_server import GatewayServer

MakeGateway = Callable[..., GatewayServer]


@pytest.fixture(params=["memory", "redis"])
def make_gateway(request: pytest.FixtureRequest, make_gateway: MakeGateway) -> MakeGateway:
    if request.param == "memory":
        return make_gateway
    redis_url = request.getfixturevalue("redis_url")

    def make(**overrides: Any) -> GatewayServer:
        overrides.setdefault("redis_url", redis_url)
        return make_gateway(**overrides)

    return make
