"""The gateway's instructions per request, counted by valgrind: the same figure on a busy machine.

`python -m benchmarks.instructions [--requests 1000] [--session] [--redis] [--route edge|judge ...]
    [--baseline DIR ...]`

`benchmarks.cpu` reads CPU time, which other jobs still move on a machine whose two cores are
hyperthreads of one (a busy sibling slows every instruction: its rounds spread by ±10% there).
Instructions retired do not move with the load; the machine's virtual CPUs expose no hardware
counters, so valgrind's callgrind counts them, user space only (system calls are not counted).
Method: the fast fake upstream of `benchmarks.overhead`, a gateway of each checkout in turn
under `valgrind --tool=callgrind` (the overhead benchmark's config, edge route, 50x slower),
the overhead benchmark's 1.6 KB agent step sent non-streamed by 16 keep-alive connections
(without `--session`, no session id: history stitching runs and each request begins a
trajectory, as in `benchmarks.cpu`; with it, each request is the next step of one of 16
sessions, its history an answer and a tool output longer: ~80 steps each, bodies to ~9 KB);
300 requests to warm up, the counters zeroed, `--requests` more, the counters dumped. Reported:
instructions per request, each checkout's. `--route` (repeatable; `edge` when not given): the
route the body names, `edge` (the config's `fast`) or `judge` (strategy judge, the shipped ONNX
judge), as in `benchmarks.cpu`; each route is counted for each checkout. Needs `valgrind`
(Debian: `apt-get install valgrind`); about a minute per checkout and route on a quiet machine,
over ten on one loaded by other jobs (the gateway's start under valgrind is waited for 30 minutes).
`--redis`: the trajectory store in a `redis-server` of the benchmark's own (no persistence), as
`server.workers` and replicas use it; the counts are the gateway's instructions, Redis's not.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import yaml

from benchmarks.checkouts import EXTRA_ROUTES
from benchmarks.overhead.gateways import Upstreams, _base_env, tandem_config
from benchmarks.overhead.loadgen import chat_body, http_request
from benchmarks.overhead.procs import free_port

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".bench" / "instructions"
WARMUP = 300
CONNECTIONS = 16
# The model name each `--route` sends, as in `benchmarks.cpu` (`judge`: `benchmarks.checkouts`' route).
ROUTES = {"edge": "fast", "judge": "judge"}


async def _send(port: int, make: Callable[[int, int], bytes], count: int) -> None:
    """`count` requests over the connections, one in flight on each (`make(connection, number)`
    writes each); every answer must be a 200."""
    left = [count]

    async def connection(index: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while left[0] > 0:
                left[0] -= 1
                writer.write(make(index, left[0]))
                head = await reader.readuntil(b"\r\n\r\n")
                if not head.startswith(b"HTTP/1.1 200"):
                    raise RuntimeError(f"the gateway answered {head[:200]!r}")
                lengths = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
                await reader.readexactly(int(lengths[0].split(b":")[1]))
        finally:
            writer.close()

    await asyncio.gather(*(connection(index) for index in range(CONNECTIONS)))


def _maker(port: int, session: bool, model: str = "fast") -> Callable[[int, int], bytes]:
    """The cpu benchmark's request for the route `model`; with `session`, the next step of the
    connection's session each time: a session header, and the history one answer and one tool
    output longer."""
    plain = http_request(port, "/v1/chat/completions", chat_body(model, False))
    if not session:
        return lambda index, number: plain
    body = orjson.loads(chat_body(model, False))
    histories: dict[int, list[dict[str, str]]] = {}

    def make(index: int, number: int) -> bytes:
        history = histories.setdefault(index, list(body["messages"]))
        history += [
            {"role": "assistant", "content": f"Running the tests again ({number})."},
            {"role": "user", "content": f"FAILED tests/test_parser.py::test_{number} - exit status 1"},
        ]
        request = http_request(port, "/v1/chat/completions", orjson.dumps({**body, "messages": history}))
        line, _, rest = request.partition(b"\r\n")
        return b"%s\r\nx-session-id: bench-%d\r\n%s" % (line, index, rest)

    return make


async def _ready(port: int, make: Callable[[int, int], bytes]) -> None:
    # Start-up under valgrind takes ~20 s on a quiet machine, minutes on one busy with other jobs
    # (over 10 at a load average of 10 on 2 cores).
    for _ in range(3600):
        try:
            await _send(port, make, 1)
            return
        except (OSError, RuntimeError, asyncio.IncompleteReadError):
            await asyncio.sleep(0.5)
    raise RuntimeError("the gateway under valgrind did not answer within 30 minutes")


def count(
    source: Path, upstream_port: int, requests: int, session: bool, route: str = "edge", redis_url: str | None = None
) -> float:
    """Instructions per request of a gateway run from `source`, on `route` (its trajectory
    store in the Redis at `redis_url`, when given)."""
    folder = OUT / route / source.name
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("callgrind.*"):
        old.unlink()
    upstreams = Upstreams(upstream_port, upstream_port)
    config = tandem_config(folder / "tandem.yaml", upstreams, "sk-bench", EXTRA_ROUTES)
    if redis_url is not None:
        settings = yaml.safe_load(config.read_text())
        settings["redis_url"] = redis_url
        config.write_text(yaml.safe_dump(settings, sort_keys=False))
    port = free_port()
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={folder}/callgrind.%p",
        sys.executable,
        *("-m", "router.cli", "serve", "--config", str(config), "--port", str(port)),
    ]
    env = {**_base_env(), "PYTHONPATH": str(source), "TANDEM_VAULT_KEY": base64.b64encode(os.urandom(32)).decode()}
    with open(folder / "valgrind.log", "w") as log:
        gateway = subprocess.Popen(command, env=env, cwd=source, stdout=log, stderr=subprocess.STDOUT)
    try:
        make = _maker(port, session, ROUTES[route])
        asyncio.run(_ready(port, make))
        asyncio.run(_send(port, make, WARMUP))
        subprocess.run(["callgrind_control", "--zero", str(gateway.pid)], check=True, capture_output=True)
        asyncio.run(_send(port, make, requests))
        subprocess.run(["callgrind_control", "--dump", str(gateway.pid)], check=True, capture_output=True)
    finally:
        gateway.terminate()
        gateway.wait(timeout=60)
    dump = folder / f"callgrind.{gateway.pid}.1"  # the first dump: the measured requests only
    totals = [line for line in dump.read_text().splitlines() if line.startswith(("summary:", "totals:"))]
    return int(totals[0].split()[1]) / requests


def measure(args: argparse.Namespace) -> int:
    upstream_port = free_port()
    fake = [sys.executable, "-m", "benchmarks.overhead.fakeupstream", "--port", str(upstream_port)]
    upstream = subprocess.Popen(fake, env=_base_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    redis = None
    redis_url = None
    if args.redis:
        redis_port = free_port()
        redis = subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
    try:
        figures = {}
        for route in args.route or ["edge"]:
            for source in [REPO, *args.baseline]:
                figures[route, source] = count(source, upstream_port, args.requests, args.session, route, redis_url)
                print(f"{route} route, {source}: {figures[route, source]:,.0f} instructions/request", flush=True)
        what = "new steps of 16 sessions" if args.session else "no session id"
        store = ", trajectory store in Redis" if args.redis else ""
        print(f"\ngateway instructions per request (c=16, {what}{store}, {args.requests} requests, callgrind):")
        for (route, source), value in figures.items():
            print(f"  {route} route, {source}: {value:,.0f}")
        if args.json is not None:
            from benchmarks.report import figure, write_result

            rows = [
                figure(f"{route} route ({what}{store}), {source.name}: instructions per request", f"{value:,.0f}")
                for (route, source), value in figures.items()
            ]
            command = f"python -m benchmarks.instructions --requests {args.requests}" + " --redis" * args.redis
            write_result(args.json, "instructions", command + " --session" * args.session, rows)
        return 0
    finally:
        upstream.terminate()
        if redis is not None:
            redis.terminate()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="measured requests per checkout")
    parser.add_argument("--session", action="store_true", help="send a session id (no stitching)")
    parser.add_argument("--redis", action="store_true", help="the trajectory store in a redis-server of its own")
    parser.add_argument("--json", type=Path, help="write the figures here (benchmarks.report's shape)")
    parser.add_argument("--route", action="append", choices=sorted(ROUTES), help="the route counted (repeatable)")
    parser.add_argument("--baseline", action="append", default=[], help="another checkout to count beside")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("benchmarks.instructions needs valgrind (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    args.baseline = [Path(b).resolve() for b in args.baseline]
    return measure(args)


if __name__ == "__main__":
    raise SystemExit(main())
