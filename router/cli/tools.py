"""The commands beside the gateway: `demo` (the simulated run, or `--serve` to keep it up),
`trajectories export` and `audit expand`."""

from __future__ import annotations

import argparse
import os
import sys

from judge.arguments import url_problem
from judge.written import replaced_on_success
from router.cli.friendly import say


def demo(args: argparse.Namespace) -> int:
    # The simulator is a package beside the gateway, imported only here (the gateway's image leaves it out).
    try:
        from sim.run import run_demo
        from sim.serve import run_serve
    except ModuleNotFoundError as error:
        if error.name != "sim":
            raise
        say("the demo needs the simulator package `sim`, which this installation leaves out")
        return 2
    if args.serve:
        return run_serve(args.host, args.port, args.seed)
    return run_demo(seed=args.seed, tasks=args.tasks, edge_vllm=args.edge_vllm)


def export(args: argparse.Namespace) -> int:
    from router.api.trajectories import parse_time
    from router.errors import GatewayError
    from router.export import run_export

    if bool(args.url) == bool(args.redis_url):
        say("give exactly one of --url (a running gateway) or --redis-url")
        return 2
    if args.redis_url and not args.redis_url.startswith(("redis://", "rediss://", "unix://")):
        say(f"--redis-url {args.redis_url!r} is not a Redis URL (redis://, rediss:// or unix://)")
        return 2
    if args.url and not args.url.startswith(("http://", "https://")):
        say(f"--url {args.url!r} is not an http:// or https:// URL of a running gateway")
        return 2
    # A URL of the right scheme that still names no address (no host, a port out of range):
    # the clients would fail on it with a traceback.
    for option, url, schemes, host_required in (
        ("--url", args.url, ("http", "https"), True),
        ("--redis-url", args.redis_url, ("redis", "rediss", "unix"), False),
    ):
        problem = url_problem(url, schemes, host_required=host_required) if url else None
        if problem is not None:
            say(f"{option} {url!r} {problem}")
            return 2
    try:
        since = parse_time(args.since, "since") if args.since else None
    except GatewayError as exc:
        say(exc.message)
        return 2
    count = run_export(
        args.out,
        url=args.url,
        redis_url=args.redis_url,
        prefix=args.redis_prefix,
        since=since,
        api_key=args.api_key or os.environ.get("TANDEM_ADMIN_KEY"),
        judge_rows=args.judge_rows,
        show_progress=True,
    )
    print(f"wrote {count} step(s) to {args.out}")
    return 0


def audit_expand(args: argparse.Namespace) -> int:
    from router.audit.expand import AuditFormatError, expand
    from router.audit.sink import kept_files

    files = kept_files(args.path) if not args.only else [args.path]
    if not files or not all(f.is_file() for f in files):
        say(f"no audit file at {args.path}")
        return 2
    try:
        if str(args.out) == "-":
            result = expand(files, sys.stdout.buffer)
        else:
            with replaced_on_success(args.out) as out:  # no cut file left by a bad line or Ctrl-C
                result = expand(files, out)
    except AuditFormatError as exc:
        say(f"{exc}: is it a file of the gateway's audit log?")
        return 2
    print(f"wrote {result.lines} line(s) from {len(files)} file(s)", file=sys.stderr)
    if result.unresolved:
        say(f"{len(result.unresolved)} line(s) refer to lines not in these files")
        return 1
    return 0
