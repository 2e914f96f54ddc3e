"""Redis commands and round trips per agent step, counted through a real gateway and Redis.

`python -m benchmarks.workers.commands [--steps 30] [--checkout DIR ...]`

Method: a real `redis-server` (no persistence), the overhead benchmark's fake upstream and, per
checkout (this tree by default; `--checkout DIR` adds another tree, e.g. a worktree of main,
run the same way), one `tandem serve` worker with `redis_url` set and `benchmarks.workers`'s
configuration (an edge route, no session id: every step is stitched). Two shapes, sequential:
`--steps` one-step runs of the 1.6 KB agent step, and one run of `--steps` steps whose history
grows by the answer and a tool output each step. Per shape: `CONFIG RESETSTAT`, a `MONITOR`
connection that sees what the gateway sends, the steps, then a wait until the step records
are written (off the answer's path); `INFO commandstats` counts what Redis executed, the
scripts' inner commands too; its `total_reads_processed` counts the reads Redis made from its
clients' sockets, one per round trip (a pipeline arrives in one read), less the counter's own.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import socket
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import redis
import yaml

from benchmarks.overhead.gateways import _base_env
from benchmarks.overhead.loadgen import _MESSAGES
from benchmarks.overhead.procs import Service, free_port

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / ".bench" / "workers-commands"
KEY = "sk-bench"


@dataclass
class Count:
    """What one shape's steps cost in Redis."""

    steps: int
    sent: Counter[str] = field(default_factory=Counter)
    executed: Counter[str] = field(default_factory=Counter)
    round_trips: int = 0

    def per_step(self, number: int) -> float:
        return number / self.steps


class Monitor:
    """A MONITOR connection in a thread: every command a client sends, with its client address."""

    def __init__(self, port: int) -> None:
        self._sock = socket.create_connection(("127.0.0.1", port))
        self._sock.sendall(b"MONITOR\r\n")
        self.lines: list[tuple[float, str, str]] = []
        self._stop = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        buffer = b""
        self._sock.settimeout(0.2)
        while not self._stop:
            try:
                data = self._sock.recv(1 << 20)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            buffer += data
            *complete, buffer = buffer.split(b"\r\n")
            for line in complete:
                text = line.decode(errors="replace")
                if not text.startswith("+") or text == "+OK":
                    continue
                # +1733140000.123456 [0 127.0.0.1:50000] "EVALSHA" "abc" ...
                stamp, _, rest = text[1:].partition(" [")
                where, _, command = rest.partition("] ")
                if where.startswith("0 lua"):
                    continue  # a script's inner command: counted by commandstats, not sent
                self.lines.append((float(stamp), where, command.split(" ", 1)[0].strip('"').upper()))

    @property
    def commands(self) -> list[str]:
        """The commands' names, in the order they were sent."""
        return [command for _, _, command in self.lines]

    def quiet(self, for_s: float = 0.5, timeout_s: float = 10) -> None:
        """Wait until nothing was sent for `for_s` (the records are written off the answer's path)."""
        deadline = time.monotonic() + timeout_s
        seen = -1
        while seen != len(self.lines) and time.monotonic() < deadline:
            seen = len(self.lines)
            time.sleep(for_s)

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        self._sock.close()


def _reads(client: redis.Redis) -> int:
    return int(client.info("stats")["total_reads_processed"])


def _executed(client: redis.Redis) -> Counter[str]:
    stats = client.info("commandstats")
    return Counter({name.removeprefix("cmdstat_").upper(): int(value["calls"]) for name, value in stats.items()})


