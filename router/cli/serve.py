"""`tandem serve`: validate the config once, print the start-up line, and run uvicorn's workers,
each of which builds its app with `serve_app`."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from router.cli.config import audit_problem, start_line, validated
from router.settings import ConfigError, load_settings

if TYPE_CHECKING:
    from starlette.applications import Starlette

CONFIG_ENV = "TANDEM_CONFIG"


# uvicorn's exit status of a worker that could not start: its supervisor then keeps the workers
# that run (a restart on SIGHUP) or stops (a worker started again after a crash).
STARTUP_FAILURE = 3


def serve_app() -> Starlette:
    """`tandem serve`'s app factory, called in each uvicorn worker process: it reads the config
    file named in TANDEM_CONFIG and the environment, and makes the process-wide settings of a
    gateway process (router/runtime.py) once the gateway has started.

    A worker started again (on SIGHUP, several workers) reads the config again, which may have
    been broken since `tandem serve` checked it: the worker then says so in one line and exits,
    and uvicorn keeps the workers already serving. Such a worker also ignores SIGHUP itself: a
    SIGHUP sent to the whole process group (a closed terminal, `kill -HUP -<pgid>`) must not
    cut its streams while the supervisor, which got it too, replaces the workers one by one,
    each old one stopping gracefully (SIGTERM) once its replacement serves."""
    from router.app import create_app
    from router.runtime import tune_process

    path = os.environ.get(CONFIG_ENV)
    try:
        settings = load_settings(Path(path) if path else None)
        if (
            settings.server.workers > 1
            and hasattr(signal, "SIGHUP")
            and threading.current_thread() is threading.main_thread()
        ):
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        return create_app(settings, on_started=tune_process)
    except ConfigError as error:
        print(f"tandem: {error}; this worker does not start", file=sys.stderr, flush=True)
        sys.exit(STARTUP_FAILURE)


def bind_problem(host: str, port: int) -> str | None:
    """Why the gateway could not listen on host:port (a name that does not resolve, an address
    not this machine's, a port another process holds), or None. Tried, and let go, before the
    start-up line: uvicorn would print "serving on …", then its own error, and exit 3."""
    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as error:
        return f"cannot serve on {host}:{port}: {getattr(error, 'strerror', None) or error}"
    family, kind, proto, _name, address = found[0]
    try:
        with socket.socket(family, kind, proto) as trial:
            trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            trial.bind(address)
    except OSError as error:
        return f"cannot serve on {host}:{port}: {error.strerror or error} (choose another --host or --port)"
    return None


def run(args: argparse.Namespace) -> int:
    server: dict[str, object] = {}
    for key in ("host", "port", "workers"):
        value = getattr(args, key)
        if value is not None:
            server[key] = value
    for flag in ("insecure_open_proxy", "access_log"):
        if getattr(args, flag):
            server[flag] = True
    settings = validated(args.config, **({"server": server} if server else {}))  # ConfigError: main says it
    if args.config is not None:
        os.environ[CONFIG_ENV] = str(args.config.resolve())
    # Workers re-read the config in their own process; the command-line overrides reach
    # them through the environment, which the settings read after the file.
    for key, value in server.items():
        os.environ[f"TANDEM_SERVER__{key.upper()}"] = str(value)
    problem = bind_problem(settings.server.host, settings.server.port)
    if problem is not None:
        raise ConfigError(problem)
    # The gateway starts all the same (its audit lines are dropped and counted): said once here,
    # as `tandem check` says it, rather than found by the first step.
    audit = audit_problem(settings)
    if audit is not None:
        print(f"tandem: warning: {audit}; its lines will be dropped", file=sys.stderr, flush=True)
    print(start_line(settings, args.config), file=sys.stderr, flush=True)
    from router.metrics.core import prepare_multiprocess

    # With several workers each process keeps its metrics in files that /metrics sums.
    prepare_multiprocess(settings.server.workers)
    from router.server import logging_config, serve, server_config

    config = server_config(
        "router.cli:serve_app",
        settings.limits,
        factory=True,
        host=settings.server.host,
        port=settings.server.port,
        workers=settings.server.workers,
        log_level=settings.log_level,
        log_config=logging_config(settings.log_level),
        access_log=settings.server.access_log,
        timeout_graceful_shutdown=settings.server.shutdown_timeout_s,
        timeout_keep_alive=settings.server.keep_alive_s,
    )
    return 0 if serve(config) else 3
