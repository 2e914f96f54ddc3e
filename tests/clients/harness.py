"""Running the real agent clients (installed by deploy/clients/install.sh, as `make test` does)
against the real gateway and a scripted upstream.

A missing client fails its test with how to install it: these tests never skip."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gateway_server import GatewayServer

CLIENTS = Path(
    os.environ.get("TANDEM_CLIENTS_DIR")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tandem" / "clients"
)
TIMEOUT_S = 120
OVERFLOW_MESSAGE = (
    "This model's maximum context length is 2048 tokens. However, you requested 5000 tokens "
    "(4900 in the messages, 100 in the completion)."
)
# vLLM's own error: its code is the status, not context_length_exceeded; each surface rewords it.
OVERFLOW = {
    "kind": "error",
    "status": 400,
    "body": {"error": {"message": OVERFLOW_MESSAGE, "type": "BadRequestError", "param": None, "code": 400}},
}
SERVER_ERROR = {"kind": "error", "status": 500}
# What one answered edge step costs: the fake upstream's usage (20 prompt, 5 completion tokens)
# at the test edge's prices (tests/gateway_server.py, USD per million tokens).
EDGE_STEP_USD = (20 * 0.10 + 5 * 0.15) / 1_000_000
# Routes for the client runs: the main calls on the edge (one scripted queue, no failover so an
# injected error reaches the client); side calls on small models go to the cloud's queue.
ROUTES = {"tandem": {"strategy": "edge", "failover": False}}
ALIASES = {
    "claude-*haiku*": {"route": "tandem/cloud", "models": ["claude-haiku-4-5"]},
    "claude-*": {"route": "tandem", "models": ["claude-sonnet-4-6"]},
    "gpt-*": {"route": "tandem", "models": ["gpt-5-codex"]},
}


def installed(name: str, relative: str) -> Path:
    """A client's file, or a failure that says how to install it (CI must not skip these)."""
    folder = CLIENTS / name
    path = folder / relative
    if not (folder / ".tandem-installed").exists() or not path.exists():
        pytest.fail(
            f"the {name} client is not installed ({path} is missing): run `deploy/clients/install.sh {name}` "
            "(`make test` runs it)"
        )
    return path


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float = TIMEOUT_S) -> tuple[int, str]:
    """The client's exit status and its output (stdout and stderr together)."""
    base = {k: os.environ[k] for k in ("PATH", "LANG", "TERM") if k in os.environ}
    started = time.monotonic()
    done = subprocess.run(
        command,
        cwd=cwd,
        env={**base, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    print(f"{command[0]} ran {time.monotonic() - started:.1f} s, exit {done.returncode}:\n{done.stdout[-4000:]}")
    return done.returncode, done.stdout


def trajectories(server: GatewayServer, expected: int = 1) -> list[dict[str, Any]]:
    """Every trajectory the gateway recorded, each with its step records, once all are written."""
    with httpx.Client(timeout=10) as http:
        deadline = time.monotonic() + 10
        while True:
            listed = http.get(f"{server.url}/v1/trajectories", params={"limit": 50}).json()["data"]
            details = [http.get(f"{server.url}/v1/trajectories/{t['id']}").json() for t in listed]
            complete = all(len(d["records"]) >= d["steps"] for d in details)
            if (len(details) >= expected and complete) or time.monotonic() > deadline:
                return details
            time.sleep(0.1)


def main_records(trajectory: dict[str, Any], route: str = "tandem") -> list[tuple[int, int, str, list[str]]]:
    """(step, attempt, status, tools) of the trajectory's main calls, in order."""
    records = sorted(trajectory["records"], key=lambda r: (r["step"], r["attempt"]))
    return [(r["step"], r["attempt"], r["status"], r["tools"]) for r in records if r["route"] == route]


def assert_two_edge_steps(trajectory: dict[str, Any], stitches: list[str], task: str) -> None:
    """The ledger of a run of two answered edge steps whose first was tried twice (an injected
    upstream error, then the client's retry): how each attempt was stitched, the counts, the task,
    and its cost (the failed attempt cost nothing) against the all-cloud run's."""
    records = sorted(trajectory["records"], key=lambda r: (r["step"], r["attempt"]))
    assert [r["stitch"] for r in records] == stitches
    assert (trajectory["steps"], trajectory["edge_steps"], trajectory["errors"]) == (2, 2, 1)
    assert trajectory["task"] == task
    assert trajectory["cost_usd"] == pytest.approx(2 * EDGE_STEP_USD)
    assert trajectory["counterfactual_usd"] > trajectory["cost_usd"] and trajectory["cloud_share"] == 0.0
