"""Configuration: YAML plus TANDEM_ environment variables; invalid config stops start-up clearly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from router.config.upstream import UpstreamSettings
from router.settings import ConfigError, load_settings

GOOD = """
upstreams:
  edge:  {base_url: "http://127.0.0.1:8000/v1", model: small, prices: {input: 0.1, output: 0.15}}
  cloud: {base_url: "https://cloud.example/v1", model: big, api_key_env: MY_CLOUD_KEY,
          prices: {input: 2.5, cached_input: 0.25, output: 15}, drop_params: [return_token_ids]}
routes:
  tandem: {strategy: random, p: 0.3, seed: 1}
  careful: {strategy: cloud, failover: false}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tandem.yaml"
    path.write_text(text)
    return path


def test_yaml_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_CLOUD_KEY", "sk-from-env")
    settings = load_settings(write(tmp_path, GOOD))
    assert settings.upstreams["edge"].model == "small"
    assert settings.upstreams["edge"].prices.cached_input_or_input == 0.1
    assert settings.upstreams["cloud"].api_key() == "sk-from-env"
    assert settings.routes["tandem"].p == 0.3  # type: ignore[union-attr]
    assert settings.routes["careful"].failover is False
    assert {"tandem/edge", "tandem/cloud"} <= set(settings.routes)


def test_environment_overrides_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANDEM_UPSTREAMS__EDGE__MODEL", "from-env")
    monkeypatch.setenv("TANDEM_MAX_BODY_BYTES", "2048")
    settings = load_settings(write(tmp_path, GOOD))
    assert settings.upstreams["edge"].model == "from-env"
    assert settings.upstreams["edge"].base_url == "http://127.0.0.1:8000/v1"
    assert settings.max_body_bytes == 2048


def test_embedded_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = load_settings()
    assert settings.upstreams["edge"].base_url == "http://127.0.0.1:8000/v1"
    assert settings.upstreams["cloud"].api_key_env == "OPENAI_API_KEY"
    assert settings.upstreams["cloud"].api_key() is None
    assert settings.redis_url is None
    assert settings.routes["tandem"].strategy == "random"


def test_environment_overrides_one_key_of_the_built_in_upstreams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no file, or a file without upstreams, `TANDEM_UPSTREAMS__EDGE__BASE_URL` (the docs'
    own example) changes that key of the built-in edge; it replaced the built-in upstreams whole
    before, which then lacked their model ("upstreams.edge.model: Field required")."""
    monkeypatch.setenv("TANDEM_UPSTREAMS__EDGE__BASE_URL", "http://10.0.0.5:8000/v1")
    monkeypatch.setenv("TANDEM_UPSTREAMS__CLOUD__TIMEOUTS__CONNECT", "3")
    for path in (None, write(tmp_path, "log_level: debug\n")):
        settings = load_settings(path)
        edge, cloud = settings.upstreams["edge"], settings.upstreams["cloud"]
        assert edge.base_url == "http://10.0.0.5:8000/v1" and edge.model == load_settings_default("edge").model
        assert cloud.timeouts.connect == 3 and cloud.api_key_env == "OPENAI_API_KEY"
    # A file's own upstreams take nothing from the built-in ones (no key variable of OpenAI's).
    settings = load_settings(
        write(
            tmp_path,
            "upstreams:\n  edge: {base_url: 'http://e/v1', model: m}\n  cloud: {base_url: 'http://c/v1', model: c}\n",
        )
    )
    assert settings.upstreams["edge"].base_url == "http://10.0.0.5:8000/v1"
    assert settings.upstreams["cloud"].api_key_env is None and settings.upstreams["cloud"].model == "c"


def load_settings_default(name: str) -> UpstreamSettings:
    from router.settings import _default_upstreams

    return _default_upstreams()[name]


def test_api_key_from_file(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("sk-file\n")
    settings = load_settings(
        upstreams={
            "edge": {"base_url": "http://127.0.0.1:1/v1", "model": "e"},
            "cloud": {"base_url": "http://127.0.0.1:2/v1", "model": "c", "api_key_file": str(key_file)},
        }
    )
    assert settings.upstreams["cloud"].api_key() == "sk-file"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (GOOD.replace("p: 0.3", "p: 1.5"), ["routes.tandem.random.p", "less than or equal to 1"]),
        (GOOD.replace("strategy: cloud", "strategy: moon"), ["routes.careful", "moon"]),
        (GOOD.replace('"http://127.0.0.1:8000/v1"', '"ftp://x"'), ["upstreams.edge", "http://"]),
        (
            GOOD.replace("prices: {input: 0.1,", "prices: {inptu: 0.1,"),
            ["upstreams.edge.prices.inptu", "not permitted"],
        ),
        (GOOD.replace("  edge:", "  egde:"), ["upstreams.edge is required"]),
        ("upstreams: [1, 2]", ["upstreams"]),
        ("just a string", ["mapping"]),
        ("a: [unclosed", ["not valid YAML"]),
        (GOOD + "unknown_model_route: nowhere\n", ["unknown_model_route", "nowhere"]),
    ],
)
def test_invalid_config_names_the_key_and_the_problem(tmp_path: Path, text: str, words: list[str]) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(write(tmp_path, text))
    for word in words:
        assert word in str(raised.value), (word, str(raised.value))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.yaml")


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "router.cli", *args], capture_output=True, text=True, timeout=60, env=env
    )


def test_serve_refuses_an_invalid_config(tmp_path: Path) -> None:
    result = run_cli("serve", "--config", str(write(tmp_path, GOOD.replace("p: 0.3", "p: -1"))))
    assert result.returncode == 2
    assert "routes.tandem.random.p" in result.stderr and "greater than or equal to 0" in result.stderr


def test_serve_refuses_several_workers_without_redis(tmp_path: Path) -> None:
    result = run_cli("serve", "--config", str(write(tmp_path, GOOD)), "--workers", "2")
    assert result.returncode == 2
    assert "redis_url" in result.stderr and "workers" in result.stderr


def test_the_example_config_in_deploy_is_valid() -> None:
    example = Path(__file__).resolve().parent.parent / "deploy" / "tandem.example.yaml"
    settings = load_settings(example)
    assert settings.upstreams["cloud"].drop_params == ["return_token_ids", "session_id", "litellm_session_id"]
    assert settings.routes["tandem"].strategy == "random"


def test_a_merged_key_may_be_overridden_but_a_key_written_twice_is_refused(tmp_path: Path) -> None:
    # YAML's merge (`<<: *shared`) brings keys in to be overridden: that is no repeated key.
    merged = (
        "routes:\n  quiet: &shared {strategy: edge, failover: false}\n  loud:\n    <<: *shared\n    strategy: cloud\n"
    )
    upstreams = GOOD.split("routes:")[0]
    settings = load_settings(write(tmp_path, upstreams + merged))
    assert settings.routes["loud"].strategy == "cloud" and settings.routes["loud"].failover is False
    assert settings.routes["quiet"].strategy == "edge"
    with pytest.raises(ConfigError, match=r"the key 'failover' is given twice in one mapping \(first on line 2\)"):
        load_settings(write(tmp_path, "routes:\n  quiet: {strategy: edge, failover: false,\n    failover: true}\n"))
