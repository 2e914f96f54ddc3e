"""The Helm chart, rendered offline with Helm's own library (helm-python-sdk): default and
full-featured values, lint, Kubernetes schemas for core kinds, required fields of the Prometheus
Operator objects, promtool on the rules inside, and the values that must fail."""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from router.settings import load_settings
from tests.deploy.tools import CHART, RULES, generator, helm, metric_names, run_promtool

FULL_VALUES = yaml.safe_load((CHART / "ci" / "full-values.yaml").read_text())
KUBERNETES_VERSION = "1.30.0"
CORE_KINDS = {
    "ConfigMap",
    "CronJob",
    "Deployment",
    "HorizontalPodAutoscaler",
    "NetworkPolicy",
    "PodDisruptionBudget",
    "Secret",
    "Service",
    "ServiceAccount",
    "StatefulSet",
}
OPERATOR_KINDS = {"ServiceMonitor", "PrometheusRule"}


@cache
def _render(values_json: str) -> dict[str, str]:
    with helm().Chart.load(CHART) as chart:
        rendered: dict[str, str] = chart.render(json.loads(values_json), name="demo", namespace="ai")
        return rendered


# The chart refuses to install without client keys (or insecureOpenProxy): every rendering names
# a Secret of them unless a test says otherwise.
CLIENT_KEYS = {"clientKeys": {"secretName": "tandem-clients"}}


def render(values: dict[str, Any] | None = None) -> dict[str, str]:
    return _render(json.dumps({**CLIENT_KEYS, **(values or {})}, sort_keys=True))


