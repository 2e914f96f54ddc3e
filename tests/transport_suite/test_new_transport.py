"""How many files a new transport touches, shown by a toy one built in a copy of the gateway
(tests/test_extending.py makes the copy): its module (router/transport/) and its line in
router/transport/choose.py, two files; an upstream whose `client` names it is then called
through it, in a real exchange with the fake upstream on 127.0.0.1. An unknown `client` stops
the start with the names there are."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from router.config.base import ConfigError
from router.config.upstream import UpstreamSettings
from router.transport.choose import egress_for
from tests.test_extending import ROOT, _changed, _copy

# A transport that hands each request to the built-in client, counting them.
TOY = '''
"""A counting transport: the built-in client's calls, counted."""

from __future__ import annotations

from router.transport.types import Request, Response, Transport


class CountingTransport:
    calls = 0

    def __init__(self, inner: Transport) -> None:
        self._inner = inner

    async def send(self, request: Request) -> Response:
        CountingTransport.calls += 1
        return await self._inner.send(request)

    async def close(self) -> None:
        await self._inner.close()
'''

DRIVE = """
import asyncio

from router.config.limits import LimitSettings
from router.config.upstream import UpstreamSettings
from router.transport.counting_transport import CountingTransport
from router.upstream import Upstream
from tests.fake_upstream import FakeUpstream


async def main() -> None:
    fake = FakeUpstream("toy").start()
    settings = UpstreamSettings(base_url=fake.base_url, model="m", client="counting")
    upstream = Upstream("edge", settings, LimitSettings(), lambda limit: None)
    await upstream.start()
    reply = await upstream.send(b'{"model": "m", "messages": []}', stream=False)
    await upstream.close()
    fake.stop()
    print(reply.status, CountingTransport.calls, len(fake.received))


asyncio.run(main())
"""


def test_a_new_transport_is_two_files(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    (copy / "router" / "transport" / "counting_transport.py").write_text(textwrap.dedent(TOY).lstrip())
    choose = copy / "router" / "transport" / "choose.py"
    text = choose.read_text()
    registry = 'CLIENTS: dict[str, Maker] = {"builtin": _builtin, "aiohttp": _aiohttp}'
    assert registry in text
    text = text.replace(
        registry,
        'CLIENTS: dict[str, Maker] = {"builtin": _builtin, "aiohttp": _aiohttp, '
        '"counting": lambda settings, egress: CountingTransport(_builtin(settings, egress))}',
    )
    text = text.replace(
        "from router.transport.http1 import Http1Session\n",
        "from router.transport.counting_transport import CountingTransport\n"
        "from router.transport.http1 import Http1Session\n",
    )
    choose.write_text(text)

    assert _changed(copy) == ["router/transport/choose.py", "router/transport/counting_transport.py"]
    env = {**os.environ, "PYTHONPATH": f"{copy}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-c", DRIVE], cwd=copy, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["200", "1", "1"]


def test_an_unknown_client_stops_the_start_naming_the_clients() -> None:
    settings = UpstreamSettings(base_url="http://127.0.0.1:8000/v1", model="m", client="curl")
    with pytest.raises(ConfigError, match=r"upstreams.edge.client: no client is called 'curl' \(one of auto, builtin"):
        egress_for(settings, "edge", environ={})
