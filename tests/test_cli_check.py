"""`tandem check` validates a config as `tandem serve` would, without serving, and says what it
resolves to, never a key; `tandem --version` names the installed version."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from aiohttp import web

from tests.fake_upstream import free_port
from tests.raw_upstream import RawUpstream

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "deploy" / "tandem.example.yaml"
CLIENT_KEY = "sk-client-7f3a9c41d2e8b6aa"
UPSTREAM_KEY = "sk-upstream-5b1e8d7c9a2f4e60"


def tandem(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "router.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        cwd=ROOT,
    )


def test_check_accepts_the_example_and_lists_what_it_resolves_to() -> None:
    done = tandem("check", "--config", str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"config ok: {EXAMPLE}")
    assert "route tandem/judge: strategy judge, privacy allow, failover on" in done.stdout
    assert "route tandem/edge: strategy edge, privacy allow, failover off" in done.stdout
    assert "alias gpt-* -> tandem (/v1/models: gpt-5-codex)" in done.stdout
    assert "client keys: none (no authentication)" in done.stdout


def test_check_never_prints_a_key(tmp_path: Path) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text(
        "upstreams:\n"
        "  edge: {base_url: 'http://127.0.0.1:8000/v1', model: small}\n"
        "  cloud: {base_url: 'https://cloud.example/v1', model: big, api_key_env: CLOUD_KEY_FOR_TEST}\n"
        f"client_api_keys: [{CLIENT_KEY}]\n"
    )
    done = tandem("check", "--config", str(config), env={"CLOUD_KEY_FOR_TEST": UPSTREAM_KEY})
    assert done.returncode == 0, done.stderr
    assert "upstream cloud: https://cloud.example/v1 model big (key set)" in done.stdout
    assert "upstream edge: http://127.0.0.1:8000/v1 model small (no key)" in done.stdout
    assert "client keys: 1 configured" in done.stdout
    output = done.stdout + done.stderr
    assert CLIENT_KEY not in output and UPSTREAM_KEY not in output


def test_check_warns_of_a_key_variable_that_is_not_set(tmp_path: Path) -> None:
    """The gateway starts (exit 0), but its calls to that upstream would be refused: say why."""
    config = tmp_path / "tandem.yaml"
    config.write_text(
        "upstreams:\n"
        "  edge: {base_url: 'http://127.0.0.1:8000/v1', model: small}\n"
        "  cloud: {base_url: 'https://cloud.example/v1', model: big, api_key_env: CLOUD_KEY_NOT_EXPORTED}\n"
    )
    done = tandem("check", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "(no key: CLOUD_KEY_NOT_EXPORTED is not set, its calls will be refused)" in done.stdout
    said = "warning: upstream cloud: api_key_env CLOUD_KEY_NOT_EXPORTED is not set; its calls will be refused"
    assert said in done.stderr and "empty" not in done.stderr
    assert "warning" not in tandem("check", "--config", str(config), env={"CLOUD_KEY_NOT_EXPORTED": "k"}).stderr
    # A variable exported with nothing in it is told apart from one not exported.
    done = tandem("check", "--config", str(config), env={"CLOUD_KEY_NOT_EXPORTED": ""})
    assert done.returncode == 0, done.stderr
    assert "(no key: CLOUD_KEY_NOT_EXPORTED is set but empty, its calls will be refused)" in done.stdout
    said = "warning: upstream cloud: api_key_env CLOUD_KEY_NOT_EXPORTED is set but empty; its calls will be refused"
    assert said in done.stderr


def test_a_key_pasted_as_api_key_env_is_refused_and_never_printed(tmp_path: Path) -> None:
    """`api_key_env` names a variable; a key pasted in its place was printed back by `check`,
    the start-up warning and /readyz. Now the config is refused, and the error does not echo it."""
    config = tmp_path / "tandem.yaml"
    config.write_text(
        "upstreams:\n"
        "  edge: {base_url: 'http://127.0.0.1:8000/v1', model: small}\n"
        f"  cloud: {{base_url: 'https://cloud.example/v1', model: big, api_key_env: {UPSTREAM_KEY}}}\n"
    )
    for command in ("check", "serve"):
        done = tandem(command, "--config", str(config))
        assert done.returncode == 2, done.stderr
        assert "upstreams.cloud.api_key_env: must be the name of an environment variable" in done.stderr
        assert UPSTREAM_KEY not in done.stdout + done.stderr


def test_check_warns_of_an_audit_log_that_cannot_be_written(tmp_path: Path) -> None:
    """The gateway starts, but would drop every audit line: a folder as the path, a file where a
    folder should be. A folder still to be made is none of that (the sink makes it)."""
    upstreams = (
        "upstreams:\n"
        "  edge: {base_url: 'http://127.0.0.1:8000/v1', model: small}\n"
        "  cloud: {base_url: 'https://cloud.example/v1', model: big}\n"
    )
    (tmp_path / "a-file").write_text("x")
    cases = {
        str(tmp_path): f"warning: audit.path {tmp_path} is a folder, not a file",
        str(tmp_path / "a-file" / "audit.jsonl"): f"{tmp_path / 'a-file'} is a file, not a folder",
        str(tmp_path / "to-be-made" / "audit.jsonl"): None,
    }
    for path, said in cases.items():
        config = tmp_path / "tandem.yaml"
        config.write_text(upstreams + f"audit: {{mode: metadata, path: '{path}'}}\n")
        done = tandem("check", "--config", str(config))
        assert done.returncode == 0, done.stderr
        if said is None:
            assert "audit" not in done.stderr, done.stderr
        else:
            assert said in done.stderr, done.stderr


def test_check_refuses_a_broken_config_naming_the_key(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        EXAMPLE.read_text().replace("tandem: {strategy: random, p: 0.4", "tandem: {strategy: random, p: 4")
    )
    done = tandem("check", "--config", str(broken))
    assert done.returncode == 2
    assert "routes.tandem.random.p" in done.stderr and "Traceback" not in done.stderr
    missing = tandem("check", "--config", str(tmp_path / "nowhere.yaml"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_check_loads_the_judge_model_a_route_names(tmp_path: Path) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text(f"routes:\n  tandem: {{strategy: judge, model: {tmp_path / 'missing.onnx'}}}\n")
    done = tandem("check", "--config", str(config))
    assert done.returncode == 2
    assert "routes.tandem.judge" in done.stderr and "Traceback" not in done.stderr


def test_version() -> None:
    done = tandem("--version")
    assert done.returncode == 0
    # The version, then which modules run compiled (router/native.py): N of them, or why none.
    assert done.stdout.startswith(f"tandem {version('tandem')}, compiled: ")


def test_probe_asks_each_upstream_and_fails_on_one_that_refuses_its_key(tmp_path: Path) -> None:
    seen: list[str] = []

    async def refuse(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization", ""))
        return web.json_response({"error": {"message": "bad key"}}, status=401)

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": []})

    edge = RawUpstream({("GET", "/v1/models"): models}).start()
    cloud = RawUpstream({("GET", "/v1/models"): refuse}).start()
    try:
        config = tmp_path / "tandem.yaml"
        upstreams = (
            "upstreams:\n"
            f"  edge: {{base_url: '{edge.base_url}', model: small}}\n"
            f"  cloud: {{base_url: '{cloud.base_url}', model: big, api_key_env: CLOUD_KEY_FOR_TEST}}\n"
        )
        config.write_text(upstreams)
        done = tandem("check", "--config", str(config), "--probe", env={"CLOUD_KEY_FOR_TEST": UPSTREAM_KEY})
        assert done.returncode == 1, done.stdout + done.stderr
        assert "probe edge: reachable (HTTP 200)" in done.stdout
        assert "probe cloud: reachable, NOT authorised (the upstream refused the key) (HTTP 401)" in done.stdout
        assert seen == [f"Bearer {UPSTREAM_KEY}"]  # the probe carried the key, and never printed it
        assert UPSTREAM_KEY not in done.stdout + done.stderr
        # Both answering and taking their keys: 0; without --probe nothing is asked.
        config.write_text(upstreams.replace(cloud.base_url, edge.base_url))
        assert tandem("check", "--config", str(config), "--probe", env={"CLOUD_KEY_FOR_TEST": "k"}).returncode == 0
        assert tandem("check", "--config", str(config)).returncode == 0 and len(seen) == 1
        # The key its api_key_env names is not set: not authorised, though the upstream answers.
        missing = tandem("check", "--config", str(config), "--probe")
        assert missing.returncode == 1
        assert "probe cloud: reachable, NOT authorised (its configured key is missing)" in missing.stdout
        assert "CLOUD_KEY_FOR_TEST (api_key_env) is not set" in missing.stdout
    finally:
        edge.stop()
        cloud.stop()


def test_probe_fails_where_something_answers_http_but_no_api(tmp_path: Path) -> None:
    """A base_url without its /v1 (the server's 404), or another server on the port (a docs
    site's page): every step sent there would fail, so the probe says so and exits 1."""

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": []})

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html><body>docs</body></html>", content_type="text/html")

    api = RawUpstream({("GET", "/v1/models"): models}).start()
    docs = RawUpstream({("GET", "/v1/models"): page}).start()
    try:
        config = tmp_path / "tandem.yaml"
        without_v1 = api.base_url.removesuffix("/v1")
        config.write_text(
            "upstreams:\n"
            f"  edge: {{base_url: '{without_v1}', model: small}}\n"
            f"  cloud: {{base_url: '{docs.base_url}', model: big}}\n"
        )
        done = tandem("check", "--config", str(config), "--probe")
        assert done.returncode == 1, done.stdout + done.stderr
        assert f"probe edge: not reachable (HTTP 404 at {without_v1}/models: no OpenAI-compatible API" in done.stdout
        assert "does it need its /v1?" in done.stdout
        assert "probe cloud: not reachable (HTTP 200 with a web page (text/html)" in done.stdout
    finally:
        api.stop()
        docs.stop()


def test_probe_reports_an_upstream_that_does_not_answer(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    config = tmp_path / "tandem.yaml"
    config.write_text(
        "upstreams:\n"
        f"  edge: {{base_url: 'http://127.0.0.1:{port}/v1', model: small}}\n"
        f"  cloud: {{base_url: 'http://user:hunter2@127.0.0.1:{port}/v1', model: big}}\n"
    )
    done = tandem("check", "--config", str(config), "--probe")
    assert done.returncode == 1
    assert "probe edge: not reachable" in done.stdout and "probe cloud: not reachable" in done.stdout
    assert "hunter2" not in done.stdout + done.stderr and "Traceback" not in done.stderr


def test_check_says_how_each_upstream_is_reached_and_refuses_a_proxy_it_cannot_use(tmp_path: Path) -> None:
    config = tmp_path / "tandem.yaml"
    config.write_text(
        "upstreams:\n"
        "  edge: {base_url: 'http://127.0.0.1:8000/v1', model: small}\n"
        "  cloud: {base_url: 'https://cloud.example/v1', model: big}\n"
    )
    proxy = {"HTTPS_PROXY": "http://alice:pr0xy-pw@proxy.corp:3128", "NO_PROXY": ""}
    done = tandem("check", "--config", str(config), env=proxy)
    assert done.returncode == 0, done.stderr
    assert "upstream edge is called with builtin, directly" in done.stdout  # loopback: never proxied
    assert (
        "upstream cloud is called with aiohttp, through the proxy http://proxy.corp:3128, "
        "TLS checked against the system trust store"
    ) in done.stdout
    refused = tandem("check", "--config", str(config), env={"HTTPS_PROXY": "socks5://alice:pr0xy-pw@proxy.corp:1080"})
    assert refused.returncode == 2
    assert "HTTPS_PROXY environment variable: a socks5:// proxy is not supported" in refused.stderr
    for output in (done.stdout + done.stderr, refused.stdout + refused.stderr):
        assert "pr0xy-pw" not in output and "alice" not in output
