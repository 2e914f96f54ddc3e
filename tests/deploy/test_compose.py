"""The container image and the compose stack, checked by structure (Docker cannot run here):
pinned images, a non-root image with a health check, and the gateway's config, the Prometheus
scrape targets, the Grafana provisioning and the files mounted all agree."""

from __future__ import annotations

import base64
import os
import re
import subprocess
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

from router.cli.config import open_proxy_refusal
from router.settings import load_settings
from tests.deploy.tools import DEPLOY, ROOT

COMPOSE = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
PINNED = re.compile(r"^[\w./-]+:v?\d+(\.\d+)+[\w.-]*$")  # a version tag, never latest or a bare name
VARIABLE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")
REQUIRED = re.compile(r"\$\{(\w+):\?[^}]*\}")


def expand(text: str, env: dict[str, str] | None = None) -> str:
    """Compose's ${NAME:-default} with the defaults (the environment of a fresh checkout), and
    ${NAME:?message} from `env` (compose refuses to start without them)."""
    text = REQUIRED.sub(lambda m: (env or {})[m.group(1)], text)
    return VARIABLE.sub(lambda m: m.group(2) or "", text)


def mounts(service: str) -> dict[str, Path]:
    """Container path -> file or folder in the repository, for the service's bind mounts."""
    found = {}
    for volume in SERVICES[service].get("volumes", []):
        source, target = volume.split(":")[:2]
        if source.startswith("."):
            found[target] = (DEPLOY / source).resolve()
    return found


def host_port(url: str) -> tuple[str, int]:
    match = re.match(r"^\w+://(?:[^@/]*@)?([^:/]+):(\d+)", url)
    assert match, url
    return match.group(1), int(match.group(2))


def test_services_and_pinned_images() -> None:
    assert set(SERVICES) == {"vllm", "gateway", "redis", "prometheus", "grafana"}
    for name, service in SERVICES.items():
        assert PINNED.match(service["image"]), f"{name}: image {service['image']!r} is not pinned to a version"
        assert service.get("restart") == "unless-stopped", name
    assert SERVICES["gateway"]["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
    assert (DEPLOY / SERVICES["gateway"]["build"]["context"] / SERVICES["gateway"]["build"]["dockerfile"]).is_file()


def test_every_bind_mount_exists_in_the_repository() -> None:
    for name in SERVICES:
        for target, source in mounts(name).items():
            assert source.exists(), f"{name}: {source} (mounted at {target}) is missing"
    named = {v.split(":")[0] for s in SERVICES.values() for v in s.get("volumes", []) if not v.startswith(".")}
    assert named == set(COMPOSE["volumes"])


def test_vllm_edge_on_the_gpu_with_model_and_parser_as_variables() -> None:
    vllm = SERVICES["vllm"]
    devices = vllm["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": "${EDGE_GPUS:-1}", "capabilities": ["gpu"]}]
    command = vllm["command"]
    assert command[0] == "${EDGE_MODEL:-Qwen/Qwen3-8B}"
    assert command[command.index("--tensor-parallel-size") + 1] == "${EDGE_GPUS:-1}", "one GPU count for both"
    assert command[command.index("--tool-call-parser") + 1] == "${TOOL_CALL_PARSER:-hermes}"
    assert "--enable-auto-tool-choice" in command


# What ./make-env.sh would write (values made up for the test).
SECRETS = {
    "TANDEM_CLIENT_KEY": "tk-test",
    "REDIS_PASSWORD": "r3dis",
    "TANDEM_VAULT_KEY": base64.b64encode(bytes(range(32))).decode(),
    "GRAFANA_ADMIN_PASSWORD": "g",
}


def gateway_settings() -> Any:
    """The gateway's settings as the container sees them: the mounted file plus its environment."""
    gateway = SERVICES["gateway"]
    config_path = gateway["command"][gateway["command"].index("--config") + 1]
    env = {name: expand(str(value), SECRETS) for name, value in gateway["environment"].items()}
    with mock.patch.dict(os.environ, env):
        return load_settings(mounts("gateway")[config_path])


