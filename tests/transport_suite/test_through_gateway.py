"""The hostile upstream behind a real gateway (`tandem serve`, its own process): an edge over
plain HTTP (the gateway's HTTP/1.1 client) and a cloud over TLS (aiohttp), both hostile; two
clients at once send seeded steps on an edge-only route (plain and streamed) and on a route that
fails over to the cloud. No client may ever receive an answer, or bytes of one, meant for
another request; each step gets its own answer or an OpenAI-shaped upstream error (502, 503,
504, or for a stream already begun an error event), never a 500."""

from __future__ import annotations

import os
import random
import signal
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.fake_upstream import free_port
from tests.gateway_server import serve_process
from tests.raw_upstream import tls_certificate
from tests.transport_suite.hostile import BEHAVIOURS, WELL_FORMED, HostileUpstream, tag, tags_in

SEED = 7
STEPS = 250  # a client; two clients
# Routes: the model a step asks for.
EDGE_ONLY = "tandem/edge"
FAILOVER = "tandem/failover"
CLOUD = "tandem/cloud"
UPSTREAM_ERRORS = {502, 503, 504}


@dataclass(frozen=True)
class Step:
    request_id: str
    model: str
    behaviours: str  # `edge+cloud`
    stream: bool

    def body(self) -> dict[str, object]:
        content = f"{tag(self.request_id, self.behaviours)} " + "x" * random.Random(self.request_id).randint(0, 300)
        return {"model": self.model, "messages": [{"role": "user", "content": content}], "stream": self.stream}


def steps(client: int) -> list[Step]:
    rng = random.Random(f"{SEED}-{client}")
    names = sorted(BEHAVIOURS)
    out = []
    for number in range(STEPS):
        edge = rng.choice(sorted(WELL_FORMED)) if rng.random() < 0.4 else rng.choice(names)
        cloud = rng.choice(sorted(WELL_FORMED)) if rng.random() < 0.5 else rng.choice(names)
        model = rng.choice([EDGE_ONLY, EDGE_ONLY, FAILOVER, CLOUD])
        out.append(Step(f"c{client}-{number}", model, f"{edge}+{cloud}", rng.random() < 0.4))
    return out


def send(base_url: str, todo: list[Step]) -> list[tuple[Step, int, str]]:
    results = []
    with httpx.Client(timeout=30) as http:
        for step in todo:
            response = http.post(f"{base_url}/v1/chat/completions", json=step.body())
            results.append((step, response.status_code, response.text))
    return results


def test_two_clients_through_a_gateway_never_get_each_others_answers(tmp_path: Path) -> None:
    context, certificate = tls_certificate(tmp_path)
    edge = HostileUpstream(seed=SEED, slot=0).start()
    cloud = HostileUpstream(seed=SEED + 1, slot=1, ssl_context=context).start()
    assert cloud.base_url.startswith("https://")
    config = tmp_path / "tandem.yaml"
    config.write_text(
        f"""
upstreams:
  edge:  {{base_url: "{edge.base_url}", model: edge-model, max_connections: 3,
           timeouts: {{connect: 2, first_byte: 5, idle: 5}}}}
  cloud: {{base_url: "{cloud.base_url}", model: cloud-model, max_connections: 3,
           timeouts: {{connect: 2, first_byte: 5, idle: 5}}}}
routes:
  tandem/edge: {{strategy: edge, failover: false}}
  tandem/failover: {{strategy: edge, failover: true}}
  tandem/cloud: {{strategy: cloud, failover: false}}
log_level: warning
"""
    )
    port = free_port()
    process = serve_process(config, port, {**os.environ, "SSL_CERT_FILE": str(certificate)})
    try:
        with ThreadPoolExecutor(2) as pool:
            batches = list(pool.map(lambda client: send(f"http://127.0.0.1:{port}", steps(client)), [0, 1]))
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=15)
        edge.stop()
        cloud.stop()
    results = [result for batch in batches for result in batch]
    crossed = [(step, sorted(tags_in(text.encode()) - {step.request_id})) for step, _, text in results]
    crossed = [pair for pair in crossed if pair[1]]
    assert crossed == [], f"{len(crossed)} steps got another's bytes, e.g. {crossed[:3]}"
    statuses = {status for _, status, _ in results}
    assert statuses <= {200} | UPSTREAM_ERRORS, statuses
    for step, status, text in results:
        if status != 200:
            assert '"error"' in text, (step, status, text[:300])
        elif not step.stream:
            # A plain answer the gateway relayed is the step's own.
            assert tags_in(text.encode()) == {step.request_id}, (step, text[:300])
    # Both upstreams were reached, and most steps on well-formed answers were answered.
    assert edge.requests > 0 and cloud.requests > 0
    clean = [r for r in results if r[0].model == EDGE_ONLY and r[0].behaviours.split("+")[0] in WELL_FORMED]
    assert sum(status == 200 for _, status, _ in clean) >= 0.9 * len(clean)