def objects(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    docs = []
    for name, text in render(values).items():
        if name.endswith(".yaml"):
            docs += [doc for doc in yaml.safe_load_all(text) if doc]
    return docs


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [doc for doc in docs if doc["kind"] == kind]


def one(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [doc for doc in by_kind(docs, kind) if name is None or doc["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind} {name}: {len(found)} found"
    return found[0]


def gateway_config(docs: list[dict[str, Any]]) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(one(docs, "ConfigMap", "demo-tandem")["data"]["tandem.yaml"])
    return config


@pytest.mark.parametrize("values", [None, FULL_VALUES], ids=["default", "full"])
def test_helm_lint_passes(values: dict[str, Any] | None) -> None:
    report = helm().lint(str(CHART), {**CLIENT_KEYS, **(values or {})}, strict=True)
    problems = [m for m in report["messages"] if m["severity"] >= 2] + report["errors"]
    assert problems == [], problems


# The `helm` binary is not in Debian and cannot be fetched here; Helm's own Go library (through
# helm-python-sdk) lints and renders the chart above, which is the same code the binary runs.


def gateway_env(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    container = one(docs, "Deployment", "demo-tandem")["spec"]["template"]["spec"]["containers"][0]
    return {item["name"]: item for item in container["env"]}


def redis_url_of(docs: list[dict[str, Any]]) -> str | None:
    """The Redis URL the gateway reads: from the environment (with the password's Secret)
    when the chart's Redis asks for one, else from the config file."""
    env = gateway_env(docs)
    if "TANDEM_REDIS_URL" in env:
        return str(env["TANDEM_REDIS_URL"]["value"])
    url = gateway_config(docs).get("redis_url")
    return None if url is None else str(url)


def test_default_values_run_one_gateway_without_redis() -> None:
    docs = objects()
    kinds = {doc["kind"] for doc in docs}
    assert kinds == {"ConfigMap", "Deployment", "Service", "ServiceAccount", "Secret", "NetworkPolicy"}
    assert [s["metadata"]["name"] for s in by_kind(docs, "Secret")] == ["demo-tandem-vault"]
    config = gateway_config(docs)
    assert "redis_url" not in config
    assert config["server"] == {"host": "0.0.0.0", "port": 8080, "workers": 1, "insecure_open_proxy": False}
    settings = load_settings(**config)
    assert settings.upstreams["edge"].base_url == "http://vllm:8000/v1"


def test_full_values_gateway_config_is_a_valid_tandem_config() -> None:
    docs = objects(FULL_VALUES)
    config = gateway_config(docs)
    settings = load_settings(**config)
    assert settings.redis_url is None, "the URL with its password comes from a Secret, not the ConfigMap"
    assert redis_url_of(docs) == "redis://:$(REDIS_PASSWORD)@demo-tandem-redis:6379/0"
    assert settings.server.workers == 2
    assert settings.upstreams["edge"].base_url == "http://demo-tandem-vllm:8000/v1"
    assert settings.upstreams["edge"].model == "qwen3-8b" == FULL_VALUES["vllm"]["servedModelName"]
    assert settings.client_api_keys_file == Path("/etc/tandem/client-keys/keys")


def test_gateway_deployment() -> None:
    docs = objects(FULL_VALUES)
    deployment = one(docs, "Deployment", "demo-tandem")
    pod = deployment["spec"]["template"]
    container = pod["spec"]["containers"][0]
    assert "replicas" not in deployment["spec"], "the HPA owns the replica count"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["resources"]["requests"] and container["resources"]["limits"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert container["image"] == "registry.example.com/platform/tandem:0.1.0"
    env = {item["name"]: item for item in container["env"]}
    assert env["PROMETHEUS_MULTIPROC_DIR"]["value"].startswith("/tmp/")
    assert env["OPENAI_API_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "tandem-cloud",
        "key": "api-key",
        "optional": False,
    }
    assert env["TANDEM_ADMIN_API_KEYS"]["valueFrom"]["secretKeyRef"]["name"] == "tandem-admin"
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["client-keys"] == "/etc/tandem/client-keys" and mounts["tmp"] == "/tmp"
    assert one(docs, "HorizontalPodAutoscaler")["spec"]["maxReplicas"] == 12
    pdb = one(docs, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 2
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    service = one(docs, "Service", "demo-tandem")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]


def test_a_config_change_rolls_the_pods() -> None:
    def checksum(values: dict[str, Any]) -> str:
        deployment = one(objects(values), "Deployment", "demo-tandem")
        return str(deployment["spec"]["template"]["metadata"]["annotations"]["checksum/config"])

    base = checksum({})
    assert checksum({}) == base
    assert checksum({"config": {"log_level": "debug"}}) != base
    assert checksum({"workers": 2}) != base


@pytest.mark.parametrize(
    ("values", "redis_url"),
    [
        ({}, None),
        ({"replicaCount": 2}, "redis://:$(REDIS_PASSWORD)@demo-tandem-redis:6379/0"),
        ({"autoscaling": {"enabled": True}}, "redis://:$(REDIS_PASSWORD)@demo-tandem-redis:6379/0"),
        ({"workers": 3}, "redis://:$(REDIS_PASSWORD)@demo-tandem-redis:6379/0"),
        ({"redis": {"alwaysDeploy": True}}, "redis://:$(REDIS_PASSWORD)@demo-tandem-redis:6379/0"),
        ({"workers": 2, "redis": {"auth": {"enabled": False}}}, "redis://demo-tandem-redis:6379/0"),
        ({"replicaCount": 4, "redis": {"externalUrl": "redis://cache.example:6379/2"}}, "redis://cache.example:6379/2"),
    ],
    ids=["one-pod", "replicas", "autoscaling", "workers", "always", "no-auth", "external"],
)
def test_redis_runs_whenever_more_than_one_gateway_process_can(values: dict[str, Any], redis_url: str | None) -> None:
    docs = objects(values)
    assert redis_url_of(docs) == redis_url
    statefulsets = by_kind(docs, "StatefulSet")
    owned = redis_url is not None and "demo-tandem-redis" in redis_url
    assert len(statefulsets) == int(owned)
    if owned:
        redis = statefulsets[0]
        assert redis["spec"]["template"]["spec"]["containers"][0]["image"] == "redis:7.4.5-alpine"
        assert one(docs, "Service", "demo-tandem-redis")["spec"]["clusterIP"] == "None"


def test_vllm_edge_on_a_gpu_node() -> None:
    docs = objects(FULL_VALUES)
    vllm = one(docs, "Deployment", "demo-tandem-vllm")
    spec = vllm["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert spec["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-L4"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["models"]["persistentVolumeClaim"]["claimName"] == "models"
    args = container["args"]
    assert container["command"] == ["vllm", "serve"]
    assert args[0] == "/models/Qwen3-8B" and "--model" not in args, "the model is positional in `vllm serve`"
    assert args[args.index("--tensor-parallel-size") + 1] == "1"
    assert args[args.index("--tool-call-parser") + 1] == "hermes"
    assert args[args.index("--served-model-name") + 1] == "qwen3-8b"
    port = one(docs, "Service", "demo-tandem-vllm")["spec"]["ports"][0]["port"]
    assert gateway_config(docs)["upstreams"]["edge"]["base_url"] == f"http://demo-tandem-vllm:{port}/v1"


def test_no_image_is_unpinned() -> None:
    for values in (None, FULL_VALUES):
        for doc in objects(values):
            for container in doc.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
                image = container["image"]
                assert ":" in image and not image.endswith(":latest"), image


def test_service_monitor_fields() -> None:
    docs = objects(FULL_VALUES)
    monitors = by_kind(docs, "ServiceMonitor")
    assert {m["metadata"]["name"] for m in monitors} == {"demo-tandem", "demo-tandem-vllm"}
    services = {s["metadata"]["name"]: s for s in by_kind(docs, "Service")}
    for monitor in monitors:
        assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
        assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        spec = monitor["spec"]
        assert spec["namespaceSelector"] == {"matchNames": ["ai"]}
        selector = spec["selector"]["matchLabels"]
        matched = [s for s in services.values() if selector.items() <= s["metadata"]["labels"].items()]
        assert len(matched) == 1, f"{monitor['metadata']['name']} selects {len(matched)} services"
        port_names = {p["name"] for p in matched[0]["spec"]["ports"]}
        for endpoint in spec["endpoints"]:
            assert endpoint["port"] in port_names
            assert endpoint["path"] == "/metrics"
            assert endpoint["interval"] == "15s" and endpoint["scrapeTimeout"] == "5s"


def test_prometheus_rule_fields_and_promtool(tmp_path: Path) -> None:
    rule = one(objects(FULL_VALUES), "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    groups = rule["spec"]["groups"]
    assert groups and all(group["name"] and group["rules"] for group in groups)
    for entry in (r for group in groups for r in group["rules"]):
        assert set(entry) <= {"alert", "expr", "for", "labels", "annotations"}
        assert entry["alert"].startswith("Tandem") and entry["labels"]["severity"] in ("warning", "critical")
        assert metric_names(entry["expr"])
    spend = next(r for g in groups for r in g["rules"] if r["alert"] == "TandemSpendRateHigh")
    assert "> 25" in spend["expr"], "alerts.spendUsdPerHour from the values"
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": groups}))
    done = run_promtool("check", "rules", str(path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_chart_rules_equal_the_plain_rules_file_at_default_thresholds() -> None:
    rule = one(objects({"prometheusRule": {"enabled": True}}), "PrometheusRule")

    def normal(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {**group, "rules": [{**r, "expr": " ".join(r["expr"].split())} for r in group["rules"]]} for group in groups
        ]

    assert normal(rule["spec"]["groups"]) == normal(yaml.safe_load(RULES.read_text())["groups"])


def test_dashboards_config_map_ships_the_generated_dashboards() -> None:
    config_map = one(objects(FULL_VALUES), "ConfigMap", "demo-tandem-dashboards")
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["annotations"]["grafana_folder"] == "AI platform"
    generated = generator().build_all()
    assert sorted(config_map["data"]) == sorted(generated)
    for name, text in generated.items():
        assert json.loads(config_map["data"][name]) == json.loads(text)


def test_notes_say_how_to_reach_the_gateway() -> None:
    notes = render(FULL_VALUES)["tandem/templates/NOTES.txt"]
    assert "base_url: http://demo-tandem.ai.svc:80/v1" in notes
    assert "Redis at redis://demo-tandem-redis:6379/0" in notes


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"workers": "two"}, "at '/workers': got string, want integer"),
        ({"replicas": 3}, "additional properties 'replicas' not allowed"),
        ({"alerts": {"spendUsdPerHour": -1}}, "at '/alerts/spendUsdPerHour': minimum"),
        ({"vllm": {"modelVolume": {"type": "nfs"}}}, "at '/vllm/modelVolume/type'"),
        ({"redis": {"externalUrl": "cache:6379"}}, "at '/redis/externalUrl'"),
        ({"image": {"tag": "latest"}}, "image.tag must pin a version, not latest"),
        ({"config": {"redis_url": "redis://x"}}, "config.redis_url is set by the chart"),
        ({"config": {"client_api_keys": ["k"]}}, "config.client_api_keys would put keys into a ConfigMap"),
        ({"config": {"admin_api_keys": ["k"]}}, "config.admin_api_keys would put keys into a ConfigMap"),
        ({"config": {"upstreams": {"cloud": {"api_key": "sk-x"}}}}, "config.upstreams.cloud.api_key would put a key"),
        ({"config": {"upstreams": {"edge": {"base_url": ""}}}}, "config.upstreams.edge.base_url is required"),
        ({"autoscaling": {"enabled": True, "minReplicas": 5, "maxReplicas": 2}}, "minReplicas (5) is above"),
        ({"vllm": {"enabled": True, "modelVolume": {"type": "persistentVolumeClaim"}}}, "claimName is required"),
        ({"judgeTraining": {"enabled": True, "modelVolume": {"claimName": "m"}}}, "judgeTraining needs adminKeys"),
        (
            {"adminKeys": {"secretName": "a"}, "judgeTraining": {"enabled": True}},
            "judgeTraining.modelVolume.claimName is required",
        ),
        ({"judgeTraining": {"labels": "vibes"}}, "at '/judgeTraining/labels'"),
        ({"judgeTraining": {"schedul": "x"}}, "additional properties 'schedul' not allowed"),
        ({"clientKeys": {"secretName": ""}}, "clientKeys.secretName is required"),
        ({"insecureOpenProxy": "yes"}, "at '/insecureOpenProxy': got string, want boolean"),
    ],
)
def test_bad_values_fail_with_a_clear_message(values: dict[str, Any], message: str) -> None:
    with pytest.raises(helm().HelmError) as caught:
        render(values)
    assert message in str(caught.value)


def test_vllm_runs_as_non_root_with_its_caches_on_volumes() -> None:
    docs = objects({**FULL_VALUES, "vllm": {**FULL_VALUES["vllm"], "gpus": 4}})
    spec = one(docs, "Deployment", "demo-tandem-vllm")["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] != 0
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    args = container["args"]
    assert args[args.index("--tensor-parallel-size") + 1] == "4"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 4
    env = {item["name"]: item.get("value") for item in container["env"]}
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    for variable in ("HOME", "HF_HOME", "VLLM_CACHE_ROOT"):
        assert env[variable].startswith("/models/"), variable
    assert "/tmp" in mounts and "/models" in mounts


def test_keys_and_passwords_live_in_secrets_never_in_the_config_map() -> None:
    docs = objects(FULL_VALUES)
    config_text = one(docs, "ConfigMap", "demo-tandem")["data"]["tandem.yaml"]
    secrets = {s["metadata"]["name"]: s for s in by_kind(docs, "Secret")}
    assert set(secrets) == {"demo-tandem-redis", "demo-tandem-vault"}
    for secret in secrets.values():
        assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        for value in secret["data"].values():
            assert base64.b64decode(value).decode() not in config_text
    vault_key = base64.b64decode(secrets["demo-tandem-vault"]["data"]["vault-key"])
    assert len(base64.b64decode(vault_key)) == 32, "the vault key is 32 random bytes in base64"
    env = gateway_env(docs)
    assert env["TANDEM_ADMIN_API_KEYS"]["valueFrom"]["secretKeyRef"] == {"name": "tandem-admin", "key": "keys-json"}
    assert env["TANDEM_VAULT_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "demo-tandem-vault"
    assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "demo-tandem-redis", "key": "password"}
    names = list(env)
    assert names.index("REDIS_PASSWORD") < names.index("TANDEM_REDIS_URL"), "$(REDIS_PASSWORD) must be defined first"


def test_chart_redis_asks_for_a_password_and_keeps_its_data() -> None:
    docs = objects({"replicaCount": 2})
    redis = one(docs, "StatefulSet", "demo-tandem-redis")
    container = redis["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
    assert args[args.index("--appendonly") + 1] == "yes"
    assert redis["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "1Gi"
    for probe in ("livenessProbe", "readinessProbe"):
        command = " ".join(container[probe]["exec"]["command"])
        assert "REDISCLI_AUTH" in command and "$(REDIS_PASSWORD)" not in command
    existing = objects({"replicaCount": 2, "redis": {"auth": {"existingSecret": "my-redis"}}})
    assert "demo-tandem-redis" not in {s["metadata"]["name"] for s in by_kind(existing, "Secret")}
    assert gateway_env(existing)["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "my-redis"


def test_network_policies_let_only_the_gateway_reach_redis_and_vllm() -> None:
    docs = objects(FULL_VALUES)
    policies = {p["metadata"]["name"]: p["spec"] for p in by_kind(docs, "NetworkPolicy")}
    assert set(policies) == {"demo-tandem", "demo-tandem-redis", "demo-tandem-vllm"}
    gateway_labels = one(docs, "Deployment", "demo-tandem")["spec"]["selector"]["matchLabels"]
    for name, workload in (("demo-tandem-redis", "StatefulSet"), ("demo-tandem-vllm", "Deployment")):
        spec = policies[name]
        assert spec["podSelector"]["matchLabels"] == one(docs, workload, name)["spec"]["selector"]["matchLabels"]
        assert spec["ingress"][0]["from"] == [{"podSelector": {"matchLabels": gateway_labels}}]
    assert "from" not in policies["demo-tandem"]["ingress"][0], "the gateway is open to clients by default"
    assert by_kind(objects({"networkPolicy": {"enabled": False}}), "NetworkPolicy") == []


def test_stopping_a_pod_lets_in_flight_streams_finish() -> None:
    docs = objects()
    pod = one(docs, "Deployment", "demo-tandem")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    sleep = int(container["lifecycle"]["preStop"]["exec"]["command"][1])
    shutdown = int(gateway_env(docs)["TANDEM_SERVER__SHUTDOWN_TIMEOUT_S"]["value"])
    assert sleep > 0 and shutdown >= 60
    assert pod["terminationGracePeriodSeconds"] > sleep + shutdown


@pytest.mark.parametrize("values", [None, FULL_VALUES], ids=["default", "full"])
def test_core_objects_match_the_kubernetes_schemas(values: dict[str, Any] | None) -> None:
    import kubernetes_validate

    docs = objects(values)
    kinds = {doc["kind"] for doc in docs}
    assert kinds <= CORE_KINDS | OPERATOR_KINDS | {"ConfigMap"}, kinds - CORE_KINDS - OPERATOR_KINDS
    checked = 0
    for doc in docs:
        if doc["kind"] in CORE_KINDS:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
            checked += 1
    assert checked >= 5


TRAINING = {
    "adminKeys": {"secretName": "tandem-admin", "key": "keys-json"},
    "judgeTraining": {"enabled": True, "modelVolume": {"claimName": "judge-models"}},
}


def training_script(docs: list[dict[str, Any]]) -> str:
    container = one(docs, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["/bin/sh", "-ec"]
    script: str = container["args"][0]
    return script


def test_judge_training_is_off_by_default() -> None:
    docs = objects()
    assert by_kind(docs, "CronJob") == []
    assert "initContainers" not in one(docs, "Deployment", "demo-tandem")["spec"]["template"]["spec"]


def test_judge_training_cronjob_exports_labels_and_retrains_into_the_gateways_volume() -> None:
    docs = objects(TRAINING)
    cronjob = one(docs, "CronJob", "demo-tandem-judge-training")
    assert cronjob["spec"]["schedule"] == "17 3 * * *" and cronjob["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == "tandem:0.1.0-train"  # the image with the `train` extra
    script = training_script(docs)
    order = ["trajectories export", "judge label", "judge retrain"]
    assert [script.index(step) for step in order] == sorted(script.index(step) for step in order)
    env = {item["name"]: item for item in container["env"]}
    assert env["GATEWAY_URL"]["value"] == "http://demo-tandem:8080"
    assert env["TANDEM_ADMIN_API_KEYS"]["valueFrom"]["secretKeyRef"] == {"name": "tandem-admin", "key": "keys-json"}
    # The documented judge route is the draft judge (sees: draft), so its model is the one retrained.
    assert (env["SEES"]["value"], env["SERVING"]["value"]) == ("draft", "/var/lib/tandem/judge/judge-draft.onnx")
    assert env["TEACHER_URL"]["value"] == ""  # no teacher unless one is named
    assert '--serving "$SERVING"' in script and '--folds "$FOLDS"' in script
    assert (env["FOLDS"]["value"], env["RECENT_SHARE"]["value"], env["SHIPPED_ROWS"]["value"]) == (
        "4",
        "0.6",
        "",
    )
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["judge-model"]["persistentVolumeClaim"]["claimName"] == "judge-models"
    assert "emptyDir" in volumes["work"]
    # The gateway reads the same volume, read-only, seeded with the shipped models at start.
    gateway = one(docs, "Deployment", "demo-tandem")["spec"]["template"]["spec"]
    mounts = {m["name"]: m for m in gateway["containers"][0]["volumeMounts"]}
    assert mounts["judge-model"] == {"name": "judge-model", "mountPath": "/var/lib/tandem/judge", "readOnly": True}
    assert {v["name"]: v for v in gateway["volumes"]}["judge-model"] == volumes["judge-model"]
    seed = gateway["initContainers"][0]
    assert seed["volumeMounts"][0]["mountPath"] == "/var/lib/tandem/judge" and "readOnly" not in seed["volumeMounts"][0]
    assert "judge.__file__" in seed["command"][2]


def test_judge_training_reaches_a_gateway_that_admits_only_some_clients() -> None:
    docs = objects({**TRAINING, "networkPolicy": {"enabled": True, "gatewayFrom": [{"podSelector": {}}]}})
    policy = one(docs, "NetworkPolicy", "demo-tandem")["spec"]["ingress"][0]["from"]
    pod_labels = one(docs, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]
    assert {"podSelector": {"matchLabels": pod_labels}} in policy


def test_the_outage_journal_is_on_a_volume_the_config_points_at() -> None:
    docs = objects()
    pod = one(docs, "Deployment", "demo-tandem")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == "outage-journal"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "outage-journal"]
    assert volume["emptyDir"] == {"sizeLimit": "1Gi"}  # survives a container restart, not the pod's deletion
    trajectories = gateway_config(docs)["trajectories"]
    assert trajectories["outage_journal_dir"] == mount["mountPath"] == "/var/lib/tandem/journal"
    assert trajectories["outage_journal_max_bytes"] == 268435456
    shared = objects({"outageJournal": {"existingClaim": "tandem-journal"}})
    pod = one(shared, "Deployment", "demo-tandem")["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "outage-journal"]
    assert volume["persistentVolumeClaim"] == {"claimName": "tandem-journal"}
    off = objects({"outageJournal": {"enabled": False}})
    assert "trajectories" not in gateway_config(off)
    pod = one(off, "Deployment", "demo-tandem")["spec"]["template"]["spec"]
    assert all(v["name"] != "outage-journal" for v in pod["volumes"])


def test_an_open_proxy_only_when_asked_for_and_the_notes_say_so() -> None:
    keyed = render()
    assert "Client keys: from Secret tandem-clients" in keyed["tandem/templates/NOTES.txt"]
    assert gateway_config(objects())["server"]["insecure_open_proxy"] is False
    values = {"clientKeys": {"secretName": ""}, "insecureOpenProxy": True}
    config = gateway_config(objects(values))
    assert config["server"]["insecure_open_proxy"] is True and "client_api_keys_file" not in config
    assert "anyone who reaches the Service spends the upstream keys" in render(values)["tandem/templates/NOTES.txt"]
    load_settings(**config)  # the gateway accepts what the chart writes


def test_several_vllm_replicas_are_each_addressed_and_make_the_edge_a_pool() -> None:
    import kubernetes_validate

    values = {**FULL_VALUES, "vllm": {**FULL_VALUES["vllm"], "replicas": 2}}
    docs = objects(values)
    replicas = one(docs, "StatefulSet", "demo-tandem-vllm")
    assert not [d for d in by_kind(docs, "Deployment") if d["metadata"]["name"] == "demo-tandem-vllm"]
    assert replicas["spec"]["replicas"] == 2 and replicas["spec"]["serviceName"] == "demo-tandem-vllm-pods"
    headless = one(docs, "Service", "demo-tandem-vllm-pods")
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["selector"] == replicas["spec"]["selector"]["matchLabels"]
    for doc in (replicas, headless):
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    settings = load_settings(**gateway_config(docs))
    namespace = "ai"  # the release namespace the tests render into
    assert settings.upstreams["edge"].endpoints == [
        f"http://demo-tandem-vllm-{i}.demo-tandem-vllm-pods.{namespace}.svc:8000/v1" for i in range(2)
    ]
    assert settings.upstreams["edge"].balance == "affinity"
    # Each pod scraped once: the vLLM ServiceMonitor selects one Service, not the headless one too.
    services = by_kind(docs, "Service")
    for monitor in by_kind(docs, "ServiceMonitor"):
        selector = monitor["spec"]["selector"]["matchLabels"]
        matched = [s["metadata"]["name"] for s in services if selector.items() <= s["metadata"]["labels"].items()]
        assert len(matched) == 1, f"{monitor['metadata']['name']} selects {matched}"
    # One replica: as before, a Deployment behind one Service, no pool.
    single = objects(FULL_VALUES)
    assert one(single, "Deployment", "demo-tandem-vllm")["spec"]["replicas"] == 1
    assert not [d for d in by_kind(single, "StatefulSet") if d["metadata"]["name"] == "demo-tandem-vllm"]
    assert gateway_config(single)["upstreams"]["edge"].get("endpoints") is None


# An edge pool the chart does not run (docs/operations/edge-pool.md): `endpoints` in place of
# `base_url`. Helm merges values.yaml's default `base_url` (http://vllm:8000/v1) into the user's
# edge, which the gateway refuses beside endpoints that do not list it.
EXTERNAL_POOL = ["http://10.0.0.11:8000/v1", "http://10.0.0.12:8000/v1"]


@pytest.mark.parametrize(
    ("edge", "base_url"),
    [
        ({"endpoints": EXTERNAL_POOL}, EXTERNAL_POOL[0]),
        ({"endpoints": EXTERNAL_POOL, "base_url": None}, EXTERNAL_POOL[0]),
        ({"endpoints": EXTERNAL_POOL, "base_url": ""}, EXTERNAL_POOL[0]),
        # A base_url that is one of the replicas is the user's own choice: kept.
        ({"endpoints": EXTERNAL_POOL, "base_url": EXTERNAL_POOL[1]}, EXTERNAL_POOL[1]),
    ],
    ids=["endpoints-only", "base_url-null", "base_url-empty", "base_url-one-of-them"],
)
def test_an_external_edge_pool_renders_a_config_the_gateway_loads(edge: dict[str, Any], base_url: str) -> None:
    values = {"config": {"upstreams": {"edge": {**edge, "model": "Qwen/Qwen3.5-9B", "balance": "affinity"}}}}
    docs = objects(values)
    rendered = gateway_config(docs)["upstreams"]["edge"]
    assert rendered["endpoints"] == EXTERNAL_POOL
    assert rendered.get("base_url") in (None, base_url), "values.yaml's default base_url is not merged in"
    settings = load_settings(**gateway_config(docs))  # the gateway's own loader accepts it
    assert settings.upstreams["edge"].endpoints == EXTERNAL_POOL
    assert settings.upstreams["edge"].base_url == base_url
    assert settings.upstreams["edge"].model == "Qwen/Qwen3.5-9B"
    notes = render(values)["tandem/templates/NOTES.txt"]
    assert f"Edge: a pool of 2 replicas (config.upstreams.edge.endpoints): {', '.join(EXTERNAL_POOL)}" in notes


def test_the_charts_own_vllm_replaces_endpoints_left_in_the_config() -> None:
    # vllm.enabled with one replica: the chart's vLLM is the edge, endpoints left in `config`
    # (from an external pool before) no longer name it and are dropped, not merged beside it.
    docs = objects({"vllm": {"enabled": True}, "config": {"upstreams": {"edge": {"endpoints": EXTERNAL_POOL}}}})
    rendered = gateway_config(docs)["upstreams"]["edge"]
    assert "endpoints" not in rendered
    settings = load_settings(**gateway_config(docs))
    assert settings.upstreams["edge"].base_url == "http://demo-tandem-vllm:8000/v1"
    assert settings.upstreams["edge"].endpoints == []
    # Several replicas: the chart's own endpoints, whatever `config` listed.
    docs = objects(
        {"vllm": {"enabled": True, "replicas": 3}, "config": {"upstreams": {"edge": {"endpoints": EXTERNAL_POOL}}}}
    )
    settings = load_settings(**gateway_config(docs))
    assert settings.upstreams["edge"].endpoints == [
        f"http://demo-tandem-vllm-{i}.demo-tandem-vllm-pods.ai.svc:8000/v1" for i in range(3)
    ]


@pytest.mark.parametrize(
    "edge",
    [{"base_url": None}, {"base_url": "", "endpoints": []}, {"base_url": None, "endpoints": []}],
    ids=["no-base_url", "empty-both", "null-and-empty"],
)
def test_an_edge_with_neither_base_url_nor_endpoints_fails_naming_both(edge: dict[str, Any]) -> None:
    with pytest.raises(helm().HelmError) as caught:
        render({"config": {"upstreams": {"edge": edge}}})
    message = str(caught.value)
    assert "config.upstreams.edge.base_url is required" in message and "endpoints" in message


def test_notes_name_the_charts_edge_pool() -> None:
    notes = render({"vllm": {"enabled": True, "replicas": 3}})["tandem/templates/NOTES.txt"]
    assert "a pool of 3 replicas" in notes
    assert "StatefulSet demo-tandem-vllm" in notes and "headless Service demo-tandem-vllm-pods" in notes
    single = render({"vllm": {"enabled": True}})["tandem/templates/NOTES.txt"]
    assert "pool" not in single and "(demo-tandem-vllm)" in single
    assert "Edge: http://vllm:8000/v1." in render()["tandem/templates/NOTES.txt"]


# The chart's Redis has a memory limit: without maxmemory it grows until the kernel OOM-kills it
# (an AOF replay, an outage); at maxmemory with noeviction it refuses writes instead, which the
# gateway keeps in its write-back journal (docs/operations/redis.md, cause "full").
def redis_args(values: dict[str, Any]) -> list[str]:
    redis = one(objects({"replicaCount": 2, **values}), "StatefulSet", "demo-tandem-redis")
    args: list[str] = redis["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


@pytest.mark.parametrize(
    ("redis", "maxmemory"),
    [
        ({}, str(512 * 2**20 * 80 // 100)),  # 80% of the default 512Mi limit
        ({"resources": {"limits": {"memory": "2Gi"}}}, str(2 * 2**30 * 80 // 100)),
        ({"resources": {"limits": {"memory": "1G"}}, "maxmemoryPercent": 50}, str(500_000_000)),
        ({"resources": {"limits": {"memory": 1073741824}}}, str(2**30 * 80 // 100)),
        ({"maxmemory": "300mb"}, "300mb"),
        ({"maxmemory": 419430400}, "419430400"),
    ],
    ids=["default", "2Gi", "1G-at-50%", "bytes", "explicit", "explicit-bytes"],
)
def test_chart_redis_refuses_writes_below_its_memory_limit(redis: dict[str, Any], maxmemory: str) -> None:
    args = redis_args({"redis": redis})
    assert args[args.index("--maxmemory") + 1] == maxmemory
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"


def test_chart_redis_without_a_memory_limit_has_no_maxmemory_unless_given() -> None:
    # `limits: {}` would merge with the default; null takes the default limit out.
    args = redis_args({"redis": {"resources": {"limits": {"memory": None}}}})
    assert "--maxmemory" not in args and args[args.index("--maxmemory-policy") + 1] == "noeviction"
    args = redis_args({"redis": {"resources": {"limits": {"memory": None}}, "maxmemory": "1gb"}})
    assert args[args.index("--maxmemory") + 1] == "1gb"


@pytest.mark.parametrize(
    ("redis", "message"),
    [
        ({"maxmemoryPercent": 0}, "at '/redis/maxmemoryPercent'"),
        ({"maxmemoryPercent": 101}, "at '/redis/maxmemoryPercent'"),
        ({"maxmemory": "lots"}, "at '/redis/maxmemory'"),
    ],
)
def test_bad_redis_maxmemory_values_fail(redis: dict[str, Any], message: str) -> None:
    with pytest.raises(helm().HelmError) as caught:
        render({"replicaCount": 2, "redis": redis})
    assert message in str(caught.value)


def test_the_edge_replica_alert_takes_its_failure_ratio_from_the_values() -> None:
    def replica_rule(values: dict[str, Any]) -> dict[str, Any]:
        rule = one(objects({"prometheusRule": {"enabled": True}, **values}), "PrometheusRule")
        found: dict[str, Any] = next(
            r for g in rule["spec"]["groups"] for r in g["rules"] if r["alert"] == "TandemEdgeReplicaOut"
        )
        return found

    default = replica_rule({})
    assert ">= 0.9 * sum by (namespace, job, replica)" in default["expr"]
    tuned = replica_rule({"alerts": {"edgeReplicaFailureRatio": 1.5}})
    assert ">= 1.5 * sum by (namespace, job, replica)" in tuned["expr"]
    assert "at least 1.5 times as many calls" in tuned["annotations"]["description"]
    with pytest.raises(helm().HelmError) as caught:
        render({"alerts": {"edgeReplicaFailureRatio": 0}})
    assert "at '/alerts/edgeReplicaFailureRatio'" in str(caught.value)
