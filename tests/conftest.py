"""Fixtures: scripted fake edge and cloud upstreams, and a factory for real gateway servers."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.fake_upstream import FakeUpstream
from tests.gateway_server import GatewayServer, settings_for
from tests.redis_server import RedisServer

# A gateway with redis_url needs the key that seals its privacy vault (router/privacy/vault.py);
# the gateways of a test run (and the processes they start) share one.
os.environ.setdefault("TANDEM_VAULT_KEY", base64.b64encode(os.urandom(32)).decode())


@pytest.fixture(scope="session")
def edge_server() -> Iterator[FakeUpstream]:
    fake = FakeUpstream(name="edge", model="edge-model").start()
    yield fake
    fake.stop()


@pytest.fixture(scope="session")
def cloud_server() -> Iterator[FakeUpstream]:
    fake = FakeUpstream(name="cloud", model="cloud-model").start()
    yield fake
    fake.stop()


@pytest.fixture()
def edge(edge_server: FakeUpstream) -> FakeUpstream:
    edge_server.reset()
    return edge_server


@pytest.fixture()
def cloud(cloud_server: FakeUpstream) -> FakeUpstream:
    cloud_server.reset()
    return cloud_server


@pytest.fixture()
def make_gateway(edge: FakeUpstream, cloud: FakeUpstream) -> Iterator[Callable[..., GatewayServer]]:
    started: list[GatewayServer] = []

    def make(**overrides: Any) -> GatewayServer:
        edge_url = overrides.pop("edge_url", edge.base_url)
        cloud_url = overrides.pop("cloud_url", cloud.base_url)
        server = GatewayServer(settings_for(edge_url, cloud_url, **overrides)).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture()
def gateway(make_gateway: Callable[..., GatewayServer]) -> GatewayServer:
    """A gateway whose `tandem` route is edge-only (deterministic), failover on."""
    return make_gateway(routes={"tandem": {"strategy": "edge", "failover": True}})


@pytest.fixture()
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=20) as http:
        yield http


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture()
def redis_url(redis_server: RedisServer) -> str:
    redis_server.flush()
    return redis_server.url
