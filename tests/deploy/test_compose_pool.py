"""deploy/compose.pool.yaml, laid over compose.yaml: two vLLM replicas on their own GPUs, and a
gateway config whose edge pool lists exactly those two. Checked by structure (Docker cannot run
here), with Compose's own rules for `extends` and `!override` applied by hand."""

from __future__ import annotations

import os
from typing import Any
from unittest import mock

import yaml

from router.settings import load_settings
from tests.deploy.test_compose import SECRETS, SERVICES, expand, host_port
from tests.deploy.tools import DEPLOY


class _Loader(yaml.SafeLoader):
    """YAML with Compose's `!override` tag (a value that replaces the base file's)."""


def _override(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    assert isinstance(node, yaml.MappingNode)
    return loader.construct_mapping(node, deep=True)


_Loader.add_constructor("!override", _override)
POOL: dict[str, Any] = yaml.load((DEPLOY / "compose.pool.yaml").read_text(), _Loader)["services"]


def test_two_replicas_each_on_its_own_gpu() -> None:
    second = POOL["vllm-2"]
    assert second["extends"] == {"file": "compose.yaml", "service": "vllm"}
    devices = [POOL[name]["deploy"]["resources"]["reservations"]["devices"] for name in ("vllm", "vllm-2")]
    ids = [expand(str(d[0]["device_ids"][0])) for d in devices]
    assert ids == ["0", "1"] and all(len(d) == 1 and d[0]["driver"] == "nvidia" for d in devices)
    assert "!override" in (DEPLOY / "compose.pool.yaml").read_text(), "a merged list would keep the base GPU count"


def test_the_gateway_pools_exactly_the_two_replicas() -> None:
    volumes = POOL["gateway"]["volumes"]
    source, target = volumes[0].split(":")[:2]
    assert target == "/etc/tandem/tandem.yaml" and (DEPLOY / source).is_file()
    # What the base file mounts besides the config stays mounted (the override replaces the list).
    base = [v for v in SERVICES["gateway"]["volumes"] if not v.endswith("/etc/tandem/tandem.yaml:ro")]
    assert volumes[1:] == base
    env = {name: expand(str(value), SECRETS) for name, value in SERVICES["gateway"]["environment"].items()}
    with mock.patch.dict(os.environ, env):
        settings = load_settings(DEPLOY / source)
    vllm = SERVICES["vllm"]["command"]
    port = int(vllm[vllm.index("--port") + 1])
    assert [host_port(url) for url in settings.upstreams["edge"].endpoints] == [("vllm", port), ("vllm-2", port)]
    assert settings.upstreams["edge"].model == vllm[vllm.index("--served-model-name") + 1]
    assert POOL["gateway"]["depends_on"] == {"vllm-2": {"condition": "service_started"}}
    assert settings.routes["tandem"].edge_full == "cloud"
