"""The `tandem` command: `serve` the gateway, `check` a config, run the `demo`, export
trajectories, expand the audit log; `tandem judge …` is the judge library's own CLI.

Each command lives in a module of this package; this one builds the parser (every option with
its help and default, an example per command) and turns a user's error into one line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judge import arguments
from router.cli.check import probe_upstreams
from router.cli.config import summary
from router.cli.friendly import run_friendly
from router.cli.serve import CONFIG_ENV, serve_app

__all__ = ["CONFIG_ENV", "main", "probe_upstreams", "serve_app", "summary"]


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Each option's default after its help (an option without one says in its help what happens
    when it is not given); descriptions and examples kept as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    from router.native import state

    try:
        number = version("tandem")
    except PackageNotFoundError:
        number = "unknown (not installed)"
    # Which modules run compiled (router/native.py): a stale build or TANDEM_PURE=1 says why not.
    return f"{number}, {state().describe()}"


def _command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str, summary_line: str, example: str
) -> argparse.ArgumentParser:
    return commands.add_parser(
        name,
        help=summary_line,
        description=summary_line,
        epilog=f"example:\n  {example}",
        formatter_class=HelpFormatter,
    )


def _config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="YAML configuration file; TANDEM_* environment variables override it (none: the embedded defaults)",
    )


def _server_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--host", default=None, help="address to bind (none: server.host of the config, 127.0.0.1)")
    serve.add_argument(
        "--port", type=arguments.PORT, default=None, help="port to bind (none: server.port of the config, 8080)"
    )
    serve.add_argument(
        "--workers", type=int, default=None, help="worker processes; above 1 needs redis_url (none: server.workers)"
    )
    serve.add_argument(
        "--insecure-open-proxy",
        action="store_true",
        help="bind a non-loopback address with no client keys although an upstream key is set (anyone who "
        "reaches the port spends it); only behind a proxy that authenticates",
    )
    serve.add_argument("--access-log", action="store_true", help="log one line per HTTP request (server.access_log)")


def parser() -> argparse.ArgumentParser:
    from router.cli import check, serve, tools

    top = argparse.ArgumentParser(
        prog="tandem",
        description="Edge-cloud routing gateway for LLM agents",
        epilog="example:\n  tandem demo --serve    # a gateway on simulated models: no GPU, no key",
        formatter_class=HelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"tandem {_version()}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    checking = _command(
        commands,
        "check",
        "validate a config as `tandem serve` would, without serving, and print what it resolves to (never a "
        "key); exit 0 when it would start, 2 when not, 1 when --probe finds an upstream down or refusing its key",
        "tandem check --config deploy/tandem.example.yaml --probe",
    )
    _config_option(checking)
    checking.add_argument(
        "--probe",
        action="store_true",
        help="also ask each upstream (GET {base_url}/models with its key), as /readyz does",
    )
    checking.set_defaults(func=check.run)

    serving = _command(commands, "serve", "run the gateway", "tandem serve --config tandem.yaml --port 8080")
    _config_option(serving)
    _server_options(serving)
    serving.set_defaults(func=serve.run)

    demo = _command(
        commands,
        "demo",
        "run a simulated agent through the gateway under each strategy and print what each cost; with --serve, "
        "keep a gateway on the simulated models up for curl and real agents",
        "tandem demo --serve --port 8080",
    )
    demo.add_argument(
        "--seed", type=arguments.SEED, default=7, help="the simulation's seed (which steps the edge gets wrong)"
    )
    # At most 100: the catalog's tasks go round again with new ids, each a column of the table
    # and 13 runs (about 4 minutes for 100); 99999999 built its task list until memory ran out.
    demo.add_argument("--tasks", type=arguments.whole(1, 100), default=6, help="tasks each strategy works")
    demo.add_argument(
        "--edge-vllm",
        action="store_true",
        help=(
            "use a real tiny vLLM server (CPU) as the edge; the first use installs vLLM into "
            "~/.cache/tandem/vllm-venv (about 2.4 GB, several minutes)"
        ),
    )
    demo.add_argument("--serve", action="store_true", help="keep the simulated models and a gateway up until Ctrl-C")
    demo.add_argument("--host", default="127.0.0.1", help="with --serve: the gateway's address")
    demo.add_argument(
        "--port", type=arguments.PORT, default=8080, help="with --serve: the gateway's port (0: a free one)"
    )
    demo.set_defaults(func=tools.demo)

    trajectories = commands.add_parser(
        "trajectories", help="work with recorded trajectories", formatter_class=HelpFormatter
    )
    trajectory_commands = trajectories.add_subparsers(dest="trajectory_command", required=True, metavar="COMMAND")
    export = _command(
        trajectory_commands,
        "export",
        "write the steps as JSON lines (schema tandem.step/1)",
        "tandem trajectories export --url http://127.0.0.1:8080 --out steps.jsonl --since 2026-01-01",
    )
    export.add_argument("--out", type=arguments.output, required=True, help="the JSON lines file to write")
    export.add_argument(
        "--since", default=None, help="only trajectories updated since: unix seconds or ISO 8601 time (none: all)"
    )
    export.add_argument("--url", default=None, help="a running gateway, e.g. http://127.0.0.1:8080")
    export.add_argument("--redis-url", default=None, help="read straight from Redis instead")
    export.add_argument("--redis-prefix", default="tandem:", help="with --redis-url: the gateway's redis_prefix")
    export.add_argument("--api-key", default=None, help="admin key (none: $TANDEM_ADMIN_KEY)")
    export.add_argument(
        "--judge-rows",
        action="store_true",
        help="write judge training rows (tandem.judge-row/1) from steps recorded with features",
    )
    export.set_defaults(func=tools.export)

    audit = commands.add_parser("audit", help="work with the audit log", formatter_class=HelpFormatter)
    audit_commands = audit.add_subparsers(dest="audit_command", required=True, metavar="COMMAND")
    expand = _command(
        audit_commands,
        "expand",
        "write EC2-Bench-shaped lines with the full input from a content-mode audit log",
        "tandem audit expand /var/log/tandem/audit.jsonl --out expanded.jsonl",
    )
    expand.add_argument("path", type=Path, help="the audit file (its rotated files path.N … path.1 are read first)")
    expand.add_argument("--out", type=arguments.output, default=Path("-"), help="output file (-: standard output)")
    expand.add_argument("--only", action="store_true", help="read this one file, not its rotated predecessors")
    expand.set_defaults(func=tools.audit_expand)

    commands.add_parser("judge", help="train, calibrate, label and evaluate the ONNX judge (see `tandem judge -h`)")
    return top


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["judge"]:
        # `tandem judge train|calibrate|label|evaluate …` is the judge library's own CLI.
        from judge.cli import main as judge_main

        return run_friendly(lambda: judge_main(arguments[1:]))
    args = parser().parse_args(arguments)
    return run_friendly(lambda: int(args.func(args)))
