"""A body dense with values keeps the privacy scan busy for seconds; other clients' requests
are served meanwhile. The scan runs in a worker thread, and its compiled loops (mypyc) never let
the GIL go on their own: they let it go every few thousand matches (`windows.YIELD_EVERY`)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable

import httpx

from tests.gateway_server import GatewayServer


def test_a_body_dense_with_values_does_not_hold_other_clients_requests(
    make_gateway: Callable[..., GatewayServer],
) -> None:
    # (The cloud's first-byte timeout is the scan's too: seconds on a loaded machine.)
    slow_scan = {"cloud": {"timeouts": {"connect": 2, "first_byte": 60, "idle": 10}}}
    server = make_gateway(routes={"tandem": {"strategy": "cloud", "failover": False}}, upstream_overrides=slow_scan)
    body = {"model": "tandem", "messages": [{"role": "user", "content": "1.2.3.4 " * 250_000}]}  # 2 MB
    answered: list[int] = []

    def send() -> None:
        with httpx.Client(timeout=120) as big:
            answered.append(big.post(f"{server.base_url}/chat/completions", json=body).status_code)

    sender = threading.Thread(target=send)
    polls: list[float] = []  # when each probe of another client began
    with httpx.Client(timeout=120) as client:
        sender.start()
        while sender.is_alive():
            polls.append(time.perf_counter())
            assert client.get(f"{server.url}/healthz").status_code == 200
            time.sleep(0.02)
    sender.join()
    assert answered == [200]
    # The scan of 250,000 addresses takes seconds. Held whole, the GIL kept this thread (and
    # the gateway's event loop) waiting up to as long between two probes.
    gaps = sorted(after - before for before, after in itertools.pairwise(polls))
    assert len(gaps) >= 10, gaps
    assert gaps[-1] < 0.5, gaps[-5:]
