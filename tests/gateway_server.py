"""Run the real gateway (uvicorn, real sockets) on a free loopback port in a background thread."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import uvicorn

from router.app import create_app
from router.runtime import tune_process
from router.server import server_config
from router.settings import Settings, load_settings
from tests.fake_upstream import free_port


class GatewayServer:
    def __init__(self, settings: Settings, wrap: Any = None) -> None:
        self.settings = settings
        self.port = free_port()
        # The process-wide settings `tandem serve` makes (the tests run the gateway alike).
        self.app = create_app(settings, on_started=tune_process)
        # `wrap`: an ASGI middleware around the app (a test that watches what is sent when).
        served = self.app if wrap is None else wrap(self.app)
        # The server `tandem serve` runs (protocol, limits, loop), on a loopback port.
        config = server_config(
            served,
            settings.limits,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            timeout_keep_alive=settings.server.keep_alive_s,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="gateway", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def gateway(self) -> Any:
        return self.app.state.engine

    def start(self) -> GatewayServer:
        self._thread.start()
        # (A route that asks for names builds their hyperscan database at the start: seconds
        # of CPU on a slow machine.)
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the gateway did not start")
            time.sleep(0.01)
        return self

    def run(self, coroutine: Any) -> Any:
        """Run a coroutine on the gateway's own event loop (to reach its store, say)."""
        import asyncio

        loop = self.app.state.engine.loop
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(10)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)


def settings_for(edge_url: str, cloud_url: str, **overrides: Any) -> Settings:
    upstreams = {
        "edge": {
            "base_url": edge_url,
            "model": "edge-model",
            "prices": {"input": 0.10, "cached_input": 0.10, "output": 0.15},
            "timeouts": {"connect": 2, "first_byte": 5, "idle": 2},
        },
        "cloud": {
            "base_url": cloud_url,
            "model": "cloud-model",
            "prices": {"input": 2.50, "cached_input": 0.25, "output": 15.0},
            "timeouts": {"connect": 2, "first_byte": 5, "idle": 2},
        },
    }
    for name, extra in overrides.pop("upstream_overrides", {}).items():
        upstreams.setdefault(name, {}).update(extra)
    return load_settings(upstreams=upstreams, **overrides)


def wait_until(predicate: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def chat(client: httpx.Client, url: str, **body: Any) -> httpx.Response:
    body.setdefault("model", "tandem")
    body.setdefault("messages", [{"role": "user", "content": "hi"}])
    return client.post(f"{url}/v1/chat/completions", json=body)


def limit_count(client: httpx.Client, server: GatewayServer, limit: str) -> float:
    """`tandem_limit_exceeded_total{limit=…}` of the gateway, 0 when it has no series yet."""
    for line in client.get(f"{server.url}/metrics").text.splitlines():
        if line.startswith(f'tandem_limit_exceeded_total{{limit="{limit}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def serve_process(config: Any, port: int, env: dict[str, str] | None = None) -> Any:
    """A real `tandem serve` (the CLI, in its own process) on `port`, once `/healthz` answers;
    its output is piped (read it with `communicate()` after stopping it)."""
    import os
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env if env is not None else dict(os.environ),
    )

    wait_healthy(process, port)
    return process


def wait_healthy(process: Any, port: int) -> None:
    """Wait for a `tandem serve` process's `/healthz` on `port`; one that does not come up
    within 40 s is killed and its output (piped, text) raised with the error."""

    def up() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    if not wait_until(up, timeout=40):
        process.kill()
        output, _ = process.communicate(timeout=10)
        raise RuntimeError(f"tandem serve did not come up; its output:\n{output[-3000:]}")