def test_nothing_is_published_beyond_loopback_and_no_secret_has_a_default() -> None:
    for name, service in SERVICES.items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} on every interface"
    text = (DEPLOY / "compose.yaml").read_text()
    for secret in SECRETS:
        assert re.search(r"\$\{" + secret + r":\?", text), f"{secret} must be required"
        assert not re.search(r"\$\{" + secret + r":-", text), f"{secret} must have no default"
    assert "--requirepass" in SERVICES["redis"]["command"]
    assert gateway_settings().redis_url == "redis://:r3dis@redis:6379/0"


def test_make_env_writes_random_secrets_once(tmp_path: Path) -> None:
    script = tmp_path / "make-env.sh"
    script.write_bytes((DEPLOY / "make-env.sh").read_bytes())
    script.chmod(0o755)
    first = subprocess.run([str(script)], capture_output=True, text=True, check=True)
    written = dict(line.split("=", 1) for line in (tmp_path / ".env").read_text().split())
    assert set(written) == set(SECRETS)
    vault_key = written.pop("TANDEM_VAULT_KEY")
    assert len(base64.b64decode(vault_key)) == 32, "the vault key is 32 bytes of base64"
    assert all(len(value) >= 20 and value.replace("tk-", "").isalnum() for value in written.values())
    assert written["TANDEM_CLIENT_KEY"] in first.stdout
    subprocess.run([str(script)], capture_output=True, check=True)
    again = dict(line.split("=", 1) for line in (tmp_path / ".env").read_text().split())
    assert again == {**written, "TANDEM_VAULT_KEY": vault_key}, "an existing .env is kept"
    assert oct((tmp_path / ".env").stat().st_mode & 0o777) == "0o600"


def test_gateway_config_agrees_with_the_stack() -> None:
    settings = gateway_settings()
    vllm = SERVICES["vllm"]["command"]
    edge_host, edge_port = host_port(settings.upstreams["edge"].base_url)
    assert settings.client_keys() == {"tk-test"}
    assert (edge_host, edge_port) == ("vllm", int(vllm[vllm.index("--port") + 1]))
    assert settings.upstreams["edge"].model == vllm[vllm.index("--served-model-name") + 1]
    assert settings.redis_url is not None and host_port(settings.redis_url) == ("redis", 6379)
    assert settings.server.host == "0.0.0.0"
    assert f"127.0.0.1:{settings.server.port}:{settings.server.port}" in SERVICES["gateway"]["ports"]
    assert settings.server.workers > 1, "the stack runs several workers (multiprocess metrics)"
    assert SERVICES["gateway"]["depends_on"]["redis"] == {"condition": "service_healthy"}
    api_key_env = settings.upstreams["cloud"].api_key_env
    assert api_key_env in SERVICES["gateway"]["environment"]
    with mock.patch.dict(os.environ, {api_key_env: "sk-test"}):
        # Bound to 0.0.0.0 with the cloud key set, the gateway starts because the stack sets a client key.
        assert open_proxy_refusal(settings) is None
        assert open_proxy_refusal(settings.model_copy(update={"client_api_keys": []})) is not None


def test_prometheus_scrapes_the_gateway_and_vllm_and_loads_the_rules() -> None:
    prometheus = SERVICES["prometheus"]
    files = mounts("prometheus")
    config_path = next(a.split("=", 1)[1] for a in prometheus["command"] if a.startswith("--config.file="))
    config = yaml.safe_load(files[config_path].read_text())
    targets = {job["job_name"]: job["static_configs"][0]["targets"] for job in config["scrape_configs"]}
    settings = gateway_settings()
    assert targets["tandem"] == [f"gateway:{settings.server.port}"]
    vllm = SERVICES["vllm"]["command"]
    assert targets["vllm"] == [f"vllm:{vllm[vllm.index('--port') + 1]}"]
    assert all(job.get("metrics_path", "/metrics") == "/metrics" for job in config["scrape_configs"])
    for rule_file in config["rule_files"]:
        assert files[rule_file] == (DEPLOY / "prometheus" / "rules.yaml").resolve()


