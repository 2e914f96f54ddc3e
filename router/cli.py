"""The `tandem` command: `serve` the gateway, `check` a config, run the `demo`."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from router.settings import ConfigError, Settings, load_settings, public_url

if TYPE_CHECKING:
    from starlette.applications import Starlette

CONFIG_ENV = "TANDEM_CONFIG"


def serve_app() -> Starlette:
    """`tandem serve`'s app factory, called in each uvicorn worker process: it reads the config
    file named in TANDEM_CONFIG and the environment, and makes the process-wide settings of a
    gateway process (router/runtime.py) once the gateway has started."""
    from router.app import create_app
    from router.runtime import tune_process

    path = os.environ.get(CONFIG_ENV)
    return create_app(load_settings(Path(path) if path else None), on_started=tune_process)


def _validated(path: Path | None, **overrides: object) -> Settings:
    """The settings `tandem serve` would start with, checked as far as can be without serving:
    every key, the keys' files, the vault key, and every route built (a judge's model loaded)."""
    settings = load_settings(path, **overrides)
    if settings.server.workers > 1 and not settings.redis_url:
        raise ConfigError(
            f"server.workers is {settings.server.workers}, but several workers need shared "
            "trajectory state: set redis_url (or run one worker)"
        )
    settings.client_keys()
    for upstream in settings.upstreams.values():
        upstream.api_key()
    from router.engine import build_routes, build_vault

    build_vault(settings)
    build_routes(settings)  # a judge's model loads, or the command stops naming it
    return settings


def _serve(args: argparse.Namespace) -> int:
    overrides: dict[str, object] = {}
    server: dict[str, object] = {}
    for key in ("host", "port", "workers"):
        value = getattr(args, key)
        if value is not None:
            server[key] = value
    if server:
        overrides["server"] = server
    try:
        settings = _validated(args.config, **overrides)
    except ConfigError as exc:
        print(f"tandem: {exc}", file=sys.stderr)
        return 2
    if args.config is not None:
        os.environ[CONFIG_ENV] = str(args.config.resolve())
    # Workers re-read the config in their own process; the command-line overrides reach
    # them through the environment, which the settings read after the file.
    for key, value in server.items():
        os.environ[f"TANDEM_SERVER__{key.upper()}"] = str(value)
    from router.metrics import prepare_multiprocess

    # With several workers each process keeps its metrics in files that /metrics sums.
    prepare_multiprocess(settings.server.workers)
    from router.server import serve, server_config

    config = server_config(
        "router.cli:serve_app",
        settings.limits,
        factory=True,
        host=settings.server.host,
        port=settings.server.port,
        workers=settings.server.workers,
        log_level=settings.log_level,
        timeout_graceful_shutdown=settings.server.shutdown_timeout_s,
        timeout_keep_alive=settings.server.keep_alive_s,
    )
    return 0 if serve(config) else 3


def summary(settings: Settings) -> list[str]:
    """What a config resolves to, a line each: upstreams (whether a key is set, never the key),
    routes, aliases, client and admin keys (how many, never which)."""
    lines = []
    for name, upstream in settings.upstreams.items():
        key = "key set" if upstream.api_key() else "no key"
        lines.append(f"upstream {name}: {public_url(upstream.base_url)} model {upstream.model} ({key})")
    for name, route in settings.routes.items():
        failover = "on" if route.failover else "off"
        lines.append(f"route {name}: strategy {route.strategy}, privacy {route.privacy}, failover {failover}")
    for pattern, alias in settings.model_aliases.items():
        listed = ", ".join(alias.models) or "none listed"
        lines.append(f"alias {pattern} -> {alias.route} (/v1/models: {listed})")
    if settings.unknown_model_route:
        lines.append(f"unknown model names -> {settings.unknown_model_route}")
    clients = len(settings.client_keys())
    lines.append(f"client keys: {clients} configured" if clients else "client keys: none (no authentication)")
    lines.append(f"admin keys: {len(settings.admin_api_keys)} configured")
    lines.append(f"store: {'redis' if settings.redis_url else 'memory'}")
    return lines


async def probe_upstreams(settings: Settings) -> list[tuple[str, bool, str]]:
    """Each upstream asked as `/readyz` asks it (GET {base_url}/models with the gateway's key):
    (name, whether it answered and took the key, what it said; no credential)."""
    from router.upstream import Upstream

    found = []
    for name, endpoint in settings.upstreams.items():
        upstream = Upstream(name, endpoint, settings.limits, lambda _limit: None)
        await upstream.start()
        try:
            state = await upstream.probe(cache_s=0)
        finally:
            await upstream.close()
        ok = state.reachable and state.authorised is not False
        said = "reachable" if state.reachable else "not reachable"
        if state.key_missing:
            said += ", NOT authorised (its configured key is missing)"
        elif state.authorised is False:
            said += ", NOT authorised (the upstream refused the key)"
        # An error may quote the URL, whose user:password@ is a credential.
        detail = re.sub(r"//[^/@\s]*@", "//", state.detail)
        found.append((name, ok, f"{said} ({detail})"))
    return found


def _check(args: argparse.Namespace) -> int:
    try:
        settings = _validated(args.config)
        lines = summary(settings)
    except ConfigError as exc:
        print(f"tandem: {exc}", file=sys.stderr)
        return 2
    source = args.config if args.config is not None else "the embedded defaults"
    print(f"config ok: {source}")
    for line in lines:
        print(f"  {line}")
    if not args.probe:
        return 0
    import asyncio

    failed = 0
    for name, ok, said in asyncio.run(probe_upstreams(settings)):
        print(f"  probe {name}: {said}")
        failed += not ok
    if failed:
        print(f"tandem: {failed} upstream(s) did not answer or refused the key", file=sys.stderr)
        return 1
    return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tandem")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _demo(args: argparse.Namespace) -> int:
    # The simulator is a package beside the gateway, imported only here (the gateway's image leaves it out).
    try:
        from sim.run import run_demo
    except ModuleNotFoundError as error:
        if error.name != "sim":
            raise
        print("tandem: the demo needs the simulator package `sim`, which this installation leaves out", file=sys.stderr)
        return 2

    return run_demo(seed=args.seed, tasks=args.tasks, edge_vllm=args.edge_vllm)


def _export(args: argparse.Namespace) -> int:
    from router.api.trajectories import parse_time
    from router.errors import GatewayError
    from router.export import run_export

    if bool(args.url) == bool(args.redis_url):
        print("tandem: give exactly one of --url (a running engine) or --redis-url", file=sys.stderr)
        return 2
    try:
        since = parse_time(args.since, "since") if args.since else None
    except GatewayError as exc:
        print(f"tandem: {exc.message}", file=sys.stderr)
        return 2
    count = run_export(
        args.out,
        url=args.url,
        redis_url=args.redis_url,
        prefix=args.redis_prefix,
        since=since,
        api_key=args.api_key or os.environ.get("TANDEM_ADMIN_KEY"),
        judge_rows=args.judge_rows,
    )
    print(f"wrote {count} step(s) to {args.out}")
    return 0


def _audit_expand(args: argparse.Namespace) -> int:
    from router.audit.expand import expand
    from router.audit.sink import kept_files

    files = kept_files(args.path) if not args.only else [args.path]
    if not files or not all(f.is_file() for f in files):
        print(f"tandem: no audit file at {args.path}", file=sys.stderr)
        return 2
    if str(args.out) == "-":
        result = expand(files, sys.stdout.buffer)
    else:
        with args.out.open("wb") as out:
            result = expand(files, out)
    print(f"wrote {result.lines} line(s) from {len(files)} file(s)", file=sys.stderr)
    if result.unresolved:
        print(f"tandem: {len(result.unresolved)} line(s) refer to lines not in these files", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["judge"]:
        # `tandem judge train|calibrate|label|evaluate …` is the judge library's own CLI.
        from judge.cli import main as judge_main

        return judge_main(arguments[1:])
    parser = argparse.ArgumentParser(prog="tandem", description="Edge-cloud routing gateway for LLM agents")
    parser.add_argument("--version", action="version", version=f"tandem {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser(
        "check",
        help="validate a config without serving: every key, key files, routes built, judges loaded",
        description="Validate a config as `tandem serve` would, without serving, and print what it resolves "
        "to (upstreams, routes, aliases, how many client keys; never a key). Exit 0 when it would start, "
        "2 when not; with --probe, 1 when an upstream does not answer or refuses its key. "
        "Example: tandem check --config deploy/tandem.example.yaml --probe",
    )
    check.add_argument(
        "--config", type=Path, default=None, help="YAML configuration file (default: none, the embedded defaults)"
    )
    check.add_argument(
        "--probe",
        action="store_true",
        help="also ask each upstream (GET {base_url}/models with its key), as /readyz does",
    )
    check.set_defaults(func=_check)

    serve = commands.add_parser("serve", help="run the gateway")
    serve.add_argument("--config", type=Path, default=None, help="YAML configuration file")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument("--workers", type=int, default=None)
    serve.set_defaults(func=_serve)

    demo = commands.add_parser("demo", help="run a simulated agent through the gateway under each strategy")
    demo.add_argument("--seed", type=int, default=7)
    demo.add_argument("--tasks", type=int, default=6)
    demo.add_argument("--edge-vllm", action="store_true", help="use a real tiny vLLM server as the edge")
    demo.set_defaults(func=_demo)

    trajectories = commands.add_parser("trajectories", help="work with recorded trajectories")
    trajectory_commands = trajectories.add_subparsers(dest="trajectory_command", required=True)
    export = trajectory_commands.add_parser("export", help="write the steps as JSON lines (schema tandem.step/1)")
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--since", default=None, help="unix seconds or ISO 8601 time")
    export.add_argument("--url", default=None, help="a running gateway, e.g. http://127.0.0.1:8080")
    export.add_argument("--redis-url", default=None, help="read straight from Redis instead")
    export.add_argument("--redis-prefix", default="tandem:")
    export.add_argument("--api-key", default=None, help="admin key (default: $TANDEM_ADMIN_KEY)")
    export.add_argument(
        "--judge-rows",
        action="store_true",
        help="write judge training rows (tandem.judge-row/1) from steps recorded with features",
    )
    export.set_defaults(func=_export)

    audit = commands.add_parser("audit", help="work with the audit log")
    audit_commands = audit.add_subparsers(dest="audit_command", required=True)
    expand = audit_commands.add_parser(
        "expand", help="write EC2-Bench-shaped lines with the full input from a content-mode audit log"
    )
    expand.add_argument("path", type=Path, help="the audit file (its rotated files path.N … path.1 are read first)")
    expand.add_argument("--out", type=Path, default=Path("-"), help="output file (default: standard output)")
    expand.add_argument("--only", action="store_true", help="read this one file, not its rotated predecessors")
    expand.set_defaults(func=_audit_expand)

    commands.add_parser("judge", help="train, calibrate, label and evaluate the ONNX judge (see `tandem judge -h`)")
    args = parser.parse_args(arguments)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
