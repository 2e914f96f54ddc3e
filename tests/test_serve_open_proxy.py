"""`tandem serve` is safe by default on the network: bound beyond loopback with no client keys
while an upstream's key is set (anyone reaching the port would spend it), it refuses to start
(exit 2, naming the fix) unless --insecure-open-proxy or server.insecure_open_proxy is given.
Its start-up line says the config, routes, client keys and each upstream's key set or not, and
never a key's value (nor do `check` or the refusal)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from router.cli.config import is_loopback
from tests.fake_upstream import free_port

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-test-SECRETVALUE"
CLIENT_SECRET = "sk-client-SECRETVALUE"
CONFIG = (
    "upstreams:\n"
    "  edge: {base_url: 'http://127.0.0.1:9/v1', model: small}\n"
    "  cloud: {base_url: 'https://cloud.example/v1', model: big, api_key_env: CLOUD_KEY_FOR_TEST}\n"
)


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")}
    return {**env, "CLOUD_KEY_FOR_TEST": SECRET, **extra}


def config_file(tmp_path: Path, text: str = CONFIG) -> Path:
    path = tmp_path / "tandem.yaml"
    path.write_text(text)
    return path


def serve_until_up(args: list[str], env: dict[str, str], port: int) -> str:
    """Start `tandem serve`, wait for /healthz, stop it with SIGTERM; what it wrote."""
    process = subprocess.Popen(
        [sys.executable, "-m", "router.cli", "serve", *args, "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stdout.read() if process.stdout else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the gateway did not start"
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        # uvicorn re-raises the signal after its graceful stop, as tests/test_serve.py accepts.
        assert process.wait(timeout=60) in (0, -signal.SIGTERM)
        return process.stdout.read() if process.stdout else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def refused(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "router.cli", "serve", *args, "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20"])
def test_a_non_loopback_address_without_client_keys_is_refused(host: str, tmp_path: Path) -> None:
    done = refused(["--config", str(config_file(tmp_path)), "--host", host], environment())
    assert done.returncode == 2, done.stderr
    assert f"refusing to serve on {host}" in done.stderr
    assert "upstream key of cloud is set" in done.stderr
    assert "--insecure-open-proxy" in done.stderr and "client_api_keys_file" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_the_refusal_holds_from_the_config_file_and_check_says_it_too(tmp_path: Path) -> None:
    config = config_file(tmp_path, CONFIG + "server: {host: 0.0.0.0}\n")
    assert refused(["--config", str(config)], environment()).returncode == 2
    done = subprocess.run(
        [sys.executable, "-m", "router.cli", "check", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(),
        cwd=ROOT,
    )
    assert done.returncode == 2 and "refusing to serve on 0.0.0.0" in done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_without_an_upstream_key_an_open_address_is_allowed(tmp_path: Path) -> None:
    # Nothing to spend: the key's variable is not set.
    env = {k: v for k, v in environment().items() if k != "CLOUD_KEY_FOR_TEST"}
    config = config_file(tmp_path, CONFIG + "server: {host: 0.0.0.0}\n")
    done = subprocess.run(
        [sys.executable, "-m", "router.cli", "check", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "server: 0.0.0.0:8080 (the network), 1 worker(s)" in done.stdout


def test_loopback_serves_and_the_start_line_names_no_key(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    port = free_port()
    output = serve_until_up(["--config", str(config)], environment(), port)
    line = next(line for line in output.splitlines() if line.startswith("tandem: serving"))
    assert f"serving {config} on http://127.0.0.1:{port}/v1" in line
    assert "routes tandem, tandem/edge, tandem/cloud" in line
    assert "client keys off" in line and "upstreams: edge no key, cloud key set" in line
    assert SECRET not in output


def test_an_open_address_with_client_keys_serves(tmp_path: Path) -> None:
    config = config_file(tmp_path)
    env = environment(TANDEM_CLIENT_API_KEYS=f'["{CLIENT_SECRET}"]')
    output = serve_until_up(["--config", str(config), "--host", "0.0.0.0"], env, free_port())
    assert "client keys on (1)" in output
    assert SECRET not in output and CLIENT_SECRET not in output


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--insecure-open-proxy"], {}),
        ([], {"TANDEM_SERVER__INSECURE_OPEN_PROXY": "true"}),
    ],
    ids=["flag", "config key"],
)
def test_an_open_address_with_the_explicit_setting_serves(args: list[str], env: dict[str, str], tmp_path: Path) -> None:
    config = config_file(tmp_path)
    output = serve_until_up(["--config", str(config), "--host", "0.0.0.0", *args], environment(**env), free_port())
    assert "tandem: serving" in output and SECRET not in output


def test_loopback_is_told_apart_from_other_addresses() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.3.4.5")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("10.0.0.7")
    assert not is_loopback("no-such-host.invalid") and not is_loopback("")
