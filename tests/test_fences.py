"""Canaries for the libraries' private internals the gateway relies on (pyproject.toml bounds
each of them below its next minor version): uvicorn's httptools protocol and request cycle
(router/server.py, router/api/disconnect.py), FastAPI's and Starlette's `__call__` (router/app.py)
and prometheus-client's metric and multiprocess-file layout (router/metrics/exposition.py). Each fails
with a message naming the internal that moved and the module that reads it, so that raising a
bound starts from the right place. aiohttp's are fenced with the transports' tests."""

from __future__ import annotations

import inspect
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from router.config.limits import LimitSettings
from router.metrics.exposition import FilesWriter, RegistryWriter
from router.server import BoundedHttpToolsProtocol, server_config


def fence(holds: bool, internal: str, reader: str) -> None:
    if not holds:
        pytest.fail(
            f"{internal} is not what {reader} relies on: this version's internals moved. Keep the bound in "
            f"pyproject.toml, or adapt {reader} and then raise it.",
            pytrace=False,
        )


def rendered(render: Callable[[], bytes], internal: str, reader: str) -> str:
    """What a writer renders; a writer that cannot read the layout any more fails the fence."""
    try:
        return render().decode()
    except Exception as exc:
        fence(False, f"{internal} ({type(exc).__name__}: {exc})", reader)
        raise


# -- uvicorn: the bounded protocol and the disconnect watch ------------------------------------

SERVER = "router/server.py"
OVERRIDDEN = (
    "connection_made",
    "connection_lost",
    "data_received",
    "on_headers_complete",
    "on_message_complete",
    "on_response_complete",
    "_unset_keepalive_if_required",
    "send_400_response",
    "shutdown",
)


def test_uvicorn_httptools_protocol_has_what_the_bounded_protocol_overrides() -> None:
    from uvicorn.protocols.http import httptools_impl
    from uvicorn.supervisors import Multiprocess

    base = httptools_impl.HttpToolsProtocol
    for name in OVERRIDDEN:
        fence(callable(getattr(base, name, None)), f"uvicorn HttpToolsProtocol.{name}", SERVER)
    parameters = list(inspect.signature(base.__init__).parameters)
    fence(
        parameters[:5] == ["self", "config", "server_state", "app_state", "_loop"],
        f"uvicorn HttpToolsProtocol.__init__{parameters}",
        SERVER,
    )
    status_lines = getattr(httptools_impl, "STATUS_LINE", {})
    fence(
        all(isinstance(status_lines.get(code), bytes) for code in (400, 408, 431)),
        "uvicorn httptools_impl.STATUS_LINE",
        SERVER,
    )
    fence(
        "sockets" in inspect.signature(Multiprocess.__init__).parameters,
        "uvicorn supervisors.Multiprocess(config, sockets=)",
        SERVER,
    )


# What `JoinedCycle.send_whole` (router/server.py) reads and sets of uvicorn's request cycle,
# as uvicorn's own `send` does for a response's two messages.
WHOLE_STATE = (
    "access_log",
    "access_logger",
    "chunked_encoding",
    "default_headers",
    "disconnected",
    "expected_content_length",
    "flow",
    "keep_alive",
    "message_event",
    "on_response",
    "response_complete",
    "response_started",
    "scope",
    "transport",
    "waiting_for_100_continue",
)