def _config(upstream_port: int, redis_port: int) -> Path:
    base = f"http://127.0.0.1:{upstream_port}/v1"
    config = {
        "log_level": "warning",
        "client_api_keys": [KEY],
        "redis_url": f"redis://127.0.0.1:{redis_port}/0",
        "upstreams": {
            "edge": {"base_url": base, "model": "fake-model", "prices": {"input": 0.1, "output": 0.15}},
            "cloud": {"base_url": base, "model": "fake-model", "prices": {"input": 2.5, "output": 15.0}},
        },
        "routes": {"fast": {"strategy": "edge"}},
    }
    path = OUT / "tandem.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _bodies(steps: int, growing: bool) -> list[bytes]:
    if not growing:
        body = orjson.dumps({"model": "fast", "messages": _MESSAGES, "max_tokens": 64, "temperature": 0})
        return [body] * steps
    messages = [dict(message) for message in _MESSAGES[:2]]
    bodies = []
    for turn in range(steps):
        bodies.append(orjson.dumps({"model": "fast", "messages": messages, "max_tokens": 64, "temperature": 0}))
        call = {"id": f"call_{turn}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        messages = [
            *messages,
            {"role": "assistant", "content": "ok", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{turn}", "content": f"output {turn}\n" * 20},
        ]
    return bodies


async def _send(port: int, bodies: list[bytes], one_run: bool) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
        headers = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
        for index, body in enumerate(bodies):
            if not one_run:
                # A run of one step: a body no earlier run began with.
                loaded = orjson.loads(body)
                loaded["messages"][0] = {
                    "role": "system",
                    "content": f"run {index}: {loaded['messages'][0]['content']}",
                }
                body = orjson.dumps(loaded)
            answer = await http.post("/v1/chat/completions", content=body, headers=headers)
            answer.raise_for_status()


def _measure(port: int, redis_port: int, bodies: list[bytes], one_run: bool) -> Count:
    direct = redis.Redis(port=redis_port, decode_responses=True)
    direct.config_resetstat()
    monitor = Monitor(redis_port)
    time.sleep(0.1)
    asyncio.run(_send(port, bodies, one_run))
    # Records and answer notes are written off the answer's path: wait until Redis is quiet.
    seen = -1
    while seen != len(monitor.lines):
        seen = len(monitor.lines)
        time.sleep(0.3)
    monitor.close()
    count = Count(len(bodies))
    lines = [line for line in monitor.lines if line[2] not in {"CONFIG", "INFO"}]
    count.sent = Counter(command for _, _, command in lines)
    # The reads of this counter's own commands: MONITOR, and the INFO that reads the figure.
    count.round_trips = _reads(direct) - 2
    count.executed = _executed(direct)
    for name in ("CONFIG", "INFO", "MONITOR"):
        count.executed.pop(name, None)
    direct.close()
    return count


def measure_checkout(tree: Path, steps: int) -> dict[str, Count]:
    upstream_port, redis_port, port = free_port(), free_port(), free_port()
    env = _base_env()
    upstream_command = [sys.executable, "-m", "benchmarks.overhead.fakeupstream", "--port", str(upstream_port)]
    upstream = Service.start("upstream", upstream_port, upstream_command, OUT / "upstream.log", env, cwd=REPO)
    redis_command = ["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"]
    server = Service.start("redis", redis_port, redis_command, OUT / "redis.log", env)
    gateway_env = {**env, "PYTHONPATH": str(tree), "TANDEM_VAULT_KEY": base64.b64encode(os.urandom(32)).decode()}
    config = _config(upstream_port, redis_port)
    command = [sys.executable, "-m", "router.cli", "serve", "--config", str(config), "--port", str(port)]
    gateway = Service.start("tandem", port, command, OUT / "tandem.log", gateway_env, cwd=tree)
    try:
        asyncio.run(upstream.wait_ready("/v1/models", 20))
        asyncio.run(gateway.wait_ready("/healthz", 60))
        asyncio.run(_send(port, _bodies(2, False), False))  # warm: scripts loaded, connections made
        time.sleep(0.5)
        return {
            "one-step runs": _measure(port, redis_port, _bodies(steps, False), False),
            "growing run": _measure(port, redis_port, _bodies(steps, True), True),
        }
    finally:
        gateway.stop()
        server.stop()
        upstream.stop()


def table(results: dict[str, dict[str, Count]]) -> str:
    columns = [(tree, shape, count) for tree, shapes in results.items() for shape, count in shapes.items()]
    names = sorted({name for _, _, count in columns for name in count.sent})
    head = "| per step | " + " | ".join(f"{shape}, {tree}" for tree, shape, _ in columns) + " |"
    rows = [head, "|---" * (len(columns) + 1) + "|"]

    def row(label: str, values: list[float]) -> str:
        return f"| {label} | " + " | ".join(f"{value:.1f}" for value in values) + " |"

    rows.append(row("commands the gateway sends", [c.per_step(sum(c.sent.values())) for _, _, c in columns]))
    for name in names:
        rows.append(row(f"of which `{name}`", [c.per_step(c.sent[name]) for _, _, c in columns]))
    rows.append(row("round trips", [c.per_step(c.round_trips) for _, _, c in columns]))
    rows.append(row("commands Redis executes", [c.per_step(sum(c.executed.values())) for _, _, c in columns]))
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--checkout", type=Path, action="append", default=[], help="another tree to count too")
    args = parser.parse_args()
    results: dict[str, dict[str, Count]] = {}
    for tree in [*args.checkout, REPO]:
        label = "this tree" if tree == REPO else tree.name
        results[label] = measure_checkout(tree.resolve(), args.steps)
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