def test_grafana_is_provisioned_with_the_datasource_and_dashboards() -> None:
    files = mounts("grafana")
    datasources = yaml.safe_load((files["/etc/grafana/provisioning/datasources"] / "prometheus.yaml").read_text())
    source = datasources["datasources"][0]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    assert "127.0.0.1:9090:9090" in SERVICES["prometheus"]["ports"]
    providers = yaml.safe_load((files["/etc/grafana/provisioning/dashboards"] / "tandem.yaml").read_text())
    path = providers["providers"][0]["options"]["path"]
    assert files[path] == (DEPLOY / "grafana" / "dashboards").resolve()
    home = SERVICES["grafana"]["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (files[path] / Path(home).name).is_file()


def test_compose_defaults_expand_to_a_usable_model() -> None:
    assert SERVICES["vllm"]["entrypoint"] == ["vllm", "serve"]
    command = [expand(part) for part in SERVICES["vllm"]["command"]]
    assert command[0] == "Qwen/Qwen3-8B" and "--model" not in command, "the model is positional in `vllm serve`"
    assert command[command.index("--tensor-parallel-size") + 1] == "1"
    assert command[command.index("--max-model-len") + 1].isdigit()


DOCKERFILE = (DEPLOY / "Dockerfile").read_text()


def instructions() -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    lines = [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def test_dockerfile_is_slim_pinned_non_root_with_a_health_check() -> None:
    steps = instructions()
    base = next(arg for op, arg in steps if op == "ARG" and arg.startswith("PYTHON_IMAGE="))
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.11\.\d+-slim-bookworm", base), base
    assert [arg for op, arg in steps if op == "FROM"] == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE}"]
    user = [arg for op, arg in steps if op == "USER"]
    assert user == ["10001:10001"]
    assert any(op == "HEALTHCHECK" and "/healthz" in arg for op, arg in steps)
    assert any(op == "RUN" and "-c constraints.txt" in arg for op, arg in steps), "installs pinned dependencies"
    entry = next(arg for op, arg in steps if op == "ENTRYPOINT")
    assert entry == '["python", "-m", "router.cli"]'
    assert "EXPOSE" in {op for op, _ in steps}


@pytest.mark.parametrize("source", ["router", "judge", "pyproject.toml", "constraints.txt", "README.md"])
def test_dockerfile_copies_what_exists(source: str) -> None:
    assert f"COPY {source}" in DOCKERFILE or f" {source} " in DOCKERFILE
    assert (ROOT / source).exists()
    ignored = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert source not in ignored


def test_dependencies_are_installed_before_the_code_is_copied() -> None:
    """A code change must not reinstall every wheel: the install layer depends on the project
    metadata and the pins only."""
    steps = instructions()
    install = next(i for i, (op, arg) in enumerate(steps) if op == "RUN" and "pip install" in arg)
    copied_before = " ".join(arg for op, arg in steps[:install] if op == "COPY")
    assert "pyproject.toml" in copied_before and "constraints.txt" in copied_before
    for code in ("router", "judge"):
        assert code not in copied_before.split(), f"{code}/ is copied before the dependencies are installed"
    assert any(op == "COPY" and arg.startswith("router ") for op, arg in steps[install:])


def test_the_gateway_keeps_its_outage_journal_on_a_named_volume() -> None:
    config = yaml.safe_load((DEPLOY / "compose" / "tandem.yaml").read_text())
    folder = config["trajectories"]["outage_journal_dir"]
    mounts = dict(volume.split(":")[1::-1] for volume in SERVICES["gateway"]["volumes"])
    assert mounts[folder] in COMPOSE["volumes"]  # named: it outlives the container
    # The image makes the folder its user's, so that a fresh named volume mounted there is too.
    assert f"-o 10001 -g 10001 -m 0700 {folder}" in (DEPLOY / "Dockerfile").read_text()
