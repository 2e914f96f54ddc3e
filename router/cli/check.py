"""`tandem check`: the config as `tandem serve` would take it, what it resolves to, and (with
--probe) whether each upstream answers and takes its key."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys

from router.cli.config import audit_problem, missing_keys, summary, validated
from router.native import state as native_state
from router.settings import Settings


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


def run(args: argparse.Namespace) -> int:
    settings = validated(args.config)  # ConfigError: main says it and exits 2
    lines = summary(settings)
    source = args.config if args.config is not None else "the embedded defaults"
    print(f"config ok: {source}")
    print(f"  {native_state().describe()}")
    for line in lines:
        print(f"  {line}")
    for name, problem in missing_keys(settings):
        print(f"tandem: warning: upstream {name}: {problem}; its calls will be refused", file=sys.stderr)
    audit = audit_problem(settings)
    if audit is not None:
        print(f"tandem: warning: {audit}: the audit log's lines would be dropped (and counted)", file=sys.stderr)
    if not args.probe:
        return 0
    failed = 0
    for name, ok, said in asyncio.run(probe_upstreams(settings)):
        print(f"  probe {name}: {said}")
        failed += not ok
    if failed:
        print(f"tandem: {failed} upstream(s) did not answer or refused the key", file=sys.stderr)
        return 1
    return 0
