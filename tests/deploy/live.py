"""A real Prometheus (Debian's `prometheus` package) on loopback, scraping real gateways every
second while they serve traffic through every route and failure kind.

Two gateways share one Prometheus job, as replicas do: `healthy` serves every strategy route
against scripted fake upstreams; `sick` has an edge no one listens on (every edge call fails to
connect, steps fail over to a premium-priced cloud, so its route's cloud share and the job's
spend pass their thresholds) and a Redis no one listens on (store errors, served from memory).
At the end `sick` is stopped, so that its scrape fails. Used by test_live_prometheus.py and by
record_series.py (which writes the promtool rule tests from what this run recorded).
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.deploy.tools import RULES
from tests.fake_upstream import FakeUpstream, free_port
from tests.gateway_server import GatewayServer, settings_for

EMAIL = "alice@example.com"
ROUTES: dict[str, dict[str, Any]] = {
    "tandem": {"strategy": "random", "p": 0.5, "seed": 7, "constraints": {"max_cloud_share": 0.6}},
    "tandem/task": {"strategy": "task", "cloud_if_matches": "refactor", "default": "edge"},
    "tandem/judge": {"strategy": "judge", "target_cloud_share": 0.4},
    "tandem/entropy": {"strategy": "entropy", "threshold": 1.0, "fallback": "edge"},
    "tandem/llm": {"strategy": "llm_judge", "judge": "cloud"},
    "tandem/draft": {"strategy": "draft_verify"},
    "tandem/delegate": {"strategy": "self_delegation"},
    "tandem/advisor": {"strategy": "advisor"},
    "tandem/sketch": {"strategy": "sketch"},
    "tandem/escalate": {"strategy": "escalation"},
    "tandem/redact": {"strategy": "cloud", "privacy": "redact"},
    "tandem/block": {"strategy": "cloud", "privacy": "block"},
    "tandem/local": {"strategy": "cloud", "privacy": "keep_local"},
    # `tandem/edge` never fails over (edge-only keeps the data local); this one does.
    "tandem/edge-failover": {"strategy": "edge", "failover": True, "edge_full": "cloud"},
}
HIGH_ENTROPY = {"kind": "text", "top_logprobs": [-0.7, -0.7, -1.0]}
PREMIUM = {"input": 50.0, "cached_input": 5.0, "output": 150.0}


def prometheus_binary() -> str:
    path = shutil.which("prometheus")
    if path is None:
        pytest.fail("prometheus is not installed: `make test` installs it (apt-get install prometheus)")
    return path


class Prometheus:
    """A Prometheus server on a free loopback port, scraping `targets` every second."""

    def __init__(self, folder: Path, targets: list[str]) -> None:
        self.port = free_port()
        self.folder = folder
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
            "rule_files": [str(RULES)],
            "scrape_configs": [{"job_name": "tandem", "static_configs": [{"targets": targets}]}],
        }
        (folder / "prometheus.yml").write_text(yaml.safe_dump(config))
        self._log = (folder / "prometheus.log").open("w")
        self._process = subprocess.Popen(
            [
                prometheus_binary(),
                f"--config.file={folder / 'prometheus.yml'}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=10)

    def wait_ready(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError("prometheus exited: " + (self.folder / "prometheus.log").read_text()[-2000:])
            try:
                if self.http.get("/-/ready").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("prometheus did not become ready")

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """The instant vector (or scalar, as one sample) of `expr`; raises on a query error."""
        params = {"query": expr, **({"time": f"{at:.3f}"} if at is not None else {})}
        reply = self.http.get("/api/v1/query", params=params).json()
        if reply.get("status") != "success":
            raise ValueError(f"{reply.get('errorType')}: {reply.get('error')}")
        data = reply["data"]
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        result: list[dict[str, Any]] = data["result"]
        return result

    def wait_for(self, expr: str, count: int, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while len(self.query(expr)) < count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{expr!r} did not reach {count} series")
            time.sleep(0.2)

    def scrapes_after(self, moment: float, timeout: float = 10) -> None:
        """Wait until every target has been scraped (or failed) after `moment` (unix time)."""
        deadline = time.monotonic() + timeout
        while True:
            targets = self.http.get("/api/v1/targets").json()["data"]["activeTargets"]
            scraped = [t for t in targets if _seconds(t["lastScrape"]) > moment + 0.05]
            if len(scraped) == len(targets):
                # One more rule evaluation after the scrape.
                time.sleep(1.2)
                return
            if time.monotonic() > deadline:
                raise RuntimeError("prometheus did not scrape every target again")
            time.sleep(0.1)

    def stop(self) -> None:
        self.http.close()
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)
        self._log.close()


def _seconds(stamp: str) -> float:
    from datetime import datetime

    # Go's RFC 3339 with nanoseconds; Python takes microseconds.
    head, _, rest = stamp.partition(".")
    digits = "".join(c for c in rest if c.isdigit())[:6]
    zone = rest[len(rest.rstrip("Z+-:0123456789")) :] if rest else ""
    zone = "+00:00" if stamp.endswith("Z") else zone[-6:]
    return datetime.fromisoformat(f"{head}.{digits or '0'}{zone}").timestamp()


@dataclass
class Fleet:
    prometheus: Prometheus
    healthy: GatewayServer
    sick: GatewayServer
    edge: FakeUpstream
    cloud: FakeUpstream
    client: httpx.Client
    traffic_started_at: float = 0.0  # every target scraped before the first step
    traffic_done_at: float = 0.0  # every target scraped after the traffic (both gateways up)
    sick_down_at: float = 0.0  # every target scraped after `sick` stopped
    ledger: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def sick_instance(self) -> str:
        return f"127.0.0.1:{self.sick.port}"

    @property
    def healthy_instance(self) -> str:
        return f"127.0.0.1:{self.healthy.port}"


@contextmanager
def running_fleet() -> Iterator[Fleet]:
    # A gateway with redis_url seals its privacy vault with this key (tests/conftest.py sets it
    # too; record_series.py runs without it).
    os.environ.setdefault("TANDEM_VAULT_KEY", base64.b64encode(os.urandom(32)).decode())
    folder = Path(tempfile.mkdtemp(prefix="tandem-live-"))
    edge = FakeUpstream(name="edge", model="edge-model").start()
    cloud = FakeUpstream(name="cloud", model="cloud-model").start()
    fast = {"timeouts": {"connect": 1, "first_byte": 1, "idle": 1}}
    healthy = GatewayServer(
        settings_for(
            edge.base_url,
            cloud.base_url,
            routes=ROUTES,
            # The edge as a pool of one replica: the edge pool's series and panels have data.
            upstream_overrides={"edge": {**fast, "endpoints": [edge.base_url]}, "cloud": fast},
            trajectories={"idle_close_s": 2},
        )
    ).start()
    dead = f"http://127.0.0.1:{free_port()}/v1"
    sick = GatewayServer(
        settings_for(
            dead,
            cloud.base_url,
            # No cloud-share constraint here: every step of the sick gateway fails over to the
            # cloud, and a constraint that forbids the cloud forbids failing over to it too.
            routes={"tandem": {key: value for key, value in ROUTES["tandem"].items() if key != "constraints"}},
            # A premium cloud: the sick gateway's failovers spend above the hourly threshold.
            upstream_overrides={"edge": fast, "cloud": {"prices": PREMIUM}},
            redis_url=f"redis://127.0.0.1:{free_port()}/0",
        )
    ).start()
    prometheus = Prometheus(folder, [f"127.0.0.1:{healthy.port}", f"127.0.0.1:{sick.port}"])
    client = httpx.Client(timeout=20)
    fleet = Fleet(prometheus, healthy, sick, edge, cloud, client)
    try:
        prometheus.wait_ready()
        # Every series the gateways start at zero is in the TSDB before the first step.
        prometheus.wait_for('up{job="tandem"} == 1', 2)
        prometheus.scrapes_after(time.time())
        fleet.traffic_started_at = time.time()
        drive(fleet)
        prometheus.scrapes_after(time.time())
        fleet.traffic_done_at = time.time()
        sick.stop()
        prometheus.scrapes_after(time.time())
        fleet.sick_down_at = time.time()
        yield fleet
    finally:
        client.close()
        prometheus.stop()
        healthy.stop()
        sick.stop()
        edge.stop()
        cloud.stop()
        shutil.rmtree(folder, ignore_errors=True)


def drive(fleet: Fleet) -> None:
    """Every route, every decision reason we can script, every failure kind."""
    from tests.deploy.live_traffic import drive_healthy, drive_sick

    drive_healthy(fleet)
    drive_sick(fleet)