def test_uvicorn_request_cycle_has_what_a_whole_answer_writes() -> None:
    from uvicorn.protocols import utils
    from uvicorn.protocols.http import httptools_impl

    source = inspect.getsource(httptools_impl.RequestResponseCycle)
    for name in WHOLE_STATE:
        fence(f"self.{name}" in source, f"uvicorn RequestResponseCycle.{name}", SERVER)
    for name in ("HEADER_RE", "HEADER_VALUE_RE"):
        fence(hasattr(getattr(httptools_impl, name, None), "search"), f"uvicorn httptools_impl.{name}", SERVER)
    for name in ("get_client_addr", "get_path_with_query_string"):
        fence(callable(getattr(utils, name, None)), f"uvicorn protocols.utils.{name}", SERVER)
    # The two messages' checks and writes that `send_whole` stands in for.
    send = inspect.getsource(httptools_impl.RequestResponseCycle.send)
    for line in ("self.on_response()", "self.message_event.set()", 'b"connection: close\\r\\n"'):
        fence(line in send, f"uvicorn RequestResponseCycle.send ({line})", SERVER)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_a_request_cycle_leads_to_its_bounded_connection_protocol() -> None:
    # What the app sees of uvicorn while it answers: `receive` is its request cycle's bound
    # method, the cycle's transport leads to the connection's protocol (router/api/disconnect.py),
    # and the protocol holds what router/server.py reads and writes.
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        cycle = getattr(receive, "__self__", None)
        transport = getattr(cycle, "transport", None)
        protocol = transport.get_protocol() if transport is not None else None
        seen["protocol"] = protocol
        seen["cycle"] = {name: hasattr(cycle, name) for name in ("response_started", "response_complete")}
        seen["cycle"] |= {name: hasattr(cycle, name) for name in ("disconnected", "message_event", "keep_alive")}
        seen["cycle is current"] = getattr(protocol, "cycle", None) is cycle
        seen["flow"] = callable(getattr(getattr(protocol, "flow", None), "pause_reading", None))
        seen["default headers"] = isinstance(
            getattr(getattr(protocol, "server_state", None), "default_headers", None), list
        )
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})
        seen["keep-alive timer"] = hasattr(protocol, "timeout_keep_alive_task")

    port = _free_port()
    config = server_config(app, LimitSettings(), host="127.0.0.1", port=port, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.started, "the uvicorn server did not start"
        try:
            status = httpx.get(f"http://127.0.0.1:{port}/", timeout=10).status_code
        except httpx.HTTPError as exc:
            status = f"no answer ({exc})"
    finally:
        server.should_exit = True
        thread.join(10)
    fence(status == 200, f"uvicorn serving router/server.py's protocol ({status})", SERVER)
    watch = "router/api/disconnect.py"
    fence(isinstance(seen.get("protocol"), BoundedHttpToolsProtocol), "uvicorn receive.__self__.transport", watch)
    for name, present in seen["cycle"].items():
        fence(present, f"uvicorn RequestResponseCycle.{name}", f"{SERVER} and {watch}")
    fence(seen["cycle is current"], "uvicorn HttpToolsProtocol.cycle", SERVER)
    fence(seen["flow"], "uvicorn HttpToolsProtocol.flow.pause_reading", SERVER)
    fence(seen["default headers"], "uvicorn ServerState.default_headers", SERVER)
    fence(seen["keep-alive timer"], "uvicorn HttpToolsProtocol.timeout_keep_alive_task", SERVER)


# -- FastAPI and Starlette: the chat path's own __call__ ---------------------------------------


async def test_fastapi_adds_only_the_app_to_an_http_scope_before_its_middlewares() -> None:
    # TandemApp.__call__ (router/app.py) serves chat completions without FastAPI's and
    # Starlette's `__call__`, setting scope["app"] itself: anything else they start doing per
    # request, the chat path would skip.
    added: list[set[str]] = []
    app = FastAPI()

    async def stack(scope: dict[str, Any], receive: Any, send: Any) -> None:
        added.append(set(scope) - before)

    app.middleware_stack = stack
    scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/v1/chat/completions", "headers": []}
    before = set(scope)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        pass

    await app(scope, receive, send)
    fence(added == [{"app"}], f"FastAPI/Starlette __call__ (scope keys added: {added})", "router/app.py TandemApp")
    fence(scope.get("app") is app, "Starlette.__call__ scope['app']", "router/app.py TandemApp")


# -- prometheus-client: the fast exposition's reading of its layout ----------------------------

EXPOSITION = "router/metrics/exposition.py"


def test_prometheus_client_metric_layout_is_what_the_registry_writer_reads() -> None:
    registry = CollectorRegistry()
    counter = Counter("canary_steps", "steps", ["route"], registry=registry)
    gauge = Gauge("canary_open", "open", registry=registry)
    histogram = Histogram("canary_seconds", "seconds", ["route"], buckets=(0.1, 1.0), registry=registry)
    counter.labels("r").inc(2)
    gauge.set(3)
    histogram.labels("r").observe(0.5)
    families = [counter, gauge, histogram]
    for family in families:
        for name in ("_name", "_type", "_documentation", "_labelnames"):  # headers, series names
            fence(hasattr(family, name), f"prometheus_client {type(family).__name__}.{name}", EXPOSITION)
    for family in (counter, histogram):
        fence(
            hasattr(family, "_lock") and isinstance(getattr(family, "_metrics", None), dict),
            "prometheus_client metric._metrics (children by label values) and ._lock",
            EXPOSITION,
        )
    fence(hasattr(histogram, "_upper_bounds"), "prometheus_client Histogram._upper_bounds", EXPOSITION)
    child = counter._metrics.get(("r",))
    fence(
        callable(getattr(getattr(child, "_value", None), "get", None)),
        "prometheus_client Counter child ._value.get()",
        EXPOSITION,
    )
    buckets = histogram._metrics.get(("r",))
    fence(
        isinstance(getattr(buckets, "_buckets", None), list) and hasattr(buckets, "_sum"),
        "prometheus_client Histogram child ._buckets and ._sum",
        EXPOSITION,
    )
    ours = rendered(RegistryWriter(families).render, "prometheus_client's metric layout", EXPOSITION)
    library = "".join(line for line in generate_latest(registry).decode().splitlines(True) if "_created" not in line)
    fence(ours == library, "prometheus_client's exposition of a registry", f"{EXPOSITION} RegistryWriter")


def test_prometheus_client_multiprocess_files_are_what_the_files_writer_reads(tmp_path: Path) -> None:
    from prometheus_client import mmap_dict

    fence(
        hasattr(mmap_dict, "MmapedDict") and hasattr(mmap_dict, "mmap_key"), "prometheus_client.mmap_dict", EXPOSITION
    )
    # Two workers' files, as prometheus-client's multiprocess values write them.
    for pid, value in (("101", 2.0), ("102", 3.0)):
        counter = mmap_dict.MmapedDict(str(tmp_path / f"counter_{pid}.db"))
        counter.write_value(
            mmap_dict.mmap_key("canary_steps", "canary_steps_total", ["route"], ["r"], "steps"), value, 0.0
        )
        counter.close()
        gauge = mmap_dict.MmapedDict(str(tmp_path / f"gauge_livesum_{pid}.db"))
        gauge.write_value(mmap_dict.mmap_key("canary_open", "canary_open", [], [], "open"), value, 0.0)
        gauge.close()
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(tmp_path))
    library = "".join(line for line in generate_latest(registry).decode().splitlines(True) if "_created" not in line)
    families = [Counter("canary_steps", "steps", ["route"], registry=None), Gauge("canary_open", "open", registry=None)]
    ours = rendered(FilesWriter(tmp_path, families).render, "prometheus-client's memory-mapped files", EXPOSITION)
    fence(
        'canary_steps_total{route="r"} 5.0' in ours and "canary_open 5.0" in ours,
        "prometheus-client's memory-mapped file format",
        f"{EXPOSITION} FilesWriter",
    )
    fence(
        sorted(ours.splitlines()) == sorted(library.splitlines()),
        "prometheus-client's multiprocess exposition",
        f"{EXPOSITION} FilesWriter",
    )
